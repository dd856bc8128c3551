"""The rule for action and agent names (``check_name``), and the names no action may take.

>>> check_name("files.read_file")
'files.read_file'
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_NAME", "RESERVED_NAMES", "check_action_name", "check_name"]

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


def check_name(name: Any, taken: Any = (), what: str = "action") -> str:
    """``name`` if it is a valid action (or agent) name beside the names ``taken``; else a clear error.

    The rule (``RESERVED_NAMES`` above): 1 to 128 characters; one or more segments joined by dots, each an
    identifier (``str.isidentifier``) and not a member of ``Object.prototype`` nor ``prototype``; not the
    namespace of another registered name, nor inside a registered name's namespace. Registering a name again
    replaces it.
    """
    if not isinstance(name, str):
        raise TypeError(f"an {what} name must be a string, got {type(name).__name__}")
    if not name or len(name) > MAX_NAME:
        raise ValueError(f"an {what} name must have 1 to {MAX_NAME} characters, got {len(name)}")
    for segment in name.split("."):
        if not segment.isidentifier():
            raise ValueError(
                f"{what} name {name!r}: {segment!r} is not an identifier (names are identifiers, "
                "or identifiers joined by dots: 'files.read_file')"
            )
        if segment in RESERVED_NAMES:
            raise ValueError(
                f"{what} name {name!r}: {segment!r} is reserved (a member of JavaScript's "
                "Object.prototype, which would corrupt the script's `actions` object); choose another"
            )
    for other in taken:
        if other == name:
            continue
        if other.startswith(name + "."):
            raise ValueError(f"{what} name {name!r} is already the namespace of {other!r}")
        if name.startswith(other + "."):
            raise ValueError(f"{what} name {name!r} is inside {other!r}, which is registered as an {what}")
    return name


def check_action_name(name: Any, actions: Any, saved: bool = False) -> str:
    """``name`` if an action may be registered under it beside the table ``actions``; else a clear error.

    The one check every registration makes (``Engine.register_action``): the rule of ``check_name`` against
    every registered name; a saved script's (``saved=True``) only against the actions that are not saved
    scripts (a newer version replaces the older), and never the name of one of those, which it would hide.
    """
    if not saved:
        return check_name(name, actions, "action")
    others = [n for n, a in actions.items() if a.saved is None]
    check_name(name, others, "script")
    if name in others:
        raise ValueError(f"an action named {name!r} is registered; a saved script would hide it")
    return name
