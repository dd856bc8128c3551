// prelude.js: the script's world. realm.py evaluates it once per realm, in one
// function scope together with textcodec.js and date.js, before the script.
//
// The host's plumbing (the request queue, the resolvers, the replay plan) lives
// in this closure. Only `__jsbx_host` is put on the global object, and realm.py
// reads its functions and deletes it before the script runs, so a script cannot
// settle its own promises, forge a result or rewrite the journal.
//
// Everything the host relies on is captured here before the script runs: a
// script that replaces JSON.stringify, Map.prototype.get or Promise.prototype.then
// changes its own world, not how the host reads and records it.

const G = globalThis;
const uncurry = (f) => Function.prototype.call.bind(f);
const JSONstringify = JSON.stringify;
const JSONparse = JSON.parse;
const ObjectKeys = Object.keys;
const ObjectFreeze = Object.freeze;
const ObjectDefine = Object.defineProperty;
const isArray = Array.isArray;
const NumberIsFinite = Number.isFinite;
const NumberIsInteger = Number.isInteger;
const StringCtor = String;
const ErrorCtor = Error;
const TypeErrorCtor = TypeError;
const PromiseCtor = Promise;
const OrigDate = Date;
const toTag = uncurry(Object.prototype.toString);
const ObjectCreate = Object.create;
// The host's tables are prototype-less objects: nothing a script does to
// Map.prototype or Object.prototype can reach them, and they are fast.
const table = () => ObjectCreate(null);
const arraySort = uncurry(Array.prototype.sort);
const arrayJoin = uncurry(Array.prototype.join);
const strSplit = uncurry(String.prototype.split);
const reExec = uncurry(RegExp.prototype.exec);
const toWellFormed = uncurry(String.prototype.toWellFormed);
const isWellFormed = uncurry(String.prototype.isWellFormed);
const strSlice = uncurry(String.prototype.slice);
const strLastIndexOf = uncurry(String.prototype.lastIndexOf);
const promiseThen = uncurry(Promise.prototype.then);
const promiseResolve = Promise.resolve.bind(Promise);
const promiseReject = Promise.reject.bind(Promise);
const hasOwn = uncurry(Object.prototype.hasOwnProperty);
const isError = Error.isError; // the [[ErrorData]] brand: no toStringTag or instanceof a script could fake
// Error.prototype.stack is a configurable accessor: the host reads and sets stacks through
// the intrinsic one, so a script's replacement never runs on the host's (live-only) reads.
const errorStackAccessor = Object.getOwnPropertyDescriptor(Error.prototype, "stack");
const errorStack = uncurry(errorStackAccessor.get);
const setErrorStack = uncurry(errorStackAccessor.set);
const ObjectProto = Object.prototype;
const ProxyCtor = Proxy;
const SymbolSpecies = Symbol.species;
const reflectGet = Reflect.get;
const realNow = Date.now;
const realRandom = Math.random;
const MathFloor = Math.floor;
const MathMax = Math.max;
const MathMin = Math.min;
const Int32 = Int32Array;
const typedSort = uncurry(Object.getPrototypeOf(Int32Array.prototype).sort);
const toLower = uncurry(String.prototype.toLowerCase);

const MAX_DEPTH = 256; // below the 400 levels the journal's CBOR decoder reads back

// quickjs-ng builds long concatenations as "ropes", which the Python binding
// cannot read (Unknown quickjs tag: -6): every string handed to the host is flattened.
function flat(text) {
  return strSlice(text, 0);
}

// A JSON string literal of any value's text, lone surrogates replaced (they cannot be stored).
function str(v) {
  let text;
  try { text = StringCtor(v); } catch (e) { text = unprintable(e); }
  return JSONstringify(toWellFormed(text));
}

// Append to a host array without [[Set]], which would run a setter a script
// put on Array.prototype (and so see, or swallow, what the host records).
function append(list, value) {
  put(list, list.length, value);
}

function put(object, key, value) {
  ObjectDefine(object, key, { __proto__: null, value, writable: true, enumerable: true, configurable: true });
}

// A field of a record the host was handed (JSON it parsed): its own, never one a
// script put on Object.prototype (which could turn a success into a failure).
function own(record, key) {
  return record !== null && typeof record === "object" && hasOwn(record, key) ? record[key] : undefined;
}

// The value a completion gives the script, live (settle) and replayed (the plan)
// alike: a completion that carries none (a fired timer) gives null, never undefined.
function completionValue(record, key) {
  return hasOwn(record, key) ? record[key] : null;
}

// ---- settings, filled by configure() -------------------------------------

let runId = null;
let lineOffset = 0;       // the script starts at this line + 1 (see realm.py)
let actionNames = table();
let actionList = "";
let actionSorted = [];    // the registered names, sorted: for the message about an unknown one
let strict = false;
let clockBase = 0;        // host clock (epoch ms) at the last entry into JS
let clockReal = 0;        // realNow() at that moment
let clockTicks = true;    // whether the host's clock moves on its own (a ManualClock does not)

// ---- canonical JSON: validation, transport and content keys in one pass ---
//
// A value crosses as JSON.stringify would write it (docs/values.md): toJSON (own or
// inherited) called with its key, boxed primitives unboxed, undefined, functions and
// symbols left out of objects and null in arrays, keys sorted (the content key's form);
// except that what JSON would carry wrongly or not at all is refused with its path:
// NaN and Infinity, BigInt, a lone surrogate, a cycle, nesting past MAX_DEPTH, and any
// object but a plain one, an array or an Error (a Map, a Set, a RegExp, a typed array).

const reflectApply = Reflect.apply;
const numberValue = uncurry(Number.prototype.valueOf);
const stringValue = uncurry(String.prototype.valueOf);
const booleanValue = uncurry(Boolean.prototype.valueOf);
let hostValues = false; // while the host writes JSON it parsed itself: no toJSON of a script's is asked

