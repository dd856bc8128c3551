"""The notebook experience through a real kernel: nbclient runs notebooks built here.

Clicks are sent as the labextension's card renderer sends them: a
``comm_open`` to the kernel's ``jupyter_sandbox.card`` target with the run id,
then a ``comm_msg`` ``{"type": "answer", "interrupt_id", "choice"}``, on the
shell channel, between two cells (a cell's own clicks would be queued until it
ends). Assertions live in the cells: a failing one fails the test with
the cell's error. Each notebook runs in a temporary folder, so its store
(``.sandbox/runs.sqlite`` beside the notebook) is its own.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
import uuid

import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook
from pace import bound

pytestmark = pytest.mark.kernel

SETUP = """
%load_ext jupyter_sandbox
import jupyter_sandbox, asyncio
from jupyter_sandbox import default_sandbox
from jupyter_sandbox.notebook.cards import cards
calls = {"fetch": 0, "send": []}

@jupyter_sandbox.action
def fetch(query):
    calls["fetch"] += 1
    return {"rows": 3}

@jupyter_sandbox.action(approval=True)
def send(msg):
    calls["send"].append(msg)
    return {"sent": msg["to"]}

@jupyter_sandbox.action
async def slow(x):
    open("slow.started", "w").close()  # the test interrupts the kernel once this exists
    await asyncio.sleep(3600)  # only the interrupt ends it
