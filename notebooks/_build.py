"""Build the tutorial notebooks from this file: ``python notebooks/_build.py [--no-execute] [01 03 ...]``.

Each notebook is a list of cells written here as code, so a review reads a
diff of Python, not of JSON. The script writes ``NN-name.ipynb`` beside
itself and executes each one with nbclient in a temporary folder (so no store
is left behind), saving the outputs: readers see them before running anything,
and nbval compares the cells marked ``# NBVAL_CHECK_OUTPUT`` (or tagged
``nbval-check-output``, for ``%%sandbox`` cells, whose first line must be the
magic) against them. ``--no-execute`` writes the notebooks without outputs (to read the cells;
nbval then fails every checked cell, having nothing to compare with).

The check: ``pytest --nbval-lax --nbval-current-env
--nbval-sanitize-with notebooks/nbval_sanitize.cfg notebooks/``
(``tests/test_notebooks.py`` runs it on a copy of this folder).
"""

from __future__ import annotations

import sys
import tempfile
import textwrap
import time
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent
CHECK = "# NBVAL_CHECK_OUTPUT"


def _text(source: str) -> str:
    return textwrap.dedent(source).strip("\n")


def md(source: str) -> nbformat.NotebookNode:
    return new_markdown_cell(_text(source))


def code(*sources: str, check: bool = False, raises: bool = False) -> nbformat.NotebookNode:
    """A code cell of ``sources`` (each dedented on its own). ``check``: nbval compares its output;
    ``raises``: it is meant to fail."""
    text = "\n\n".join(_text(s) for s in sources)
    if text.startswith("%%"):  # a cell magic's line and its body: no blank line between them
        text = "\n".join(_text(s) for s in sources)
    tags = []
    if check:
        if text.startswith("%%"):  # a cell magic must stay on the first line: use nbval's tag
            tags.append("nbval-check-output")
        else:
            text = f"{CHECK}\n{text}"
    if raises:
        tags.append("raises-exception")  # nbclient and nbval both read this tag
    cell = new_code_cell(text)
    if tags:
        cell.metadata["tags"] = tags
    return cell


def setup(name: str, *extra: str) -> nbformat.NotebookNode:
    """The first code cell: this notebook's own store, deleted first so a rerun starts clean."""
    patterns = [f"{name}.sqlite*", *extra]
    if len(patterns) == 1:
        delete = f'''for old in Path(".sandbox").glob("{patterns[0]}"):  # the store and its -wal, -shm files
            old.unlink()'''
    else:
        delete = f'''for pattern in [{", ".join(f'"{p}"' for p in patterns)}]:
            for old in Path(".sandbox").glob(pattern):
                old.unlink()'''
    return code(f'''
        from pathlib import Path
        import jupyter_sandbox

        # This notebook keeps its runs in its own store. Delete it first, so every
        # "Restart Kernel and Run All Cells" starts from an empty store.
        {delete}
        %config SandboxMagics.store = ".sandbox/{name}.sqlite"
        %load_ext jupyter_sandbox
        ''')


# A journal printer for the notebooks that read journals: one line per entry, no ids or
# timestamps, so its output is the same on every run of the notebook.
JOURNAL = '''
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
    '''


# ---------------------------------------------------------------------------------------------
# 01 · quickstart


