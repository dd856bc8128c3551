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
const arrayMap = uncurry(Array.prototype.map);
const strSplit = uncurry(String.prototype.split);
const reExec = uncurry(RegExp.prototype.exec);
const toWellFormed = uncurry(String.prototype.toWellFormed);
const isWellFormed = uncurry(String.prototype.isWellFormed);
const strSlice = uncurry(String.prototype.slice);
const promiseThen = uncurry(Promise.prototype.then);
const promiseAll = Promise.all.bind(Promise);
const promiseAllSettled = Promise.allSettled.bind(Promise);
const dateToISO = uncurry(Date.prototype.toISOString);
const dateTime = uncurry(Date.prototype.getTime);
const realNow = Date.now;
const realRandom = Math.random;
const MathFloor = Math.floor;

const FRAME = /:(\d+):(\d+)\)?$/;
const MAX_DEPTH = 256; // below the 400 levels the journal's CBOR decoder reads back

// quickjs-ng builds long concatenations as "ropes", which the Python binding
// cannot read (Unknown quickjs tag: -6): every string handed to the host is flattened.
function flat(text) {
  return strSlice(text, 0);
}

// A JSON string literal of any value's text, lone surrogates replaced (they cannot be stored).
function str(v) {
  let text;
  try { text = StringCtor(v); } catch (e) { text = "[unprintable]"; }
  return JSONstringify(toWellFormed(text));
}

// Append to a host array without [[Set]], which would run a setter a script
// put on Array.prototype (and so see, or swallow, what the host records).
function append(list, value) {
  ObjectDefine(list, list.length, { __proto__: null, value, writable: true, enumerable: true, configurable: true });
}

// ---- settings, filled by configure() -------------------------------------

let runId = null;
let lineOffset = 0;       // the script starts at this line + 1 (see realm.py)
let actionNames = table();
let actionList = "";
let strict = false;
let clockBase = 0;        // host clock (epoch ms) at the last entry into JS
let clockReal = 0;        // realNow() at that moment

// ---- canonical JSON: validation, transport and content keys in one pass ---

function canon(v, path, seen) {
  switch (typeof v) {
    case "string":
      if (!isWellFormed(v)) throw new TypeErrorCtor(`${path} is a string with a lone surrogate`);
      return JSONstringify(v);
    case "number":
      if (!NumberIsFinite(v)) throw new TypeErrorCtor(`${path} is ${v}, which JSON cannot carry`);
      return JSONstringify(v);
    case "boolean":
      return v ? "true" : "false";
    case "undefined":
      throw new TypeErrorCtor(`${path} is undefined`);
    case "bigint":
      throw new TypeErrorCtor(`${path} is a BigInt, which JSON cannot carry`);
    case "symbol":
      throw new TypeErrorCtor(`${path} is a symbol, which JSON cannot carry`);
    case "function":
      throw new TypeErrorCtor(`${path} is a function, which JSON cannot carry`);
  }
  if (v === null) return "null";
  if (seen.length >= MAX_DEPTH) throw new TypeErrorCtor(`${path} nests deeper than ${MAX_DEPTH} levels`);
  for (let i = 0; i < seen.length; i++) {
    if (seen[i] === v) throw new TypeErrorCtor(`${path} is a cyclic reference`);
  }
  const tag = toTag(v);
  if (tag === "[object Date]") { // a real Date crosses as its ISO string, as JSON.stringify does
    let time = NaN;
    try { time = dateTime(v); } catch (e) { /* not a Date, only tagged as one */ }
    if (!NumberIsFinite(time)) throw new TypeErrorCtor(`${path} is an invalid Date`);
    return JSONstringify(dateToISO(v));
  }
  append(seen, v); // the path from the root: a value met again on it is a cycle
  let out;
  if (isArray(v)) {
    out = "[";
    for (let i = 0; i < v.length; i++) out += (i ? "," : "") + canon(v[i], `${path}[${i}]`, seen);
    out += "]";
  } else {
    if (tag !== "[object Object]") {
      seen.length--;
      throw new TypeErrorCtor(`${path} is a ${strSlice(tag, 8, -1)}, which JSON cannot carry`);
    }
    const keys = arraySort(ObjectKeys(v));
    out = "{";
    for (let i = 0; i < keys.length; i++) {
      const value = v[keys[i]];
      if (value === undefined) continue; // as JSON.stringify: an absent field
      out += (out.length > 1 ? "," : "") + JSONstringify(toWellFormed(keys[i])) + ":"
        + canon(value, `${path}.${keys[i]}`, seen);
    }
    out += "}";
  }
  seen.length--;
  return out;
}