"""

SCRIPT = """%%sandbox -o out --name {name}
const found = await actions.fetch({{q: "x"}})
try {{
  const r = await actions.send({{to: "ana", rows: found.rows}})
  return {{sent: r.sent}}
}} catch (e) {{
  return {{rejected: e.message}}
}}
"""

OPEN = "print('card', cards()[-1].run_id, cards()[-1].doc['pending'][0]['id'])"


def run(path, cells, after=None, before=None, raises=()):
    """Execute ``cells`` in order in a fresh kernel whose cwd is ``path``; hooks run around cell i.

    The cells numbered in ``raises`` are expected to fail (nbclient's ``raises-exception`` tag).
    """
    nb = new_notebook(cells=[new_code_cell(c) for c in cells])
    for i in raises:
        nb.cells[i].metadata["tags"] = ["raises-exception"]
    client = NotebookClient(nb, kernel_name="python3", timeout=120, resources={"metadata": {"path": str(path)}})
    with client.setup_kernel():
        for i, cell in enumerate(nb.cells):
            if before and i in before:
                before[i](client)
            client.execute_cell(cell, i)
            if after and i in after:
                after[i](client, cell)
    return nb


def click(times=1, choice="approve", **extra):
    """After a cell that printed ``card RUN INTERRUPT``: attach to that card and click, as the renderer does."""

    def hook(client, cell):
        text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        run_id, interrupt_id = re.search(r"card (\S+) (\S+)", text).groups()
        comm_id = uuid.uuid4().hex
        send = client.kc.shell_channel.send
        send(
            client.kc.session.msg(
                "comm_open",
                {"comm_id": comm_id, "target_name": "jupyter_sandbox.card", "data": {"run_id": run_id, "store": None}},
            )
        )
        for _ in range(times):
            send(
                client.kc.session.msg(
                    "comm_msg",
                    {
                        "comm_id": comm_id,
                        "data": {"type": "answer", "interrupt_id": interrupt_id, "choice": choice, **extra},
                    },
                )
            )

    return hook


def html_of(cell):
    return "".join(o.get("data", {}).get("text/html", "") for o in cell.outputs)


def test_approve_by_click_double_click_timeline_and_check(tmp_path):
    cells = [
        SETUP,
        SCRIPT.format(name="approve"),
        "assert calls == {'fetch': 1, 'send': []}\n" + OPEN,
        # the click (sent twice, like a double click) ran between these cells
        """
assert calls["send"] == [{"to": "ana", "rows": 3}], calls   # the approved action ran once
assert calls["fetch"] == 1                                  # replayed, not run again
assert out == {"sent": "ana"}, out                          # -o, also after a click
doc = default_sandbox().timeline(default_sandbox().runs()[0].id)
assert [a["n"] for a in doc["attempts"]] == [1, 2]
(card,) = cards()
assert card.doc["status"] == "completed" and card.doc["pending"] == [] and card.doc["answered"][0]["approved"]
card.refresh()  # nbclient applies only display updates sent from a cell; a front end applies the click's too
""",
        "%sandbox show approve",
        "%sandbox check approve",
        "from jupyter_sandbox.notebook.commands import resolve_run\n"
        "sb = default_sandbox()\n"
        "edited = \"await actions.send({to: 'x'})\\n\" + sb.run(resolve_run(sb, 'approve')).source",
        "%sandbox check approve --source edited",
    ]
    nb = run(tmp_path, cells, after={2: click(times=2)})
    saved = [o["data"] for o in nb.cells[1].outputs if "data" in o]
    card = saved[-1]["application/vnd.jupyter-sandbox.run+json"]
    assert card["status"] == "completed", card["status"]  # the first cell's saved card followed the click
    assert not any(
        "application/vnd.jupyter.widget-view+json" in d
        for c in nb.cells
        for d in [o.get("data", {}) for o in c.outputs]
    )  # no widget: "model not found" cannot happen
    assert 'data-status="completed"' in html_of(nb.cells[4])
    assert "deterministic" in nb.cells[5].outputs[0]["data"]["text/plain"]
    diverged = nb.cells[7].outputs[0]["data"]
    assert "diverged at position 0" in diverged["text/plain"]
    assert "jsbx-mismatch" in diverged["text/html"]


def test_a_card_reattaches_after_a_restart_once_the_extension_is_loaded(tmp_path):
    first = [SETUP, SCRIPT.format(name="old") + "", OPEN]
    nb = run(tmp_path, first)
    opened = "".join(o.get("text", "") for o in nb.cells[2].outputs if o.output_type == "stream")
    second = [  # a new kernel: the old card's renderer attaches before and after %load_ext
        "import re\nprint(" + repr(opened.strip()) + ")",
        "assert not get_ipython().kernel.comm_manager.comms  # no target yet: the kernel closed the comm",
        SETUP,
        "print(" + repr(opened.strip()) + ")",
        "assert calls['send'] == [{'to': 'ana', 'rows': 3}] and calls['fetch'] == 0, calls\n"
        "assert default_sandbox().runs()[0].status == 'completed'",
    ]
    run(tmp_path, second, after={0: click(), 3: click()})


def test_reject_edit_interrupt_then_restart_and_resume(tmp_path):
    first = [
        SETUP,
        SCRIPT.format(name="r1"),
        OPEN,
        "assert out == {'rejected': 'send was rejected: not today'}, out\nassert calls['send'] == []",
        SCRIPT.format(name="e1"),
        OPEN,
        'assert calls["send"] == [{"to": "bob", "rows": 9}] and out == {"sent": "bob"}, (calls, out)',
        "%%sandbox --name stuck\nawait actions.slow(1)",  # the stop button is pressed during this one
        """
run = default_sandbox().run(default_sandbox().runs()[0].id)
assert run.name == "stuck" and run.status == "cancelled", run.status
""",
        SCRIPT.format(name="later"),  # left paused for the next kernel
    ]

    def interrupt_soon(client):
        def go():
            deadline = time.monotonic() + bound(60)
            while not (tmp_path / "slow.started").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            asyncio.run(client.km.interrupt_kernel())

        threading.Thread(target=go, daemon=True).start()

    clicks = {
        2: click(times=2, choice="reject", reason="not today"),
        5: click(choice="edit", edited={"to": "bob", "rows": 9}),
    }
    nb = run(tmp_path, first, before={7: interrupt_soon}, after=clicks, raises=[7])
    # the hour-long action did not hold the kernel: the cells after it ran (each within nbclient's timeout)
    error = [o for o in nb.cells[7].outputs if o.output_type == "error"][0]
    assert error["ename"] == "RunCancelled" and len(error["traceback"]) == 1, error
    assert re.search(r"run r-\w+ cancelled \(kernel interrupted\)", error["evalue"]), error

    second = [
        SETUP,
        "%sandbox runs",
        "%sandbox resume later --answer true -o later_out",
        "assert later_out == {'sent': 'ana'} and calls == {'fetch': 0, 'send': [{'to': 'ana', 'rows': 3}]}, calls",
    ]
    nb = run(tmp_path, second)
    listing = nb.cells[1].outputs[0]["data"]["text/plain"]
    assert re.search(r"later\s+paused", listing), listing
