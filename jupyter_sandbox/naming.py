"""The rule for action and agent names (``check_name``), and the names no action may take.

>>> check_name("files.read_file")
'files.read_file'
"""

from __future__ import annotations

from typing import Any

from .errors import RegistrationError

__all__ = [
    "MAX_NAME",
    "RESERVED_NAMES",
    "SAVED_NAMESPACE",
    "check_action_name",
    "check_name",
    "check_replacement",
    "kind_of",
]

# The rule for action and agent names. A script reaches an action as ``actions.NAME``, a property of a plain
# object in the realm: a name that is a member of ``Object.prototype`` would corrupt that object (``__proto__``
# replaces its prototype; ``constructor``, ``toString``, ``hasOwnProperty`` ... shadow what JavaScript itself
# calls on it), so none may be one, nor ``prototype``. A dotted name (``files.read_file``) is a namespaced
# one, each segment under the same rule; a name may not also be the namespace of another (``files`` beside
# ``files.read_file``), so ``actions.files.read_file`` can always address it.
RESERVED_NAMES = frozenset(
    {
        "__proto__",
        "constructor",
        "hasOwnProperty",
        "isPrototypeOf",
        "propertyIsEnumerable",
        "toLocaleString",
        "toString",
        "valueOf",
        "__defineGetter__",
        "__defineSetter__",
        "__lookupGetter__",
        "__lookupSetter__",
        "prototype",
    }
)
MAX_NAME = 128
# Saved scripts are the actions ``scripts.NAME`` (saved.py): the namespace is theirs alone, so an action of
# another kind under it would hide a script, or be hidden by one saved later by anyone on the store.
SAVED_NAMESPACE = "scripts"


def check_name(name: Any, taken: Any = (), what: str = "action") -> str:
    """``name`` if it is a valid action (or agent) name beside the names ``taken``; else a clear error.

    The rule (``RESERVED_NAMES`` above): 1 to 128 characters; one or more segments joined by dots, each an
    identifier (``str.isidentifier``) and not a member of ``Object.prototype`` nor ``prototype``; not the
    namespace of another registered name, nor inside a registered name's namespace. Registering a name again
    replaces it. A refusal is a ``RegistrationError`` (also the ``ValueError``, or ``TypeError`` for a name that
    is no string, it always was).
    """
    if not isinstance(name, str):
        raise RegistrationError(f"an {what} name must be a string, got {type(name).__name__}")
    if not name or len(name) > MAX_NAME:
        raise RegistrationError(f"an {what} name must have 1 to {MAX_NAME} characters, got {len(name)}")
    for segment in name.split("."):
        if not segment.isidentifier():
            raise RegistrationError(
                f"{what} name {name!r}: {segment!r} is not an identifier (names are identifiers, "
                "or identifiers joined by dots: 'files.read_file')"
            )
        if segment in RESERVED_NAMES:
            raise RegistrationError(
                f"{what} name {name!r}: {segment!r} is reserved (a member of JavaScript's "
                "Object.prototype, which would corrupt the script's `actions` object); choose another"
            )
    for other in taken:
        if other == name:
            continue
        if other.startswith(name + "."):
            raise RegistrationError(f"{what} name {name!r} is already the namespace of {other!r}")
        if name.startswith(other + "."):
            raise RegistrationError(f"{what} name {name!r} is inside {other!r}, which is registered as an {what}")
    return name


def check_action_name(name: Any, actions: Any, saved: bool = False) -> str:
    """``name`` if an action may be registered under it beside the table ``actions``; else a clear error.

    The one check every registration makes (``Engine.register_action``): the rule of ``check_name`` against
    every registered name, and no action but a saved script in the namespace ``scripts``; a saved script's
    (``saved=True``) only against the actions that are not saved scripts (a newer version replaces the older),
    and never the name of one of those, which it would hide.
    """
    if not saved:
        check_name(name, actions, "action")
        if name == SAVED_NAMESPACE or name.startswith(SAVED_NAMESPACE + "."):
            raise RegistrationError(
                f"action name {name!r}: the namespace {SAVED_NAMESPACE!r} is the saved scripts' "
                f"(sb.save_script makes {SAVED_NAMESPACE}.NAME); choose another name"
            )
        return name
    others = [n for n, a in actions.items() if a.saved is None]
    check_name(name, others, "script")
    if name in others:
        raise RegistrationError(f"an action named {name!r} is registered; a saved script would hide it")
    return name


def kind_of(action: Any) -> str:
    """What serves an action (``actions.Action``): a saved script, an MCP server's tool, or Python."""
    if action.saved is not None:
        return "saved script"
    if isinstance(action.about, dict) and "server" in action.about:
        return f"tool of the MCP server {action.about['server']!r}"
    return "Python action"


def check_replacement(action: Any, actions: Any) -> None:
    """Refuse ``action`` where it would replace a registered action of another kind (``kind_of``).

    The same name again, of the same kind, replaces: a notebook cell run again, an MCP server started again.
    A Python function over an MCP tool (or the reverse) is more likely a mistaken name than a wish; who means
    it removes the other first (``Sandbox.remove_action``).
    """
    known = actions.get(action.name)
    if known is None or kind_of(known) == kind_of(action):
        return
    raise RegistrationError(
        f"{action.name!r} is registered as a {kind_of(known)}; a {kind_of(action)} would replace it "
        f"(remove it first with sb.remove_action({action.name!r}) if that is meant)"
    )
