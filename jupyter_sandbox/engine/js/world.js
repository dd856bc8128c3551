// world.js: the global object the script sees: the deterministic Date, Math.random, console, actions.
// One of the prelude's parts (realm.py PRELUDE_PARTS), evaluated in one function scope with the others.

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
