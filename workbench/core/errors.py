"""The error hierarchy of the core, and the errors of the platform itself (zones).

Every error carries a v4 error ``code`` and a human ``message``; faces render
it (the HTTP face into an envelope, a widget into a label, the CLI into a line).
Nothing in the core speaks HTTP: the face maps the *class* to a status.

Each service keeps its own error classes in its own ``errors.py`` (for example
``workbench.firewall.errors.FilterNotFound``), subclassing the kinds below, and
each v4 code number is written once, as the ``code`` of one class. An error is
complete when it is raised: nothing appends to it afterwards.

    >>> from workbench.core.errors import ZoneNotFound
    >>> ZoneNotFound("abc").to_error()
    {'code': 7003, 'message': 'Could not route to /zones/abc, perhaps your object identifier is invalid?'}
"""

from __future__ import annotations

from typing import Any


class WorkbenchError(Exception):
    """Base class: a v4 error code, a message and optional extra fields (``meta``...)."""

    code = 1000

    def __init__(self, message: str = "", *, code: int | None = None, **extra: Any) -> None:
        if code is not None:
            self.code = code
        self.message = message
        self.extra = extra
        super().__init__(message)

    def to_error(self) -> dict[str, Any]:
        """The error as one element of a v4 envelope's ``errors`` array."""
        return {"code": self.code, "message": self.message, **self.extra}


# -- kinds: the face maps each to one HTTP status ---------------------------------
class ValidationError(WorkbenchError):
    """Input that breaks a documented rule: bad field, bad value, limit exceeded."""

    code = 10014


class NotFound(WorkbenchError):
    """An identifier that names nothing."""

    code = 10001


class Conflict(WorkbenchError):
    """The request contradicts what is stored (a duplicate, an object still in use)."""

    code = 10102


class QuotaExceeded(WorkbenchError):
    """A per-zone or per-plan quota would be exceeded."""

    code = 10200


class FeatureUnavailable(WorkbenchError):
    """The zone's plan does not include the requested feature."""

    code = 10201


class AuthenticationError(WorkbenchError):
    """Missing, malformed or wrong credentials, or a token without access."""

    code = 10000


class NotImplementedYet(WorkbenchError, NotImplementedError):
    """A part of the platform the workbench does not simulate yet."""

    code = 1001


# -- the platform's own errors (zones and plans) -----------------------------------
class ZoneNotFound(NotFound):
    """No zone has this id (the API's routing error for an unknown zone)."""

    code = 7003

    def __init__(self, zone_id: str) -> None:
        super().__init__(
            f"Could not route to /zones/{zone_id}, perhaps your object identifier is invalid?"
        )
        self.zone_id = zone_id


class InvalidZone(ValidationError):
    """A zone name or plan the platform does not accept."""

    code = 1099


class ZoneExists(Conflict):
    """A zone with this name is already in the account."""

    code = 1061


class ClockBackwards(ValidationError):
    """A request to move the virtual clock back: time only moves forward."""

    code = 10800

    def __init__(self, now: str, asked: str) -> None:
        super().__init__(
            f"the clock cannot move backwards (it reads {now}, and {asked}); "
            "time only moves forward"
        )
