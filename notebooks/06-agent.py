# %% [markdown]
# # 06 · Code mode: the sandbox as an agent's tool
#
# So far a human wrote every script. Here a **model** writes them: the sandbox becomes one tool,
# the model reads the actions as **TypeScript declarations**, writes a script that calls them, and
# the sandbox runs it durably, with a human approving what matters. You will:
#
# * give actions **types** (pydantic models, `Literal`, `TypedDict`...) and read the declarations
#   the model sees,
# * watch a call with a **wrong input** fail where it enters, before the action runs, and the model
#   get the error back (kind, issues, line) and **fix** its script,
# * see the fixed script **pause** on an approval, shown as the run's card, approve it there, and
#   let the agent loop go on to its answer, every action having run exactly once.
#
# Everything runs offline: the "model" is scripted, but it returns the real `anthropic` SDK response
# objects, so the agent loop below is the one you would run against the real API.

# %%
from pathlib import Path
import jupyter_sandbox

for old in Path(".sandbox").glob("06-agent.sqlite*"):  # start from an empty store on every run
    old.unlink()
# %config SandboxMagics.store = ".sandbox/06-agent.sqlite"
# %load_ext jupyter_sandbox

# %% [markdown]
# ## Typed actions
#
# Type hints are the one source of truth: pydantic turns them into JSON Schemas, which become the
# declarations the model reads and the validation every call's input meets. Docstrings become the
# descriptions. `send_email` needs a human's approval. The lists count what really ran.

# %%
from typing import Literal

from pydantic import BaseModel, Field
from typing_extensions import TypedDict

lookups, outbox = [], []

class Customer(TypedDict):
    name: str
    email: str
    plan: Literal["free", "pro"]

class Email(BaseModel):
    to: str = Field(description="the recipient's address")
    subject: str
    body: str

class Receipt(TypedDict):
    sent: bool
    to: str

@jupyter_sandbox.action
def find_customer(name: str) -> Customer:
    """Look a customer up by name."""
    lookups.append(name)
    return {"name": name, "email": f"{name.lower()}@example.com", "plan": "pro"}

@jupyter_sandbox.action(approval=True)
def send_email(email: Email) -> Receipt:
    """Send an email. A human approves each one first."""
    outbox.append(email)  # the function receives the validated model
    return {"sent": True, "to": email.to}

sb = jupyter_sandbox.default_sandbox()
tool = sb.tool("sandbox")

# %% [markdown]
# ## What the model reads
#
# `tool.description` tells the model the rules and carries the declarations: `sb.declarations()`
# renders every action's input and output type, the `ctx` API and the globals. CI compiles them with
# the real TypeScript compiler (`tsc --strict`). The actions' part:

# %%
# NBVAL_CHECK_OUTPUT
declarations = sb.declarations()
print(declarations[declarations.index("declare const actions"):declarations.index("// The script's world")])

# %% [markdown]
# `tool.anthropic()` is the tool definition for Anthropic's Messages API (`tool.openai()` for
# OpenAI's): a name, that description, and the parameters `{script, input?}`.

# %%
# NBVAL_CHECK_OUTPUT
definition = tool.anthropic()
print(definition["name"], definition["input_schema"])

# %% [markdown]
# ## A scripted model
#
# It stands in for `anthropic.Anthropic()`: `messages.create(...)` returns real `anthropic.types.Message`
# objects, one canned turn after another. Its first script has a mistake (the email has no
# `subject`); the second is the fix; then it answers in text.

# %%
from anthropic.types import Message, TextBlock, ToolUseBlock, Usage

FIRST = """const customer = await actions.find_customer("Ada");
return await actions.send_email({to: customer.email, body: `Hi ${customer.name}, your refund is on its way.`});"""
FIXED = """const customer = await actions.find_customer("Ada");
const sent = await actions.send_email({to: customer.email, subject: "Your refund",
                                       body: `Hi ${customer.name}, your refund is on its way.`});
return {emailed: sent.to, plan: customer.plan};"""