// What JSON.stringify makes of a value before writing it: its toJSON(key)'s result, a boxed
// primitive's own value. ``key`` is the property name, or an index (made a string only for toJSON).
function prepared(v, key) {
  if (typeof v !== "object" || v === null) {
    if (typeof v !== "bigint" || hostValues) return v;
  } else if (hostValues) {
    return v;
  }
  const toJSON = v.toJSON;
  if (typeof toJSON === "function") v = reflectApply(toJSON, v, [typeof key === "number" ? StringCtor(key) : key]);
  if (typeof v !== "object" || v === null) return v;
  switch (toTag(v)) { // the brand's own value, as JSON.stringify reads [[NumberData]] and the rest
    case "[object Number]": try { return numberValue(v); } catch (e) { return v; }
    case "[object String]": try { return stringValue(v); } catch (e) { return v; }
    case "[object Boolean]": try { return booleanValue(v); } catch (e) { return v; }
  }
  return v;
}

// Whether JSON.stringify leaves a prepared value out of an object (and writes null in an array).
function absent(v) {
  return v === undefined || typeof v === "function" || typeof v === "symbol";
}

// The JSON text of a value, its parts appended to one list and joined once: QuickJS copies a string that
// grows by +=, so building a 30 MB text piece by piece that way takes seconds, a join a fraction of one.
function canon(v, path, seen) {
  const parts = [];
  write(v, path, seen, parts);
  return arrayJoin(parts, "");
}

function write(v, path, seen, parts) {
  switch (typeof v) {
    case "string":
      if (!isWellFormed(v)) throw new TypeErrorCtor(`${path} is a string with a lone surrogate`);
      append(parts, JSONstringify(v));
      return;
    case "number":
      if (!NumberIsFinite(v)) throw new TypeErrorCtor(`${path} is ${v}, which JSON cannot carry`);
      append(parts, JSONstringify(v));
      return;
    case "boolean":
      append(parts, v ? "true" : "false");
      return;
    case "undefined":
      throw new TypeErrorCtor(`${path} is undefined`);
    case "bigint":
      throw new TypeErrorCtor(`${path} is a BigInt, which JSON cannot carry`);
    case "symbol":
      throw new TypeErrorCtor(`${path} is a symbol, which JSON cannot carry`);
    case "function":
      throw new TypeErrorCtor(`${path} is a function, which JSON cannot carry`);
  }
  if (v === null) { append(parts, "null"); return; }
  if (seen.length >= MAX_DEPTH) throw new TypeErrorCtor(`${path} nests deeper than ${MAX_DEPTH} levels`);
  for (let i = 0; i < seen.length; i++) {
    if (seen[i] === v) throw new TypeErrorCtor(`${path} is a cyclic reference`);
  }
  append(seen, v); // the path from the root: a value met again on it is a cycle
  if (isError(v)) {
    write(errorRecord(v), path, seen, parts);
    seen.length--;
    return;
  }
  if (isArray(v)) {
    append(parts, "[");
    const n = v.length;
    for (let i = 0; i < n; i++) {
      if (i) append(parts, ",");
      const item = prepared(v[i], i);
      if (absent(item)) append(parts, "null");
      else write(item, `${path}[${i}]`, seen, parts);
    }
    append(parts, "]");
  } else {
    const tag = toTag(v);
    if (tag !== "[object Object]") {
      seen.length--;
      const kind = strSlice(tag, 8, -1);
      const article = reExec(/^[AEIOU]/, kind) ? "an" : "a"; // an Arguments object, an Int8Array
      throw new TypeErrorCtor(`${path} is ${article} ${kind}, which JSON cannot carry`);
    }
    const keys = arraySort(ObjectKeys(v));
    append(parts, "{");
    let first = true;
    for (let i = 0; i < keys.length; i++) {
      const value = prepared(v[keys[i]], keys[i]);
      if (absent(value)) continue; // as JSON.stringify: an absent field
      // refused as a lone surrogate in a value is: it cannot be stored, and rewriting it changes the key
      if (!isWellFormed(keys[i])) throw new TypeErrorCtor(`${path} has a key with a lone surrogate`);
      append(parts, (first ? "" : ",") + JSONstringify(keys[i]) + ":");
      first = false;
      write(value, `${path}.${keys[i]}`, seen, parts);
    }
    append(parts, "}");
  }
  seen.length--;
}

// A JS Error crossing out (returned, a settled reason, in data, a log line or an
// action's input) is carried as {name, message}, its stack where it has one (the
// script's own frames, as workflow.js:LINE:COL) and its own enumerable fields
// (an ActionError's `action`): built from the same code on the same lines, it is
// the same live and replayed.
function errorRecord(e) {
  const out = table();
  const keys = ObjectKeys(e);
  for (let i = 0; i < keys.length; i++) put(out, keys[i], e[keys[i]]);
  const name = e.name;
  const message = e.message;
  put(out, "name", name === undefined ? "Error" : printable(name));
  put(out, "message", message === undefined ? "" : printable(message));
  const stack = e.stack;
  if (typeof stack === "string") {
    const frames = scriptStack(stack);
    if (frames !== "") put(out, "stack", frames);
    else delete out.stack;
  }
  return out;
}

function printable(v) {
  try { return StringCtor(v); } catch (e) { return unprintable(e); }
}

// A value whose toString threw prints as "[unprintable]", unless what it threw is the
// engine running out of stack or memory: that is the limit, whatever the script catches.
function unprintable(e) {
  const limit = resourceLimit(e);
  if (limit !== null) { reachLimit(limit); throw e; }
  return "[unprintable]";
}

const INPUT_FRAME = /<input>:(\d+):(\d+)/;

