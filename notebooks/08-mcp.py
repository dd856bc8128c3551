# %% [markdown]
# # 08 · MCP both ways
#
# The [Model Context Protocol](https://modelcontextprotocol.io) is how tools reach agents today. The
# sandbox speaks it in both directions:
#
# * **MCP servers' tools as actions**: `%sandbox mcp add notes -- python notes_server.py` starts a
#   server over stdio and registers each of its tools as an action, `actions.notes.TOOL`, typed by the
#   tool's schemas, needing approval when its annotations say it is destructive, journaled like any
#   action (a resume never calls the server again for what is recorded);
# * **the sandbox as an MCP server**: `jupyter-sandbox mcp --store runs.sqlite --actions MODULE:OBJECT`
#   gives any MCP client (a desktop assistant, an IDE, another agent framework) durable, approvable
#   code mode: it runs a script, sees it `paused`, and a human approves it here, in the notebook.
#
# Everything runs offline: both servers are small Python processes started by this notebook.

# %%
from pathlib import Path
import jupyter_sandbox

for old in Path(".sandbox").glob("08-mcp.sqlite*"):  # start from an empty store on every run
    old.unlink()
# %config SandboxMagics.store = ".sandbox/08-mcp.sqlite"
# %load_ext jupyter_sandbox

# %% [markdown]
# ## A small MCP server
#
# A server written with the official `mcp` SDK (2.x: `MCPServer`, snake_case fields): two tools, one
# read-only, one that writes (its annotations keep the spec's default, `destructiveHint: true`).

# %%
Path("notes_server.py").write_text('''
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import BaseModel

server = MCPServer("notes", log_level="WARNING")
NOTES = {"groceries": "eggs, flour", "ideas": "an MCP tutorial"}

class Note(BaseModel):
    title: str
    text: str

class Found(BaseModel):
    notes: list[Note]

@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def search(word: str) -> Found:
    """Find the notes whose text contains a word."""
    return Found(notes=[Note(title=t, text=x) for t, x in NOTES.items() if word in x])

@server.tool()
def append(title: str, text: str) -> Note:
    """Append a line to a note (creating it)."""
    NOTES[title] = (NOTES.get(title, "") + "\\n" + text).strip()
    return Note(title=title, text=NOTES[title])

server.run()
''')

# %% [markdown]
# ## Its tools as actions
#
# `sb.mcp(NAME, COMMAND)` starts it and registers its tools (in a cell, the same is
# `%sandbox mcp add notes -- python notes_server.py`); `%sandbox mcp list` shows them with the approval
# each needs. Here the server runs on this kernel's own Python.

# %%
import sys

sb = jupyter_sandbox.default_sandbox()  # the Sandbox behind %%sandbox and %sandbox mcp
sb.mcp("notes", [sys.executable, "notes_server.py"])

# %% tags=["nbval-check-output"]
# %sandbox mcp list

# %% [markdown]
# The tools' schemas are the actions' schemas: the declarations a model reads (here only those
# matching a query, as a prompt for a server with hundreds of tools would), and the validation every
# call meets where it enters.

# %% tags=["nbval-check-output"]
text = sb.declarations(query="notes")
print(text[text.index("declare const actions"):text.index("// The script's world")])

# %% [markdown]
# A script calls them like any action; `append` is destructive, so the run pauses for a human, and
# the card shows which server and tool asks, with its annotations.

# %%
# %%sandbox --name shopping
const found = await actions.notes.search({word: "eggs"});
const note = await actions.notes.append({title: found.notes[0].title, text: "milk"});
return note.text;

# %% [markdown]
# Approve it in the card (here the same click as one line). The resume replays the recorded `search`
# from the journal (the server is not asked again) and calls `append` live, once.

# %%
from jupyter_sandbox.notebook.cards import cards

card = cards()[-1]
card.approve()  # nothing left to do if you clicked Approve in the card already
card.doc["status"]

# %% tags=["nbval-check-output"]
print(sb.runs()[0].status, repr(sb.runs()[0].output))

# %% [markdown]
# ## The sandbox as an MCP server
#
# Now the other way: this store's sandbox served over stdio to an MCP client, here the SDK's own
# `ClientSession`. The server process registers the actions a module names
# (`--actions MODULE:OBJECT`), the same a notebook would.

# %%
Path("tutorial_actions.py").write_text('''
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b

def publish(title: str, text: str) -> dict:
    """Publish a post (a human approves it first)."""
    return {"published": title}

def register(sb):
    sb.action(add)
    sb.action(publish, approval=True)
''')

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

server = StdioServerParameters(command=sys.executable, cwd=".", args=[
    "-m", "jupyter_sandbox.mcp", "--store", ".sandbox/08-mcp.sqlite", "--actions", "tutorial_actions:register"])

# %% [markdown]
# The client lists the tools (`run_script` carries the declarations in its description), runs a script
# that pauses at `publish`, and gets back the pending interrupt.

# %% tags=["nbval-check-output"]
import json

async def agent_side(work):
    async with stdio_client(server, errlog=open("mcp-server.log", "w")) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        return await work(session)

async def start(session):
    print([t.name for t in (await session.list_tools()).tools])
    result = await session.call_tool("run_script", {"script": """
        const n = await actions.add({a: 40, b: 2});
        return await actions.publish({title: `The answer is ${n}`, text: "..."});"""})
    return result.structured_content

paused = await agent_side(start)
print(paused["status"], json.dumps(paused["pending"][0]["data"]))

# %% [markdown]
# A human approves it here, from the notebook, on the same store (the run's card, or one line):

# %%
from tutorial_actions import register

register(sb)
sb.resume(paused["run_id"], True).output

# %% [markdown]
# and the MCP client's `get_run` sees how it ended:

# %% tags=["nbval-check-output"]
async def check(session):
    return (await session.call_tool("get_run", {"run_id": paused["run_id"]})).structured_content

done = await agent_side(check)
print(done["status"], done["output"])

# %% [markdown]
# To give a desktop assistant or an IDE this tool, add the server to its MCP configuration:
#
# ```json
# {"mcpServers": {"sandbox": {"command": "jupyter-sandbox",
#                             "args": ["mcp", "--store", "/path/runs.sqlite", "--actions", "mypkg.actions:register"]}}}
# ```
#
# ## What you saw
#
# * `%sandbox mcp add` / `sb.mcp(...)`: an MCP server's tools as actions `actions.NAME.TOOL`, typed by
#   their schemas; destructive ones need approval (the card names the server and the annotations).
# * Replay never contacts the server: the resume served `search` from the journal.
# * `jupyter-sandbox mcp` (or `python -m jupyter_sandbox.mcp`): the sandbox as an MCP server with
#   `run_script`, `resume_run`, `get_run`, `list_runs` and `describe_actions`; a paused run waits for a
#   human anywhere the store is shared.

# %% [markdown]
# ## Clean up
#
# The files this notebook wrote beside itself (in a real project the server and the actions live
# in your package).

# %%
for name in ("notes_server.py", "tutorial_actions.py", "mcp-server.log"):
    Path(name).unlink(missing_ok=True)
for cached in Path("__pycache__").glob("tutorial_actions.*.pyc"):
    cached.unlink()
