# %% [markdown]
# # 03 · Determinism: replay, and what breaks it
#
# A resume does not restore a memory snapshot: it **runs the script again from the top** and
# serves every recorded effect from the journal. That only works if the script, given the same
# answers, asks for the same effects in the same order: if it is **deterministic**. You will:
#
# * see a run and its replay side by side: nothing re-executed, `Date.now()` and
#   `Math.random()` served from the journal;
# * edit a paused run's script into non-determinism and read the `CallLogMismatchError`;
# * use **strict mode**, which bans the clock and randomness outright;
# * see why `Promise.all` still replays when its branches finish in another order;
# * check a run with `%sandbox check`.

# %%
from pathlib import Path
import jupyter_sandbox

# This notebook keeps its runs in its own store. Delete it first, so every
# "Restart Kernel and Run All Cells" starts from an empty store.
for old in Path(".sandbox").glob("03-determinism.sqlite*"):  # the store and its -wal, -shm files
    old.unlink()
# %config SandboxMagics.store = ".sandbox/03-determinism.sqlite"
# %load_ext jupyter_sandbox

# %%
charges = []

@jupyter_sandbox.action
def charge(order):
    """Charge a card: the kind of effect that must never run twice."""
    charges.append(order)
    return {"receipt": f"rcpt-{len(charges)}", "amount": order["amount"]}

@jupyter_sandbox.action(approval=True)
def ship(parcel):
    """Ship a parcel, after a human approves."""
    return {"shipped": parcel["ticket"]}


# %% [markdown]
# The journal printer of notebook 02: one line per entry, without ids or timestamps.

# %%
import json
from jupyter_sandbox.notebook.commands import resolve_run

sb = jupyter_sandbox.default_sandbox()  # the Sandbox behind %%sandbox, on this notebook's store

def short(value, width=60):
    text = json.dumps(value)
    return text if len(text) <= width else text[:width - 1] + "…"

def describe(e):
    kind = e["kind"]
    if kind == "attempt":
        return "a resume: the script runs again from the top" if e["resumed_from"] else "the first run"
    if kind == "call":
        return f"{e['name']}({short(e['input'], 50)})"
    if kind == "result":
        return "→ " + (short(e["value"]) if e["ok"] else f"failed: {e['error']['message']}")
    if kind == "interrupt":
        return f"{e['name']} waits for an answer"
    if kind == "answer":
        return f"answered {short(e['value'])}"
    if kind in ("console", "log"):
        return e["message"]
    return short({k: v for k, v in e.items() if k not in ("seq", "kind", "attempt", "at", "slot", "step")})

def journal(name, since=0):
    """Print the journal of run `name` from entry `since` on; return how many entries it has."""
    entries = sb.run(resolve_run(sb, name)).entries
    for e in entries[since:]:
        slot = f"slot {e['slot']}" if "slot" in e else ""
        print(f"{e['seq']:>3}  attempt {e['attempt']}  {e['kind']:<9} {slot:<7} {describe(e)}")
    return len(entries)


# %% [markdown]
# ## A run and its replay
#
# This script reads the clock and a random number, charges a card, then waits for approval to
# ship. `Date.now()` and `Math.random()` are not forbidden: in the sandbox they are **recorded
# effects**. Read live the first time, each value is journaled (`now`, `random`) and a replay gets
# the recorded value back.

# %%
# %%sandbox --name raffle -o raffle
const drawnAt = Date.now();                        // journaled as `now`
const ticket = Math.floor(Math.random() * 10000);  // journaled as `random`
console.log(`ticket ${ticket} drawn at ${new Date(drawnAt).toISOString()}`);
const receipt = await actions.charge({customer: "ada", amount: 5});
const shipped = await actions.ship({ticket});      // pauses for approval
return {drawnAt, ticket, receipt, shipped};

# %%
before = journal("raffle")

# %% [markdown]
# Resume it (the same as clicking Approve):

# %%
# %sandbox resume raffle --answer true -o raffle

# %% [markdown]
# Side by side: what the first attempt read live, and what the second attempt's script saw.
# Attempt 2 ran later, yet its `Date.now()` returned the recorded time, its `Math.random()` the
# recorded number, and `charge` returned the recorded receipt without running.

# %%
import math