class ScriptedClaude:
    """messages.create() returns the next canned turn as an anthropic.types.Message."""

    def __init__(self, turns):
        self.turns, self.messages, self.requests = list(turns), self, []

    def create(self, **request):
        self.requests.append(request)
        n = len(self.requests)
        turn = self.turns[n - 1]
        block = (ToolUseBlock(type="tool_use", id=f"toolu_{n}", name="sandbox", input={"script": turn})
                 if n < len(self.turns) else TextBlock(type="text", text=turn))
        return Message(id=f"msg_{n}", type="message", role="assistant", model=request["model"], content=[block],
                       stop_reason="tool_use" if block.type == "tool_use" else "end_turn",
                       stop_sequence=None, usage=Usage(input_tokens=0, output_tokens=0))

client = ScriptedClaude([FIRST, FIXED, "Done: Ada has been emailed about her refund."])

# %% [markdown]
# ## The agent loop
#
# Twenty lines: ask the model; run each script it writes with `tool.run`; hand the result's
# `content` back as the `tool_result`; stop when it answers in text, or when a call is **paused**
# for a human: the loop returns the paused result, which shows as the run's card.

# %%
MODEL = "claude-sonnet-4-5"

def tool_result(call_id, result):
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id,
                                         "content": result.content, "is_error": result.status == "failed"}]}

def agent(messages):
    """Talk with the model until it answers, or a tool call waits for a human (then return that call)."""
    while True:
        reply = client.messages.create(model=MODEL, max_tokens=4096, tools=[tool.anthropic()], messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        call = next((block for block in reply.content if block.type == "tool_use"), None)
        if call is None:
            return reply.content[0].text
        result = tool.run(call.input)
        print(f"{call.id}: {result.status}")
        if result.status == "paused":
            return result  # shown as the run's card: answer it there
        messages.append(tool_result(call.id, result))

messages = [{"role": "user", "content": "Tell Ada her refund is on its way."}]
paused = agent(messages)
paused

# %% [markdown]
# The first script failed where the call entered: `send_email`'s input did not match `Email`, so
# the function never ran, and the model got this back as its tool result (the failure is journaled
# like any other, so a replay throws the same error without validating or calling again):

# %%
# NBVAL_CHECK_OUTPUT
print(messages[2]["content"][0]["content"])

# %% [markdown]
# The model fixed its script, which now waits for a human in the card above.
#
# ## Approve
#
# In JupyterLab, click **Approve** in the card. Here the same click is one line: the card is the
# newest in `cards()`, this kernel's run cards, and `card.approve()` answers as its button does. The
# equivalent magic is `%sandbox resume RUN --answer true`, and from code (any process on the same
# store) `tool.resume(paused.run_id, True)`.

# %%
from jupyter_sandbox.notebook.cards import cards

resumed = cards()[-1].approve()  # the run goes on; the card above shows how it ended

# %% [markdown]
# The run finished, and the card shows it. The loop goes on: `tool.result(run_id)` reads how the run ended
# from the store, and becomes the tool result the model was waiting for.

# %%
# NBVAL_CHECK_OUTPUT
done = tool.result(paused.run_id)
print(done.content)
call_id = messages[-1]["content"][-1].id  # the tool_use block that waited
messages.append(tool_result(call_id, done))
print(agent(messages))

# %% [markdown]
# Each call ran exactly once. `find_customer` ran once per script the model wrote (two); the refused
# call never reached `send_email`; the approved one ran once, although the second script ran twice
# (the resume replayed its `find_customer` call from the journal instead of calling it again).

# %%
# NBVAL_CHECK_OUTPUT
print("lookups:", lookups)
print("outbox:", outbox)

# %% [markdown]
# ## With a real model
#
# Swap the scripted client for the real one (the loop does not change):
#
# ```python
# import anthropic
# client = anthropic.Anthropic()  # reads ANTHROPIC_API_KEY
# ```
#
# With OpenAI, hand `tool.openai()` to `client.chat.completions.create(tools=[...])` and pass each
# tool call's `function.arguments` (JSON text) to `tool.run` as is.
#
# ## What you saw
#
# * Type hints give each action a schema: the model reads it as TypeScript, the engine checks each
#   call's input against it before the action runs, and a refusal is an `ActionError` with
#   `issues` the script (and the model) can read.
# * `tool.run` returns a `ToolResult`: `status`, `run_id`, `pending`, and `content`, the text for the
#   model (output, console tail, or the error with its line and source), cut to a budget.
# * A paused call shows as the run's card; once answered, `tool.result(run_id)` (or
#   `tool.resume(run_id, answers)` from code) continues the loop.
