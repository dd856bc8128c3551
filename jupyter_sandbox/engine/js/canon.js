// canon.js: canonical JSON: one pass validates a value, writes its transport text and its content key.
// One of the prelude's parts (realm.py PRELUDE_PARTS), evaluated in one function scope with the others.

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
