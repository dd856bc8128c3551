# %% [markdown]
# # 04 · Workflows: a tour of `ctx`
#
# Inside a script, `ctx` is the workflow API. This notebook tries each part:
#
# | call | does |
# | --- | --- |
# | `ctx.step(label, fn)` | a named, nestable unit of work (journaled start and end) |
# | `ctx.plan(items)` | publish a checklist |
# | `ctx.log(level, message, data)` | a journaled log line |
# | `ctx.parallel(thunks)`, `ctx.parallelSettled(thunks)` | concurrent fan-out |
# | `ctx.sleep(ms)`, `ctx.minutes(n)`, `ctx.hours(n)` | timers: short ones wait, long ones park the run |
# | `ctx.waitForEvent(match, {timeout})` | park until `%sandbox signal` sends a matching event |
# | `ctx.delegate({script, input, name})`, `ctx.agent({agent, input})` | child runs |
# | `ctx.continueAsNew(state)` | go on in a fresh run, past the journal cap |
# | `ctx.progress(patch)` | a progress bar, deliberately not journaled |

# %%
from pathlib import Path
import jupyter_sandbox

# This notebook keeps its runs in its own store. Delete it first, so every
# "Restart Kernel and Run All Cells" starts from an empty store.
for old in Path(".sandbox").glob("04-workflows.sqlite*"):  # the store and its -wal, -shm files
    old.unlink()
# %config SandboxMagics.store = ".sandbox/04-workflows.sqlite"
# %load_ext jupyter_sandbox

# %%
import asyncio
from jupyter_sandbox import ActionInterrupt
from jupyter_sandbox.notebook.commands import resolve_run

sb = jupyter_sandbox.default_sandbox()
TABLES = {"orders": [12, 30, 8], "refunds": [5]}
squares = []

@jupyter_sandbox.action
async def fetch_table(name):
    """Read a table (an async action: concurrent calls wait concurrently)."""
    await asyncio.sleep(0.1)
    if name not in TABLES:
        raise KeyError(name)
    return TABLES[name]

@jupyter_sandbox.action
def square(n):
    squares.append(n)
    return n * n

def kinds(name, *only):
    """The kinds of a run's journal entries (only those listed, if any)."""
    return [e["kind"] for e in sb.run(resolve_run(sb, name)).entries if not only or e["kind"] in only]


# %% [markdown]
# ## Steps, plans and logs
#
# `ctx.step(label, fn)` runs `fn` as a named unit: the journal gets a `step` entry when it starts
# and one when it ends (with its outcome), nested steps know their parent, and the timeline shows
# the effects inside each step. `ctx.plan` publishes a checklist (call it again to tick items);
# `ctx.log` writes a log line with data.

# %%
# %%sandbox --name report -o report
ctx.plan(["load", "summarise"]);
const tables = await ctx.step("load", async () => ({
  orders: await ctx.step("orders", () => actions.fetch_table("orders")),
  refunds: await ctx.step("refunds", () => actions.fetch_table("refunds")),
}));
ctx.plan([{title: "load", done: true}, "summarise"]);
const summary = await ctx.step("summarise", async () => {
  const sum = xs => xs.reduce((a, b) => a + b, 0);
  return {sales: sum(tables.orders), refunds: sum(tables.refunds)};
});
ctx.log("info", "summary ready", summary);
ctx.plan([{title: "load", done: true}, {title: "summarise", done: true}]);
return summary;

# %%
# NBVAL_CHECK_OUTPUT
print(report)
for e in sb.run(resolve_run(sb, "report")).entries:
    if e["kind"] == "step":
        print(f"step {e['id']} {e['label']:<10} {e['phase']:<5} parent={e['parent']} {e.get('outcome') or ''}")
print(kinds("report", "plan", "log"))

# %% [markdown]
# ## Parallel branches
#
# `ctx.parallel(thunks)` is `Promise.all` over functions that return promises, and the calls run
# concurrently: below, five reads of 100 ms each, in two parallel groups, take about 200 ms,
# not 500. `ctx.parallelSettled` is `Promise.allSettled`: one failure does not cancel the others.

# %%
# %%sandbox -o fan
const t0 = await ctx.now();
const [orders, refunds] = await ctx.parallel([
  () => actions.fetch_table("orders"),
  () => actions.fetch_table("refunds"),
]);
const settled = await ctx.parallelSettled(
  ["orders", "refunds", "returns"].map(name => () => actions.fetch_table(name)));
const took = (await ctx.now()) - t0;
return {orders, refunds, settled: settled.map(s => s.status), concurrent: took < 450};

# %%
# NBVAL_CHECK_OUTPUT
print(fan)

# %% [markdown]
# ## Timers
#
# A short sleep (under a second) waits in place. It is still journaled, as a `timer` and a
# `fired` entry, so a replay does not wait again.

# %%
# %%sandbox --name short -o short
const t0 = await ctx.now();
await ctx.sleep(200);
return (await ctx.now()) - t0 >= 200;

# %%
# NBVAL_CHECK_OUTPUT
print(short, kinds("short", "timer", "fired"))

# %% [markdown]
# A longer sleep **parks** the run: the cell ends at once, no thread waits, and the run is stored
# as `parked` with its wake-up time. The store's **scheduler** (started by `%load_ext`, checking
# every second) resumes it when it is due, in this kernel or any other on the same store. The
# cell below parks for 1.5 s; watch its status change to completed.

# %%
# %%sandbox --name nap -o nap
console.log("going to sleep");
await ctx.sleep(1500);
console.log("awake");
return "rested";

# %%
# NBVAL_CHECK_OUTPUT
import time

deadline = time.time() + 20
while "nap" not in globals() and time.time() < deadline:  # -o nap is set when the run completes
    time.sleep(0.2)
