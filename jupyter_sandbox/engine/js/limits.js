// limits.js: the limits the host enforces from inside the realm (console, stack, memory).
// One of the prelude's parts (realm.py PRELUDE_PARTS), evaluated in one function scope with the others.

// ---- limits the host enforces from inside the realm -----------------------

// A limit reached here fails the run whatever the script catches: realm.py
// raises LimitExceeded on the queued request at its next take, or reads the
// flag after a failure (an out-of-memory realm may not get to push anything).
let limitReached = "";
let nullIsMemory = false; // set by configure: the script cannot throw null itself
let consoleMaxLines = Infinity;
let consoleMaxBytes = Infinity;
let consoleCount = 0;
let consoleBytes = 0;
const RangeErrorProto = RangeError.prototype;
const InternalErrorProto = InternalError.prototype;
const getProto = Object.getPrototypeOf;
const STACK_MESSAGE = /call stack|stack overflow/;
const MEMORY_MESSAGE = /out of memory/;
const NOT_ASCII = /[^\x00-\x7f]/;

function reachLimit(limit) {
  if (limitReached === "") limitReached = limit; // first, allocating nothing
  try { push(`{"t":"limit","limit":"${limit}"${locationText()}}`); } catch (e) { /* the flag is enough */ }
}

// "stack" or "memory" for the engine's own resource errors, else null. Read off
// the prototype and the message the engine set, not instanceof (a script's to answer).
function resourceLimit(e) {
  // QuickJS throws null when it cannot even build the "out of memory" error; a null out of a
  // script that has no `throw` able to throw one (engine/returns.py) is that.
  if (e === null) return nullIsMemory ? "memory" : null;
  if (typeof e !== "object") return null;
  try {
    const proto = getProto(e);
    if (proto !== RangeErrorProto && proto !== InternalErrorProto) return null;
    const message = e.message;
    if (typeof message !== "string") return null;
    if (reExec(STACK_MESSAGE, message) !== null) return "stack";
    if (proto === InternalErrorProto && reExec(MEMORY_MESSAGE, message) !== null) return "memory";
  } catch (failure) { /* a script's own odd object: not a resource error */ }
  return null;
}

// UTF-8 bytes of a string (a lone surrogate counts 3, as the U+FFFD it is stored as).
function utf8Length(text) {
  if (reExec(NOT_ASCII, text) === null) return text.length;
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) { n += 4; i++; }
    else n += 3;
  }
  return n;
}

function consoleFull() {
  return new ErrorCtor(`the console limit is reached (${consoleMaxLines} lines or ${consoleMaxBytes} bytes in one attempt)`);
}

function show(v) {
  if (typeof v === "string") return v;
  if (v instanceof ErrorCtor) return v.stack ? `${v.name}: ${v.message}` : StringCtor(v);
  if (typeof v === "object" && v !== null) {
    try { return JSONstringify(v, errorsAsRecords); } catch (e) {
      const limit = resourceLimit(e);
      if (limit !== null) { reachLimit(limit); throw e; }
      return toTag(v);
    }
  }
  return StringCtor(v);
}

// An Error inside a logged object shows as the record it crosses out as, not as {}.
function errorsAsRecords(key, value) {
  return typeof value === "object" && value !== null && isError(value) ? errorRecord(value) : value;
}

function makeConsole() {
  const out = {};
  for (const level of ["log", "info", "warn", "error", "debug"]) {
    out[level] = (...args) => {
      if (limitReached === "console") throw consoleFull();
      let message = "";
      try {
        for (let i = 0; i < args.length; i++) message += (i ? " " : "") + show(args[i]);
      } catch (e) { // an argument's getter (an Error's message, a toString) ran out of stack or memory
        const limit = resourceLimit(e);
        if (limit !== null) reachLimit(limit);
        throw e;
      }
      consoleBytes += utf8Length(message);
      if (++consoleCount > consoleMaxLines || consoleBytes > consoleMaxBytes) {
        reachLimit("console");
        throw consoleFull();
      }
      append(consoleLines, { __proto__: null, level, message });
      note("console", `,"level":"${level}","message":${str(message)}`);
    };
  }
  return ObjectFreeze(out);
}