def quickstart() -> list[nbformat.NotebookNode]:
    return [
        md('''
        # 01 · Quickstart

        **jupyter_sandbox** runs JavaScript *workflow scripts* in a `%%sandbox` cell. The script
        orchestrates; Python does the work, through *actions*: Python functions you register. Every
        effect of a run is written to a journal, so a run can pause and resume later without doing
        anything twice.

        In this notebook you will:

        1. check the install,
        2. register one action,
        3. run one `%%sandbox` cell and get its output into a Python variable,
        4. read the run's **timeline**: the journal of everything it did.

        Everything here runs locally: no network, no API keys. Run it top to bottom
        (*Kernel → Restart Kernel and Run All Cells*).
        '''),
        md('''
        ## 1. Check the install

        The package imports, and its JavaScript engine (QuickJS, inside the Python process) runs a
        one-line script. `Sandbox` is the Python API under the magics.
        '''),
        code('''
        import jupyter_sandbox
        from jupyter_sandbox import Sandbox

        print("jupyter_sandbox", jupyter_sandbox.__version__)
        '''),
        code('''
        print("1 + 1 =", Sandbox().eval("return 1 + 1").output)
        ''', check=True),
        md('''
        ## 2. Load the extension

        `%load_ext jupyter_sandbox` registers the `%%sandbox` cell magic and the `%sandbox` line
        magic. Runs are kept in a **store**, an SQLite file: `.sandbox/runs.sqlite` beside the
        notebook unless you configure another. Each tutorial uses its own store and deletes it first,
        so it reruns the same way every time.
        '''),
        setup("01-quickstart"),
        md('''
        ## 3. An action

        A script cannot reach the network, the files or Python on its own. Its only way to touch the
        world is to call an **action**: a Python callable registered with `@jupyter_sandbox.action`.
        This one stands in for a database query, and counts its calls so we can see what ran.
        '''),
        code('''
        calls = []

        @jupyter_sandbox.action
        def lookup_user(user_id):
            """Find a user by id (a stand-in for a database query)."""
            calls.append(user_id)
            users = {"u1": {"name": "Ada", "plan": "pro"}, "u2": {"name": "Grace", "plan": "free"}}
            return users[user_id]
        '''),
        md('''
        ## 4. A `%%sandbox` cell

        The cell is the body of an `async` JavaScript function: `await` works at the top level and
        `return` sets the run's output. `actions.lookup_user(...)` calls the Python function above
        and resolves to what it returned (values cross as JSON).

        * `-o greeting` stores the output in the Python variable `greeting`;
        * `--name hello` names the run, so the `%sandbox` commands below can refer to it.

        Under the cell you see the console, the timeline (live while the run goes) and the output.
        '''),
        code('''
        %%sandbox -o greeting --name hello
        const user = await actions.lookup_user("u1");
        console.log("found", user.name);
        return `Hello ${user.name}, welcome to the ${user.plan} plan!`;
        '''),
        code('''
        print(greeting)
        print("lookup_user ran", len(calls), "time(s):", calls)
        ''', check=True),
        md('''
        `-i VAR` passes a Python value to the script as `ctx.input`:
        '''),
        code('''
        request = {"user": "u2", "lang": "fr"}
        '''),
        code('''
        %%sandbox -i request -o reply --name bonjour
        const user = await actions.lookup_user(ctx.input.user);
        const hello = {en: "Hello", fr: "Bonjour"}[ctx.input.lang];
        return {text: `${hello} ${user.name}`, plan: user.plan};
        '''),
        code('''
        print(reply)
        ''', check=True),
        md('''
        ## 5. The timeline

        Every effect a run performs is written to its **journal**, one entry at a time, committed to
        the store as it happens. The timeline under each `%%sandbox` cell renders it;
        `%sandbox show NAME` renders it again for any stored run (also after a kernel restart):
        '''),
        code('''
        %sandbox show hello
        '''),
        md('''
        The same journal from Python: `Sandbox.timeline(run_id)` returns the document the widget
        renders. `jupyter_sandbox.default_sandbox()` is the Sandbox behind the magics, and
        `resolve_run` turns a run's `--name` into its id.
        '''),
        code('''
        from jupyter_sandbox.notebook.commands import resolve_run

        sb = jupyter_sandbox.default_sandbox()
        doc = sb.timeline(resolve_run(sb, "hello"))
        for e in doc["entries"]:
            print(e["seq"], e["kind"], {k: e[k] for k in ("slot", "name", "input", "value", "message") if k in e})
        ''', check=True),
        md('''
        How to read it:

        * `attempt` opens an attempt: `1` is the first run; each resume adds one.
        * `call` and `result` are one action call. The call holds a **slot** (`0`): its position in
          the order the script made its effects. `Date.now()` and `Math.random()` are effects too:
          they get slots and `now` / `random` entries.
        * `console` is a console line (journaled once; a resume regenerates it, see notebook 03).

        This is what makes a resume possible: the script runs again from the top, and every effect
        that has a journal entry is *served from the journal* instead of being performed again.
        Notebook 02 shows it with an approval.

        `%sandbox runs` lists the store's runs, newest first:
        '''),
        code('''
        %sandbox runs
        '''),
        md('''
        ## 6. When something goes wrong

        A script error names the cell's line and column (`workflow.js:LINE:COL`) and shows the line
        with a caret. This cell fails on purpose:
        '''),
        code('''
        %%sandbox
        const user = await actions.lookup_user("u1");
        return user.adress.city;   // a typo: there is no user.adress
        ''', raises=True),
        md('''
        An action that raises does not kill the run: the script sees a JavaScript `ActionError` it can
        catch (and the failure is journaled like a result, so a replay throws it again instead of
        calling the action again).
        '''),
        code('''
        %%sandbox -o missing
        try {
          return await actions.lookup_user("u9");
        } catch (e) {
          return `no such user (${e.name}: ${e.message})`;
        }
        '''),
        code('''
        print(missing)
        ''', check=True),
        md('''
        ## 7. The same from plain Python

        The magics are a thin layer over `Sandbox`: register actions with `@sb.action`, run a script
        with `sb.eval(source, input)`. A bare `Sandbox()` keeps its runs in memory;
        `Sandbox("runs.sqlite")` keeps them in a file.
        '''),
        code('''
        py_sb = Sandbox()
        py_sb.action(lookup_user)

        result = py_sb.eval("""
            const user = await actions.lookup_user(ctx.input);
            console.log("looked up", user.name);
            return user.plan;
        """, input="u2")
        print(result.output, result.console)
        ''', check=True),
        md('''
        ## Next

        * **02-approvals**: an agent prototype whose actions pause for a human: Approve, Reject, Edit.
        * **03-determinism**: why a resume never runs anything twice, and what happens when it can't.
        * **04-workflows**: the whole `ctx` API: steps, plans, parallel branches, timers, events,
          child runs, `continueAsNew`.
        * **05-durability**: a paused run survives a kernel restart; export it and resume it elsewhere.
        '''),
    ]


# ---------------------------------------------------------------------------------------------
# 02 · approvals

TICKETS = '''
    tickets = [
        {"from": "ada@example.com", "name": "Ada", "subject": "Refund", "text": "Please refund order 17!"},
        {"from": "bob@example.com", "name": "Bob", "subject": "Login", "text": "I forgot my password"},
        {"from": "carmen@example.com", "name": "Carmen", "subject": "Invoice", "text": "Where is my invoice?"},
    ]
    '''