// A raw stack with the prelude's frames (lines up to lineOffset) left out.
function withoutHostFrames(stack) {
  if (typeof stack !== "string") return stack;
  const lines = strSplit(stack, "\n");
  let out = "";
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] === "") continue;
    const m = reExec(INPUT_FRAME, lines[i]);
    if (m === null || +m[1] > lineOffset) out += lines[i] + "\n";
  }
  return out;
}

// The script's frames of a stack, renamed workflow.js:LINE:COL as realm.py's
// rewrite_stack does; the prelude's own frames (plumbing) are left out.
function scriptStack(stack) {
  const lines = strSplit(stack, "\n");
  let out = "";
  for (let i = 0; i < lines.length; i++) {
    const m = reExec(INPUT_FRAME, lines[i]);
    if (m === null || +m[1] <= lineOffset) continue;
    out += (out === "" ? "" : "\n") + strSlice(lines[i], 0, m.index) + `workflow.js:${+m[1] - lineOffset}:${m[2]}`
      + strSlice(lines[i], m.index + m[0].length);
  }
  return out;
}

// A value the script hands the host, as JSON text; undefined (as JSON.stringify's undefined) is null.
function toJSONText(v, path) {
  if (typeof v === "number" && NumberIsFinite(v)) return JSONstringify(v); // the common case, no walk
  v = prepared(v, "");
  if (v === undefined) return "null";
  return canon(v, path, []);
}

// JSON the host parsed (a bare call log's entries), written back: nothing of the script's runs.
function hostJSONText(v, path) {
  hostValues = true;
  try { return toJSONText(v, path); } finally { hostValues = false; }
}

// ---- the request queue: what the script asked the host for ---------------

// The request queue is one string of JSON items: nothing a script does to
// Array.prototype can reach it.
let queue = "";
// What a bare call log served, journaled as served: held apart so a replay does not hand the host one queue
// per served entry; it joins the queue ahead of whatever the script asks next (the order stays the journal's),
// or goes with the last delivery (``deliver``), so the host journals a whole replay in one batch.
let served = "";
function joinServed() {
  if (served !== "") { queue = queue === "" ? served : queue + "," + served; served = ""; }
}
function push(text) {
  joinServed();
  queue = queue === "" ? text : queue + "," + text;
}
// A batch past this many characters joins the queue at once (the next ``deliver`` hands it over): large served
// values are not held twice in the realm's memory for the whole replay.
const SERVED_BATCH = 1 << 20;
function pushServed(text) {
  served = served === "" ? text : served + "," + text;
  if (served.length > SERVED_BATCH) joinServed();
}

// A live call's line is read off a stack cut short: the frames above the prelude's function ``below`` left out
// and at most CALL_FRAMES kept, through the engine's own limit (its accessor, read once: a script may redefine
// Error.stackTraceLimit, never the limit the host sets here). A whole stack costs several times more per call.
const stackLimit = Object.getOwnPropertyDescriptor(ErrorCtor, "stackTraceLimit");
const getStackLimit = uncurry(stackLimit.get);
const setStackLimit = uncurry(stackLimit.set);
const captureStack = ErrorCtor.captureStackTrace;
const stackHolder = table();
// The script's frame below ``effect``: callAction and the `actions.NAME` arrow, or ctx.delegate's child; a
// deeper one (none today) is still found, by a whole stack.
const CALL_FRAMES = 3;

function scriptLocation(below, frames) {
  if (below !== undefined) {
    const limit = getStackLimit(ErrorCtor);
    setStackLimit(ErrorCtor, frames);
    try {
      captureStack(stackHolder, below);
    } finally {
      setStackLimit(ErrorCtor, limit);
    }
    const at = frames === 1 ? onlyFrame(stackHolder.stack) : firstScriptFrame(stackHolder.stack);
    if (at !== null) return at;
  }
  return firstScriptFrame(errorStack(new ErrorCtor()));
}

// A one-frame stack's ":LINE:COLUMN" (its end, before ")\n"), if that frame is the script's: read by hand, a regular
// expression costs a live call more than the capture itself.
function onlyFrame(stack) {
  if (typeof stack !== "string") return null;
  let end = stack.length;
  if (end > 0 && stack[end - 1] === "\n") end--;
  if (end > 0 && stack[end - 1] === ")") end--;
  const colon = strLastIndexOf(stack, ":", end - 1);
  const before = colon > 0 ? strLastIndexOf(stack, ":", colon - 1) : -1;
  if (before < 0) return null;
  const line = +strSlice(stack, before + 1, colon), column = +strSlice(stack, colon + 1, end);
  return line > lineOffset && NumberIsInteger(line) && NumberIsInteger(column) ? [line - lineOffset, column] : null;
}

// The first frame below lineOffset's block: the script's own line.
function firstScriptFrame(stack) {
  if (typeof stack !== "string") return null;
  SCRIPT_FRAMES.lastIndex = 0;
  for (let m = reExec(SCRIPT_FRAMES, stack); m !== null; m = reExec(SCRIPT_FRAMES, stack)) {
    if (+m[1] > lineOffset) return [+m[1] - lineOffset, +m[2]];
  }
  return null;
}
// A frame's ":LINE:COLUMN" at the end of its line, read over the whole stack at once, for lines of five digits
// or more: the script's start past lineOffset (20000, realm.py), the prelude's have four, so they are skipped.
const SCRIPT_FRAMES = /:(\d{5,}):(\d+)\)?$/gm;

function locationText(below, frames) {
  const at = scriptLocation(below, frames);
  return at === null ? "" : `,"line":${at[0]},"column":${at[1]}`;
}

// ---- replay: the journal handed over once, served inside the realm --------

