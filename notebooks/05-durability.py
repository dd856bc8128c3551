# %% [markdown]
# # 05 · Durability: runs outlive the kernel
#
# A paused run is not held in memory. Its journal, source and input are in the store (an SQLite
# file), committed entry by entry. So a run can wait for days, through kernel restarts, and be
# resumed by another process. You will:
#
# * pause a run, "restart the kernel", list the run and resume it;
# * export a paused run to a file, import it into another store, and resume it there.

# %%
from pathlib import Path
import jupyter_sandbox

# This notebook keeps its runs in its own store. Delete it first, so every
# "Restart Kernel and Run All Cells" starts from an empty store.
for pattern in ["05-durability.sqlite*", "05-elsewhere.sqlite*", "hotfix.jsbx"]:
    for old in Path(".sandbox").glob(pattern):
        old.unlink()
# %config SandboxMagics.store = ".sandbox/05-durability.sqlite"
# %load_ext jupyter_sandbox

# %%
builds, deploys = [], []

@jupyter_sandbox.action
def build(version):
    """Build an artifact (slow and expensive, in real life)."""
    builds.append(version)
    return {"artifact": f"app-{version}.tar.gz"}

@jupyter_sandbox.action(approval=True)
def deploy(artifact):
    """Deploy to production, after a human approves."""
    deploys.append(artifact)
    return {"deployed": artifact["artifact"]}

version = "1.2.0"

# %%
# %%sandbox -i version --name release
const artifact = await actions.build(ctx.input);
console.log("built", artifact.artifact);
return await actions.deploy(artifact);   // waits for approval

# %% [markdown]
# ## The kernel restarts
#
# Suppose nobody clicks, and the kernel restarts (or the laptop closes). What survives is the
# store file. A fresh `Sandbox` on that file is what a restarted kernel has: no Python objects
# from before, only the store. (A real restart works the same: `%load_ext jupyter_sandbox`,
# then `%sandbox runs`.)

# %%
# NBVAL_CHECK_OUTPUT
from jupyter_sandbox import Sandbox

restarted = Sandbox(".sandbox/05-durability.sqlite")
for run in restarted.runs():
    print(run.name, run.status, "| waiting for:", [p["name"] for p in restarted.run(run.id).pending])

# %% [markdown]
# The same list from the magic:

# %%
# %sandbox runs

# %% [markdown]
# The store holds data, not code: after a restart, run the cell that registers your actions
# again, then resume. The resume replays the journal: `build` is served from it and does not run
# again; only `deploy` runs, with the answer.

# %%
# NBVAL_CHECK_OUTPUT
restarted.action(build)
restarted.action(deploy, approval=True)

release = restarted.run(restarted.runs()[0].id)
result = restarted.resume(release.id, True)
print(result.output)
print("console, rebuilt by the replay:", [line["message"] for line in result.console])
print("build ran", len(builds), "time(s); deploy ran", len(deploys), "time(s)")
restarted.close()

# %% [markdown]
# After a real restart the magic does the same: `%sandbox resume release --answer true`.
# (The approval panel in the cell above still shows: it belongs to the old session. Clicking it
# now would say the run is already completed.)
#
# ### How durable, exactly
#
# * Each journal entry is committed as it happens (SQLite in WAL mode), and an action's result is
#   committed **before** the script sees it. A killed process loses nothing that was committed.
# * The honest gap: if the process dies *while an action runs* (after it did its work, before
#   its result was journaled), the resume calls it again. Effects are **at-least-once**, not
#   exactly-once. Make the actions that matter idempotent: an idempotency key in the input
#   (say `` `${ctx.runId}-deploy` ``) works well, because a replay makes the same call with the
#   same input, so the receiving side can recognise the repeat.
# * Signals and events are exactly-once: the signal row and its journal entry commit together.
# * Two resumes of one run at once (a double click, two kernels) cannot both proceed: one takes
#   the run, the other gets `RunBusyError`.
#
# ## Export and import
#
# A run (with its child runs and journals) exports to one file. Import it into another store
# (another machine, a colleague's notebook) and resume it there.

# %%
hotfix_version = "1.2.1"

# %%
# %%sandbox -i hotfix_version --name hotfix
const artifact = await actions.build(ctx.input);
console.log("built", artifact.artifact);
return await actions.deploy(artifact);   // waits for approval

# %%
# %sandbox export hotfix .sandbox/hotfix.jsbx

# %% [markdown]
# "Elsewhere" is another store file here. Every `%sandbox` subcommand takes `--store PATH`
# first; the actions registered in this kernel are available on every store.

# %%
# %sandbox --store .sandbox/05-elsewhere.sqlite import .sandbox/hotfix.jsbx

# %%
# %sandbox --store .sandbox/05-elsewhere.sqlite resume hotfix --answer true -o hotfix_out

# %%
# NBVAL_CHECK_OUTPUT
from jupyter_sandbox.notebook import sandbox_for

print(hotfix_out)
here, elsewhere = jupyter_sandbox.default_sandbox(), sandbox_for(".sandbox/05-elsewhere.sqlite")
print("here:     ", [(r.name, r.status) for r in here.runs()])
print("elsewhere:", [(r.name, r.status) for r in elsewhere.runs()])
print("build ran", len(builds), "time(s)")

# %% [markdown]
# The original store still has `hotfix` waiting: an export is a copy. Resume one copy only, or
# the approved action runs once per copy.
#
# ## Where to go from here
#
# * `%sandbox?` lists every subcommand: `runs`, `show`, `resume`, `signal`, `check`, `fork`
#   (re-run a run from a journal position with another answer), `export`, `import`.
# * `%config SandboxMagics` lists the defaults (store, strict mode, limits, scheduler).
# * The README's "How replay works" and `docs/journal.md` describe the journal entry by entry.