def approvals() -> list[nbformat.NotebookNode]:
    return [
        md('''
        # 02 · Approvals: prototype an agent with a human in the loop

        You will build a small support agent: a fake "LLM" plans what to do, tools look things up,
        and sending an email **needs a human's approval**. You will:

        * see a run **pause** on an approval and show an Approve / Reject / Edit panel,
        * answer with **Approve**, **Reject** (with a reason) and **Edit** (approve a changed email),
        * print the **journal before and after a click**, to see exactly what a click does,
        * answer **several approvals pending at once** in parallel branches.

        Everything is offline and deterministic: the "LLM" is a Python function with canned answers.
        In JupyterLab you would click the buttons; here each click is also done by a line of Python
        (`panel.approve_button.click()`), and the equivalent `%sandbox resume` line is shown, so the
        notebook runs unattended too.
        '''),
        setup("02-approvals"),
        md('''
        ## The agent's actions

        * `llm` is the fake LLM. With `task: "plan"` it decides what to search for; with
          `task: "write"` it drafts the reply. Swap its body for a real client later: the script
          does not change.
        * `search_docs` is a tool.
        * `send_email` is registered with `approval=True`: every call **pauses the run** until a
          human answers. The function itself runs only after an Approve.

        The lists count what really ran.
        '''),
        code('''
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
        ''', TICKETS),
        md('''
        A small helper prints a run's journal, one line per entry (it hides ids and timestamps so its
        output is the same on every run of this notebook):
        '''),
        code(JOURNAL),
        md('''
        ## The agent script

        For each ticket: plan, search, draft, send. `send_email` pauses for approval; a **Reject**
        reaches the script as an `ActionError`, which it catches to note that the email was not sent.
        `ctx.plan` publishes a checklist the timeline shows.

        Run the cell: it stops at the first `send_email` and shows a panel with the email.
        '''),
        code('''
        %%sandbox -i tickets -o report --name triage
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
        '''),
        md('''
        ## The journal before the click

        The run is **interrupted**: the `send_email` call has a slot and a `call` entry, then an
        `interrupt` entry instead of a result. Nothing was sent yet.
        '''),
        code('''
        before = journal("triage")
        print()
        print("llm calls:", len(llm_calls), "| searches:", len(searches), "| emails sent:", len(outbox))
        ''', check=True),
        md('''
        ## Approve

        In JupyterLab, click **Approve** in the panel above. Here the same click is one line: the panel
        is the newest in `panels()`, this kernel's list of approval panels. Equivalent magic:

        ```
        %sandbox resume triage --answer true
        ```

        The resumed run appears inside the panel, and it soon pauses again: at Bob's email.
        '''),
        code('''
        from jupyter_sandbox.notebook.widgets.panel import panels

        panels()[-1].approve_button.click()
        '''),
        md('''
        ## The journal after the click

        The click **resumed** the run: attempt 2 ran the script again *from the top*. Every effect
        already in the journal (the `llm` and `search_docs` calls for Ada, in slots 0 to 2) was
        **served from the journal**: no new entries for them, and the counters show those functions
        did not run again. Attempt 2 wrote only what was new: the `answer`, `send_email`'s `result`
        (the function ran now, once), the ticked plan, then Bob's calls, up to his approval. (The
        first `ctx.plan` ran again too, but notes such as plans, logs and console lines are
        regenerated by a replay, not journaled twice.)
        '''),
        code('''
        after = journal("triage", since=before)
        print()
        print("llm calls:", len(llm_calls), "| searches:", len(searches), "| emails sent:", len(outbox))
        ''', check=True),
        md('''
        ## Reject, with a reason

        The reason travels to the script in the `ActionError`'s message. Equivalent magic:

        ```
        %sandbox resume triage --reject "Bob needs a phone call, not an email"
        ```
        '''),
        code('''
        panel = panels()[-1]
        panel.reason_text.value = "Bob needs a phone call, not an email"
        panel.reject_button.click()
        '''),
        md('''
        ## Edit, then approve

        The text box holds the action's input as JSON. Change it and click **Edit & approve**: the
        action runs with the edited input. Equivalent magic (the answer is JSON):

        ```
        %sandbox resume triage --answer '{"approved": true, "input": {"to": "carmen@example.com", "subject": "Re: Invoice", "body": "Hi Carmen, this should help: Download invoices. Sorry for the wait!"}}'
        ```
        '''),
        code('''
        panel = panels()[-1]
        email = json.loads(panel.edit_text.value)
        email["body"] += " Sorry for the wait!"
        panel.edit_text.value = json.dumps(email)
        panel.edit_button.click()
        '''),
        md('''
        The run finished, and `-o report` received its output, although the cell that started it ended
        long ago. Each function ran once per ticket, whatever the number of resumes:
        '''),
        code('''
        for line in report:
            print(line)
        print()
        print("llm calls:", len(llm_calls), "| searches:", len(searches))
        print("outbox:", [(e["to"], e["body"]) for e in outbox])
        print("attempts:", [a["n"] for a in sb.run(resolve_run(sb, "triage")).attempts])
        ''', check=True),
        md('''
        A button answers once: every button of a panel disables after the first click, and a second
        click does nothing (two resumes of one run at once cannot both proceed either).

        ## Several approvals at once

        Concurrent calls (`ctx.parallel`, `Promise.all`) run concurrently in Python. When one of them
        needs an answer, the calls already in flight finish (and are journaled), nothing new starts,
        and the run pauses with **every** interrupt among them pending, each with its own panel. So
        this script writes the drafts in parallel first, then starts all three sends together;
        `ctx.parallelSettled` keeps going when one is rejected.
        '''),
        code('''
        %%sandbox -i tickets --name fanout
        const drafts = await ctx.parallel(ctx.input.map(ticket => async () => {
          const plan = await actions.llm({task: "plan", ticket});
          const docs = await actions.search_docs(plan.search);
          return {to: ticket.from, ...(await actions.llm({task: "write", ticket, docs}))};
        }));
        const sent = await ctx.parallelSettled(drafts.map(d => () => actions.send_email(d)));
        return sent.map((s, i) => `${ctx.input[i].name}: ${s.status === "fulfilled" ? "sent " + s.value.id : "not sent"}`);
        '''),
        md('''
        Three panels, one per pending interrupt. Each panel answers only its own interrupt (by its id),
        so answers never cross: answering one resumes the run, which pauses again on the two still
        open, and their panels stay where they are. Pick them by recipient:
        '''),
        code('''
        fanout = resolve_run(sb, "fanout")

        def waiting():
            """The unanswered panels of this run, by recipient."""
            return {p.interrupt.data["input"]["to"]: p for p in panels() if p.run_id == fanout and not p.answered}

        print("pending:", sorted(waiting()))
        ''', check=True),
        code('''
        waiting()["carmen@example.com"].approve_button.click()
        '''),
        code('''
        print("pending:", sorted(waiting()))
        ''', check=True),
        code('''
        panel = waiting()["ada@example.com"]
        panel.reason_text.value = "already refunded"
        panel.reject_button.click()
        '''),
        code('''
        print("pending:", sorted(waiting()))
        ''', check=True),
        md('''
        The last one with the magic. `--answer` answers the first pending interrupt; with several
        pending, `--id INTERRUPT` picks one (the id is shown in each panel's title).
        '''),
        code('''
        %sandbox resume fanout --answer true -o fan_report
        '''),
        code('''
        print(fan_report)
        print("emails sent:", [e["to"] for e in outbox])
        ''', check=True),
        md('''
        ## What you saw

        * An action with `approval=True` (or one that raises `ActionInterrupt`) **pauses** the run. The
          cell ends; nothing waits in the kernel.
        * A click **resumes** by replay: the script runs from the top, recorded effects come from the
          journal, and only the answered call and what follows it run live.
        * `%sandbox resume RUN --answer JSON` / `--reject REASON` do what the buttons do.

        Next: **03-determinism**, what replay requires of a script, and what happens when an edit
        breaks it.
        '''),
    ]