// The plan is held by columns, one index per recorded completion, in the order they
// completed live (no object per entry: a resume of thousands pays for none). Every
// column is the host's own: filled before the script runs, or a typed array, so no
// setter a script puts on Array.prototype or Object.prototype sees a write or adds a
// value (an `e` that turns a replayed success into a failure, a timer's value).
const recorded = table();       // slot -> index
let byKey = null;               // content key -> {recs (indices), next}: FIFO per key, built at the first miss
let order = new Int32Array(0);  // the indices of async completions, in the order they completed live
let orderCount = 0;             // its length (a typed array's length is a getter a script could replace)
let rS = [], rK = [], rV = [], rE = [], rKin = [], rRes = [], rRej = [], rName = [];
let rFail = new Uint8Array(0), rSync = rFail, rImp = rFail, rUsed = rFail, rDone = rFail;
let cursor = 0;
let undelivered = 0;
let notesRecorded = 0;
let noteIndex = 0;
let nextSlot = 0;
let frontier = 0;               // 1 + the last slot the journal reserved: before it, the script is replaying

// The content key of an effect recorded in a bare call log (one the journal did not key).
function keyOf(kin) {
  const input = hostJSONText(kin.input, "call_log input");
  switch (kin.op) {
    case "call": return `tool|${kin.name}|${input}`;
    case "sleep": return `sleep|${kin.input}`;
    case "wait": return `wait|${input}|${kin.timeout === undefined ? null : kin.timeout}`;
    default: return `${kin.op}|${input}`;
  }
}

// An effect served from a bare call log is journaled as it is served, so the run's own
// journal holds it and a later resume by run id replays it instead of running it again.
// The host holds the plan it handed over: it is told which entry was served, and its key.
function journalImported(i) {
  if (rSync[i]) {
    pushServed(`{"t":"${rK[i]}","s":${rS[i]},"value":${JSONstringify(rV[i])}}`);
    return;
  }
  pushServed(`{"t":"imported","i":${i},"s":${rS[i]},"key":${JSONstringify(rK[i])}}`);
}

// The plan (plan.py ``ReplayPlan.to_js``): columns s (slot), k (content key, null where a bare
// call log gives kin instead), v (value); e: [index, error] of each failure; sync: the
// indices of clock and random reads; kin: by index, or absent; imp: 1 when every entry
// comes from a bare call log (not in this run's journal yet). Read before the script runs.
function loadPlan(plan) {
  const n = plan.s.length;
  rS = plan.s; rK = plan.k; rV = plan.v;
  rKin = plan.kin === undefined ? new Array(n).fill(null) : plan.kin;
  rE = new Array(n).fill(null); rRes = new Array(n).fill(null); rRej = new Array(n).fill(null);
  rName = new Array(n).fill(null);
  rFail = new Uint8Array(n); rSync = new Uint8Array(n); rUsed = new Uint8Array(n); rDone = new Uint8Array(n);
  rImp = new Uint8Array(n);
  if (plan.imp === 1) rImp.fill(1);
  const errors = plan.e || [];
  for (let j = 0; j < errors.length; j++) { rFail[errors[j][0]] = 1; rE[errors[j][0]] = errors[j][1]; }
  const sync = plan.sync || [];
  for (let j = 0; j < sync.length; j++) rSync[sync[j]] = 1;
  orderCount = n - sync.length;
  order = new Int32Array(orderCount);
  for (let i = 0; i < n; i++) {
    if (rK[i] === null) rK[i] = keyOf(rKin[i]);
    recorded[rS[i]] = i;
    if (!rSync[i]) order[undelivered++] = i;
  }
  notesRecorded = plan.notes | 0;
  frontier = plan.frontier | 0;
}

// The FIFO per content key, by slot (docs/replay.md rule 2), for the first effect not served at its own
// slot. Built then, while no entry has been served from it: the same tables an eager
// build would hold (entries served at their slot are skipped as used).
// (It runs while the script does: only intrinsics captured above, typed arrays, own lengths.)
function indexByKey() {
  const index = table();
  const n = rS.length;
  for (let i = 0; i < n; i++) {
    let fifo = index[rK[i]];
    if (fifo === undefined) { fifo = { __proto__: null, recs: null, next: 0, n: 0 }; index[rK[i]] = fifo; }
    fifo.n++;
  }
  const keys = ObjectKeys(index);
  for (let j = 0; j < keys.length; j++) { const fifo = index[keys[j]]; fifo.recs = new Int32(fifo.n); fifo.n = 0; }
  for (let i = 0; i < n; i++) { const fifo = index[rK[i]]; fifo.recs[fifo.n++] = i; }
  // plans come in completion order: by slot, and entries at one slot as they came
  for (let j = 0; j < keys.length; j++) typedSort(index[keys[j]].recs, (a, b) => rS[a] - rS[b] || a - b);
  return index;
}

// What reserve() throws at a divergence: compared by identity, not instanceof (which
// a script's Error[Symbol.hasInstance] would answer).
const DIVERGED = ObjectFreeze(table());

// Reserve the next slot; return the index of the recorded entry that serves it,
// or -1 when the effect must run live (docs/replay.md rules 2 and 4).
function reserve(key, op, name, inputText) {
  const s = nextSlot++;
  const at = recorded[s];
  if (at !== undefined && !rUsed[at] && rK[at] === key) {
    rUsed[at] = 1;
    servedSlot = s;
    return at;
  }
  if (byKey === null) byKey = indexByKey();
  const fifo = byKey[key];
  if (fifo !== undefined) {
    while (fifo.next < fifo.n && rUsed[fifo.recs[fifo.next]]) fifo.next++;
    if (fifo.next < fifo.n) {
      const i = fifo.recs[fifo.next++];
      rUsed[i] = 1;
      servedSlot = s;
      return i;
    }
  }
  if (at !== undefined) {
    const type = op === "call" ? "action" : op;
    const attempted = name === null ? `{"type":"${type}"}` : `{"type":"${type}","name":${JSONstringify(name)},"input":${inputText}}`;
    push(`{"t":"mismatch","s":${s},"attempted":${attempted}${locationText()}}`);
    throw DIVERGED;
  }
  servedSlot = s;
  return -1;
}
let servedSlot = -1; // the slot the last reserve() took (saves an array per call)