function toJSONText(v, path) {
  if (v === undefined) return "null";
  if (typeof v === "number" && NumberIsFinite(v)) return JSONstringify(v); // the common case, no walk
  return canon(v, path, []);
}

// ---- the request queue: what the script asked the host for ---------------

// The request queue is one string of JSON items: nothing a script does to
// Array.prototype can reach it.
let queue = "";
function push(text) { queue = queue === "" ? text : queue + "," + text; }

function scriptLocation() {
  // The first frame below lineOffset's block is the script's own line.
  const stack = new ErrorCtor().stack;
  if (typeof stack !== "string") return null;
  const lines = strSplit(stack, "\n");
  for (let i = 0; i < lines.length; i++) {
    const m = reExec(FRAME, lines[i]);
    if (m !== null && +m[1] > lineOffset) return [+m[1] - lineOffset, +m[2]];
  }
  return null;
}

function locationText() {
  const at = scriptLocation();
  return at === null ? "" : `,"line":${at[0]},"column":${at[1]}`;
}

// ---- replay: the journal handed over once, served inside the realm --------

const recorded = table();       // slot -> rec
const byKey = table();          // content key -> {recs, next}: FIFO per key
let order = [];                 // async recs in the order they completed live
let cursor = 0;
let undelivered = 0;
let notesRecorded = 0;
let noteIndex = 0;
let nextSlot = 0;
let frontier = 0;               // 1 + the last slot the journal reserved: before it, the script is replaying

// The content key of an effect recorded in a bare call log (one the journal did not key).
function keyOf(kin) {
  const input = toJSONText(kin.input, "call_log input");
  switch (kin.op) {
    case "call": return `tool|${kin.name}|${input}`;
    case "sleep": return `sleep|${kin.input}`;
    case "wait": return `wait|${input}|${kin.timeout === undefined ? null : kin.timeout}`;
    default: return `${kin.op}|${input}`;
  }
}

function loadPlan(plan) {
  order = [];
  const recs = plan.recs;
  for (let i = 0; i < recs.length; i++) {
    const rec = recs[i];
    if (rec.k === undefined) rec.k = keyOf(rec.kin);
    rec.used = false; // own slots for every field the host writes later: an
    rec.done = false; // inherited setter must never see a record
    rec.res = null;
    rec.rej = null;
    rec.name = null;
    recorded[rec.s] = rec;
    let fifo = byKey[rec.k];
    if (fifo === undefined) { fifo = { recs: [], next: 0 }; byKey[rec.k] = fifo; }
    fifo.recs[fifo.recs.length] = rec;
    if (!rec.sync) { order[order.length] = rec; undelivered++; }
  }
  const keys = ObjectKeys(byKey);
  for (let i = 0; i < keys.length; i++) {
    const fifo = byKey[keys[i]];
    if (fifo.recs.length > 1) arraySort(fifo.recs, (a, b) => a.s - b.s); // plans come in completion order
  }
  notesRecorded = plan.notes | 0;
  frontier = plan.frontier | 0;
}

class MismatchSignal extends ErrorCtor {}

// Reserve the next slot; return the recorded entry that serves it, or null
// when the effect must run live. Rule 2 of DESIGN.md "Replay".
function reserve(key, op, name, inputText) {
  const s = nextSlot++;
  const at = recorded[s];
  if (at !== undefined && !at.used && at.k === key) {
    at.used = true;
    servedSlot = s;
    return at;
  }
  const fifo = byKey[key];
  if (fifo !== undefined) {
    while (fifo.next < fifo.recs.length && fifo.recs[fifo.next].used) fifo.next++;
    if (fifo.next < fifo.recs.length) {
      const rec = fifo.recs[fifo.next++];
      rec.used = true;
      servedSlot = s;
      return rec;
    }
  }
  if (at !== undefined) {
    const type = op === "call" ? "action" : op;
    const attempted = name === null ? `{"type":"${type}"}` : `{"type":"${type}","name":${JSONstringify(name)},"input":${inputText}}`;
    push(`{"t":"mismatch","s":${s},"attempted":${attempted}${locationText()}}`);
    throw new MismatchSignal(`replay diverged at position ${s}`);
  }
  servedSlot = s;
  return null;
}
let servedSlot = -1; // the slot the last reserve() took (saves an array per call)