# ---------------------------------------------------------------------------------------------
# 03 · determinism


RAFFLE = '''
    const drawnAt = Date.now();                        // journaled as `now`
    const ticket = Math.floor(Math.random() * 10000);  // journaled as `random`
    console.log(`ticket ${ticket} drawn at ${new Date(drawnAt).toISOString()}`);
    const receipt = await actions.charge({customer: "ada", amount: 5});
    const shipped = await actions.ship({ticket});      // pauses for approval
    return {drawnAt, ticket, receipt, shipped};
    '''


def determinism() -> list[nbformat.NotebookNode]:
    return [
        md('''
        # 03 · Determinism: replay, and what breaks it

        A resume does not restore a memory snapshot: it **runs the script again from the top** and
        serves every recorded effect from the journal. That only works if the script, given the same
        answers, asks for the same effects in the same order: if it is **deterministic**. You will:

        * see a run and its replay side by side: nothing re-executed, `Date.now()` and
          `Math.random()` served from the journal;
        * edit a paused run's script into non-determinism and read the `CallLogMismatchError`;
        * use **strict mode**, which bans the clock and randomness outright;
        * see why `Promise.all` still replays when its branches finish in another order;
        * check a run with `%sandbox check`.
        '''),
        setup("03-determinism"),
        code('''
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
        '''),
        md('''
        The journal printer of notebook 02: one line per entry, without ids or timestamps.
        '''),
        code(JOURNAL),
        md('''
        ## A run and its replay

        This script reads the clock and a random number, charges a card, then waits for approval to
        ship. `Date.now()` and `Math.random()` are not forbidden: in the sandbox they are **recorded
        effects**. Read live the first time, each value is journaled (`now`, `random`) and a replay gets
        the recorded value back.
        '''),
        code("%%sandbox --name raffle -o raffle", RAFFLE),
        code('''
        before = journal("raffle")
        '''),
        md('''
        Resume it (the same as clicking Approve):
        '''),
        code('''
        %sandbox resume raffle --answer true -o raffle
        '''),
        md('''
        Side by side: what the first attempt read live, and what the second attempt's script saw.
        Attempt 2 ran later, yet its `Date.now()` returned the recorded time, its `Math.random()` the
        recorded number, and `charge` returned the recorded receipt without running.
        '''),
        code('''
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
        '''),
        code('''
        print("same clock:", raffle["drawnAt"] == live["now"])
        print("same ticket:", raffle["ticket"] == math.floor(live["random"] * 10000))
        print("charge ran", len(charges), "time(s)")
        print("attempt 2 wrote only:", [e["kind"] for e in run.entries if e["attempt"] == 2])
        ''', check=True),
        md('''
        The console line was printed again by the replay (it is part of the run's output), but
        journaled once: console and `data` are *regenerated*, effects are *served*.

        ## `%sandbox check`: replay without executing anything

        `%sandbox check RUN` replays a run in a scratch copy, executing nothing, and says
        "deterministic" or shows the first divergence. Run it after editing a script, before resuming
        the runs that wait on it.
        '''),
        code('''
        %sandbox check raffle
        ''', check=True),
        md('''
        Not every edit breaks a run. The replay matches effects by **content key**
        (`tool|NAME|CANONICAL_JSON(input)`, `now`, `random`, `sleep|MS`, ...): a new console line,
        a comment, a `description` label change nothing.
        '''),
        code('''
        relabelled = sb.run(resolve_run(sb, "raffle")).source.replace(
            "const shipped", 'console.log("charged", receipt.receipt);\\nconst shipped')
        '''),
        code('''
        %sandbox check raffle --source relabelled
        ''', check=True),
        md('''
        ## Editing a paused run into non-determinism

        Start the same raffle again and leave it waiting for approval. Then "fix" the price from 5 to
        7. But the card was **already charged 5**: the journal says so. A replay of the edited script
        asks for `charge` with another input, and there is no honest value to serve: returning the
        recorded receipt would pretend 7 was charged; calling `charge` again would charge twice. So the
        resume refuses, with a `CallLogMismatchError`.
        '''),
        code("%%sandbox --name raffle2", RAFFLE),
        code('''
        original = sb.run(resolve_run(sb, "raffle2")).source
        edited = original.replace("amount: 5", "amount: 7")
        '''),
        md('''
        Ask first, without touching the run:
        '''),
        code('''
        %sandbox check raffle2 --source edited
        ''', check=True),
        md('''
        Resuming with the edited source fails the same way, and the cell shows the diff: the position
        (slot), what the journal recorded there, what the script attempted, and the source line. (A
        resume with `--source` also stores that source as the run's script.)
        '''),
        code('''
        %sandbox resume raffle2 --answer true --source edited
        ''', raises=True),
        md('''
        In Python the error carries the same facts as attributes:
        '''),
        code('''
        from jupyter_sandbox import CallLogMismatchError

        try:
            sb.resume(resolve_run(sb, "raffle2"), True, source=edited)
        except CallLogMismatchError as err:
            print("position: ", err.position)
            print("recorded: ", err.recorded["type"], err.recorded["name"], err.recorded["input"])
            print("attempted:", err.attempted["type"], err.attempted["name"], err.attempted["input"])
            print(err.source_line)
        print("charge ran", len(charges), "time(s): the edited call was never made")
        ''', check=True),
        md('''
        The run is not lost: it failed *before* doing anything new, and its approval is still open
        (the failed attempt never reached it, so the answer was not recorded). Resume it with the
        original script (or any edit that keeps the recorded effects): it replays up to the approval
        and waits there again.
        '''),
        code('''
        %sandbox resume raffle2 --source original
        '''),
        code('''
        %sandbox resume raffle2 --answer true -o raffle2_out
        '''),
        code('''
        print(raffle2_out["receipt"], "| charge ran", len(charges), "time(s)")
        ''', check=True),
        md('''
        What makes a script non-deterministic here is almost always an **edit between attempts**
        (the realm itself has no unrecorded source of time or randomness: no `fetch`, no timers, no
        `performance`, local-time `Date` methods in UTC). The rule the error ends with: branch only
        on input, action results, `ctx.now()` and the recorded `Date` / `Math.random`.

        ## Strict mode

        Recorded clock and randomness are convenient, but a value read live is still a fact of the
        first attempt that no test can choose. `--strict` (or `%config SandboxMagics.strict = True`)
        makes `Date` and `Math.random` throw, with a message that names the way out:
        '''),
        code('''
        %%sandbox --strict
        const drawnAt = Date.now();
        ''', raises=True),
        code('''
        from jupyter_sandbox import Sandbox, ScriptError

        try:
            Sandbox().eval("return Math.random()", strict=True)
        except ScriptError as err:
            print(err.message)
        ''', check=True),
        md('''
        The strict way: the time from `ctx.now()` (a journaled effect, like `Date.now()` but explicit),
        randomness from the input: a seed you choose, so a test can pin it.
        '''),
        code('''
        params = {"seed": 42}
        '''),
        code('''
        %%sandbox --strict -i params -o strict_out --name strict
        const drawnAt = await ctx.now();
        let s = ctx.input.seed;                     // a tiny seeded generator (Park-Miller)
        const next = () => (s = (s * 16807) % 2147483647) / 2147483647;
        const ticket = Math.floor(next() * 10000);
        return {ticket, clockIsANumber: typeof drawnAt === "number"};
        '''),
        code('''
        print(strict_out)
        ''', check=True),
        md('''
        ## Why `Promise.all` still replays

        Concurrent branches finish in whatever order their actions answer. Below, three prices are
        fetched concurrently with different delays: the calls are made apple, bread, cheese (so those
        are their slots 0, 1, 2), but the answers arrive bread, cheese, apple. Each branch then reads
        `Date.now()`.

        A replay could not re-create that timing, and does not need to: the journal records the
        **order completions happened**, and the replay delivers recorded completions in that order,
        one at a time, letting the script run in between. So the branches interleave exactly as they
        did live: same `seen` order, same console order, and the same clock value to the same branch.
        '''),
        code('''
        import asyncio

        DELAY = {"apple": 0.4, "bread": 0.0, "cheese": 0.2}

        @jupyter_sandbox.action
        async def fetch_price(item):
            """An async action: concurrent calls wait concurrently."""
            await asyncio.sleep(DELAY[item])
            return {"apple": 3, "bread": 2, "cheese": 7}[item]
        '''),
        code('''
        %%sandbox --name basket -o basket
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
        '''),
        code('''
        %sandbox resume basket --answer true -o basket
        '''),
        code('''
        entries = sb.run(resolve_run(sb, "basket")).entries
        item_of = {e["slot"]: e["input"] for e in entries if e["kind"] == "call" and e["name"] == "fetch_price"}
        live_order = [item_of[e["slot"]] for e in entries if e["kind"] == "result" and e["slot"] in item_of]
        clock = [e["value"] for e in entries if e["kind"] == "now"]
        print("slots (call order):      ", [item_of[s] for s in sorted(item_of)])
        print("answers arrived, live:   ", live_order)
        print("seen by the replay:      ", basket["seen"])
        print("same clock, same branch: ", [basket["stamps"][item] for item in live_order] == clock)
        print("console of the run:      ", [e["message"] for e in entries if e["kind"] == "console"])
        ''', check=True),
        code('''
        %sandbox check basket
        ''', check=True),
        md('''
        Matching is by **content key**, first-in-first-out per key, and by slot: a recorded effect is
        served to the effect with the same key; if the script asks for something whose key is not
        recorded while the slot holds something else, that is the mismatch you saw above, at that
        position. Never a silently wrong value.

        Next: **04-workflows**, the rest of the `ctx` API.
        '''),
    ]


