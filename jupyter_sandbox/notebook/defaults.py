"""The notebook's sandbox: one ``Sandbox`` per store file, and module-level decorators.

>>> import jupyter_sandbox
>>> @jupyter_sandbox.action(approval=True)
... def send_email(msg):
...     return {"sent": msg["to"]}
>>> "send_email" in jupyter_sandbox.default_sandbox().actions
True
>>> from jupyter_sandbox.notebook.session import close_session
>>> close_session()      # what ``%unload_ext`` does: the Sandboxes close and the registrations are forgotten

``jupyter_sandbox.action`` registers on :func:`default_sandbox`, whose store is
``.sandbox/runs.sqlite`` under the current working directory (in a kernel: the
notebook's folder), created on first use. ``%config SandboxMagics.store = PATH``
(or :func:`set_default_store`, or the ``JUPYTER_SANDBOX_STORE`` environment
variable) moves it; ``":memory:"`` keeps runs in memory; a ``postgresql://``
URL shares one database with every kernel and worker that has it.

Everything registered here is remembered and applied to every store's
Sandbox (``%%sandbox --store OTHER`` sees the same actions). The notebook
session (session.py) keeps it all: these functions act on the open one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..sandbox import Sandbox
from .session import DEFAULT_STORE, configured_store, current

__all__ = [
    "DEFAULT_STORE",
    "action",
    "agent",
    "configured_store",
    "default_sandbox",
    "from_namespace",
    "sandbox_for",
    "set_default_store",
]


def sandbox_for(store: str | os.PathLike[str] | None = None) -> Sandbox:
    """The Sandbox of a store file (the default store when ``None``), created on first use."""
    return current().sandbox_for(store)


def default_sandbox() -> Sandbox:
    """The notebook's Sandbox: store ``.sandbox/runs.sqlite`` beside the notebook unless configured."""
    return current().default_sandbox()


def set_default_store(store: str | os.PathLike[str]) -> None:
    """Point :func:`default_sandbox` at another store file (``":memory:"`` allowed)."""
    current().default_store = os.fspath(store)


def _register(kind: str, fn: Callable[..., Any], options: dict[str, Any]) -> Callable[..., Any]:
    session = current()
    with session.lock:
        session.default_sandbox()  # exists before the append, so it is not replayed this registration twice
        for sb in session.sandboxes.values():  # the default first: an invalid name raises before anything is kept
            getattr(sb, kind)(fn, **options)
        name = options.get("name") or fn.__name__
        # A later registration under the same name replaces the earlier one for future stores too.
        session.registered[:] = [
            r for r in session.registered if not (r[0] == kind and (r[2].get("name") or r[1].__name__) == name)
        ]
        session.registered.append((kind, fn, options))
    return fn


def action(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    approval: bool = False,
    timeout: float | None = None,
    input_schema: Any = None,
    output_schema: Any = None,
    revert: Callable[[Any, Any], Any] | None = None,
) -> Any:
    """Register an action on the notebook's sandboxes (a decorator, bare or with options).

    ``approval=True`` pauses every call for an Approve / Reject panel;
    ``timeout`` (seconds) turns a hung call into an ``ActionError``;
    ``input_schema``/``output_schema`` give explicit schemas (type hints give them otherwise);
    ``revert(input, result)`` undoes a completed call (``%sandbox rollback``).
    See :meth:`Sandbox.action`.
    """
    options: dict[str, Any] = {"name": name, "approval": approval, "timeout": timeout}
    if revert is not None:
        options["revert"] = revert
    if input_schema is not None or output_schema is not None:
        options.update(input_schema=input_schema, output_schema=output_schema)
    return _register("action", fn, options) if fn is not None else lambda f: _register("action", f, options)


def agent(fn: Callable[..., Any] | None = None, *, name: str | None = None) -> Any:
    """Register a Python agent (``ctx.agent({agent: NAME, input})``) on the notebook's sandboxes."""
    options = {"name": name}
    return _register("agent", fn, options) if fn is not None else lambda f: _register("agent", f, options)


def from_namespace(names: Iterable[str], namespace: Mapping[str, Any], sb: Sandbox | None = None) -> list[str]:
    """Make sure every name is an action, registering plain functions found in ``namespace``.

    A name already registered stays as it is, unless it was registered from the
    namespace and the namespace now holds another function (the cell that
    defines it was edited and re-run). Raises ``KeyError`` naming what is
    neither registered nor a function in the namespace.
    """
    session = current()
    sb = sb or session.default_sandbox()
    came_from = session.from_namespace
    names = [n for n in names if n]
    for name in names:
        fn = namespace.get(name)
        known = name in sb.actions
        if known and (name not in came_from or fn is came_from[name] or not callable(fn)):
            continue
        if not callable(fn):
            what = "not defined" if fn is None else f"a {type(fn).__name__}, not a function"
            raise KeyError(f"--actions: {name!r} is not a registered action and is {what} in the namespace")
        _register("action", fn, {"name": name})
        came_from[name] = fn
    return names
