"""Code mode in a real kernel: a scripted agent, its tool, and an approval clicked through the card's comm.

The agent's model is scripted but returns real ``anthropic.types.Message``
objects. Its first script sends an email without a subject: the call is
refused where it enters and the model gets the error back as tool content;
its second script looks the customer up and sends, which pauses on the
approval; the run's card is displayed, and Approve is clicked as the
labextension's card renderer clicks (a ``comm_open`` to the kernel's
``jupyter_sandbox.card`` target, then a ``comm_msg`` answer, between two
cells); the loop completes, every action having run exactly once.
"""

from __future__ import annotations

import re
import uuid

import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from jupyter_sandbox.notebook.card_doc import CARD_MIME

pytestmark = pytest.mark.kernel


def run(path, cells, after):
    """Execute ``cells`` in a fresh kernel whose cwd is ``path``; ``after[i](client, cell)`` runs after cell i."""
    nb = new_notebook(cells=[new_code_cell(c) for c in cells])
    client = NotebookClient(nb, kernel_name="python3", timeout=120, resources={"metadata": {"path": str(path)}})
    with client.setup_kernel():
        for i, cell in enumerate(nb.cells):
            client.execute_cell(cell, i)
            if i in after:
                after[i](client, cell)
    return nb


def click_approve(client, cell):
    """After a cell that printed ``card RUN INTERRUPT``: attach to that card and click Approve."""
    text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
    run_id, interrupt_id = re.search(r"card (\S+) (\S+)", text).groups()
    comm_id, send = uuid.uuid4().hex, client.kc.shell_channel.send
    send(
        client.kc.session.msg(
            "comm_open",
            {"comm_id": comm_id, "target_name": "jupyter_sandbox.card", "data": {"run_id": run_id, "store": None}},
        )
    )
    send(
        client.kc.session.msg(
            "comm_msg",
            {"comm_id": comm_id, "data": {"type": "answer", "interrupt_id": interrupt_id, "choice": "approve"}},
        )
    )


SETUP = '''
%load_ext jupyter_sandbox
import jupyter_sandbox
from anthropic.types import Message, TextBlock, ToolUseBlock, Usage
from pydantic import BaseModel
from jupyter_sandbox.notebook.cards import cards

ran = {"find_customer": 0, "send_email": []}

class Email(BaseModel):
    to: str
    subject: str
    body: str

@jupyter_sandbox.action
def find_customer(name: str) -> dict:
    """Look a customer up."""
    ran["find_customer"] += 1
    return {"email": name.lower() + "@example.com"}

@jupyter_sandbox.action(approval=True)
def send_email(email: Email) -> dict:
    """Send an email (approved first)."""
    ran["send_email"].append(email.to)
    return {"sent": email.to}

tool = jupyter_sandbox.default_sandbox().tool()
SCRIPTS = [
    "return await actions.send_email({to: 'ada@example.com', body: 'Hi'})",
    "const c = await actions.find_customer('Ada');\\n"
    "return await actions.send_email({to: c.email, subject: 'Refund', body: 'Hi'})",
    "Ada was emailed.",
]
seen = []  # what the model was handed back

def create(**request):
    n = sum(1 for m in request["messages"] if m["role"] == "assistant") + 1
    last = request["messages"][-1]["content"]
    if isinstance(last, list):
        seen.append(last[0]["content"])
    block = (ToolUseBlock(type="tool_use", id=f"toolu_{n}", name=tool.name, input={"script": SCRIPTS[n - 1]})
             if n < len(SCRIPTS) else TextBlock(type="text", text=SCRIPTS[-1]))
    return Message(id=f"msg_{n}", type="message", role="assistant", model="m", content=[block],
                   stop_reason="tool_use" if n < len(SCRIPTS) else "end_turn", stop_sequence=None,
                   usage=Usage(input_tokens=0, output_tokens=0))

def tool_result(call_id, result):
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id,
                                         "content": result.content, "is_error": result.status == "failed"}]}

def agent(messages):
    while True:
        reply = create(model="m", max_tokens=1024, tools=[tool.anthropic()], messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        call = next((b for b in reply.content if b.type == "tool_use"), None)
        if call is None:
            return reply.content[0].text
        result = tool.run(call.input)
        if result.status == "paused":
            return result
        messages.append(tool_result(call.id, result))

messages = [{"role": "user", "content": "Tell Ada about her refund."}]
'''

PAUSE = """
paused = agent(messages)
assert paused.status == "paused", paused.content
assert "- $.subject: Field required" in seen[0] and ">    1 | return await actions.send_email" in seen[0], seen
assert ran == {"find_customer": 1, "send_email": []}, ran
display(paused)  # the run's card, with its approval
card = cards()[-1]
assert card.run_id == paused.run_id
print("card", card.run_id, card.doc["pending"][0]["id"])
"""

CONTINUE = """
done = tool.result(paused.run_id)
assert done.status == "completed" and done.output == {"sent": "ada@example.com"}, done.content
messages.append(tool_result(messages[-1]["content"][-1].id, done))
answer = agent(messages)
assert answer == "Ada was emailed.", answer
assert '"sent": "ada@example.com"' in seen[-1], seen
assert ran == {"find_customer": 1, "send_email": ["ada@example.com"]}, ran  # each action ran exactly once
assert cards()[-1].doc["status"] == "completed" and cards()[-1].doc["answered"][0]["approved"]
print("done", len(jupyter_sandbox.default_sandbox().run(paused.run_id).attempts))
"""


def test_a_scripted_agent_fixes_its_script_pauses_is_approved_in_the_card_and_completes(tmp_path):
    nb = run(tmp_path, [SETUP, PAUSE, CONTINUE], after={1: click_approve})
    outputs = "".join(o.get("text", "") for o in nb.cells[2].outputs if o.output_type == "stream")
    assert re.search(r"done 2", outputs), outputs  # the click resumed the run: a second attempt
    shown = [o["data"] for o in nb.cells[1].outputs if o.output_type == "display_data"]
    assert [d[CARD_MIME]["status"] for d in shown if CARD_MIME in d] == ["paused"], shown  # the paused card
