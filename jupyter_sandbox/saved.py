"""Saved scripts: a script kept in the store under a name, called by any run as ``actions.scripts.NAME``.

Every save is a new version; the newest is what a new call runs, as a durable child run (the machinery
of ``ctx.delegate``), and the call's journal entry records the version, so a replay (or a resume of the
child) runs the version it ran. Everyone on the store sees the same scripts: the sandbox reads them
from the store before each attempt and declares them with their schemas.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from .actions import Action
from .engine.realm import compile_error
from .errors import LimitExceeded, RegistrationError, RunStateError, SandboxError
from .naming import SAVED_NAMESPACE, check_action_name, check_name
from .schema_limits import bounded_schema, check_schema_depth
from .stores.scripts import SavedScript
from .values import json_copy

if TYPE_CHECKING:
    from .engine.runs import Engine
    from .stores.base import RunRow

__all__ = ["NAMESPACE", "kept", "on_completed", "remove", "removed", "save", "sync"]

NAMESPACE = SAVED_NAMESPACE

log = logging.getLogger("jupyter_sandbox")


def save(
    engine: Engine,
    name: str,
    source: str | None,
    *,
    run_id: str | None,
    description: str | None,
    input_schema: Any,
    output_schema: Any,
) -> SavedScript:
    """Check and store a new version of ``name``: from ``source``, or from run ``run_id``'s source."""
    check_name(name, (), "script")
    if "." in name:
        raise RegistrationError(f"a saved script's name is one identifier (it becomes scripts.{name}), got {name!r}")
    if (source is None) == (run_id is None):
        raise TypeError("save_script takes the script's source or run_id=, one of them")
    run = None
    if run_id is not None:
        run = engine.store.get_run(run_id)
        if run.source is None:
            raise RunStateError(f"run {run_id} has no script source to save (an agent's run)", run_id=run_id)
        source = run.source
    assert source is not None
    engine.check_source(source, engine.limits)  # a script that cannot run is refused before it is shared
    unparsed = compile_error(source, engine.limits)  # nor one that does not compile: every call would fail
    if unparsed is not None:
        raise unparsed
    full = f"{NAMESPACE}.{name}"
    check_action_name(full, engine.actions, saved=True)  # refused before it is stored, as sync would refuse it
    if description is not None and not isinstance(description, str):
        raise RegistrationError(f"a script's description is a string, got {type(description).__name__}")
    about: dict[str, Any] = {"description": description}
    for key, schema in (("input_schema", input_schema), ("output_schema", output_schema)):
        if schema is not None:
            given, what = _schema(schema), f"the {key} of script {name!r}"
            check_schema_depth(given, what)  # first: the copy would refuse one past 256 levels as not JSON
            about[key] = bounded_schema(json_copy(given, f"the script's {key}"), what)
    # unusable: refused, unsaved; usable: the spec the action is registered with (checked once, here)
    spec = _spec(full, description, about.get("input_schema"), about.get("output_schema"))
    if run is not None:
        _fits_its_own_run(spec, run, name)
        about["from_run"] = run_id
    # once: a run's script saved again with the same description and schemas (a retried tool call, a second
    # look at a completed run, two processes at once) is the version the first save made
    version = engine.store.save_script(name, source, about, once=run is not None)
    found = engine.store.script(name, version)
    assert found is not None
    engine.register_action(_action(full, found, spec))
    sync(engine)
    return found


def _fits_its_own_run(spec: Any, run: RunRow, name: str) -> None:
    """Refuse (``RegistrationError``) to keep a completed run's script under schemas its own run breaks: its
    output against ``output_schema``, the input it was given (if any) against ``input_schema``. Kept, every
    later call that does the same would fail."""
    from .agents.catalog import check_input

    if run.status != "completed":
        return  # (a paused or failed run: no output to hold it to)
    broken = [("output", "output_schema", spec.output_issues(run.output))]
    if run.input is not None and spec.input_schema is not None:
        broken.append(("input", "input_schema", check_input(spec, run.input)))
    for what, key, issues in broken:
        if issues:
            listed = "; ".join(f"{i['path']}: {i['message']}" for i in issues)
            raise RegistrationError(
                f"the {what} of run {run.id} breaks the {key} of script {name!r} ({listed}): every call doing the "
                "same would fail; fix the script or the schema"
            )


