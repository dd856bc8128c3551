// ctx.js: the ctx API: each method reserves a slot and queues or serves its effect.
// One of the prelude's parts (realm.py PRELUDE_PARTS), evaluated in one function scope with the others.

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
