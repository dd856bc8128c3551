"""The notebook: ``%%sandbox`` magics, the ``%sandbox`` commands, the default
sandbox and its decorators, and the run card's widgets with their static files.

Presentation only: it reads runs and calls the facade (``jupyter_sandbox.sandbox``);
it never imports the engine's internals or a store backend.
"""

from .defaults import action, agent, default_sandbox, sandbox_for

__all__ = ["action", "agent", "default_sandbox", "load_ipython_extension", "sandbox_for"]


def load_ipython_extension(ipython):  # pragma: no cover - exercised through a kernel
    from .magics import load_ipython_extension as load

    load(ipython)
