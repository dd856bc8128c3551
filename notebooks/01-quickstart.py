# %% [markdown]
# # 01 · Quickstart
#
# **jupyter_sandbox** runs JavaScript *workflow scripts* in a `%%sandbox` cell. The script
# orchestrates; Python does the work, through *actions*: Python functions you register. Every
# effect of a run is written to a journal, so a run can pause and resume later without doing
# anything twice.
#
# In this notebook you will:
#
# 1. check the install,
# 2. register one action,
# 3. run one `%%sandbox` cell and get its output into a Python variable,
# 4. read the run's **timeline**: the journal of everything it did.
#
# Everything here runs locally: no network, no API keys. Run it top to bottom
# (*Kernel → Restart Kernel and Run All Cells*).

# %% [markdown]
# ## 1. Check the install
#
# The package imports, and its JavaScript engine (QuickJS, inside the Python process) runs a
# one-line script. `Sandbox` is the Python API under the magics.

# %%
import jupyter_sandbox
from jupyter_sandbox import Sandbox

print("jupyter_sandbox", jupyter_sandbox.__version__)

# %%
# NBVAL_CHECK_OUTPUT
print("1 + 1 =", Sandbox().eval("return 1 + 1").output)

# %% [markdown]
# ## 2. Load the extension
#
# `%load_ext jupyter_sandbox` registers the `%%sandbox` cell magic and the `%sandbox` line
# magic. Runs are kept in a **store**, an SQLite file: `.sandbox/runs.sqlite` beside the
# notebook unless you configure another. Each tutorial uses its own store and deletes it first,
# so it reruns the same way every time.

# %%
from pathlib import Path
import jupyter_sandbox

# This notebook keeps its runs in its own store. Delete it first, so every
# "Restart Kernel and Run All Cells" starts from an empty store.
for old in Path(".sandbox").glob("01-quickstart.sqlite*"):  # the store and its -wal, -shm files
    old.unlink()
# %config SandboxMagics.store = ".sandbox/01-quickstart.sqlite"
# %load_ext jupyter_sandbox

# %% [markdown]
# ## 3. An action
#
# A script cannot reach the network, the files or Python on its own. Its only way to touch the
# world is to call an **action**: a Python callable registered with `@jupyter_sandbox.action`.
# This one stands in for a database query, and counts its calls so we can see what ran.

# %%
calls = []

@jupyter_sandbox.action
def lookup_user(user_id):
    """Find a user by id (a stand-in for a database query)."""
    calls.append(user_id)
    users = {"u1": {"name": "Ada", "plan": "pro"}, "u2": {"name": "Grace", "plan": "free"}}
    return users[user_id]


# %% [markdown]
# ## 4. A `%%sandbox` cell
#
# The cell is the body of an `async` JavaScript function: `await` works at the top level and
# `return` sets the run's output. `actions.lookup_user(...)` calls the Python function above
# and resolves to what it returned (values cross as JSON).
#
# * `-o greeting` stores the output in the Python variable `greeting`;
# * `--name hello` names the run, so the `%sandbox` commands below can refer to it.
#
# Under the cell you see the console, the timeline (live while the run goes) and the output.

# %%
# %%sandbox -o greeting --name hello
const user = await actions.lookup_user("u1");
console.log("found", user.name);
return `Hello ${user.name}, welcome to the ${user.plan} plan!`;

# %%
# NBVAL_CHECK_OUTPUT
print(greeting)
print("lookup_user ran", len(calls), "time(s):", calls)

# %% [markdown]
# `-i VAR` passes a Python value to the script as `ctx.input`:

# %%
request = {"user": "u2", "lang": "fr"}

# %%
# %%sandbox -i request -o reply --name bonjour
const user = await actions.lookup_user(ctx.input.user);
const hello = {en: "Hello", fr: "Bonjour"}[ctx.input.lang];
return {text: `${hello} ${user.name}`, plan: user.plan};

# %%
# NBVAL_CHECK_OUTPUT
print(reply)

# %% [markdown]
# ## 5. The timeline
#
# Every effect a run performs is written to its **journal**, one entry at a time, committed to
# the store as it happens. The timeline under each `%%sandbox` cell renders it;
# `%sandbox show NAME` renders it again for any stored run (also after a kernel restart):

# %%
# %sandbox show hello

# %% [markdown]
# The same journal from Python: `Sandbox.timeline(run_id)` returns the document the widget
# renders. `jupyter_sandbox.default_sandbox()` is the Sandbox behind the magics, and
# `resolve_run` turns a run's `--name` into its id.

# %%
# NBVAL_CHECK_OUTPUT
from jupyter_sandbox.notebook.commands import resolve_run

sb = jupyter_sandbox.default_sandbox()
doc = sb.timeline(resolve_run(sb, "hello"))
for e in doc["entries"]:
    print(e["seq"], e["kind"], {k: e[k] for k in ("slot", "name", "input", "value", "message") if k in e})

# %% [markdown]
# How to read it:
#
# * `attempt` opens an attempt: `1` is the first run; each resume adds one.
# * `call` and `result` are one action call. The call holds a **slot** (`0`): its position in
#   the order the script made its effects. `Date.now()` and `Math.random()` are effects too:
#   they get slots and `now` / `random` entries.
# * `console` is a console line (journaled once; a resume regenerates it, see notebook 03).
#
# This is what makes a resume possible: the script runs again from the top, and every effect
# that has a journal entry is *served from the journal* instead of being performed again.
# Notebook 02 shows it with an approval.
#
# `%sandbox runs` lists the store's runs, newest first:

# %%
# %sandbox runs

# %% [markdown]
# ## 6. When something goes wrong
#
# A script error names the cell's line and column (`workflow.js:LINE:COL`) and shows the line
# with a caret. This cell fails on purpose:

# %% tags=["raises-exception"]
# %%sandbox
const user = await actions.lookup_user("u1");
return user.adress.city;   // a typo: there is no user.adress

# %% [markdown]
# An action that raises does not kill the run: the script sees a JavaScript `ActionError` it can
# catch (and the failure is journaled like a result, so a replay throws it again instead of
# calling the action again).

# %%
# %%sandbox -o missing
try {
  return await actions.lookup_user("u9");
} catch (e) {
  return `no such user (${e.name}: ${e.message})`;
}

# %%
# NBVAL_CHECK_OUTPUT
print(missing)

# %% [markdown]
# ## 7. The same from plain Python
#
# The magics are a thin layer over `Sandbox`: register actions with `@sb.action`, run a script
# with `sb.eval(source, input)`. A bare `Sandbox()` keeps its runs in memory;
# `Sandbox("runs.sqlite")` keeps them in a file.

# %%
# NBVAL_CHECK_OUTPUT
py_sb = Sandbox()
py_sb.action(lookup_user)

result = py_sb.eval("""
    const user = await actions.lookup_user(ctx.input);
    console.log("looked up", user.name);
    return user.plan;
""", input="u2")
print(result.output, result.console)

# %% [markdown]
# ## Next
#
# * **02-approvals**: an agent prototype whose actions pause for a human: Approve, Reject, Edit.
# * **03-determinism**: why a resume never runs anything twice, and what happens when it can't.
# * **04-workflows**: the whole `ctx` API: steps, plans, parallel branches, timers, events,
#   child runs, `continueAsNew`.
# * **05-durability**: a paused run survives a kernel restart; export it and resume it elsewhere.