print(sb.run(resolve_run(sb, "nap")).status, nap)

# %% [markdown]
# An hour-long `ctx.hours(1)` parks the same way. To try one without waiting an hour, give a
# Python `Sandbox` a `ManualClock` and move it by hand; `run_due()` is what the scheduler calls.

# %%
# NBVAL_CHECK_OUTPUT
from jupyter_sandbox import ManualClock, RunParked, Sandbox

clock = ManualClock(start=1_700_000_000_000)
lab = Sandbox(clock=clock)  # in memory, on a clock we move by hand

try:
    lab.eval("console.log('see you in an hour'); await ctx.hours(1); return 'an hour later'")
except RunParked as parked:
    print("parked; due in", (parked.due - clock.now()) / 60_000, "minutes")
print("due now:", lab.run_due())
clock.advance(60 * 60 * 1000)
[(run_id, result)] = lab.run_due()
print(result.output, [line["message"] for line in result.console])

# %% [markdown]
# ## Events: `ctx.waitForEvent` and `%sandbox signal`
#
# A run can wait for something from outside: a payment, a webhook, a person. It parks until an
# event with **every field of `match`** arrives (or the timeout passes: then it gets `null`).
# `%sandbox signal RUN JSON` sends one; an event that does not match is kept for a later wait.
# Delivery is exactly-once: the signal and the journal entry commit in one transaction.

# %%
# %%sandbox --name order -o order
console.log("waiting for the payment of order 42");
const paid = await ctx.waitForEvent({type: "payment", order: 42}, {timeout: 10 * 60 * 1000});
return paid === null ? "timed out" : `order 42 paid: ${paid.amount} EUR`;

# %%
# %sandbox signal order {"type": "payment", "order": 7, "amount": 99}

# %%
# NBVAL_CHECK_OUTPUT
print(sb.run(resolve_run(sb, "order")).status, "- order 7 does not match")

# %%
# %sandbox signal order {"type": "payment", "order": 42, "amount": 30}

# %%
# NBVAL_CHECK_OUTPUT
print(order)
print(kinds("order", "wait", "event"))


# %% [markdown]
# ## Child runs: `ctx.delegate` and `ctx.agent`
#
# `ctx.delegate({script, input, name})` runs another script as a **child run**, with its own
# journal, and resolves to its output. `ctx.agent({agent, input})` runs a Python **agent**
# registered with `@jupyter_sandbox.agent` as a child. To the parent each is one effect: a replay
# of the parent never runs a finished child again. A child's interrupt pauses the parent, and
# answering the parent answers the child.

# %%
@jupyter_sandbox.agent
def researcher(question, resume=None):
    """A Python agent that asks a human when unsure (on resume, it gets the answer)."""
    if resume is None:
        raise ActionInterrupt(data={"question": question, "draft": "probably 42"})
    return {"question": question, "answer": resume.value}


# %%
# %%sandbox --name team -o team
const total = await ctx.delegate({
  name: "sum of squares", input: [1, 2, 3],
  script: "let s = 0; for (const x of ctx.input) s += await actions.square(x); return s;",
});
const research = await ctx.agent({agent: "researcher", input: "What is six times seven?"});
return {total, research};

# %% [markdown]
# The agent asked; the panel above shows its question. Answer it (in the panel: type the answer
# as JSON in the box, then **Send edited**):

# %%
# %sandbox resume team --answer '"42, certainly"' -o team

# %%
# NBVAL_CHECK_OUTPUT
print(team)
parent = resolve_run(sb, "team")
children = [(c.kind, c.name, c.status) for c in sb.runs(include_children=True) if c.parent == parent]
print("child runs:", sorted(children))
print("square ran for", squares)

# %% [markdown]
# `%sandbox runs --all` lists child runs too.
#
# ## `continueAsNew`: past the journal cap
#
# A run's journal is capped (5,000 entries by default; each action call takes two: call and
# result). A long loop should hand over to a fresh run from time to time:
# `ctx.continueAsNew(state)` ends this run and starts its successor with `state` as input.
# With a cap of 40 entries, a loop of 50 calls fails:

# %% tags=["raises-exception"]
# %%sandbox --journal-entries 40
let sum = 0;
for (let i = 0; i < 50; i++) sum += await actions.square(i);
return sum;

# %% [markdown]
# The same loop, ten calls per run. `ctx.progress` drives the progress bar under the cell; it is
# deliberately **not** journaled (it is for the eyes only, and a replay does not repeat it).

# %%
squares.clear()  # count afresh for the next run

# %%
# %%sandbox --journal-entries 40 --name squares -o squares_out
const {from = 0, sum = 0} = ctx.input ?? {};
const to = Math.min(from + 10, 50);
let total = sum;
for (let i = from; i < to; i++) {
  total += await actions.square(i);
  ctx.progress({done: i + 1, total: 50, message: "squaring"});
}
if (to < 50) await ctx.continueAsNew({from: to, sum: total});  // never returns
return {sum: total};

# %%
# NBVAL_CHECK_OUTPUT
chain = [next(r for r in sb.runs() if r.name == "squares" and r.predecessor is None)]
while chain[-1].successor:  # each run links to the next
    chain.append(sb.run(chain[-1].successor))
print(squares_out, "| square ran", len(squares), "times")
print([(r.input, r.status) for r in chain])
print("entries per run:", [len(sb.run(r.id).entries) for r in chain])
print("progress journaled:", any(e["kind"] == "progress" for r in chain for e in sb.run(r.id).entries))

# %% [markdown]
# Each run in the chain is a run of its own (`%sandbox runs` shows them, `continued` then
# `completed`); `-o` received the last one's output.
#
# Next: **05-durability**, a paused run outlives the kernel.
