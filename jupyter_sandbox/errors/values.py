"""Values and registrations refused: not JSON, an input or edit a schema refuses, a spec or an action."""

from __future__ import annotations

from typing import Any

from .base import SandboxError

__all__ = ["ChildSpecError", "InputInvalid", "InvalidEdit", "InvalidValue", "RegistrationError"]


class InvalidValue(SandboxError, TypeError):
    """A value that must cross the boundary as JSON is not JSON; the message names where and why."""


class InvalidEdit(InvalidValue):
    """An edited approval whose input its action's schema refuses: nothing was resumed; ``issues`` says why.

    >>> str(InvalidEdit("mail", [{"path": "$.to", "message": "required"}]))
    'the edited input does not match what mail takes, so nothing was sent: $.to: required'
    """

    def __init__(self, action: str, issues: list[dict[str, str]]):
        self.action, self.issues = action, issues
        listed = "; ".join(f"{i.get('path', '$')}: {i.get('message', '')}" for i in issues[:10])
        super().__init__(f"the edited input does not match what {action} takes, so nothing was sent: {listed}")

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "action": self.action, "issues": self.issues}


class InputInvalid(SandboxError):
    """A call's input does not match its action's schema: ``issues`` is ``[{path, message}]``.

    >>> str(InputInvalid([{"path": "$.to", "message": "required"}]))
    '$.to: required'
    """

    def __init__(self, issues: list[dict[str, str]]):
        self.issues = issues
        super().__init__("; ".join(f"{i['path']}: {i['message']}" for i in issues) or "invalid input")

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "issues": self.issues}


class ChildSpecError(SandboxError, TypeError):
    """A ``ctx.delegate`` / ``ctx.agent`` spec that cannot be run; the script sees it as an ``ActionError``."""


class RegistrationError(SandboxError, ValueError, TypeError):
    """An action, agent or saved script that cannot be registered as given: a name the rule refuses
    (``naming.check_name``), one in the saved scripts' namespace, a replacement of another kind, an ``Action``
    with ``saved=`` handed to ``add_action``. Also a ``ValueError`` and a ``TypeError``, what these were before.

    >>> isinstance(RegistrationError("bad name"), (SandboxError, ValueError, TypeError))
    True
    """
