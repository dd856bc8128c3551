// Date.parse for the realm: quickjs-ng's js_Date_parse (quickjs.c), ported
// line for line, with "local time" read as UTC. A fragment, not a module: the
// realm concatenates it before date.js, whose makeRecordedDate calls
//   const parse = makeDateParser(Date.UTC)
// Its result equals the engine's own parser's under TZ=UTC for every string
// (tests/test_date_timezones.py checks it), and no host timezone reaches it.
// Only this one name is declared.

function makeDateParser(dateUTC) {
  const MONTHS_UPPER = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
  // The engine's zone names and offsets (minutes), in its order: a prefix match, the first that fits wins.
  const TZ_ABBREVIATIONS = [['GMT', 0], ['UTC', 0], ['UT', 0], ['Z', 0], ['EDT', -240], ['EST', -300],
    ['CDT', -300], ['CST', -360], ['MDT', -360], ['MST', -420], ['PDT', -420], ['PST', -480], ['WET', 0],
    ['WEST', 60], ['CET', 60], ['CEST', 120], ['EET', 120], ['EEST', 180]];
  const ABOVE_LATIN1 = /[^\x00-\xff]/;
  const ABOVE_LATIN1_ALL = /[^\x00-\xff]/g;
  // The same lists keyed by first letter, each in its own order: names with different first
  // letters never both match, so this keeps the engine's first-match-wins order.
  const byLetter = (names, entry) => {
    const index = Object.create(null);
    names.forEach((name, i) => (index[name.charCodeAt(0)] ||= []).push(entry(i)));
    return index;
  };
  const MONTHS_BY_LETTER = byLetter(MONTHS_UPPER, (i) => i);
  const ZONES_BY_LETTER = byLetter(TZ_ABBREVIATIONS.map((zone) => zone[0]), (i) => TZ_ABBREVIATIONS[i]);
  return parse;

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