// The first recorded completion, in live order, that is awaited and not yet delivered; -1 if none.
function deliverable() {
  while (cursor < orderCount && rDone[order[cursor]]) cursor++;
  for (let j = cursor; j < orderCount; j++) {
    const i = order[j];
    if (!rDone[i] && rRes[i] !== null) return i;
  }
  return -1;
}

// ---- settling: the host's answers go through here only ---------------------

const pending = table(); // slot -> [resolve, reject, actionName]

class ActionError extends ErrorCtor {
  constructor(action, message, issues) {
    super(message);
    // Without the host's frames: live, the host settles a call from `settle`, replayed from
    // `deliver`, and a script that records e.stack must see the same text either way.
    setErrorStack(this, withoutHostFrames(errorStack(this)));
    // defined, not assigned: a frozen Error.prototype must not break the host
    ObjectDefine(this, "action", { __proto__: null, value: action, writable: true, enumerable: true, configurable: true });
    // an input the action's schema refused: [{path, message}] (agents/catalog.py)
    if (issues !== undefined) ObjectDefine(this, "issues", { __proto__: null, value: issues, writable: true, enumerable: true, configurable: true });
  }
}
ObjectDefine(ActionError.prototype, "name", { __proto__: null, value: "ActionError", writable: true, configurable: true });
ObjectFreeze(ActionError); // the host builds these: a script may not swap the constructor `super` calls

// ``error`` is JSON the host parsed: only its own fields are read.
function settleWith(res, rej, action, ok, value, error) {
  if (ok) res(value);
  else rej(new ActionError(own(error, "action") || action, own(error, "message"), own(error, "issues")));
}

// An effect the script asked for. ``inputText`` is its canonical input (the
// end of its key); ``extra`` adds the kind's own fields to a live request. The
// texts a replayed effect never needs are not built for it.
function effect(op, key, name, inputText, extra, caller) {
  let rec;
  try {
    rec = reserve(key, op, name, inputText);
  } catch (e) {
    if (e === DIVERGED) return new PromiseCtor(() => {});
    throw e;
  }
  if (rec >= 0) {
    rName[rec] = name;
    replaying = rec;
    return new PromiseCtor(holdReplayed);
  }
  const s = servedSlot;
  return new PromiseCtor((res, rej) => {
    pending[s] = [res, rej, name];
    // A live call records where the script made it: a failure can then point at its line (agents/tool.py).
    const at = caller !== undefined ? locationText(caller, 1)
      : op === "call" || op === "delegate" || op === "agent" ? locationText(effect, CALL_FRAMES) : "";
    push(`{"t":"${op}","s":${s},"key":${JSONstringify(key)},"name":${JSONstringify(name)},"input":${inputText}${extra}${at}}`);
  });
}

// A replayed effect's promise keeps its resolvers by the plan's index, through one function for all of them
// (a closure per effect, with the variables it captures, is most of what a replayed call allocates). The
// promise constructor calls it at once, before any script code runs, so the index it reads is the one set.
let replaying = -1;
function holdReplayed(res, rej) {
  rRes[replaying] = res; rRej[replaying] = rej;
}

function takeQueue() {
  joinServed();
  const text = "[" + queue + "]";
  queue = "";
  return flat(text);
}

// Synchronous reads (the clock, randomness): served at once, journaled after.
function read(kind, live) {
  let rec;
  try {
    rec = reserve(kind, kind, null, null);
  } catch (e) {
    throw new ErrorCtor(`the script is not deterministic: it read ${kind === "now" ? "the clock" : "Math.random()"} where the journal recorded something else`);
  }
  const s = servedSlot;
  if (rec >= 0) {
    if (rImp[rec]) journalImported(rec);
    return rV[rec];
  }
  const value = live();
  push(`{"t":"${kind}","s":${s},"value":${JSONstringify(value)}}`);
  return value;
}

function liveNow() {
  return MathFloor(clockTicks ? clockBase + (realNow() - clockReal) : clockBase);
}

function readNow() {
  if (strict) throw new ErrorCtor("Date is not available in strict mode; use await ctx.now()");
  return read("now", liveNow);
}

function readRandom() {
  if (strict) throw new ErrorCtor("Math.random is not available in strict mode; take randomness as input (ctx.input)");
  return read("random", realRandom);
}

// ---- notes: console, ctx.log, steps, plan (regenerated by replay) ---------

const consoleLines = [];
const openSteps = [];

function note(kind, fields) {
  const replayed = noteIndex++ < notesRecorded ? 1 : 0;
  const step = openSteps.length ? openSteps[openSteps.length - 1] : null;
  push(`{"t":"${kind}","r":${replayed},"step":${step}${fields}}`);
}

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

// ---- the ctx API -------------------------------------------------------------

function describeInput(what, input) {
  try {
    return toJSONText(input, "input");
  } catch (e) {
    const limit = resourceLimit(e);
    if (limit !== null) { // a getter ran out of stack or memory: the limit, not a bad value
      reachLimit(limit);
      throw e;
    }
    if (e === null || typeof e !== "object") throw e; // a getter threw it: as it is
    throw new TypeErrorCtor(`${what}: ${e.message}`);
  }
}

// Optimal string alignment distance (insertions, deletions, substitutions, swaps of
// neighbours), or limit + 1 as soon as it is more than limit. Typed rows: no index
// write of the host's can reach a setter a script put on Array.prototype.
function editDistance(a, b, limit) {
  if (MathMax(a.length - b.length, b.length - a.length) > limit) return limit + 1;
  let before = new Int32(b.length + 1);
  let prev = new Int32(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = new Int32(b.length + 1);
    row[0] = i;
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      let d = MathMin(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = MathMin(d, before[j - 2] + 1);
      row[j] = d;
      if (d < best) best = d;
    }
    if (best > limit) return limit + 1;
    before = prev;
    prev = row;
  }
  return prev[b.length];
}

