"""What a run is started or answered with (``eval``, ``resume``, ``fork``, ``rollback``): checked where it
enters, with the argument at fault named, and put in the engine's terms (an ``Answers``, who answers).

>>> who("ada@lab", "card")["via"]
'card'
>>> answers_of(Resume(position=0, value=True)).by_position[0].value
True
"""

from __future__ import annotations

import getpass
import os
import socket
from collections.abc import Iterable
from typing import Any

from .actions import NO_ANSWER, Resume
from .engine.answers import Answers
from .engine.journal import CallLog
from .engine.realm import Limits
from .engine.runs import Engine
from .errors import RunNotFound, RunStateError
from .stores import Store
from .values import json_copy

__all__ = ["answers_of", "check_arguments", "checked_save", "default_identity", "is_stored_run", "who"]


def default_identity() -> str:
    """Who answers when ``Sandbox(identity=...)`` is not given: the JupyterHub user, else ``user@host``."""
    hub = os.environ.get("JUPYTERHUB_USER", "").strip()
    if hub:
        return hub
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container)
        user = f"uid{os.getuid()}" if hasattr(os, "getuid") else "user"
    return f"{user}@{socket.gethostname()}"


def who(identity: str, channel: str) -> dict[str, Any]:
    """Who answers, how and from where: the fields an answer entry records."""
    if not isinstance(channel, str) or not channel:
        raise TypeError(f"channel names how the answer came (a string), got {channel!r:.60}")
    return {"by": identity, "via": channel, "process": f"{socket.gethostname()}:{os.getpid()}"}


def check_arguments(*, name: Any, actions: Any, limits: Any) -> None:
    """Arguments checked where they enter, with the one at fault named."""
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a string, got {type(name).__name__}")
    if actions is not None and (
        not isinstance(actions, (list, tuple, set, frozenset)) or not all(isinstance(a, str) for a in actions)
    ):
        raise TypeError(f"actions must be a list of action names, got {actions!r:.80}")
    if limits is not None and not isinstance(limits, Limits):
        raise TypeError(f"limits must be a jupyter_sandbox.Limits, got {type(limits).__name__}")


def checked_save(save: Any) -> dict[str, Any] | None:
    """``eval``'s ``save=`` as the run keeps it (its options), so whichever process completes the run saves."""
    if save is None:
        return None
    save = json_copy(save, "eval's save=")
    if not isinstance(save, dict) or not isinstance(save.get("name"), str):
        raise TypeError(f"save= is {{name, description?, input_schema?, output_schema?}}, got {save!r:.80}")
    return save


def answers_of(resume: Resume | Iterable[Resume] | None) -> Answers:
    """The answers the ``Resume`` objects given to ``eval`` make, by interrupt id and by position."""
    answers = Answers()
    if resume is None:
        return answers
    for item in [resume] if isinstance(resume, Resume) else resume:
        if not isinstance(item, Resume):
            raise TypeError(f"resume takes Resume(position=..., value=...) objects, got {type(item).__name__}")
        if item.id is None and item.position is None:  # it would answer nothing
            raise TypeError(
                "a Resume passed to eval needs position= (SandboxInterrupt.position) or id= "
                "(SandboxInterrupt.interrupts[i].id) to say which interrupt it answers"
            )
        if item.value is NO_ANSWER:  # no answer: the call runs live, as with no Resume at all (None is null)
            continue
        if item.id is not None:
            answers.by_id[item.id] = item.value
        if item.position is not None:
            answers.by_position[item.position] = item
    return answers


def is_stored_run(store: Store, engine: Engine, run_id: str, call_log: CallLog) -> bool:
    """Whether the call log is this store's record of that run (then resume it from the full journal).

    A call log from a run that has moved on since (answered already: a
    second click) is refused rather than replayed into a new run, which
    would execute the answered call a second time.
    """
    try:
        status = store.get_run(run_id).status
    except RunNotFound:
        return False  # another store's run: resume from the call log alone
    if list(call_log) == engine.call_log(run_id):
        return True
    raise RunStateError(
        f"this call log is from run {run_id}, which has moved on since (it is {status} now); "
        f"resume it with sb.resume({run_id!r}, ...), or pass list(call_log) to start a new "
        "run from the call log alone",
        run_id=run_id,
        status=status,
    )