run = sb.run(resolve_run(sb, "raffle"))
live = {e["kind"]: e["value"] for e in run.entries if e["kind"] in ("now", "random")}
first, second = run.attempts
rows = [("wall clock when it ran", round(first["started"] * 1000), round(second["started"] * 1000)),
        ("Date.now()", live["now"], raffle["drawnAt"]),
        ("ticket, from Math.random()", math.floor(live["random"] * 10000), raffle["ticket"]),
        ("charge(...)", "rcpt-1, ran", raffle["receipt"]["receipt"] + ", journal")]
print(f"{'':28}{'attempt 1 (live)':>18}{'attempt 2 (replay)':>20}")
for label, a, b in rows:
    print(f"{label:28}{a!s:>18}{b!s:>20}")

# %%
# NBVAL_CHECK_OUTPUT
print("same clock:", raffle["drawnAt"] == live["now"])
print("same ticket:", raffle["ticket"] == math.floor(live["random"] * 10000))
print("charge ran", len(charges), "time(s)")
print("attempt 2 wrote only:", [e["kind"] for e in run.entries if e["attempt"] == 2])

# %% [markdown]
# The console line was printed again by the replay (it is part of the run's output), but
# journaled once: console and `data` are *regenerated*, effects are *served*.
#
# ## `%sandbox check`: replay without executing anything
#
# `%sandbox check RUN` replays a run in a scratch copy, executing nothing, and says
# "deterministic" or shows the first divergence. Run it after editing a script, before resuming
# the runs that wait on it.

# %%
# NBVAL_CHECK_OUTPUT
# %sandbox check raffle

# %% [markdown]
# Not every edit breaks a run. The replay matches effects by **content key**
# (`tool|NAME|CANONICAL_JSON(input)`, `now`, `random`, `sleep|MS`, ...): a new console line,
# a comment, a `description` label change nothing.

# %%
relabelled = sb.run(resolve_run(sb, "raffle")).source.replace(
    "const shipped", 'console.log("charged", receipt.receipt);\nconst shipped')

# %%
# NBVAL_CHECK_OUTPUT
# %sandbox check raffle --source relabelled

# %% [markdown]
# ## Editing a paused run into non-determinism
#
# Start the same raffle again and leave it waiting for approval. Then "fix" the price from 5 to
# 7. But the card was **already charged 5**: the journal says so. A replay of the edited script
# asks for `charge` with another input, and there is no honest value to serve: returning the
# recorded receipt would pretend 7 was charged; calling `charge` again would charge twice. So the
# resume refuses, with a `CallLogMismatchError`.

# %%
# %%sandbox --name raffle2
const drawnAt = Date.now();                        // journaled as `now`
const ticket = Math.floor(Math.random() * 10000);  // journaled as `random`
console.log(`ticket ${ticket} drawn at ${new Date(drawnAt).toISOString()}`);
const receipt = await actions.charge({customer: "ada", amount: 5});
const shipped = await actions.ship({ticket});      // pauses for approval
return {drawnAt, ticket, receipt, shipped};

# %%
original = sb.run(resolve_run(sb, "raffle2")).source
edited = original.replace("amount: 5", "amount: 7")

# %% [markdown]
# Ask first, without touching the run:

# %%
# NBVAL_CHECK_OUTPUT
# %sandbox check raffle2 --source edited

# %% [markdown]
# Resuming with the edited source fails the same way, and the cell shows the diff: the position
# (slot), what the journal recorded there, what the script attempted, and the source line. (A
# resume with `--source` also stores that source as the run's script.)

# %% tags=["raises-exception"]
# %sandbox resume raffle2 --answer true --source edited

# %% [markdown]
# In Python the error carries the same facts as attributes:

# %%
# NBVAL_CHECK_OUTPUT
from jupyter_sandbox import CallLogMismatchError

try:
    sb.resume(resolve_run(sb, "raffle2"), True, source=edited)
except CallLogMismatchError as err:
    print("position: ", err.position)
    print("recorded: ", err.recorded["type"], err.recorded["name"], err.recorded["input"])
    print("attempted:", err.attempted["type"], err.attempted["name"], err.attempted["input"])
    print(err.source_line)
print("charge ran", len(charges), "time(s): the edited call was never made")

# %% [markdown]
# The run is not lost: it failed *before* doing anything new, and its approval is still open
# (the failed attempt never reached it, so the answer was not recorded). Resume it with the
# original script (or any edit that keeps the recorded effects): it replays up to the approval
# and waits there again.

# %%
# %sandbox resume raffle2 --source original

# %%
# %sandbox resume raffle2 --answer true -o raffle2_out