# ---------------------------------------------------------------------------------------------
# 04 · workflows


def workflows() -> list[nbformat.NotebookNode]:
    return [
        md('''
        # 04 · Workflows: a tour of `ctx`

        Inside a script, `ctx` is the workflow API. This notebook tries each part:

        | call | does |
        | --- | --- |
        | `ctx.step(label, fn)` | a named, nestable unit of work (journaled start and end) |
        | `ctx.plan(items)` | publish a checklist |
        | `ctx.log(level, message, data)` | a journaled log line |
        | `ctx.parallel(thunks)`, `ctx.parallelSettled(thunks)` | concurrent fan-out |
        | `ctx.sleep(ms)`, `ctx.minutes(n)`, `ctx.hours(n)` | timers: short ones wait, long ones park the run |
        | `ctx.waitForEvent(match, {timeout})` | park until `%sandbox signal` sends a matching event |
        | `ctx.delegate({script, input, name})`, `ctx.agent({agent, input})` | child runs |
        | `ctx.continueAsNew(state)` | go on in a fresh run, past the journal cap |
        | `ctx.progress(patch)` | a progress bar, deliberately not journaled |
        '''),
        setup("04-workflows"),
        code('''
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
        '''),
        md('''
        ## Steps, plans and logs

        `ctx.step(label, fn)` runs `fn` as a named unit: the journal gets a `step` entry when it starts
        and one when it ends (with its outcome), nested steps know their parent, and the timeline shows
        the effects inside each step. `ctx.plan` publishes a checklist (call it again to tick items);
        `ctx.log` writes a log line with data.
        '''),
        code('''
        %%sandbox --name report -o report
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
        '''),
        code('''
        print(report)
        for e in sb.run(resolve_run(sb, "report")).entries:
            if e["kind"] == "step":
                print(f"step {e['id']} {e['label']:<10} {e['phase']:<5} parent={e['parent']} {e.get('outcome') or ''}")
        print(kinds("report", "plan", "log"))
        ''', check=True),
        md('''
        ## Parallel branches

        `ctx.parallel(thunks)` is `Promise.all` over functions that return promises, and the calls run
        concurrently: below, five reads of 100 ms each, in two parallel groups, take about 200 ms,
        not 500. `ctx.parallelSettled` is `Promise.allSettled`: one failure does not cancel the others.
        '''),
        code('''
        %%sandbox -o fan
        const t0 = await ctx.now();
        const [orders, refunds] = await ctx.parallel([
          () => actions.fetch_table("orders"),
          () => actions.fetch_table("refunds"),
        ]);
        const settled = await ctx.parallelSettled(
          ["orders", "refunds", "returns"].map(name => () => actions.fetch_table(name)));
        const took = (await ctx.now()) - t0;
        return {orders, refunds, settled: settled.map(s => s.status), concurrent: took < 450};
        '''),
        code('''
        print(fan)
        ''', check=True),
        md('''
        ## Timers

        A short sleep (under a second) waits in place. It is still journaled, as a `timer` and a
        `fired` entry, so a replay does not wait again.
        '''),
        code('''
        %%sandbox --name short -o short
        const t0 = await ctx.now();
        await ctx.sleep(200);
        return (await ctx.now()) - t0 >= 200;
        '''),
        code('''
        print(short, kinds("short", "timer", "fired"))
        ''', check=True),
        md('''
        A longer sleep **parks** the run: the cell ends at once, no thread waits, and the run is stored
        as `parked` with its wake-up time. The store's **scheduler** (started by `%load_ext`, checking
        every second) resumes it when it is due, in this kernel or any other on the same store. The
        cell below parks for 1.5 s; watch its status change to completed.
        '''),
        code('''
        %%sandbox --name nap -o nap
        console.log("going to sleep");
        await ctx.sleep(1500);
        console.log("awake");
        return "rested";
        '''),
        code('''
        import time

        deadline = time.time() + 20
        while "nap" not in globals() and time.time() < deadline:  # -o nap is set when the run completes
            time.sleep(0.2)
        print(sb.run(resolve_run(sb, "nap")).status, nap)
        ''', check=True),
        md('''
        An hour-long `ctx.hours(1)` parks the same way. To try one without waiting an hour, give a
        Python `Sandbox` a `ManualClock` and move it by hand; `run_due()` is what the scheduler calls.
        '''),
        code('''
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
        ''', check=True),
        md('''
        ## Events: `ctx.waitForEvent` and `%sandbox signal`

        A run can wait for something from outside: a payment, a webhook, a person. It parks until an
        event with **every field of `match`** arrives (or the timeout passes: then it gets `null`).
        `%sandbox signal RUN JSON` sends one; an event that does not match is kept for a later wait.
        Delivery is exactly-once: the signal and the journal entry commit in one transaction.
        '''),
        code('''
        %%sandbox --name order -o order
        console.log("waiting for the payment of order 42");
        const paid = await ctx.waitForEvent({type: "payment", order: 42}, {timeout: 10 * 60 * 1000});
        return paid === null ? "timed out" : `order 42 paid: ${paid.amount} EUR`;
        '''),
        code('''
        %sandbox signal order {"type": "payment", "order": 7, "amount": 99}
        '''),
        code('''
        print(sb.run(resolve_run(sb, "order")).status, "- order 7 does not match")
        ''', check=True),
        code('''
        %sandbox signal order {"type": "payment", "order": 42, "amount": 30}
        '''),
        code('''
        print(order)
        print(kinds("order", "wait", "event"))
        ''', check=True),
        md('''
        ## Child runs: `ctx.delegate` and `ctx.agent`

        `ctx.delegate({script, input, name})` runs another script as a **child run**, with its own
        journal, and resolves to its output. `ctx.agent({agent, input})` runs a Python **agent**
        registered with `@jupyter_sandbox.agent` as a child. To the parent each is one effect: a replay
        of the parent never runs a finished child again. A child's interrupt pauses the parent, and
        answering the parent answers the child.
        '''),
        code('''
        @jupyter_sandbox.agent
        def researcher(question, resume=None):
            """A Python agent that asks a human when unsure (on resume, it gets the answer)."""
            if resume is None:
                raise ActionInterrupt(data={"question": question, "draft": "probably 42"})
            return {"question": question, "answer": resume.value}
        '''),
        code('''
        %%sandbox --name team -o team
        const total = await ctx.delegate({
          name: "sum of squares", input: [1, 2, 3],
          script: "let s = 0; for (const x of ctx.input) s += await actions.square(x); return s;",
        });
        const research = await ctx.agent({agent: "researcher", input: "What is six times seven?"});
        return {total, research};
        '''),
        md('''
        The agent asked; the panel above shows its question. Answer it (in the panel: type the answer
        as JSON in the box, then **Send edited**):
        '''),
        code('''
        %sandbox resume team --answer '"42, certainly"' -o team
        '''),
        code('''
        print(team)
        parent = resolve_run(sb, "team")
        children = [(c.kind, c.name, c.status) for c in sb.runs(include_children=True) if c.parent == parent]
        print("child runs:", sorted(children))
        print("square ran for", squares)
        ''', check=True),
        md('''
        `%sandbox runs --all` lists child runs too.

        ## `continueAsNew`: past the journal cap

        A run's journal is capped (5,000 entries by default; each action call takes two: call and
        result). A long loop should hand over to a fresh run from time to time:
        `ctx.continueAsNew(state)` ends this run and starts its successor with `state` as input.
        With a cap of 40 entries, a loop of 50 calls fails:
        '''),
        code('''
        %%sandbox --journal-entries 40
        let sum = 0;
        for (let i = 0; i < 50; i++) sum += await actions.square(i);
        return sum;
        ''', raises=True),
        md('''
        The same loop, ten calls per run. `ctx.progress` drives the progress bar under the cell; it is
        deliberately **not** journaled (it is for the eyes only, and a replay does not repeat it).
        '''),
        code('''
        squares.clear()  # count afresh for the next run
        '''),
        code('''
        %%sandbox --journal-entries 40 --name squares -o squares_out
        const {from = 0, sum = 0} = ctx.input ?? {};
        const to = Math.min(from + 10, 50);
        let total = sum;
        for (let i = from; i < to; i++) {
          total += await actions.square(i);
          ctx.progress({done: i + 1, total: 50, message: "squaring"});
        }
        if (to < 50) await ctx.continueAsNew({from: to, sum: total});  // never returns
        return {sum: total};
        '''),
        code('''
        chain = [next(r for r in sb.runs() if r.name == "squares" and r.predecessor is None)]
        while chain[-1].successor:  # each run links to the next
            chain.append(sb.run(chain[-1].successor))
        print(squares_out, "| square ran", len(squares), "times")
        print([(r.input, r.status) for r in chain])
        print("entries per run:", [len(sb.run(r.id).entries) for r in chain])
        print("progress journaled:", any(e["kind"] == "progress" for r in chain for e in sb.run(r.id).entries))
        ''', check=True),
        md('''
        Each run in the chain is a run of its own (`%sandbox runs` shows them, `continued` then
        `completed`); `-o` received the last one's output.

        Next: **05-durability**, a paused run outlives the kernel.
        '''),
    ]