// The registered name closest to ``name`` (case aside), if one is near enough to be a typo of it.
function closest(name) {
  const wanted = toLower(name);
  const limit = MathMax(2, MathFloor(wanted.length / 3));
  let best = null;
  let bestDistance = limit + 1;
  for (let i = 0; i < actionSorted.length; i++) {
    const candidate = actionSorted[i];
    const d = editDistance(wanted, toLower(candidate), limit);
    if (d < bestDistance && d < candidate.length) { best = candidate; bestDistance = d; }
  }
  return best;
}

// The failure of a call to an action that is not registered: it names the action,
// the closest registered one and all of them (after a kernel restart, before the
// notebook registers its actions again, this is what a user meets first).
function unknownAction(name) {
  const text = typeof name === "string" ? name : printable(name);
  const near = typeof name === "string" ? closest(name) : null;
  const hint = near === null ? "" : `; did you mean ${JSONstringify(near)}?`;
  const shown = text.length > 80 ? strSlice(text, 0, 80) + "..." : text;
  return new ActionError(text, `no action named ${str(shown)} is registered${hint} (available: ${actionList})`);
}

function callAction(name, input, options, caller) {
  if (typeof name !== "string" || actionNames[name] !== true) return promiseReject(unknownAction(name));
  let inputText;
  try {
    inputText = describeInput(`actions.${name}`, input);
  } catch (e) {
    return promiseReject(e);
  }
  const extra = options && options.description !== undefined && options.description !== null
    ? `,"description":${str(options.description)}` : "";
  return effect("call", `tool|${name}|${inputText}`, name, inputText, extra, caller);
}

function child(op, spec) {
  if (spec === null || typeof spec !== "object") return promiseReject(new TypeErrorCtor(`ctx.${op} takes an object`));
  let specText;
  try { specText = describeInput(`ctx.${op}`, spec); } catch (e) { return promiseReject(e); }
  const name = op === "agent" ? StringCtor(spec.agent) : StringCtor(spec.name || "child");
  return effect(op, `${op}|${specText}`, name, specText, "");
}

function sleep(ms) {
  if (typeof ms !== "number" || !NumberIsFinite(ms) || ms < 0) {
    return promiseReject(new TypeErrorCtor(`ctx.sleep takes a non-negative number of milliseconds, got ${show(ms)}`));
  }
  return effect("sleep", `sleep|${ms}`, "sleep", JSONstringify(ms), `,"ms":${ms}`);
}

function waitForEvent(match, options) {
  const timeout = options && options.timeout !== undefined && options.timeout !== null ? options.timeout : null;
  if (timeout !== null && (typeof timeout !== "number" || !NumberIsFinite(timeout) || timeout < 0)) {
    return promiseReject(new TypeErrorCtor(`ctx.waitForEvent: timeout must be a non-negative number of milliseconds`));
  }
  let matchText;
  try { matchText = describeInput("ctx.waitForEvent", match === undefined ? {} : match); } catch (e) { return promiseReject(e); }
  return effect("wait", `wait|${matchText}|${timeout}`, "waitForEvent", matchText,
    `,"match":${matchText},"timeout":${timeout}`);
}

let stepCounter = 0;

async function step(label, fn) {
  if (typeof fn !== "function") throw new TypeErrorCtor("ctx.step(label, fn): fn must be a function");
  const id = ++stepCounter;
  const parent = openSteps.length ? openSteps[openSteps.length - 1] : null;
  note("step", `,"id":${id},"label":${str(label)},"phase":"start","parent":${parent}`);
  append(openSteps, id);
  const close = () => { // by hand: a script's Array.prototype.lastIndexOf must not reach the host's list
    let at = openSteps.length - 1;
    while (at >= 0 && openSteps[at] !== id) at--;
    if (at >= 0) { for (let i = at; i < openSteps.length - 1; i++) openSteps[i] = openSteps[i + 1]; openSteps.length--; }
  };
  try {
    const value = await fn();
    close();
    note("step", `,"id":${id},"label":${str(label)},"phase":"end","parent":${parent},"outcome":"ok"`);
    return value;
  } catch (e) {
    close();
    note("step", `,"id":${id},"label":${str(label)},"phase":"end","parent":${parent},"outcome":"error","error":${str(show(e))}`);
    throw e;
  }
}

// Start every thunk, in order, into a host array (not Array.prototype.map, whose
// species a script can replace).
function thunks(what, list) {
  if (!isArray(list)) throw new TypeErrorCtor(`${what} takes an array of functions`);
  const started = [];
  const n = list.length;
  for (let i = 0; i < n; i++) {
    const t = list[i];
    if (typeof t !== "function") throw new TypeErrorCtor(`${what}: item ${i} is not a function (pass () => ... thunks)`);
    let task;
    try { task = t(); } catch (e) { task = promiseReject(e); } // a thunk that throws failed, as an async one would
    append(started, task);
  }
  return started;
}

// ctx.parallel and ctx.parallelSettled: a bad list is a rejection too, never a synchronous throw.
function fanOut(what, list, settled) {
  let started;
  try { started = thunks(what, list); } catch (e) { return promiseReject(e); }
  return gather(started, settled);
}

// Promise.all / Promise.allSettled over started thunks, with the intrinsics captured
// before the script ran: a script's Promise.prototype.then, Promise.all or
// Promise.resolve changes its own promises, not what ctx.parallel resolves to.
function gather(promises, settled) {
  return new PromiseCtor((resolve, reject) => {
    const out = [];
    let left = promises.length;
    if (left === 0) { resolve(out); return; }
    for (let i = 0; i < promises.length; i++) {
      const done = (value) => { put(out, i, value); if (--left === 0) resolve(out); };
      promiseThen(promiseResolve(promises[i]),
        settled ? (value) => done({ status: "fulfilled", value }) : done,
        settled ? (reason) => done({ status: "rejected", reason }) : reject);
    }
  });
}

