# %% [markdown]
# # 07 · A team on one database: approve a run from another kernel
#
# One SQLite file serves one machine. A team points every kernel at **one PostgreSQL database**
# instead, and then the person who writes a script and the person who approves it no longer
# share a disk. In this tutorial:
#
# * **you** (this kernel) start a refund run; it **pauses** on an approval,
# * **an approver** (a second kernel: another notebook, on another machine for all it knows)
#   opens the same URL, lists what waits with **`%sandbox runs --pending`**, and approves,
# * **your card turns completed by itself**: cards watch the store, whoever changed it.
#
# The second kernel is real: this notebook starts it with `jupyter_client` and runs the
# approver's cells there, so the whole story runs top to bottom.

# %% [markdown]
# ## One database for the team
#
# A team sets `JUPYTER_SANDBOX_STORE=postgresql://team@db.internal/runs` in every kernel's
# environment (or `%config SandboxMagics.store = "postgresql://…"`). When none is set, this
# notebook starts a **throwaway PostgreSQL cluster** in a temporary folder (it needs Debian's
# `postgresql` package, or `initdb` on the `PATH`) and stops it at the end. Either way the
# tutorial keeps its runs in a schema of its own, `tutorial_07`, dropped first so every
# "Run All" starts empty (nothing else in the database is touched).

# %%
import os

import psycopg
from jupyter_sandbox.stores.pgcluster import PostgresCluster, with_schema

server = os.environ.get("JUPYTER_SANDBOX_STORE", "")
cluster = None
if not server.startswith("postgresql://"):
    cluster = PostgresCluster()  # initdb + pg_ctl in a temporary folder, a unix socket there only
    server = cluster.start()
with psycopg.connect(server, autocommit=True) as conn:
    conn.execute("DROP SCHEMA IF EXISTS tutorial_07 CASCADE")
    conn.execute("CREATE SCHEMA tutorial_07")
STORE = with_schema(server, "tutorial_07")  # ?options=-csearch_path%3Dtutorial_07
# %config SandboxMagics.store = STORE
# %load_ext jupyter_sandbox

# %% [markdown]
# ## The team's actions, in a module
#
# Both kernels must know the same actions: the approver's kernel runs `pay_refund` when it
# approves (a resume runs the rest of the run where it is resumed). A team keeps them in a
# module everyone imports; here `%%writefile` writes it beside the notebook.

# %%
# %%writefile team_actions.py
import jupyter_sandbox

@jupyter_sandbox.action
def draft_refund(order):
    """Work out the refund (a lookup in real life)."""
    return {"order": order["id"], "amount": order["total"], "to": order["email"]}

@jupyter_sandbox.action(approval=True)
def pay_refund(refund):
    """Pay it: needs a human's approval, and runs only after one."""
    return {"paid": refund["amount"], "ref": f"RF-{refund['order']}"}

# %%
import team_actions  # noqa: F401  (registers the actions)

# %% [markdown]
# ## You: start the run
#
# The run drafts the refund, then waits for an approval to pay it. Its card shows Approve /
# Reject; **don't click**: the approver will answer from the other kernel.

# %%
# %%sandbox --name refund-1042 -o refund
const draft = await actions.draft_refund({id: 1042, total: 30, email: "ana@example.com"})
const paid = await actions.pay_refund(draft)
return {order: draft.order, ref: paid.ref}

# %%
# NBVAL_CHECK_OUTPUT
from jupyter_sandbox.notebook.cards import cards

mine = cards()[-1]  # the card above, as Python: it always shows what the store says
print(mine.doc["status"])

# %% [markdown]
# ## The approver: a second kernel on the same URL
#
# `KernelManager` starts a fresh Python kernel; its environment carries the URL in
# `JUPYTER_SANDBOX_STORE`, as a team's kernels would. `approver(code)` runs a cell there and
# prints what it shows (as text: a card prints as its one-line summary).

# %%
from jupyter_client import KernelManager

kernel = KernelManager(kernel_name="python3", transport="ipc")  # over local sockets, not TCP
kernel.start_kernel(cwd=os.getcwd(), env={**os.environ, "JUPYTER_SANDBOX_STORE": STORE})
client = kernel.client()
client.start_channels()
client.wait_for_ready(timeout=60)

def approver(code):
    """Run ``code`` as a cell of the approver's kernel; print its output as text (each display as it ends)."""
    shown = {}  # display id -> its latest text: a card is displayed, then updated in place
    def show(msg):
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            print(content["text"], end="")
        elif kind in ("display_data", "update_display_data", "execute_result"):
            key = content.get("transient", {}).get("display_id") or len(shown)
            shown[key] = content["data"].get("text/plain", "")
        elif kind == "error":
            print(f"{content['ename']}: {content['evalue']}")
    reply = client.execute_interactive(code, output_hook=show, timeout=60)
    print("\n".join(shown.values()))
    assert reply["content"]["status"] == "ok", reply["content"]

# %% [markdown]
# The approver loads the extension and the team's actions, then asks what is waiting for an
# answer: one row per open interrupt, with its **interrupt id** and what it waits for.

# %%
approver("""
import team_actions
%load_ext jupyter_sandbox
%sandbox runs --pending
""")

# %% [markdown]
# They approve by the run's name (or id, or `--id INTERRUPT` to pick one of several; `--reject
# REASON` says no). `pay_refund` runs **in the approver's kernel**, and the run completes there.

# %%
approver("%sandbox resume refund-1042 --answer true")
approver("%sandbox runs --pending")

# %% [markdown]
# ## You again: your card completed by itself
#
# Nothing ran in this kernel: the card's watcher saw the store change (it polls the store's
# change counter twice a second) and redrew the card above, and `-o refund` was filled when the
# run completed, wherever it completed. Scroll up: the card reads *completed*.

# %%
# NBVAL_CHECK_OUTPUT
import time

deadline = time.monotonic() + 30
while mine.doc["status"] != "completed" and time.monotonic() < deadline:
    time.sleep(0.1)
print(mine.doc["status"], refund)

# %% [markdown]
# ## Clean up
#
# Stop the approver's kernel and, if this notebook started it, the throwaway cluster, and remove
# the `team_actions.py` this notebook wrote (in a real team it lives in your package).

# %%
import os

import jupyter_sandbox

os.remove("team_actions.py")
client.stop_channels()
kernel.shutdown_kernel(now=True)
if cluster is not None:
    jupyter_sandbox.notebook.defaults.default_sandbox().close()  # before its server goes away
    cluster.stop()
