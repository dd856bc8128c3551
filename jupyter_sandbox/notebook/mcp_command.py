"""``%sandbox mcp add NAME -- COMMAND ARGS…`` and ``%sandbox mcp list``: MCP servers' tools as actions."""

from __future__ import annotations

import html as _html
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import display

from ..sandbox import Sandbox


@magic_arguments(name="sandbox mcp")
@argument("verb", choices=["add", "list"], help="add a server (its tools become actions NAME.TOOL), or list them")
@argument("name", nargs="?", help="add: the server's name, an identifier")
@argument(
    "--approval",
    choices=["annotations", "all", "none"],
    default="annotations",
    help="which tools need approval: by their annotations (default), all, or none",
)
@argument("--timeout", type=float, default=60.0, help="seconds a call may take before the server counts as hung")
def mcp(magics: Any, sb: Sandbox, args: Any) -> None:
    """Start a stdio MCP server and register its tools as actions (``%sandbox mcp add files -- python
    server.py``), or list the servers and their tools (``%sandbox mcp list``)."""
    if args.verb == "add":
        command = args.command
        if not args.name or not command:
            raise UsageError(
                "usage: %sandbox mcp add [--approval annotations|all|none] [--timeout S] NAME -- COMMAND ARGS..."
            )
        approval = {"annotations": None, "all": True, "none": False}[args.approval]
        names = sb.mcp(args.name, command, approval=approval, timeout=args.timeout)
        print(f"MCP server {args.name!r}: {len(names)} tools as actions: {', '.join(names)}")
        return
    known = sb.mcp_servers
    if not known:
        print("no MCP servers: `%sandbox mcp add NAME -- COMMAND ARGS...` starts one")
        return
    actions = sb.actions
    rows = []
    for name, server in known.items():
        for action_name, action in sorted(actions.items()):
            about = action.about or {}
            if about.get("server") == name:
                hints = ", ".join(k for k, v in about.get("annotations", {}).items() if v is True)
                rows.append((name, " ".join(server.command), action_name, "yes" if action.approval else "no", hints))
    text = "\n".join(f"{s}  {a}  approval: {p}  [{h}]" for s, _, a, p, h in rows)
    e = _html.escape
    body = "".join(
        f"<tr><td>{e(s)}</td><td><code>{e(c)}</code></td><td><code>{e(a)}</code></td><td>{p}</td><td>{e(h)}</td></tr>"
        for s, c, a, p, h in rows
    )
    display(
        {
            "text/plain": text,
            "text/html": "<table><thead><tr><th>server</th><th>command</th><th>action</th>"
            f"<th>approval</th><th>hints</th></tr></thead><tbody>{body}</tbody></table>",
        },
        raw=True,
    )


_parse = mcp.parser.parse_args


def _parse_split(argv: Any = None, namespace: Any = None) -> Any:
    """The words after the first ``--`` are the server's command, whatever they look like (``-m``, ``--port``):
    argparse parses only the words before it."""
    words = list(argv or [])
    cut = words.index("--") if "--" in words else len(words)
    args = _parse(words[:cut], namespace)
    args.command = words[cut + 1 :]
    return args


mcp.parser.parse_args = _parse_split