const LOG_LEVELS = ObjectFreeze({ __proto__: null, debug: true, info: true, warn: true, error: true, log: true });

const ctx = {
  get input() { return inputValue; },
  get runId() { return runId; },
  call: callAction,
  delegate: (spec) => child("delegate", spec),
  agent: (spec) => child("agent", spec),
  parallel: (list) => fanOut("ctx.parallel", list, false),
  parallelSettled: (list) => fanOut("ctx.parallelSettled", list, true),
  step,
  plan(plan) {
    if (!isArray(plan)) throw new TypeErrorCtor("ctx.plan takes an array of items (strings or {title, done})");
    note("plan", `,"plan":${describeInput("ctx.plan", plan)}`);
  },
  sleep,
  minutes: (n) => sleep(n * 60000),
  hours: (n) => sleep(n * 3600000),
  waitForEvent,
  continueAsNew(state) {
    push(`{"t":"continue","state":${describeInput("ctx.continueAsNew", state)}}`);
    return new PromiseCtor(() => {});
  },
  now: () => new PromiseCtor((res) => res(read("now", liveNow))),
  log(level, message, data) {
    const lvl = LOG_LEVELS[level] === true ? level : "info";
    const dataText = data === undefined ? "null" : describeInput("ctx.log", data);
    note("log", `,"level":"${lvl}","message":${str(message)},"data":${dataText}`);
  },
  progress(patch) {
    // Read the patch whether or not it is sent: its getters are the script's code, and
    // must run the same live and replayed.
    let text;
    try { text = describeInput("ctx.progress", patch); } catch (e) { return; }
    if (undelivered > 0 || nextSlot < frontier) return; // replaying: progress is for the live UI only
    push(`{"t":"progress","patch":${text}}`);
  },
};

// ---- the global object the script sees ------------------------------------

// The prototype of `actions`: `actions.NAME` for a NAME that is neither registered
// (an own property) nor on Object.prototype (toString, ...) is a function that fails
// as ctx.call does, so `await actions.publsh(x)` throws a catchable ActionError
// instead of "not a function". `then` and `toJSON` stay absent: `actions` is no
// thenable, and serialises as {}. Test for an action with `"name" in actions`.
// A namespace (`actions.files`, for the actions named `files.*`) has one of its own,
// so `actions.files.reed_file(x)` fails the same way, naming `files.reed_file`.
function unregisteredIn(prefix) {
  return new ProxyCtor(ObjectCreate(ObjectProto), {
    __proto__: null,
    get(target, name, receiver) {
      if (typeof name !== "string" || name in target) return reflectGet(target, name, receiver);
      if (name === "then" || name === "toJSON") return undefined;
      return unregisteredAction(prefix + name);
    },
  });
}

// An unregistered name is a function failing as ctx.call does; a member of it is the name one level
// deeper, so a misspelt namespace (`actions.rwa.echo(x)`) fails the same way, naming `rwa.echo`,
// instead of "not a function".
function unregisteredAction(name) {
  return new ProxyCtor((input, options) => callAction(name, input, options), {
    __proto__: null,
    get(target, key, receiver) {
      if (typeof key !== "string" || key in target) return reflectGet(target, key, receiver);
      if (key === "then" || key === "toJSON") return undefined;
      return unregisteredAction(name + "." + key);
    },
  });
}
const unregistered = unregisteredIn("");

// `actions.a.b.c` for the action named "a.b.c": one frozen object per namespace
// (check_name in naming.py keeps a name from also being a namespace).
function namespaceFor(root, name) {
  const segments = name.split(".");
  let object = root;
  for (let i = 0; i < segments.length - 1; i++) {
    const key = segments[i];
    if (!hasOwn(object, key)) put(object, key, ObjectCreate(unregisteredIn(segments.slice(0, i + 1).join(".") + ".")));
    object = object[key];
  }
  return [object, segments[segments.length - 1]];
}

function freezeDeep(object) {
  for (const key of ObjectKeys(object)) if (typeof object[key] === "object") freezeDeep(object[key]);
  return ObjectFreeze(object);
}

let inputValue = null;

function installGlobals(settings) {
  // quickjs-ng implements V8's Error.prepareStackTrace: a script's formatter would
  // get CallSite.getFunction(), the host's own functions from the stack. Its
  // property is an accessor over an internal slot: empty the slot, then replace
  // the accessor with a locked data property so no script can set it again.
  // (No formatter of the host's own either: quickjs-ng calls it while building
  // errors, out-of-memory ones included, where a fuel interrupt could be lost.)
  ErrorCtor.prepareStackTrace = undefined;
  ObjectDefine(ErrorCtor, "prepareStackTrace", { __proto__: null, value: undefined, writable: false, configurable: false });
  // The captured `then` (and every await of a promise) reads these two on each call
  // (SpeciesConstructor): locked, so no script can make the host's promises, or
  // ctx.parallel's, be built by a function of its own.
  ObjectDefine(PromiseCtor.prototype, "constructor", { __proto__: null, writable: false, configurable: false });
  ObjectDefine(PromiseCtor, SymbolSpecies, { __proto__: null, configurable: false });
  const DateImpl = strict ? makeStrictDate(OrigDate) : makeRecordedDate(OrigDate, readNow);
  G.Date = DateImpl;
  const MathObject = G.Math;
  ObjectDefine(MathObject, "random", { __proto__: null, value: readRandom, writable: true, configurable: true });
  for (const name of ["performance", "WeakRef", "FinalizationRegistry", "SharedArrayBuffer", "Atomics", "globalThis"]) {
    delete G[name];
  }
  G.TextEncoder = TextEncoder;
  G.TextDecoder = TextDecoder;
  G.ActionError = ActionError;
  G.console = makeConsole();
  G.data = {};
  const actions = ObjectCreate(unregistered);
  for (const name of settings.actions) {
    const [holder, key] = namespaceFor(actions, name);
    const call = (input, options) => callAction(name, input, options, call);
    put(holder, key, call);
  }
  G.actions = freezeDeep(actions);
  G.ctx = ObjectFreeze(ctx);
}

