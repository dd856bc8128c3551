// Reachability audit of the realm (test-only; see tests/test_realm_audit.py).
//
// One file, two phases, both in the same QuickJS context:
//   1. before the prelude, `catalogue(global)` walks the pristine realm and
//      returns every object it can reach, with its path and whether it reads
//      the host (clock, randomness, timezone, garbage-collector timing);
//   2. as the workflow script, `audit(global, pristine)` walks what the script
//      can reach and reports every forbidden intrinsic and every native
//      function the pristine realm did not have (a host function, or a bound
//      function, whose target cannot be inspected).
//
// The walk is a graph search over every route the language gives a script:
// own properties (strings and symbols, enumerable or not, data or accessor),
// getter results, [[Prototype]] links, and construction through the construct
// protocol with a newTarget whose `prototype` is not an object (which falls
// back to the realm's intrinsic prototype for the constructor's kind). Values
// a script can make from syntax alone (function kinds, arguments objects,
// iterators, ...) are roots as well. `Function.prototype.bind` needs no edge of
// its own: a bound function only forwards to a target that is already reached.

function syntaxRoots() {
  const roots = [];
  const add = (path, make) => {
    try { roots.push([path, make()]); } catch (e) { /* a route this engine lacks */ }
  };
  add("(function(){})", () => function () {});
  add("(()=>{})", () => () => {});
  add("(async function(){})", () => async function () {});
  add("(async ()=>{})", () => async () => {});
  add("(function*(){})", () => function* () {});
  add("(async function*(){})", () => async function* () {});
  add("(function*(){})()", () => (function* () {})());
  add("(async function*(){})()", () => (async function* () {})());
  add("(class {})", () => class {});
  add("({})", () => ({}));
  add("[]", () => []);
  add("/(?:)/g", () => /(?:)/g);
  add("arguments", () => (function () { return arguments; })());
  add("strict arguments", () => (function () { "use strict"; return arguments; })());
  add("template object", () => ((s) => s)`x`);
  add("Object(Symbol())", () => Object(Symbol()));
  add("Object(1n)", () => Object(BigInt(1)));
  add("[].values()", () => [].values());
  add("''[Symbol.iterator]()", () => ""[Symbol.iterator]());
  add("new Map().entries()", () => new Map().entries());
  add("new Set().values()", () => new Set().values());
  add("''.matchAll(/a/g)", () => "".matchAll(/a/g));
  add("[].values().map(x=>x)", () => [].values().map((x) => x));
  add("Iterator.from({next(){}})", () => Iterator.from({ next() { return { done: true }; } }));
  add("Promise.resolve()", () => Promise.resolve());
  add("new Error().stack holder", () => { try { null.x; } catch (e) { return e; } });
  return roots;
}

// A constructor whose `prototype` is not an object: constructing with it as
// newTarget yields an instance of the realm's intrinsic prototype.
function Fallback() {}
Fallback.prototype = 0;

function walk(global, onObject) {
  const seen = new Map();
  const queue = [];
  const visit = (value, path) => {
    if ((typeof value !== "object" && typeof value !== "function") || value === null) return;
    if (seen.has(value)) return;
    seen.set(value, path);
    queue.push(value);
  };
  visit(global, "globalThis");
  for (const [path, value] of syntaxRoots()) visit(value, path);
  const keyName = (key) => (typeof key === "symbol" ? `[${String(key)}]` : `.${key}`);
  for (let i = 0; i < queue.length; i++) {
    const object = queue[i];
    const path = seen.get(object);
    if (onObject) onObject(object, path);
    visit(Reflect.getPrototypeOf(object), `${path}.[[Prototype]]`);
    for (const key of Reflect.ownKeys(object)) {
      const desc = Reflect.getOwnPropertyDescriptor(object, key);
      if (desc === undefined) continue;
      const at = path + keyName(key);
      if ("value" in desc) visit(desc.value, at);
      if (desc.get) {
        visit(desc.get, `${at} (getter)`);
        try { visit(Reflect.apply(desc.get, object, []), `${at} (getter result)`); } catch (e) { /* a brand check */ }
      }
      if (desc.set) visit(desc.set, `${at} (setter)`);
    }
    if (typeof object === "function") {
      for (const args of [[], [0]]) { // no arguments reads the clock, which strict mode refuses
        try {
          visit(Reflect.construct(object, args, Fallback), `Reflect.construct(${path}, [${args}], Fallback)`);
        } catch (e) { /* not a constructor, or it wants other arguments */ }
      }
    }
  }
  return seen;
}

// What reads the host. Date's deterministic members are listed; every other
// member of the intrinsic Date and Date.prototype reads the clock or local time.
const DETERMINISTIC_DATE = new Set([
  "length", "name", "prototype", "UTC", "constructor", "valueOf", "getTime", "setTime", "toISOString",
  "toJSON", "toUTCString", "toGMTString", "Symbol(Symbol.toPrimitive)",
]);

function hostReaders(global) {
  const readers = new Map(); // object -> why
  const mark = (value, why) => {
    if ((typeof value === "object" || typeof value === "function") && value !== null) readers.set(value, why);
  };
  const OrigDate = global.Date;
  mark(OrigDate, "the intrinsic Date constructor reads the clock and the host timezone");
  for (const [holder, name] of [[OrigDate, "Date"], [OrigDate.prototype, "Date.prototype"]]) {
    for (const key of Reflect.ownKeys(holder)) {
      const label = typeof key === "symbol" ? String(key) : key;
      if (DETERMINISTIC_DATE.has(label) || /UTC/.test(label)) continue;
      const desc = Reflect.getOwnPropertyDescriptor(holder, key);
      mark(desc.value, `${name}.${label} reads the clock or the host timezone`);
    }
  }
  mark(global.Math.random, "Math.random reads the host's randomness");
  for (const name of ["performance", "WeakRef", "FinalizationRegistry"]) {
    const value = global[name];
    if (value === undefined) continue;
    mark(value, `${name} observes the host (clock or garbage collector)`);
    const proto = typeof value === "function" ? value.prototype : value;
    for (const key of Reflect.ownKeys(proto)) {
      const desc = Reflect.getOwnPropertyDescriptor(proto, key);
      if (typeof desc.value === "function" && key !== "constructor") mark(desc.value, `${name} ${String(key)} observes the host`);
    }
  }
  if (global.Atomics) {
    for (const name of ["wait", "waitAsync"]) mark(global.Atomics[name], `Atomics.${name} waits on the host clock`);
  }
  return readers;
}

const fnToString = Function.prototype.toString;
const isNative = (f) => /\{\s*\[native code\]\s*\}$/.test(Reflect.apply(fnToString, f, []));

// Phase 1: the pristine realm, before the prelude runs.
function catalogue(global) {
  const readers = hostReaders(global);
  const paths = walk(global, null);
  return { paths, readers };
}

// Phase 2: what the script can reach, as a JSON-able report.
function audit(global, pristine) {
  const forbidden = [];
  const host = [];
  let objects = 0;
  let natives = 0;
  walk(global, (object, path) => {
    objects++;
    const why = pristine.readers.get(object);
    if (why !== undefined) forbidden.push({ path, why });
    if (typeof object === "function" && isNative(object)) {
      natives++;
      if (!pristine.paths.has(object)) host.push(path);
    }
  });
  return { objects, natives, pristine: pristine.paths.size, readers: pristine.readers.size, forbidden, host };
}