function deliverable() {
  while (cursor < order.length && order[cursor].done) cursor++;
  for (let i = cursor; i < order.length; i++) {
    const rec = order[i];
    if (!rec.done && rec.res !== null) return rec;
  }
  return null;
}

// ---- settling: the host's answers go through here only ---------------------

const pending = table(); // slot -> [resolve, reject, actionName]

class ActionError extends ErrorCtor {
  constructor(action, message, issues) {
    super(message);
    // defined, not assigned: a frozen Error.prototype must not break the host
    ObjectDefine(this, "action", { __proto__: null, value: action, writable: true, enumerable: true, configurable: true });
    // an input the action's schema refused: [{path, message}] (agents/catalog.py)
    if (issues !== undefined) ObjectDefine(this, "issues", { __proto__: null, value: issues, writable: true, enumerable: true, configurable: true });
  }
}
ObjectDefine(ActionError.prototype, "name", { __proto__: null, value: "ActionError", writable: true, configurable: true });

function settleWith(res, rej, action, ok, value, error) {
  if (ok) res(value);
  else rej(new ActionError(error.action || action, error.message, error.issues));
}

// An effect the script asked for. ``inputText`` is its canonical input (the
// end of its key); ``extra`` adds the kind's own fields to a live request. The
// texts a replayed effect never needs are not built for it.
function effect(op, key, name, inputText, extra) {
  let rec;
  try {
    rec = reserve(key, op, name, inputText);
  } catch (e) {
    if (e instanceof MismatchSignal) return new PromiseCtor(() => {});
    throw e;
  }
  const s = servedSlot;
  return new PromiseCtor((res, rej) => {
    if (rec !== null) {
      rec.res = res; rec.rej = rej; rec.name = name;
      return;
    }
    pending[s] = [res, rej, name];
    // A live call records where the script made it: a failure can then point at its line (agents/tool.py).
    const at = op === "call" ? locationText() : "";
    push(`{"t":"${op}","s":${s},"key":${JSONstringify(key)},"name":${JSONstringify(name)},"input":${inputText}${extra}${at}}`);
  });
}

function takeQueue() {
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
  if (rec !== null) return rec.v;
  const value = live();
  push(`{"t":"${kind}","s":${s},"value":${JSONstringify(value)}}`);
  return value;
}