# ---------------------------------------------------------------------------------------------
# 05 · durability


RELEASE = '''
    const artifact = await actions.build(ctx.input);
    console.log("built", artifact.artifact);
    return await actions.deploy(artifact);   // waits for approval
    '''


def durability() -> list[nbformat.NotebookNode]:
    return [
        md('''
        # 05 · Durability: runs outlive the kernel

        A paused run is not held in memory. Its journal, source and input are in the store (an SQLite
        file), committed entry by entry. So a run can wait for days, through kernel restarts, and be
        resumed by another process. You will:

        * pause a run, "restart the kernel", list the run and resume it;
        * export a paused run to a file, import it into another store, and resume it there.
        '''),
        setup("05-durability", "05-elsewhere.sqlite*", "hotfix.jsbx"),
        code('''
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
        '''),
        code("%%sandbox -i version --name release", RELEASE),
        md('''
        ## The kernel restarts

        Suppose nobody clicks, and the kernel restarts (or the laptop closes). What survives is the
        store file. A fresh `Sandbox` on that file is what a restarted kernel has: no Python objects
        from before, only the store. (A real restart works the same: `%load_ext jupyter_sandbox`,
        then `%sandbox runs`.)
        '''),
        code('''
        from jupyter_sandbox import Sandbox

        restarted = Sandbox(".sandbox/05-durability.sqlite")
        for run in restarted.runs():
            print(run.name, run.status, "| waiting for:", [p["name"] for p in restarted.run(run.id).pending])
        ''', check=True),
        md('''
        The same list from the magic:
        '''),
        code('''
        %sandbox runs
        '''),
        md('''
        The store holds data, not code: after a restart, run the cell that registers your actions
        again, then resume. The resume replays the journal: `build` is served from it and does not run
        again; only `deploy` runs, with the answer.
        '''),
        code('''
        restarted.action(build)
        restarted.action(deploy, approval=True)

        release = restarted.run(restarted.runs()[0].id)
        result = restarted.resume(release.id, True)
        print(result.output)
        print("console, rebuilt by the replay:", [line["message"] for line in result.console])
        print("build ran", len(builds), "time(s); deploy ran", len(deploys), "time(s)")
        restarted.close()
        ''', check=True),
        md('''
        After a real restart the magic does the same: `%sandbox resume release --answer true`.
        (The approval panel in the cell above still shows: it belongs to the old session. Clicking it
        now would say the run is already completed.)

        ### How durable, exactly

        * Each journal entry is committed as it happens (SQLite in WAL mode), and an action's result is
          committed **before** the script sees it. A killed process loses nothing that was committed.
        * The honest gap: if the process dies *while an action runs* (after it did its work, before
          its result was journaled), the resume calls it again. Effects are **at-least-once**, not
          exactly-once. Make the actions that matter idempotent: an idempotency key in the input
          (say `` `${ctx.runId}-deploy` ``) works well, because a replay makes the same call with the
          same input, so the receiving side can recognise the repeat.
        * Signals and events are exactly-once: the signal row and its journal entry commit together.
        * Two resumes of one run at once (a double click, two kernels) cannot both proceed: one takes
          the run, the other gets `RunBusyError`.

        ## Export and import

        A run (with its child runs and journals) exports to one file. Import it into another store
        (another machine, a colleague's notebook) and resume it there.
        '''),
        code('''
        hotfix_version = "1.2.1"
        '''),
        code("%%sandbox -i hotfix_version --name hotfix", RELEASE),
        code('''
        %sandbox export hotfix .sandbox/hotfix.jsbx
        '''),
        md('''
        "Elsewhere" is another store file here. Every `%sandbox` subcommand takes `--store PATH`
        first; the actions registered in this kernel are available on every store.
        '''),
        code('''
        %sandbox --store .sandbox/05-elsewhere.sqlite import .sandbox/hotfix.jsbx
        '''),
        code('''
        %sandbox --store .sandbox/05-elsewhere.sqlite resume hotfix --answer true -o hotfix_out
        '''),
        code('''
        from jupyter_sandbox.notebook.defaults import sandbox_for

        print(hotfix_out)
        here, elsewhere = jupyter_sandbox.default_sandbox(), sandbox_for(".sandbox/05-elsewhere.sqlite")
        print("here:     ", [(r.name, r.status) for r in here.runs()])
        print("elsewhere:", [(r.name, r.status) for r in elsewhere.runs()])
        print("build ran", len(builds), "time(s)")
        ''', check=True),
        md('''
        The original store still has `hotfix` waiting: an export is a copy. Resume one copy only, or
        the approved action runs once per copy.

        ## Where to go from here

        * `%sandbox?` lists every subcommand: `runs`, `show`, `resume`, `signal`, `check`, `fork`
          (re-run a run from a journal position with another answer), `export`, `import`.
        * `%config SandboxMagics` lists the defaults (store, strict mode, limits, scheduler).
        * The README's "How replay works" and `docs/journal.md` describe the journal entry by entry.
        '''),
    ]


