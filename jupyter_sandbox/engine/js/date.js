// Deterministic Date for the realm. A fragment, not a module: the realm
// concatenates it into one function scope before prelude.js, which installs
//   globalThis.Date = makeRecordedDate(Date, readNow)   (default mode)
//   globalThis.Date = makeStrictDate(Date)              (--strict)
// once per realm. Only these two names are declared; every helper lives
// inside them, so nothing can clash with the other fragments of that scope.
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
// parser with "local" meaning UTC, so no string's result depends on the host.
function makeRecordedDate(OrigDate, readNow) {
  const proto = OrigDate.prototype; // the intrinsic: rewritten in place below
  const getTime = proto.getTime;
  const setTime = proto.setTime;
  const dateUTC = OrigDate.UTC;
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
    return Reflect.construct(OrigDate, [timeValue(args)], new.target);
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
  // The engine's zone names and offsets (minutes), in its order: a prefix match, the first that fits wins.
  const TZ_ABBREVIATIONS = [['GMT', 0], ['UTC', 0], ['UT', 0], ['Z', 0], ['EDT', -240], ['EST', -300],
    ['CDT', -300], ['CST', -360], ['MDT', -360], ['MST', -420], ['PDT', -420], ['PST', -480], ['WET', 0],
    ['WEST', 60], ['CET', 60], ['CEST', 120], ['EET', 120], ['EEST', 180]];
  const ABOVE_LATIN1 = /[^\x00-\xff]/;
  const ABOVE_LATIN1_ALL = /[^\x00-\xff]/g;
  const MONTHS_UPPER = MONTHS.map((m) => m.toUpperCase());
  // The same lists keyed by first letter, each in its own order: names with different first
  // letters never both match, so this keeps the engine's first-match-wins order.
  const byLetter = (names, entry) => {
    const index = Object.create(null);
    names.forEach((name, i) => (index[name.charCodeAt(0)] ||= []).push(entry(i)));
    return index;
  };
  const MONTHS_BY_LETTER = byLetter(MONTHS_UPPER, (i) => i);
  const ZONES_BY_LETTER = byLetter(TZ_ABBREVIATIONS.map((zone) => zone[0]), (i) => TZ_ABBREVIATIONS[i]);
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

  // ---- Date.parse: quickjs-ng's js_Date_parse (quickjs.c), ported line for line,
  // with "local time" read as UTC. Its result equals the engine's own under
  // TZ=UTC for every string (tests/test_date_timezones.py checks it).

  function parse(input) {
    // The engine reads at most 127 code units as bytes: above 255 is 'x' (U+2212 is '-'), NUL ends it.
    let text = input.length > 127 ? input.slice(0, 127) : input;
    const nul = text.indexOf('\0');
    if (nul >= 0) text = text.slice(0, nul);
    if (ABOVE_LATIN1.test(text)) text = text.replace(ABOVE_LATIN1_ALL, (c) => (c === '\u2212' ? '-' : 'x'));
    const sp = text + '\0'; // read with charCodeAt: NUL at the end, NaN past it, as C's buffer
    const fields = isoString(sp) || otherString(sp);
    if (!fields) return NaN;
    const max = [0, 11, 31, 24, 59, 59];
    for (let i = 1; i < 6; i++) if (fields[i] > max[i]) return NaN;
    if (fields[3] === 24 && (fields[4] | fields[5] | fields[6])) return NaN;
    return makeTime(fields) - fields[8] * 60000;
  }

  // set_date_fields(fields, not local): Date.UTC but without its two-digit-year rule
  // (400 Gregorian years are exactly 146097 days, so shift such years out of its reach).
  function makeTime(f) {
    if (f[0] >= 0 && f[0] < 100) return dateUTC(f[0] + 400, f[1], f[2], f[3], f[4], f[5], f[6]) - 146097 * 86400000;
    return dateUTC(f[0], f[1], f[2], f[3], f[4], f[5], f[6]);
  }

  // A cursor over the bytes; each reader advances it only when it succeeds, as in C.
  function isoString(sp) {
    const f = [1970, 0, 1, 0, 0, 0, 0, 0, 0];
    const at = { p: 0 };
    const sgn = sp.charCodeAt(0);
    if (sgn === 45 || sgn === 43) { // '-' '+'
      at.p++;
      const year = digits(sp, at, 6, 6);
      if (year === null) return null;
      if (sgn === 45) {
        if (year === 0) return null; // -000000
        f[0] = -year;
      } else f[0] = year;
    } else {
      const year = digits(sp, at, 4, 4);
      if (year === null) return null;
      f[0] = year;
    }
    if (skip(sp, at, 45)) {
      const month = digits(sp, at, 2, 2);
      if (month === null || month < 1) return null;
      f[1] = month - 1;
      if (skip(sp, at, 45)) {
        const day = digits(sp, at, 2, 2);
        if (day === null || day < 1) return null;
        f[2] = day;
      }
    }
    if (skip(sp, at, 84)) { // 'T'
      const hours = digits(sp, at, 2, 2);
      const colon = hours !== null && skip(sp, at, 58);
      const minutes = colon ? digits(sp, at, 2, 2) : null;
      if (minutes === null) {
        f[3] = 100; // rejected by the range check
        return f;
      }
      f[3] = hours;
      f[4] = minutes;
      if (skip(sp, at, 58)) {
        const seconds = digits(sp, at, 2, 2);
        if (seconds === null) return null;
        f[5] = seconds;
        milliseconds(sp, at, f);
      }
    }
    if (sp.charCodeAt(at.p) !== 0 && !tzOffset(sp, at, f, true)) return null;
    return sp.charCodeAt(at.p) === 0 ? f : null;
  }

  function otherString(sp) {
    const f = [2001, 1, 1, 0, 0, 0, 0, 0, 0];
    const at = { p: 0 };
    const num = [];
    let hasYear = false, hasMon = false, hasTime = false;
    for (;;) {
      while (sp.charCodeAt(at.p) === 32) at.p++;
      if (sp.charCodeAt(at.p) === 0) break;
      const start = at.p;
      const c = sp.charCodeAt(at.p);
      let value;
      if (c === 43 || c === 45) {
        if (!(hasTime && tzOffset(sp, at, f, false))) {
          at.p++;
          value = digits(sp, at, 1, 0);
          if (value !== null) {
            if (c === 45) {
              if (value === 0) return null;
              value = -value;
            }
            f[0] = value;
            hasYear = true;
          }
        }
      } else if ((value = digits(sp, at, 1, 0)) !== null) {
        if (skip(sp, at, 58)) { // a time
          f[3] = value;
          const minutes = digits(sp, at, 1, 2);
          if (minutes === null) return null;
          f[4] = minutes;
          if (skip(sp, at, 58)) {
            const seconds = digits(sp, at, 1, 2);
            if (seconds === null) return null;
            f[5] = seconds;
            milliseconds(sp, at, f);
          } else if (sp.charCodeAt(at.p) !== 0 && sp.charCodeAt(at.p) !== 32) return null;
          hasTime = true;
        } else if (at.p - start > 2) {
          f[0] = value;
          hasYear = true;
        } else if (value < 1 || value > 31) {
          f[0] = value + (value < 100) * 1900 + (value < 50) * 100;
          hasYear = true;
        } else {
          if (num.length === 3) return null;
          num.push(value);
        }
      } else if (month(sp, at, f)) {
        hasMon = true;
        skipUntil(sp, at, true);
      } else if (hasTime && match(sp, at, 'PM')) {
        if (f[3] !== 12) f[3] += 12; // past 12 is rejected by the range check
        continue;
      } else if (hasTime && match(sp, at, 'AM')) {
        if (f[3] > 12) return null;
        if (f[3] === 12) f[3] -= 12;
        continue;
      } else if (tzAbbreviation(sp, at, f)) {
        continue;
      } else if (c === 40) { // '(' a parenthesised phrase
        let level = 0;
        while (sp.charCodeAt(at.p) !== 0) {
          const d = sp.charCodeAt(at.p++);
          level += d === 40;
          level -= d === 41;
          if (!level) break;
        }
        if (level > 0) return null;
      } else if (c === 41) {
        return null;
      } else {
        if (hasYear || hasMon || hasTime || num.length) return null;
        skipUntil(sp, at, false); // a word before the date
      }
      for (let c = sp.charCodeAt(at.p); c === 45 || c === 47 || c === 46 || c === 44; c = sp.charCodeAt(++at.p)); // - / . ,
    }
    if (num.length + hasYear + hasMon > 3) return null;
    const century = (y) => y + (y < 100) * 1900 + (y < 50) * 100;
    switch (num.length) {
      case 0:
        if (!hasYear) return null;
        break;
      case 1:
        if (hasMon) f[2] = num[0];
        else f[1] = num[0];
        break;
      case 2:
        if (hasYear) {
          f[1] = num[0];
          f[2] = num[1];
        } else if (hasMon) {
          f[0] = century(num[1]);
          f[2] = num[0];
        } else {
          f[1] = num[0];
          f[2] = num[1];
        }
        break;
      default:
        f[0] = century(num[2]);
        f[1] = num[0];
        f[2] = num[1];
    }
    if (f[1] < 1 || f[2] < 1) return null;
    f[1] -= 1;
    return f;
  }

  function skip(sp, at, c) {
    if (sp.charCodeAt(at.p) !== c) return false;
    at.p++;
    return true;
  }

  // string_get_digits: at least min digits, stop after max (0: no maximum), at most 9 significant.
  function digits(sp, at, min, max) {
    let v = 0, p = at.p;
    const start = p;
    while (sp.charCodeAt(p) >= 48 && sp.charCodeAt(p) <= 57) {
      if (v >= 100000000) return null;
      v = v * 10 + sp.charCodeAt(p) - 48;
      p++;
      if (p - start === max) break;
    }
    if (p - start < min) return null;
    at.p = p;
    return v;
  }

  function milliseconds(sp, at, f) {
    let p = at.p;
    if (sp.charCodeAt(p) !== 46 && sp.charCodeAt(p) !== 44) return;
    p++;
    const start = p;
    let mul = 100, ms = 0;
    while (sp.charCodeAt(p) >= 48 && sp.charCodeAt(p) <= 57) {
      ms += (sp.charCodeAt(p) - 48) * mul;
      mul = Math.trunc(mul / 10);
      p++;
      if (p - start === 9) break;
    }
    if (p > start) { // the separator counts only with digits after it
      f[6] = ms;
      at.p = p;
    }
  }

  function tzOffset(sp, at, f, strict) {
    let p = at.p;
    const sgn = sp.charCodeAt(p++);
    let tz = 0;
    if (sgn === 43 || sgn === 45) {
      const inner = { p };
      let hh = digits(sp, inner, 1, 0);
      if (hh === null) return false;
      let n = inner.p - p;
      p = inner.p;
      if (strict && n !== 2 && n !== 4) return false;
      while (n > 4) {
        n -= 2;
        hh = Math.trunc(hh / 100);
      }
      let mm = 0;
      if (n > 2) {
        mm = hh % 100;
        hh = Math.trunc(hh / 100);
      } else if (sp.charCodeAt(p) === 58) {
        inner.p = p + 1;
        mm = digits(sp, inner, 2, 2);
        if (mm === null) return false;
        p = inner.p;
      }
      if (hh > 23 || mm > 59) return false;
      tz = hh * 60 + mm;
      if (sgn !== 43) tz = -tz;
    } else if (sgn !== 90) { // 'Z'
      return false;
    }
    at.p = p;
    f[8] = tz;
    return true;
  }

  function upper(c) {
    return c >= 97 && c <= 122 ? c - 32 : c;
  }

  // Whether the bytes at the cursor are `text` (upper case), ignoring ASCII case; advances past it if so.
  function match(sp, at, text) {
    for (let i = 0; i < text.length; i++) if (upper(sp.charCodeAt(at.p + i)) !== text.charCodeAt(i)) return false;
    at.p += text.length;
    return true;
  }

  function month(sp, at, f) {
    const candidates = MONTHS_BY_LETTER[upper(sp.charCodeAt(at.p))];
    if (candidates === undefined) return false;
    for (let i = 0; i < candidates.length; i++) {
      const n = candidates[i];
      if (match(sp, at, MONTHS_UPPER[n])) { // match() advances by exactly 3
        f[1] = n + 1;
        return true;
      }
    }
    return false;
  }

  function tzAbbreviation(sp, at, f) {
    const candidates = ZONES_BY_LETTER[upper(sp.charCodeAt(at.p))];
    if (candidates === undefined) return false;
    for (let i = 0; i < candidates.length; i++) {
      if (match(sp, at, candidates[i][0])) {
        f[8] = candidates[i][1];
        return true;
      }
    }
    return false;
  }

  // Skip to NUL, ' ', '-', '/', '(' (and with digits, to a digit).
  function skipUntil(sp, at, digitsStop) {
    for (let c = sp.charCodeAt(at.p); c !== 0 && c !== 32 && c !== 45 && c !== 47 && c !== 40; c = sp.charCodeAt(++at.p)) {
      if (digitsStop && c >= 48 && c <= 57) break;
    }
  }
}

// A Date that refuses to read the clock (strict mode) but keeps every
// deterministic use, with the same UTC-only local time.
function makeStrictDate(OrigDate) {
  return makeRecordedDate(OrigDate, () => {
    throw new Error('Date is not available in strict mode; use await ctx.now()');
  });
}
