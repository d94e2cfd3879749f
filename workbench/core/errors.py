"""The one error hierarchy of the core.

Every error carries the v4 error ``code`` and a human ``message``; faces render
it (the HTTP face into an envelope, a widget into a label, the CLI into a line).
Nothing in the core speaks HTTP: the face maps the *class* to a status.

    >>> from workbench.core.errors import NotFound
    >>> err = NotFound(7003, "Could not route to /zones/abc, perhaps your object identifier is invalid?")
    >>> err.to_error()
    {'code': 7003, 'message': 'Could not route to /zones/abc, perhaps your object identifier is invalid?'}
"""

from __future__ import annotations

from typing import Any


class WorkbenchError(Exception):
    """Base class: a v4 error code, a message and optional extra fields (``meta``...)."""

    default_code = 1000

    def __init__(self, code: int | None = None, message: str = "", **extra: Any) -> None:
        self.code = self.default_code if code is None else code
        self.message = message
        self.extra = extra
        super().__init__(message)

    def to_error(self) -> dict[str, Any]:
        """The error as one element of a v4 envelope's ``errors`` array."""
        return {"code": self.code, "message": self.message, **self.extra}


class ValidationError(WorkbenchError):
    """Input that breaks a documented rule: bad field, bad value, limit exceeded."""

    default_code = 10014


class NotFound(WorkbenchError):
    """An identifier that names nothing."""

    default_code = 10001


class Conflict(WorkbenchError):
    """The request contradicts what is stored (a duplicate, an object still in use)."""

    default_code = 10102


class QuotaExceeded(WorkbenchError):
    """A per-zone or per-plan quota would be exceeded."""

    default_code = 10200


class FeatureUnavailable(WorkbenchError):
    """The zone's plan does not include the requested feature."""

    default_code = 10201


class AuthenticationError(WorkbenchError):
    """Missing, malformed or wrong credentials, or a token without access."""

    default_code = 10000


class NotImplementedYet(WorkbenchError, NotImplementedError):
    """A part of the platform the workbench does not simulate yet."""

    default_code = 1001