NOTEBOOKS = {
    "01-quickstart": quickstart,
    "02-approvals": approvals,
    "03-determinism": determinism,
    "04-workflows": workflows,
    "05-durability": durability,
}


def build(name: str, execute: bool) -> Path:
    nb = new_notebook(cells=NOTEBOOKS[name](), metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    })
    if execute:
        from nbclient import NotebookClient

        with tempfile.TemporaryDirectory() as tmp:  # the notebook's .sandbox/ goes there, not into the repo
            started = time.monotonic()
            # Now and then (about one build in ten here) nbclient gets the reply of a cell that
            # clicked a panel only when its timeout ends, although the kernel went idle at once;
            # nbval's blocking client never did in dozens of runs. The notebook still comes out
            # right; the build just takes a minute longer.
            client = NotebookClient(nb, kernel_name="python3", timeout=60, record_timing=False,
                                    resources={"metadata": {"path": tmp}})
            try:
                with client.setup_kernel():
                    for index, cell in enumerate(nb.cells):
                        client.execute_cell(cell, index)
            except Exception:
                nbformat.write(nb, HERE / f"{name}.failed.ipynb")  # to see how far it got
                raise
            print(f"{name}: executed in {time.monotonic() - started:.1f} s")
        # Keep the outputs, not the widgets' state (hundreds of KB per notebook): a saved notebook shows
        # each widget's static HTML copy until its cells run again.
        nb.metadata.pop("widgets", None)
    path = HERE / f"{name}.ipynb"
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return path


def main(argv: list[str]) -> None:
    execute = "--no-execute" not in argv
    wanted = [a for a in argv if not a.startswith("--")]
    for name in NOTEBOOKS:
        if not wanted or any(name.startswith(w) for w in wanted):
            print("wrote", build(name, execute).relative_to(HERE.parent))


if __name__ == "__main__":
    main(sys.argv[1:])
