"""The notebook experience through a real kernel: nbclient runs notebooks built here.

Clicks are sent as the front end sends them: a ``comm_msg`` with
``{"method": "custom", "content": {"event": "click"}}`` to the button's model,
on the shell channel, between two cells (a cell's own clicks would be queued
until it ends). Assertions live in the cells: a failing one fails the test with
the cell's error. Each notebook runs in a temporary folder, so its store
(``.sandbox/runs.sqlite`` beside the notebook) is its own.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time

import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

pytestmark = pytest.mark.kernel

SETUP = """
%load_ext jupyter_sandbox
import jupyter_sandbox, asyncio
from jupyter_sandbox import default_sandbox
from jupyter_sandbox.notebook.widgets.panel import panels
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
    await asyncio.sleep(30)
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

MODEL_ID = "print('model', panels()[-1].{button}.model_id)"


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


def click(times=1):
    """After a cell that printed ``model ID``: click that button as the front end does."""
    def hook(client, cell):
        text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        model_id = re.search(r"model (\w+)", text).group(1)
        for _ in range(times):
            msg = client.kc.session.msg("comm_msg", {"comm_id": model_id,
                                                     "data": {"method": "custom", "content": {"event": "click"}}})
            client.kc.shell_channel.send(msg)
    return hook


def html_of(cell):
    return "".join(o.get("data", {}).get("text/html", "") for o in cell.outputs)


def test_approve_by_click_double_click_timeline_and_check(tmp_path):
    cells = [
        SETUP,
        SCRIPT.format(name="approve"),
        "assert calls == {'fetch': 1, 'send': []}\n" + MODEL_ID.format(button="approve_button"),
        # the click (sent twice, like a double click) ran between these cells
        """
assert calls["send"] == [{"to": "ana", "rows": 3}], calls   # the approved action ran once
assert calls["fetch"] == 1                                  # replayed, not run again
assert out == {"sent": "ana"}, out                          # -o, also after a click
doc = default_sandbox().timeline(default_sandbox().runs()[0].id)
assert [a["n"] for a in doc["attempts"]] == [1, 2]
assert doc["attempts"][1]["replayed"] > 0, doc["attempts"]
assert panels()[-1].answered and panels()[-1].view.outcome.output == out
print("entries", len(doc["entries"]))
""",
        "%sandbox show approve",
        "%sandbox check approve",
        "from jupyter_sandbox.notebook.commands import resolve_run\n"
        "sb = default_sandbox()\n"
        "edited = \"await actions.send({to: 'x'})\\n\" + sb.run(resolve_run(sb, 'approve')).source",
        "%sandbox check approve --source edited",
    ]
    nb = run(tmp_path, cells, after={2: click(times=2)})
    count = int(re.search(r"entries (\d+)", nb.cells[3].outputs[0]["text"]).group(1))
    shown = {int(s) for s in re.findall(r'data-seq="(\d+)"', html_of(nb.cells[4]))}
    assert count >= 8 and shown >= set(range(count)), shown  # the static HTML has every entry
    assert "deterministic" in nb.cells[5].outputs[0]["data"]["text/plain"]
    diverged = nb.cells[7].outputs[0]["data"]
    assert "diverged at position 0" in diverged["text/plain"]
    assert "jsbx-mismatch" in diverged["text/html"]


def test_reject_edit_interrupt_then_restart_and_resume(tmp_path):
    first = [
        SETUP,
        SCRIPT.format(name="r1"),
        "p = panels()[-1]; p.reason_text.value = 'not today'; p.reject_button.click(); p.reject_button.click()",
        "assert out == {'rejected': 'send was rejected: not today'}, out\nassert calls['send'] == []",
        SCRIPT.format(name="e1"),
        """
p = panels()[-1]
p.edit_text.value = "{not json"
p.edit_button.click()
assert not p.answered and "not valid JSON" in p.message.value
p.edit_text.value = '{"to": "bob", "rows": 9}'
p.edit_button.click()
assert calls["send"] == [{"to": "bob", "rows": 9}] and out == {"sent": "bob"}, (calls, out)
""",
        "%%sandbox --name stuck\nawait actions.slow(1)",  # the stop button is pressed during this one
        """
run = default_sandbox().run(default_sandbox().runs()[0].id)
assert run.name == "stuck" and run.status == "cancelled", run.status
""",
        SCRIPT.format(name="later"),  # left paused for the next kernel
    ]

    def interrupt_soon(client):
        def go():
            time.sleep(1.5)
            asyncio.run(client.km.interrupt_kernel())
        threading.Thread(target=go, daemon=True).start()

    started = time.monotonic()
    nb = run(tmp_path, first, before={6: interrupt_soon}, raises=[6])
    assert time.monotonic() - started < 20  # the 30 s action did not hold the kernel
    error = [o for o in nb.cells[6].outputs if o.output_type == "error"][0]
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
    assert re.search(r"later\s+interrupted", listing), listing