def kept(engine: Engine, run_id: str) -> SavedScript | None:
    """The script a run started with ``eval(save=...)`` is kept as, saved now unless it was (None: no save
    was asked, or the run is a fork). A save refused (a bad name, a schema that cannot be used) raises."""
    run = engine.store.get_run(run_id)
    asked = run.options.get("save")
    if not isinstance(asked, dict) or "forked_from" in run.options:
        return None
    name: Any = asked.get("name")  # (a string when eval took it; check_name says so of any other)
    return save(
        engine,
        name,
        None,
        run_id=run_id,
        description=asked.get("description"),
        input_schema=asked.get("input_schema"),
        output_schema=asked.get("output_schema"),
    )


def on_completed(engine: Engine, run: RunRow) -> None:
    """Keep a completed run's script if it was started with ``save=``: where it completes, first attempt or
    resume, in any process. A refusal is logged, and said again to whoever asks ``kept`` (the tool)."""
    if "save" not in run.options:
        return
    try:
        kept(engine, run.id)
    except (SandboxError, TypeError, ValueError) as exc:
        log.warning("run %s completed; its script was not saved: %s", run.id, exc)


def remove(engine: Engine, name: str) -> bool:
    """Take ``name`` out of the listing (its versions stay, for the runs that recorded them)."""
    if engine.store.script(name) is None:
        return False
    engine.store.save_script(name, None, {})
    sync(engine)
    return True


def sync(engine: Engine) -> None:
    """Register the store's saved scripts as the actions ``scripts.NAME`` (and drop those removed)."""
    actions = engine.actions
    # Removed ones too: a run that called one replays it from its journal (a live call says it was removed).
    # Before each attempt: the newest versions alone are read, and a script only when it changed.
    current = {f"{NAMESPACE}.{name}": (name, version, gone) for name, version, gone in engine.store.script_heads()}
    for name in [n for n, a in actions.items() if a.saved is not None and n not in current]:
        del actions[name]
    for full, (name, version, gone) in current.items():
        known = actions.get(full)
        if known is not None and known.saved is not None and known.saved_version == (0 if gone else version):
            continue
        script = SavedScript(name, version, None, 0.0) if gone else engine.store.script(name, version)
        if script is None:
            continue
        try:
            action = _action(full, script)
        except (TypeError, LimitExceeded) as exc:  # a schema this version cannot use (saved by another): left out
            log.warning("the saved script %s is not registered: %s", full, exc)
            continue
        try:
            engine.register_action(action)
        except RegistrationError:
            continue  # beside an action of the user's own (save refuses that; another process may not have): kept


def _saved(input: Any = None) -> Any:  # never called: the engine runs a saved script as a child run
    raise NotImplementedError


def _spec(full: str, description: str | None, input_schema: Any, output_schema: Any) -> Any:
    """The declaration of a saved script (``RegistrationError`` for a schema that cannot be used)."""
    from .agents.catalog import spec_for

    spec = spec_for(_saved, full, input_schema=input_schema, output_schema=output_schema)
    spec.description = description
    return spec


def _action(full: str, script: SavedScript, spec: Any = None) -> Action:
    if spec is None:  # one stored by another process (or version): bounded and checked here as at its save
        keys = ("input_schema", "output_schema")
        schemas = [bounded_schema(script.about.get(k), f"the {k} of script {script.name!r}") for k in keys]
        spec = _spec(full, script.description, *schemas)
    return Action(
        full, _saved, description=script.description, spec=spec, saved=script.name, saved_version=_live_version(script)
    )


def _live_version(script: SavedScript) -> int:
    """The version a new call runs: 0 once the script was removed."""
    return script.version if script.source is not None else 0


def removed(action: Action) -> bool:
    """A saved script since removed: still callable by the runs that recorded it, declared no more."""
    return action.saved is not None and action.saved_version == 0


def _schema(schema: Any) -> Any:
    """A JSON Schema dict as it is, or a type's (a pydantic model, a TypedDict, ``int``...)."""
    if isinstance(schema, dict):
        return schema
    from pydantic import TypeAdapter

    try:
        return TypeAdapter(schema).json_schema()
    except Exception as exc:  # (pydantic's own errors: not a type it can describe)
        why = str(exc).splitlines()[0]
        raise RegistrationError(f"a schema is a JSON Schema dict or a type, got {schema!r:.80}: {why}") from None