# %%
# NBVAL_CHECK_OUTPUT
print(raffle2_out["receipt"], "| charge ran", len(charges), "time(s)")

# %% [markdown]
# What makes a script non-deterministic here is almost always an **edit between attempts**
# (the realm itself has no unrecorded source of time or randomness: no `fetch`, no timers, no
# `performance`, local-time `Date` methods in UTC). The rule the error ends with: branch only
# on input, action results, `ctx.now()` and the recorded `Date` / `Math.random`.
#
# ## Strict mode
#
# Recorded clock and randomness are convenient, but a value read live is still a fact of the
# first attempt that no test can choose. `--strict` (or `%config SandboxMagics.strict = True`)
# makes `Date` and `Math.random` throw, with a message that names the way out:

# %% tags=["raises-exception"]
# %%sandbox --strict
const drawnAt = Date.now();

# %%
# NBVAL_CHECK_OUTPUT
from jupyter_sandbox import Sandbox, ScriptError

try:
    Sandbox().eval("return Math.random()", strict=True)
except ScriptError as err:
    print(err.message)

# %% [markdown]
# The strict way: the time from `ctx.now()` (a journaled effect, like `Date.now()` but explicit),
# randomness from the input: a seed you choose, so a test can pin it.

# %%
params = {"seed": 42}

# %%
# %%sandbox --strict -i params -o strict_out --name strict
const drawnAt = await ctx.now();
let s = ctx.input.seed;                     // a tiny seeded generator (Park-Miller)
const next = () => (s = (s * 16807) % 2147483647) / 2147483647;
const ticket = Math.floor(next() * 10000);
return {ticket, clockIsANumber: typeof drawnAt === "number"};

# %%
# NBVAL_CHECK_OUTPUT
print(strict_out)

# %% [markdown]
# ## Why `Promise.all` still replays
#
# Concurrent branches finish in whatever order their actions answer. Below, three prices are
# fetched concurrently with different delays: the calls are made apple, bread, cheese (so those
# are their slots 0, 1, 2), but the answers arrive bread, cheese, apple. Each branch then reads
# `Date.now()`.
#
# A replay could not re-create that timing, and does not need to: the journal records the
# **order completions happened**, and the replay delivers recorded completions in that order,
# one at a time, letting the script run in between. So the branches interleave exactly as they
# did live: same `seen` order, same console order, and the same clock value to the same branch.

# %%
import asyncio

DELAY = {"apple": 0.4, "bread": 0.0, "cheese": 0.2}

@jupyter_sandbox.action
async def fetch_price(item):
    """An async action: concurrent calls wait concurrently."""
    await asyncio.sleep(DELAY[item])
    return {"apple": 3, "bread": 2, "cheese": 7}[item]


# %%
# %%sandbox --name basket -o basket
const seen = [], stamps = {};
const prices = await Promise.all(["apple", "bread", "cheese"].map(async item => {
  const price = await actions.fetch_price(item);
  seen.push(item);                 // the order the answers arrived in
  stamps[item] = Date.now();       // each branch reads the clock
  console.log(`${item}: ${price}`);
  return price;
}));
await actions.ship({ticket: prices.reduce((a, b) => a + b)});  // pause, so there is a resume
return {prices, seen, stamps};

# %%
# %sandbox resume basket --answer true -o basket

# %%
# NBVAL_CHECK_OUTPUT
entries = sb.run(resolve_run(sb, "basket")).entries
item_of = {e["slot"]: e["input"] for e in entries if e["kind"] == "call" and e["name"] == "fetch_price"}
live_order = [item_of[e["slot"]] for e in entries if e["kind"] == "result" and e["slot"] in item_of]
clock = [e["value"] for e in entries if e["kind"] == "now"]
print("slots (call order):      ", [item_of[s] for s in sorted(item_of)])
print("answers arrived, live:   ", live_order)
print("seen by the replay:      ", basket["seen"])
print("same clock, same branch: ", [basket["stamps"][item] for item in live_order] == clock)
print("console of the run:      ", [e["message"] for e in entries if e["kind"] == "console"])

# %%
# NBVAL_CHECK_OUTPUT
# %sandbox check basket

# %% [markdown]
# Matching is by **content key**, first-in-first-out per key, and by slot: a recorded effect is
# served to the effect with the same key; if the script asks for something whose key is not
# recorded while the slot holds something else, that is the mismatch you saw above, at that
# position. Never a silently wrong value.
#
# Next: **04-workflows**, the rest of the `ctx` API.
