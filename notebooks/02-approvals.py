# %% [markdown]
# # 02 · Approvals: prototype an agent with a human in the loop
#
# You will build a small support agent: a fake "LLM" plans what to do, tools look things up,
# and sending an email **needs a human's approval**. You will:
#
# * see a run **pause** on an approval: its card shows Approve / Reject / Edit,
# * answer with **Approve**, **Reject** (with a reason) and **Edit** (approve a changed email),
# * print the **journal before and after a click**, to see exactly what a click does,
# * answer **several approvals pending at once** in parallel branches.
#
# Everything is offline and deterministic: the "LLM" is a Python function with canned answers.
# In JupyterLab you would click the buttons; here each click is also a line of Python that
# answers an approval only if it is still open (so clicking first, then running the cell, answers
# once), and the equivalent `%sandbox resume` line is shown, so the notebook runs unattended too.

# %%
from pathlib import Path
import jupyter_sandbox

# This notebook keeps its runs in its own store. Delete it first, so every
# "Restart Kernel and Run All Cells" starts from an empty store.
for old in Path(".sandbox").glob("02-approvals.sqlite*"):  # the store and its -wal, -shm files
    old.unlink()
# %config SandboxMagics.store = ".sandbox/02-approvals.sqlite"
# %load_ext jupyter_sandbox

# %% [markdown]
# ## The agent's actions
#
# * `llm` is the fake LLM. With `task: "plan"` it decides what to search for; with
#   `task: "write"` it drafts the reply. Swap its body for a real client later: the script
#   does not change.
# * `search_docs` is a tool.
# * `send_email` is registered with `approval=True`: every call **pauses the run** until a
#   human answers. The function itself runs only after an Approve.
#
# The lists count what really ran.

# %%
llm_calls, searches, outbox = [], [], []
HELP_CENTRE = {"refund": ["Refund policy"], "password": ["Reset your password", "Two-factor login"],
               "invoice": ["Download invoices"]}

@jupyter_sandbox.action
def llm(request):
    """A fake, deterministic LLM (no network, no key)."""
    llm_calls.append(request["task"])
    ticket = request["ticket"]
    if request["task"] == "plan":
        topic = next((t for t in HELP_CENTRE if t in ticket["text"].lower()), "other")
        return {"search": topic}
    titles = ", ".join(request["docs"]) or "our help centre"
    return {"subject": f"Re: {ticket['subject']}",
            "body": f"Hi {ticket['name']}, this should help: {titles}."}

@jupyter_sandbox.action
def search_docs(topic):
    """Search the help centre."""
    searches.append(topic)
    return HELP_CENTRE.get(topic, [])

@jupyter_sandbox.action(approval=True)
def send_email(email):
    """Send an email (appends to the outbox); every call waits for Approve."""
    outbox.append(email)
    return {"id": f"msg-{len(outbox)}"}

tickets = [
    {"from": "ada@example.com", "name": "Ada", "subject": "Refund", "text": "Please refund order 17!"},
    {"from": "bob@example.com", "name": "Bob", "subject": "Login", "text": "I forgot my password"},
    {"from": "carmen@example.com", "name": "Carmen", "subject": "Invoice", "text": "Where is my invoice?"},
]

# %% [markdown]
# A small helper prints a run's journal, one line per entry (it hides ids and timestamps so its
# output is the same on every run of this notebook):

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
# ## The agent script
#
# For each ticket: plan, search, draft, send. `send_email` pauses for approval; a **Reject**
# reaches the script as an `ActionError`, which it catches to note that the email was not sent.
# `ctx.plan` publishes a checklist the timeline shows.
#
# Run the cell: it stops at the first `send_email`; the run's card shows the email with its buttons.

# %%
# %%sandbox -i tickets -o report --name triage
ctx.plan(ctx.input.map(t => `answer ${t.name}`));
const report = [];
for (const [i, ticket] of ctx.input.entries()) {
  const plan = await actions.llm({task: "plan", ticket});           // the "LLM" decides what to look up
  const docs = await actions.search_docs(plan.search);              // a tool
  const draft = await actions.llm({task: "write", ticket, docs});   // the "LLM" writes the reply
  try {
    const sent = await actions.send_email({to: ticket.from, ...draft});  // waits for a human
    report.push(`${ticket.name}: sent ${sent.id}`);
  } catch (e) {                                                      // a Reject lands here
    report.push(`${ticket.name}: not sent (${e.message})`);
  }
  ctx.plan(ctx.input.map((t, j) => ({title: `answer ${t.name}`, done: j <= i})));
}
return report;

# %% [markdown]
# ## The journal before the click
#
# The run is **interrupted**: the `send_email` call has a slot and a `call` entry, then an
# `interrupt` entry instead of a result. Nothing was sent yet.

# %%
# NBVAL_CHECK_OUTPUT
before = journal("triage")
print()
print("llm calls:", len(llm_calls), "| searches:", len(searches), "| emails sent:", len(outbox))

# %% [markdown]
# ## Approve
#
# In JupyterLab, click **Approve** in the card above. Or run the next cell: it answers the
# email to Ada as the button does, through the run's card (`cards(run)` lists this kernel's cards
# of a run; `card.answer(interrupt_id, choice)` answers one of its open interrupts). It answers
# only an interrupt that is still open, so after your click it answers nothing and says so: no
# email is ever approved twice. Equivalent magic:
#
# ```
# %sandbox resume triage --answer true
# ```
#
# The card shows the decision in place, and the run soon pauses again: at Bob's email.

# %%
from jupyter_sandbox.notebook.cards import cards


