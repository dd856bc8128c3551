// Deterministic Date for the realm. A fragment, not a module: the realm
// concatenates it into one function scope before prelude.js, which installs
//   globalThis.Date = makeRecordedDate(Date, readNow)   (default mode)
//   globalThis.Date = makeStrictDate(Date)              (--strict)
// Only these two names are declared; every helper lives inside them, so
// nothing can clash with the other fragments of that scope.
//
// Two things make the engine's own Date unfit for replay: reading the clock
// (new Date(), Date(), Date.now()) is an effect the journal must see, and
// quickjs-ng follows the host's timezone for every "local time" operation, so
// a run started in New York would replay differently in Tokyo. Here the clock
// comes from readNow() and local time *is* UTC, whatever the host.

// A Date whose clock reads call readNow() (epoch ms, journaled by the host)
// and whose local-time behaviour is UTC. Everything deterministic
// (new Date(ms), Date.UTC, toISOString, ...) is the engine's own. OrigDate is
// left untouched: the replacement gets a copy of its prototype.
function makeRecordedDate(OrigDate, readNow) {
  const orig = OrigDate.prototype;
  const getTime = orig.getTime;

  function Date(...args) {
    if (new.target === undefined) {
      // Date() called as a function ignores its arguments and returns now as a string.
      return proto.toString.call(new OrigDate(readNow()));
    }
    // A real Date (internal time slot, [object Date]) with our prototype.
    return Reflect.construct(OrigDate, [timeValue(args)], new.target);
  }

  function timeValue(args) {
    if (args.length === 0) return readNow();
    if (args.length > 1) return OrigDate.UTC(...args); // components are UTC, not host-local
    const value = args[0];
    if (isDate(value)) return getTime.call(value);
    const primitive = toPrimitive(value);
    return typeof primitive === 'string' ? parseAsUTC(primitive) : primitive;
  }

  function isDate(value) {
    try {
      getTime.call(value); // throws unless value has a Date's internal time slot
      return true;
    } catch {
      return false;
    }
  }

  // An ISO 8601 string as the engine's ISO parser reads it: [1] is the time,
  // [2] the offset. In ES a date-time without an offset is local time.
  const ISO = /^(?:[+-]\d{6}|\d{4})(?:-\d\d){0,2}(T\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?)?(Z|[+-]\d\d(?::?\d\d)?)?$/;
  // A zone in quickjs-ng's other formats: one of its zone names at the start
  // of a word, or a numeric offset after the time ("10:00 -0500").
  const HAS_ZONE = /(?:^|[^a-z])(?:GMT|UTC?|Z|[ECMP][DS]T|WES?T|CES?T|EES?T)|\d:\d.*[+-]\d/i;

  // Date.parse, with "no offset given" meaning UTC rather than host-local:
  // such strings get an explicit UTC zone before the engine parses them.
  function parseAsUTC(string) {
    if (Number.isNaN(OrigDate.parse(string))) return NaN;
    const iso = ISO.exec(string);
    if (iso) return OrigDate.parse(iso[1] && !iso[2] ? string + 'Z' : string);
    return OrigDate.parse(HAS_ZONE.test(string) ? string : string + ' UTC');
  }

  const proto = Object.create(Object.prototype, Object.getOwnPropertyDescriptors(orig));
  for (const unit of ['FullYear', 'Month', 'Date', 'Day', 'Hours', 'Minutes', 'Seconds', 'Milliseconds']) {
    defineMethod(proto, 'get' + unit, orig['getUTC' + unit]);
    if (unit !== 'Day') defineMethod(proto, 'set' + unit, orig['setUTC' + unit]);
  }

  // Every override brand-checks `this` through getTime, as the originals do.
  const isValid = (date) => !Number.isNaN(getTime.call(date));
  const rendering = (render) => function () {
    return isValid(this) ? render(utcFields(this)) : 'Invalid Date';
  };
  const utcFields = (d) => ({
    year: orig.getUTCFullYear.call(d),
    month: orig.getUTCMonth.call(d),
    day: orig.getUTCDate.call(d),
    weekday: orig.getUTCDay.call(d),
    hours: orig.getUTCHours.call(d),
    minutes: orig.getUTCMinutes.call(d),
    seconds: orig.getUTCSeconds.call(d),
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
      return orig.getUTCFullYear.call(this) - 1900;
    },
    setYear(value) {
      const wasValid = isValid(this);
      const year = Math.trunc(Number(value));
      if (Number.isNaN(year)) return orig.setTime.call(this, NaN);
      if (!wasValid) orig.setTime.call(this, 0); // Annex B: an invalid date starts from +0
      return orig.setUTCFullYear.call(this, year >= 0 && year <= 99 ? 1900 + year : year);
    },
    toString: rendering((f) => `${dateString(f)} ${timeString(f)}`),
    toDateString: rendering(dateString),
    toTimeString: rendering(timeString),
    toLocaleString: rendering((f) => `${localeDate(f)}, ${localeTime(f)}`),
    toLocaleDateString: rendering(localeDate),
    toLocaleTimeString: rendering(localeTime),
  };
  for (const name of Object.keys(methods)) defineMethod(proto, name, methods[name]);

  const statics = {
    now() {
      return readNow();
    },
    parse(string) {
      return parseAsUTC(String(string));
    },
    UTC: OrigDate.UTC,
  };
  for (const name of Object.keys(statics)) defineMethod(Date, name, statics[name]);
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
