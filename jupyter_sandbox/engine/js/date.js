// Deterministic Date for the realm. A fragment, not a module: the realm
// concatenates it into one function scope before prelude.js, which installs
//   globalThis.Date = makeRecordedDate(Date, readNow)   (default mode)
//   globalThis.Date = makeStrictDate(Date)              (--strict)
// once per realm. Only these two names are declared (and dateparse.js's
// makeDateParser, concatenated before it); every helper lives inside them, so
// nothing can clash with the other fragments of that scope.
//
// Two things make the engine's own Date unfit for replay: reading the clock
// (new Date(), Date(), Date.now()) is an effect the journal must see, and
// quickjs-ng follows the host's timezone for every "local time" operation, so
// a run started in New York would replay differently in Tokyo. Here the clock
// comes from readNow() and local time *is* UTC, whatever the host.
//
// The intrinsic is neutralised in place, not hidden behind a copy: a script
// can always reach the intrinsic Date.prototype (the construct protocol falls
// back to it for a newTarget whose `prototype` is not an object), so that
// object itself gets the UTC methods and our constructor, and the intrinsic
// constructor's own `now` and `parse` are replaced too. What JavaScript cannot
// change is the intrinsic constructor's [[Call]]/[[Construct]]; after this it
// is referred to from nowhere a script can reach (tests/test_realm_audit.py
// walks the realm to prove it).

// The realm's Date: clock reads call readNow() (epoch ms, journaled by the
// host), local time is UTC, and parsing is our own port of quickjs-ng's
// parser with "local" meaning UTC (dateparse.js), so no string's result
// depends on the host.
function makeRecordedDate(OrigDate, readNow) {
  const proto = OrigDate.prototype; // the intrinsic: rewritten in place below
  const getTime = proto.getTime;
  const setTime = proto.setTime;
  const dateUTC = OrigDate.UTC;
  // Captured: a script's replacement of Reflect.construct would be handed OrigDate itself.
  const construct = Reflect.construct;
  const parse = makeDateParser(dateUTC);
  const utc = {};
  for (const unit of ['FullYear', 'Month', 'Date', 'Day', 'Hours', 'Minutes', 'Seconds', 'Milliseconds']) {
    utc['get' + unit] = proto['getUTC' + unit];
    if (unit !== 'Day') utc['set' + unit] = proto['setUTC' + unit];
  }

  function Date(...args) {
    if (new.target === undefined) {
      // Date() called as a function ignores its arguments and returns now as a string.
      return methods.toString.call(new OrigDate(readNow()));
    }
    // A real Date (internal time slot, [object Date]); its prototype is new.target's,
    // or the (neutralised) intrinsic one when new.target has none.
    return construct(OrigDate, [timeValue(args)], new.target);
  }

  function timeValue(args) {
    if (args.length === 0) return readNow();
    if (args.length > 1) return dateUTC(...args); // components are UTC, not host-local
    const value = args[0];
    if (isDate(value)) return getTime.call(value);
    const primitive = toPrimitive(value);
    return typeof primitive === 'string' ? parse(primitive) : primitive;
  }

  function isDate(value) {
    try {
      getTime.call(value); // throws unless value has a Date's internal time slot
      return true;
    } catch {
      return false;
    }
  }

  // Every override brand-checks `this` through getTime, as the originals do.
  const isValid = (date) => !Number.isNaN(getTime.call(date));
  const rendering = (render) => function () {
    return isValid(this) ? render(utcFields(this)) : 'Invalid Date';
  };
  const utcFields = (d) => ({
    year: utc.getFullYear.call(d),
    month: utc.getMonth.call(d),
    day: utc.getDate.call(d),
    weekday: utc.getDay.call(d),
    hours: utc.getHours.call(d),
    minutes: utc.getMinutes.call(d),
    seconds: utc.getSeconds.call(d),
  });
  const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const pad = (n) => String(n).padStart(2, '0');
  const yearString = (y) => (y < 0 ? '-' : '') + String(Math.abs(y)).padStart(4, '0');
  const dateString = (f) => `${DAYS[f.weekday]} ${MONTHS[f.month]} ${pad(f.day)} ${yearString(f.year)}`;
  const timeString = (f) => `${pad(f.hours)}:${pad(f.minutes)}:${pad(f.seconds)} GMT+0000 (Coordinated Universal Time)`;
  // A fixed en-US rendering; locales and options are ignored (the realm has no Intl).
  const localeDate = (f) => `${f.month + 1}/${f.day}/${f.year}`;
  const localeTime = (f) => `${f.hours % 12 || 12}:${pad(f.minutes)}:${pad(f.seconds)} ${f.hours < 12 ? 'AM' : 'PM'}`;

  const methods = {
    constructor: Date,
    getTimezoneOffset() {
      return isValid(this) ? 0 : NaN;
    },
    getYear() {
      return utc.getFullYear.call(this) - 1900;
    },
    setYear(value) {
      const wasValid = isValid(this);
      const year = Math.trunc(Number(value));
      if (Number.isNaN(year)) return setTime.call(this, NaN);
      if (!wasValid) setTime.call(this, 0); // Annex B: an invalid date starts from +0
      return utc.setFullYear.call(this, year >= 0 && year <= 99 ? 1900 + year : year);
    },
    toString: rendering((f) => `${dateString(f)} ${timeString(f)}`),
    toDateString: rendering(dateString),
    toTimeString: rendering(timeString),
    toLocaleString: rendering((f) => `${localeDate(f)}, ${localeTime(f)}`),
    toLocaleDateString: rendering(localeDate),
    toLocaleTimeString: rendering(localeTime),
  };
  // Local getters and setters are the UTC ones (same functions, so same brand checks).
  for (const name of Object.keys(utc)) defineMethod(proto, name, utc[name]);
  for (const name of Object.keys(methods)) defineMethod(proto, name, methods[name]);

  const statics = {
    now() {
      return readNow();
    },
    parse(string) {
      return parse(String(string));
    },
  };
  // The intrinsic constructor gets them too: should it ever leak, its statics are harmless.
  for (const ctor of [Date, OrigDate]) {
    for (const name of Object.keys(statics)) defineMethod(ctor, name, statics[name]);
  }
  defineMethod(Date, 'UTC', dateUTC);
  Object.defineProperty(Date, 'length', { value: 7 });
  Object.defineProperty(Date, 'prototype', { value: proto, writable: false });
  return Date;

  function defineMethod(object, name, value) {
    Object.defineProperty(object, name, { value, writable: true, configurable: true, enumerable: false });
  }

  // ToPrimitive(value, default), so that a String object, or an object whose
  // valueOf yields a string, is parsed as UTC too.
  function toPrimitive(value) {
    if (Object(value) !== value) return value;
    const exotic = value[Symbol.toPrimitive];
    if (exotic != null) return exotic.call(value, 'default');
    for (const name of ['valueOf', 'toString']) {
      const method = value[name];
      const result = typeof method === 'function' ? method.call(value) : value;
      if (Object(result) !== result) return result;
    }
    throw new TypeError('Cannot convert object to primitive value');
  }

}

// A Date that refuses to read the clock (strict mode) but keeps every
// deterministic use, with the same UTC-only local time.
function makeStrictDate(OrigDate) {
  return makeRecordedDate(OrigDate, () => {
    throw new Error('Date is not available in strict mode; use await ctx.now()');
  });
}
