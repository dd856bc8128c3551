"""Registering on a sandbox's engine: a Python callable as an action, an ``Action`` built whole, an agent.

What is registered is checked where it enters (its options, that it is a callable, its name), then takes
the one registration step, ``Engine.register_action`` (an agent: the engine's table of agents). The
facade's ``Sandbox.action``, ``add_action`` and ``agent`` are these, with the Sandbox's refusal once it is
closed (``refuse_if_closed``) checked first.

>>> try:
...     check_addable(len)
... except RegistrationError as refused:
...     print(str(refused).split(";")[0])
add_action takes an Action (jupyter_sandbox.actions.Action), got builtin_function_or_method <built-in function len>
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from .actions import Action
from .engine.runs import Engine
from .errors import RegistrationError
from .naming import check_action_name, check_name

__all__ = ["action_decorator", "agent_decorator", "check_addable"]

F = TypeVar("F", bound=Callable[..., Any])


def action_decorator(
    engine: Engine,
    refuse_if_closed: Callable[[], None],
    add: Callable[[Action], None],
    name: str | None = None,
    *,
    approval: bool | Callable[[Any], bool] = False,
    timeout: float | None = None,
    input_schema: Any = None,
    output_schema: Any = None,
    revert: Callable[[Any, Any], Any] | None = None,
) -> Callable[[F], F]:
    """The decorator ``Sandbox.action`` applies: it registers a callable as the action ``name`` (default: its
    own name) through ``add``, typed when it has type hints or a schema is given. The options are refused
    (``TypeError``) here, before any function is given."""
    if revert is not None and not callable(revert):
        raise TypeError(f"revert= must be a callable revert(input, result), got {type(revert).__name__}")

    if not isinstance(approval, bool) and not callable(approval):
        raise TypeError(f"approval is True, False or a callable of the input, got {approval!r:.60}")

    def register(fn: F) -> F:
        refuse_if_closed()
        if not callable(fn):
            raise RegistrationError(f"an action must be a callable, got {type(fn).__name__}")
        action_name = check_action_name(_name_of(fn, name, "action"), engine.actions)
        spec = None
        if input_schema is not None or output_schema is not None or getattr(fn, "__annotations__", None):
            from .agents.catalog import spec_for  # pydantic is loaded only for typed actions

            # (called here, not deeper: its warnings name the frame that registered the action)
            spec = spec_for(fn, action_name, input_schema=input_schema, output_schema=output_schema)
        add(Action(action_name, fn, approval=approval, timeout=timeout, spec=spec, revert=revert))
        return fn

    return register


def check_addable(action: Any) -> None:
    """Refuse what ``Sandbox.add_action`` cannot register: anything but an ``Action``, or a saved script's
    (one is registered from the store, by ``save_script``)."""
    if not isinstance(action, Action):
        raise RegistrationError(
            f"add_action takes an Action (jupyter_sandbox.actions.Action), got {type(action).__name__} "
            f"{action!r:.60}; register a function with sb.action(fn, name=...)"
        )
    if action.saved is not None:
        raise RegistrationError(
            f"action {action.name!r}: saved= is the store's (a saved script is registered from it, as "
            "scripts.NAME); use sb.save_script(name, source) to keep a script"
        )


def agent_decorator(engine: Engine, refuse_if_closed: Callable[[], None], name: str | None = None) -> Callable[[F], F]:
    """The decorator ``Sandbox.agent`` applies: it registers a callable as the agent ``name`` (default: its
    own name), which ``ctx.agent({agent: NAME, input})`` runs as a child run."""

    def register(fn: F) -> F:
        refuse_if_closed()
        if not callable(fn):
            raise RegistrationError(f"an agent must be a callable, got {type(fn).__name__}")
        agent_name = check_name(_name_of(fn, name, "agent"), engine.agents, "agent")
        engine.agents[agent_name] = Action(agent_name, fn)
        return fn

    return register


def _name_of(fn: Callable[..., Any], name: Any, what: str) -> Any:
    """The name to register ``fn`` under: ``name=``, else the function's own (a lambda's is refused by the rule)."""
    if name is not None:
        return name
    own = getattr(fn, "__name__", None)
    if own is None:
        raise RegistrationError(f"this {what} ({type(fn).__name__}) has no __name__: register it with name=...")
    return own
