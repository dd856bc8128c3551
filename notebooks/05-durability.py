# %% [markdown]
# # 05 · Durability: runs outlive the kernel
#
# A paused run is not held in memory. Its journal, source and input are in the store (an SQLite
# file), committed entry by entry. So a run can wait for days, through kernel restarts, and be
# resumed by another process. You will:
#
# * pause a run, restart the kernel (for real, if you like), list the run and resume it;
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
# store file; the kernel's Python objects are gone, the registered actions too. Try it for real:
# **Kernel → Restart Kernel** now (not "Restart and Run All", which starts from an empty store),
# then run the cells below in order. Run unattended, without a restart, they do the same.
#
# The store holds data, not code: a restarted kernel loads the extension, points it at the same
# store and registers its actions again. (The counters start again too: they count what runs in
# this kernel.)

# %%
# %config SandboxMagics.store = ".sandbox/05-durability.sqlite"
# %load_ext jupyter_sandbox
import jupyter_sandbox

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

# %% [markdown]
# The run is still there, waiting for its answer. (In JupyterLab the card of the `release` cell
# above is live again too, since `%load_ext`: its **Approve** would do what the next cells do.)

# %%
# %sandbox runs

# %% [markdown]
# Resume it with the answer. The resume replays the journal: `build` is served from it and does
# not run again; only `deploy` runs, with the answer. The cell's `-o` receives the output.

# %%
# %sandbox resume release --answer true -o result

# %%
# NBVAL_CHECK_OUTPUT
print(result)
print("in this kernel: build ran", len(builds), "time(s); deploy ran", len(deploys), "time(s)")

# %% [markdown]
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
