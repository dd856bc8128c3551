// queue.js: the request queue: what the script asked the host for, handed over as one JSON array.
// One of the prelude's parts (realm.py PRELUDE_PARTS), evaluated in one function scope with the others.

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