// ---- the host interface (read by realm.py, then removed from the global) --

// How the script ended: pushed onto the queue, so the host learns it with the requests.
function finish(text) {
  push(`{"t":"done","outcome":${text}}`);
}

function describeError(e) {
  try {
    return describeThrown(e);
  } catch (failure) { // the thrown value's own getters threw: report what we can
    const limit = resourceLimit(failure);
    if (limit !== null) reachLimit(limit);
    return `{"name":"Error","message":"the script threw a value that could not be described","stack":""}`;
  }
}

function describeThrown(e) {
  if (e instanceof ErrorCtor) {
    let action = e instanceof ActionError ? `,"action":${str(e.action)}` : "";
    if (action !== "" && e.issues !== undefined) {
      try { action += `,"issues":${toJSONText(e.issues, "issues")}`; } catch (failure) { /* the script broke them: left out */ }
    }
    return `{"name":${str(e.name)},"message":${str(e.message)},"stack":${str(e.stack || "")}${action}}`;
  }
  return `{"name":"Error","message":${str("uncaught " + show(e))},"stack":""}`;
}

G.__jsbx_host = {
  configure(json, input, now) {
    const settings = JSONparse(json);
    runId = settings.runId;
    lineOffset = settings.lineOffset;
    strict = !!settings.strict;
    clockTicks = settings.clockTicks !== false;
    if (typeof settings.consoleLines === "number") consoleMaxLines = settings.consoleLines;
    if (typeof settings.consoleBytes === "number") consoleMaxBytes = settings.consoleBytes;
    nullIsMemory = settings.nullIsMemory === true;
    for (let i = 0; i < settings.actions.length; i++) actionNames[settings.actions[i]] = true;
    actionSorted = arraySort(settings.actions.slice());
    const many = actionSorted.length > 40; // the message lists them all, up to a point
    actionList = (arrayJoin(many ? actionSorted.slice(0, 40) : actionSorted, ", ") || "none")
      + (many ? `, and ${actionSorted.length - 40} more` : "");
    inputValue = JSONparse(input);
    clockBase = now; clockReal = realNow();
    loadPlan(settings.plan);
    installGlobals(settings);
  },
  start(fn, now) {
    clockBase = now; clockReal = realNow();
    promiseThen(fn(), (value) => {
      try {
        finish(`{"ok":true,"value":${toJSONText(value, "the script's return value")}}`);
      } catch (e) { // marked: the host names the line of the script's `return` (engine/returns.py)
        const limit = resourceLimit(e); // a getter or toJSON of the value ran out of stack or memory
        if (limit !== null) reachLimit(limit);
        const error = describeError(e);
        finish(`{"ok":false,"error":${strSlice(error, 0, -1)},"returned":true}}`);
      }
    }, (e) => {
      finish(`{"ok":false,"error":${describeError(e)}}`);
    });
  },
  // Hand over what the script queued, if anything (a JSON array); otherwise deliver the
  // next recorded completion, in the order it happened live: 1 delivered one, 0 some
  // remain but none is awaited yet, -1 none remain. One crossing per replayed entry.
  deliver(now) {
    if (queue !== "") return takeQueue();
    const i = undelivered === 0 ? -1 : deliverable();
    if (i < 0) return served !== "" ? takeQueue() : undelivered === 0 ? -1 : 0;
    clockBase = now; clockReal = realNow();
    rDone[i] = 1;
    undelivered--;
    if (rImp[i]) journalImported(i);
    const failed = rFail[i] === 1;
    settleWith(rRes[i], rRej[i], rName[i], !failed, failed ? null : rV[i], failed ? rE[i] : null);
    return 1;
  },
  settle(slot, json, now) {
    const entry = pending[slot];
    if (entry === undefined) return;
    delete pending[slot];
    clockBase = now; clockReal = realNow();
    const result = JSONparse(json);
    const ok = own(result, "ok") === true;
    settleWith(entry[0], entry[1], entry[2], ok, ok ? completionValue(result, "value") : null, own(result, "error"));
  },
  take() {
    return queue === "" && served === "" ? "" : takeQueue();
  },
  undelivered() { return undelivered; },
  // The slot of the first recorded completion not yet delivered, or -1.
  pendingSlot() {
    for (let j = cursor; j < orderCount; j++) if (!rDone[order[j]]) return rS[order[j]];
    return -1;
  },
  // The recorded slots the replay never asked for, ascending (a JSON array): a check
  // that reaches the script's end with any of them left found a divergence.
  unused() {
    const slots = ObjectKeys(recorded);
    let text = "";
    for (let i = 0; i < slots.length; i++) if (!rUsed[recorded[slots[i]]]) text += (text === "" ? "" : ",") + slots[i];
    return "[" + text + "]";
  },
  console() {
    let text = "";
    for (let i = 0; i < consoleLines.length; i++) {
      const line = consoleLines[i];
      text += (i ? "," : "") + `{"level":"${line.level}","message":${str(line.message)}}`;
    }
    return flat("[" + text + "]");
  },
  limit() { return limitReached; }, // "" or the limit the script reached (see reachLimit)
  data() {
    try { return flat(toJSONText(G.data, "data")); } catch (e) {
      // Read after the run's outcome, so a limit reached here is named, not raised.
      const limit = resourceLimit(e);
      const why = limit !== null ? `the ${limit} limit was reached while reading data`
        : e !== null && typeof e === "object" ? e.message : "a getter threw " + show(e);
      return flat(`{"error":${str(why)}}`);
    }
  },
};
