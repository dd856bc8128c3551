"""The notebook: ``%%sandbox`` magics, the ``%sandbox`` commands, the default
sandbox and its decorators, and the run card's widgets with their static files.

Presentation only: it reads runs and calls the facade (``jupyter_sandbox.sandbox``);
it never imports the engine's internals or a store backend.
"""

from .defaults import action, agent, default_sandbox, sandbox_for
from .session import close_session
from .session import current as current_session

__all__ = [
    "action",
    "agent",
    "close_session",
    "current_session",
    "default_sandbox",
    "load_ipython_extension",
    "sandbox_for",
    "unload_ipython_extension",
]


def load_ipython_extension(ipython):  # pragma: no cover - exercised through a kernel
    from .magics import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython):  # pragma: no cover - exercised through a kernel
    from .magics import unload_ipython_extension as unload

    unload(ipython)