def answer(run, to, choice="approve", value=None):
    """Answer the open approval of the email to `to` as its button would, once; say so if it was answered already."""
    card = cards(resolve_run(sb, run))[-1]
    for pending in card.pending():
        email = json.loads(pending["edit"])  # the action's input, as the card's edit box shows it
        if email["to"] == to:
            card.answer(pending["id"], choice, value(email) if callable(value) else value)
            return print(f"{choice}: the email to {to}")
    print(f"nothing open for {to}: answered already (by a click in the card?)")


answer("triage", "ada@example.com")

# %% [markdown]
# ## The journal after the click
#
# The click **resumed** the run: attempt 2 ran the script again *from the top*. Every effect
# already in the journal (the `llm` and `search_docs` calls for Ada, in slots 0 to 2) was
# **served from the journal**: no new entries for them, and the counters show those functions
# did not run again. Attempt 2 wrote only what was new: the `answer`, `send_email`'s `result`
# (the function ran now, once), the ticked plan, then Bob's calls, up to his approval. (The
# first `ctx.plan` ran again too, but notes such as plans, logs and console lines are
# regenerated by a replay, not journaled twice.)

# %%
# NBVAL_CHECK_OUTPUT
after = journal("triage", since=before)
print()
print("llm calls:", len(llm_calls), "| searches:", len(searches), "| emails sent:", len(outbox))

# %% [markdown]
# ## Reject, with a reason
#
# The reason travels to the script in the `ActionError`'s message. Equivalent magic:
#
# ```
# %sandbox resume triage --reject "Bob needs a phone call, not an email"
# ```

# %%
answer("triage", "bob@example.com", "reject", "Bob needs a phone call, not an email")

# %% [markdown]
# ## Edit, then approve
#
# In the card, "edit the input" opens a text box with the action's input as JSON. Change it and
# click **Edit & approve**: the action runs with the edited input. Here the edit is a function of
# the input. Equivalent magic (the answer is JSON):
#
# ```
# %sandbox resume triage --answer '{"approved": true, "input": {"to": "carmen@example.com", "subject": "Re: Invoice", "body": "Hi Carmen, this should help: Download invoices. Sorry for the wait!"}}'
# ```

# %%
answer("triage", "carmen@example.com", "edit", lambda email: {**email, "body": email["body"] + " Sorry for the wait!"})

# %% [markdown]
# The run finished, and `-o report` received its output, although the cell that started it ended
# long ago. Each function ran once per ticket, whatever the number of resumes:

# %%
# NBVAL_CHECK_OUTPUT
for line in report:
    print(line)
print()
print("llm calls:", len(llm_calls), "| searches:", len(searches))
print("outbox:", [(e["to"], e["body"]) for e in outbox])
print("attempts:", [a["n"] for a in sb.run(resolve_run(sb, "triage")).attempts])

# %% [markdown]
# A button answers once: the card's buttons disable at the first click, and a click on an
# interrupt answered meanwhile (in another cell, another kernel) only refreshes the card. Two
# resumes of one run at once cannot both proceed either.
#
# ## Several approvals at once
#
# Concurrent calls (`ctx.parallel`, `Promise.all`) run concurrently in Python. When one of them
# needs an answer, the calls already in flight finish (and are journaled), nothing new starts,
# and the run pauses with **every** interrupt among them pending, each with its own buttons. So
# this script writes the drafts in parallel first, then starts all three sends together;
# `ctx.parallelSettled` keeps going when one is rejected.

# %%
# %%sandbox -i tickets --name fanout
const drafts = await ctx.parallel(ctx.input.map(ticket => async () => {
  const plan = await actions.llm({task: "plan", ticket});
  const docs = await actions.search_docs(plan.search);
  return {to: ticket.from, ...(await actions.llm({task: "write", ticket, docs}))};
}));
const sent = await ctx.parallelSettled(drafts.map(d => () => actions.send_email(d)));
return sent.map((s, i) => `${ctx.input[i].name}: ${s.status === "fulfilled" ? "sent " + s.value.id : "not sent"}`);

# %% [markdown]
# Three approvals in one card, one per pending interrupt. Each answers only its own interrupt
# (by its id), so answers never cross: answering one resumes the run, which pauses again on the
# two still open; the card shows each decision in place of its buttons. Pick them by recipient:

# %%
# NBVAL_CHECK_OUTPUT
def waiting():
    """The recipients of this run's open approvals, as the store has them."""
    return sorted(json.loads(p["edit"])["to"] for p in cards(resolve_run(sb, "fanout"))[-1].pending())


print("pending:", waiting())

# %%
answer("fanout", "carmen@example.com")

# %%
# NBVAL_CHECK_OUTPUT
print("pending:", waiting())

# %%
answer("fanout", "ada@example.com", "reject", "already refunded")

# %%
# NBVAL_CHECK_OUTPUT
print("pending:", waiting())

# %% [markdown]
# The last one with the magic. `--answer` answers the first pending interrupt; with several
# pending, `--id INTERRUPT` picks one (the id is shown beside each approval in the card).

# %%
# %sandbox resume fanout --answer true -o fan_report

# %%
# NBVAL_CHECK_OUTPUT
print(fan_report)
print("emails sent:", [e["to"] for e in outbox])

# %% [markdown]
# ## What you saw
#
# * An action with `approval=True` (or one that raises `ActionInterrupt`) **pauses** the run. The
#   cell ends; nothing waits in the kernel.
# * A click **resumes** by replay: the script runs from the top, recorded effects come from the
#   journal, and only the answered call and what follows it run live.
# * `%sandbox resume RUN --answer JSON` / `--reject REASON` do what the buttons do.
#
# Next: **03-determinism**, what replay requires of a script, and what happens when an edit
# breaks it.