function liveNow() {
  return MathFloor(clockBase + (realNow() - clockReal));
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

function show(v) {
  if (typeof v === "string") return v;
  if (v instanceof ErrorCtor) return v.stack ? `${v.name}: ${v.message}` : StringCtor(v);
  if (typeof v === "object" && v !== null) {
    try { return JSONstringify(v); } catch (e) { return toTag(v); }
  }
  return StringCtor(v);
}

function makeConsole() {
  const out = {};
  for (const level of ["log", "info", "warn", "error", "debug"]) {
    out[level] = (...args) => {
      let message = "";
      for (let i = 0; i < args.length; i++) message += (i ? " " : "") + show(args[i]);
      append(consoleLines, { level, message });
      note("console", `,"level":"${level}","message":${str(message)}`);
    };
  }
  return ObjectFreeze(out);
}

// ---- the ctx API (seed 001) ------------------------------------------------

function describeInput(what, input) {
  try {
    return toJSONText(input, "input");
  } catch (e) {
    throw new TypeErrorCtor(`${what}: ${e.message}`);
  }
}

function callAction(name, input, options) {
  if (typeof name !== "string" || actionNames[name] !== true) {
    return PromiseCtor.reject(new ActionError(StringCtor(name), `no action named ${JSONstringify(StringCtor(name))} is registered (available: ${actionList})`));
  }
  let inputText;
  try {
    inputText = describeInput(`actions.${name}`, input);
  } catch (e) {
    return PromiseCtor.reject(e);
  }
  const extra = options && options.description !== undefined && options.description !== null
    ? `,"description":${str(options.description)}` : "";
  return effect("call", `tool|${name}|${inputText}`, name, inputText, extra);
}

function child(op, spec) {
  if (spec === null || typeof spec !== "object") return PromiseCtor.reject(new TypeErrorCtor(`ctx.${op} takes an object`));
  let specText;
  try { specText = describeInput(`ctx.${op}`, spec); } catch (e) { return PromiseCtor.reject(e); }
  const name = op === "agent" ? StringCtor(spec.agent) : StringCtor(spec.name || "child");
  return effect(op, `${op}|${specText}`, name, specText, "");
}

function sleep(ms) {
  if (typeof ms !== "number" || !NumberIsFinite(ms) || ms < 0) {
    return PromiseCtor.reject(new TypeErrorCtor(`ctx.sleep takes a non-negative number of milliseconds, got ${show(ms)}`));
  }
  return effect("sleep", `sleep|${ms}`, "sleep", JSONstringify(ms), `,"ms":${ms}`);
}

function waitForEvent(match, options) {
  const timeout = options && options.timeout !== undefined && options.timeout !== null ? options.timeout : null;
  if (timeout !== null && (typeof timeout !== "number" || !NumberIsFinite(timeout) || timeout < 0)) {
    return PromiseCtor.reject(new TypeErrorCtor(`ctx.waitForEvent: timeout must be a non-negative number of milliseconds`));
  }
  let matchText;
  try { matchText = describeInput("ctx.waitForEvent", match === undefined ? {} : match); } catch (e) { return PromiseCtor.reject(e); }
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
  const close = () => {
    const at = openSteps.lastIndexOf(id);
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

function thunks(what, list) {
  if (!isArray(list)) throw new TypeErrorCtor(`${what} takes an array of functions`);
  return arrayMap(list, (t, i) => {
    if (typeof t !== "function") throw new TypeErrorCtor(`${what}: item ${i} is not a function (pass () => ... thunks)`);
    return t();
  });
}

const LOG_LEVELS = ObjectFreeze({ __proto__: null, debug: true, info: true, warn: true, error: true, log: true });

const ctx = {
  get input() { return inputValue; },
  get runId() { return runId; },
  call: callAction,
  delegate: (spec) => child("delegate", spec),
  agent: (spec) => child("agent", spec),
  parallel: (list) => promiseAll(thunks("ctx.parallel", list)),
  parallelSettled: (list) => promiseAllSettled(thunks("ctx.parallelSettled", list)),
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
    if (undelivered > 0 || nextSlot < frontier) return; // replaying: progress is for the live UI only
    let text;
    try { text = describeInput("ctx.progress", patch); } catch (e) { return; }
    push(`{"t":"progress","patch":${text}}`);
  },
};

// ---- the global object the script sees ------------------------------------

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
  const actions = {};
  for (const name of settings.actions) {
    actions[name] = (input, options) => callAction(name, input, options);
  }
  G.actions = ObjectFreeze(actions);
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
  configure(json, now) {
    const settings = JSONparse(json);
    runId = settings.runId;
    lineOffset = settings.lineOffset;
    strict = !!settings.strict;
    for (let i = 0; i < settings.actions.length; i++) actionNames[settings.actions[i]] = true;
    actionList = arrayJoin(arraySort(settings.actions.slice()), ", ") || "none";
    inputValue = settings.input;
    clockBase = now; clockReal = realNow();
    loadPlan(settings.plan);
    installGlobals(settings);
  },
  start(fn, now) {
    clockBase = now; clockReal = realNow();
    promiseThen(fn(), (value) => {
      try {
        finish(`{"ok":true,"value":${toJSONText(value, "the script's return value")}}`);
      } catch (e) {
        finish(`{"ok":false,"error":${describeError(e)}}`);
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
    if (undelivered === 0) return -1;
    const rec = deliverable();
    if (rec === null) return 0;
    clockBase = now; clockReal = realNow();
    rec.done = true;
    undelivered--;
    settleWith(rec.res, rec.rej, rec.name, rec.e === undefined, rec.v, rec.e);
    return 1;
  },
  settle(slot, json, now) {
    const entry = pending[slot];
    if (entry === undefined) return;
    delete pending[slot];
    clockBase = now; clockReal = realNow();
    const result = JSONparse(json);
    settleWith(entry[0], entry[1], entry[2], result.ok, result.value, result.error);
  },
  take() {
    return queue === "" ? "" : takeQueue();
  },
  undelivered() { return undelivered; },
  // The slot of the first recorded completion not yet delivered, or -1.
  pendingSlot() {
    for (let i = cursor; i < order.length; i++) if (!order[i].done) return order[i].s;
    return -1;
  },
  console() {
    let text = "";
    for (let i = 0; i < consoleLines.length; i++) {
      const line = consoleLines[i];
      text += (i ? "," : "") + `{"level":"${line.level}","message":${str(line.message)}}`;
    }
    return flat("[" + text + "]");
  },
  data() {
    try { return flat(toJSONText(G.data, "data")); } catch (e) { return flat(`{"error":${str(e.message)}}`); }
  },
};
