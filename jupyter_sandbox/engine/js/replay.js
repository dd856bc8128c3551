// replay.js: replay: the journal's plan, handed over once and served inside the realm.
// One of the prelude's parts (realm.py PRELUDE_PARTS), evaluated in one function scope with the others.

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
