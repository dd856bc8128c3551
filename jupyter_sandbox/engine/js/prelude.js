// prelude.js: the script's world, its first part: the intrinsics the host relies on,
// captured, and the settings. realm.py joins the parts (PRELUDE_PARTS: the shims
// textcodec.js, dateparse.js and date.js, this file, then canon.js, queue.js,
// replay.js, settle.js, limits.js, ctx.js, world.js and host.js) into one function
// scope and evaluates it once per realm, before the script.
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
