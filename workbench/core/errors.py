"""The error hierarchy of the core, and the errors of the platform itself (zones).

Every error carries a v4 error ``code`` and a human ``message``; faces render
it (the HTTP face into an envelope, a widget into a label, the CLI into a line).
Nothing in the core speaks HTTP: the face maps the *class* to a status.

Each service keeps its own error classes in its own ``errors.py`` (for example
``workbench.firewall.errors.FilterNotFound``), subclassing the kinds below, and
each v4 code number is written once, as the ``code`` of one class (given in
the class line, ``class FilterNotFound(NotFound, code=10101)``; a class that
gives none has its kind's). An error is complete when it is raised: nothing
appends to it afterwards.

    >>> from workbench.core.errors import ZoneNotFound
    >>> ZoneNotFound("abc").to_error()
    {'code': 7003, 'message': 'Could not route to /zones/abc, perhaps your object identifier is invalid?'}
    >>> must_exist({"a": 1}.get("b"), NotFound, "no b here")
    Traceback (most recent call last):
    ...
    workbench.core.errors.NotFound: no b here
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Self, TypeVar

T = TypeVar("T")


class WorkbenchError(Exception):
    """Base class: a v4 error code, a message and optional extra fields (``meta``...).

    A subclass gives its code in its class line: ``class X(NotFound, code=10101)``.
    """

    code = 1000

    def __init_subclass__(cls, code: int | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.code = code

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
class ValidationError(WorkbenchError, code=10014):
    """Input that breaks a documented rule: bad field, bad value, limit exceeded."""


class NotFound(WorkbenchError, code=10001):
    """An identifier that names nothing."""


class Conflict(WorkbenchError, code=10102):
    """The request contradicts what is stored (a duplicate, an object still in use)."""


class QuotaExceeded(WorkbenchError, code=10200):
    """A per-zone or per-plan quota would be exceeded."""


class FeatureUnavailable(WorkbenchError, code=10201):
    """The zone's plan does not include the requested feature."""


class AuthenticationError(WorkbenchError, code=10000):
    """Missing, malformed or wrong credentials, or a token without access."""


class NotImplementedYet(WorkbenchError, NotImplementedError, code=1001):
    """A part of the platform the workbench does not simulate yet."""


# -- shared by the services' input errors -------------------------------------------
class InvalidInput(ValidationError):
    """A field of a request body that breaks a rule: the message starts with its JSON
    pointer (``""`` for the whole body) and ``source.pointer`` names it."""

    def __init__(self, pointer: str, message: str) -> None:
        text = f"{pointer}: {message}" if pointer else message
        super().__init__(text, source={"pointer": pointer or "/"})

    @classmethod
    def at(cls, pointer: str, message: str) -> Self:
        """The error with ``message`` shown as is (an engine's own text), pointing at ``pointer``."""
        err = cls("", message)
        err.extra["source"] = {"pointer": pointer or "/"}
        return err


def json_kind(value: Any) -> str:
    """How an error names the JSON type of ``value`` (``null``, ``a number``, ``an array``...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object" if isinstance(value, Mapping) else type(value).__name__


def must_exist(found: T | None, missing: Callable[..., WorkbenchError], *args: Any) -> T:
    """``found``, the result of a lookup; when it is None, the error ``missing(*args)``."""
    if found is None:
        raise missing(*args)
    return found


# -- the platform's own errors (zones and plans) -----------------------------------
class ZoneNotFound(NotFound, code=7003):
    """No zone has this id (the API's routing error for an unknown zone)."""

    def __init__(self, zone_id: str) -> None:
        super().__init__(
            f"Could not route to /zones/{zone_id}, perhaps your object identifier is invalid?"
        )
        self.zone_id = zone_id


class InvalidZone(ValidationError, code=1099):
    """A zone name or plan the platform does not accept."""


class ZoneExists(Conflict, code=1061):
    """A zone with this name is already in the account."""


class ClockBackwards(ValidationError, code=10800):
    """A request to move the virtual clock back: time only moves forward."""

    def __init__(self, now: str, asked: str) -> None:
        super().__init__(
            f"the clock cannot move backwards (it reads {now}, and {asked}); "
            "time only moves forward"
        )
