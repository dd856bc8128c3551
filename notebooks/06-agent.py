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
#   let the agent loop go on to its answer, every action having run exactly once,
# * **reject** a step and **roll back** what the run did before it,
# * let the model **save** a script that worked and reuse it.
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
        arguments = turn if isinstance(turn, dict) else {"script": turn}  # a dict: the script and a `save`
        block = (ToolUseBlock(type="tool_use", id=f"toolu_{n}", name="sandbox", input=arguments)
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
# ## Undo: a rejected step rolls back what ran before it
#
# An action may name its **revert**, a function `revert(input, result)` that undoes one completed
# call. Here crediting an account can be undone; looking a customer up needs no undoing. The model
# writes a script that credits Ada, then emails her, which waits for the human.

# %%
credits = {}

class Credit(TypedDict):
    email: str
    amount: int

def take_back(credit, receipt):
    """The revert: given the call's input and its result."""
    del credits[receipt["id"]]
    return {"cancelled": receipt["id"]}

@jupyter_sandbox.action(revert=take_back)
def credit_account(credit: Credit) -> dict:
    """Credit a customer's account (a rollback takes it back)."""
    credits[f"c{len(credits) + 1}"] = credit
    return {"id": f"c{len(credits)}", "amount": credit["amount"]}

CREDIT = """const customer = await actions.find_customer("Ada");
const credit = await actions.credit_account({email: customer.email, amount: 200});
return await actions.send_email({to: customer.email, subject: "A credit",
                                 body: `We credited ${credit.amount} to your account.`});"""
waiting = tool.run({"script": CREDIT})
print(waiting.status, "· credits now:", credits)

# %% [markdown]
# 200 is the wrong amount: the human **rejects** the email, and with `rollback` the same decision
# undoes what the run did: the reverts of its completed calls run, newest first, each journaled
# exactly once (a crash half-way resumes the rollback, it never runs a revert twice). The run ends
# `rolled_back`. A call with no revert is listed as such. (`%sandbox rollback RUN`, or `sb.rollback(run_id)`,
# rolls back a failed, rejected or cancelled run the same way.)

# %%
# NBVAL_CHECK_OUTPUT
undone = sb.resume(waiting.run_id, {"approved": False, "reason": "wrong amount", "rollback": True})
print("reverted:", [(r["name"], r["value"]) for r in undone.reverted])
print("not reverted:", [(r["name"], r["reason"]) for r in undone.not_reverted])
print("credits now:", credits, "· status:", sb.run(waiting.run_id).status)

# %% [markdown]
# ## Keep the script that worked
#
# A model that found a script that works can keep it: with `sb.tool(allow_save=True)` the tool's
# parameters take `save: {name, description}`, and a script that completes is stored as the action
# `scripts.NAME`, declared like any other, shared by everyone on the store, and run as a durable
# child run when called. The scripted model saves a lookup, then reuses it twice in its next script.

# %%
tool = sb.tool("sandbox", allow_save=True)
PLAN = 'const customer = await actions.find_customer(ctx.input.name); return customer.plan;'
REUSE = 'return {ada: await actions.scripts.plan_of({name: "Ada"}), '\
        'grace: await actions.scripts.plan_of({name: "Grace"})};'
client = ScriptedClaude([
    {"script": PLAN, "input": {"name": "Ada"}, "save": {"name": "plan_of", "description": "A customer's plan, by name."}},
    REUSE,
    "Ada and Grace are both on the pro plan.",
])
print(agent([{"role": "user", "content": "Which plan are Ada and Grace on?"}]))

# %% [markdown]
# The saved script is in the declarations the model reads from now on, and in the store, with its
# version (each save is a new one; a run records the version it ran, and replays that one).

# %%
# NBVAL_CHECK_OUTPUT
lines = sb.declarations().splitlines()
at = next(i for i, line in enumerate(lines) if "plan_of(" in line)
print("\n".join(line.strip() for line in lines[at - 1:at + 1]))
print([(s.name, s.version, s.description) for s in sb.scripts()])

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
# * `@action(revert=...)` names how a call is undone; a rejection with `rollback` (or `sb.rollback`)
#   undoes a run's completed calls, newest first, exactly once.
# * `sb.tool(allow_save=True)` lets the model keep a script that worked as `actions.scripts.NAME`.
