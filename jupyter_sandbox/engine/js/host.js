// host.js: the host interface: the functions realm.py reads off __jsbx_host and then deletes.
// One of the prelude's parts (realm.py PRELUDE_PARTS), evaluated in one function scope with the others.

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
