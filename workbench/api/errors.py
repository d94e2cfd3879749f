"""Errors of the HTTP face itself (authentication, routing, request bodies), with their codes.

The services' errors live in their own packages; these are the ones only an
HTTP request can meet. Each v4 code number is written once, here.

    >>> MissingCredentials().to_error()["code"], InvalidHeaders("X-Auth-Key").extra["error_chain"]
    (9106, [{'code': 6103, 'message': 'Invalid format for X-Auth-Key header'}])
"""

from __future__ import annotations

from ..core.errors import (
    AuthenticationError,
    InvalidZone,
    NotFound,
    ValidationError,
    WorkbenchError,
)

# Codes of the ``error_chain`` entry that says which header is malformed.
_HEADER_FORMAT_CODES = {"X-Auth-Email": 6102, "X-Auth-Key": 6103, "Authorization": 6111}

# The ``messages`` code that tells a client a shortened call left a filter behind.
FILTER_LEFT_BEHIND = 10204


class AccessDenied(AuthenticationError):
    """A wrong token, or a token without access to the zone (403 ``10000``)."""

    def __init__(self) -> None:
        super().__init__("Authentication error")


class MissingCredentials(AuthenticationError, code=9106):
    def __init__(self) -> None:
        super().__init__("Missing X-Auth-Key, X-Auth-Email or Authorization headers")


class InvalidHeaders(AuthenticationError, code=6003):
    """A malformed credential header; ``error_chain`` names which."""

    def __init__(self, header: str) -> None:
        chain = [
            {"code": _HEADER_FORMAT_CODES[header], "message": f"Invalid format for {header} header"}
        ]
        super().__init__("Invalid request headers", error_chain=chain)


class UnknownKey(AuthenticationError, code=9103):
    def __init__(self) -> None:
        super().__init__("Unknown X-Auth-Key or X-Auth-Email")


class NoRoute(NotFound, code=7000):
    def __init__(self) -> None:
        super().__init__("No route for that URI")


class MethodNotAllowed(WorkbenchError, code=7001):
    def __init__(self, method: str) -> None:
        super().__init__(f"Method {method} not allowed for this route")


class MalformedJson(ValidationError, code=6007):
    def __init__(self) -> None:
        super().__init__("Malformed JSON in request body")


class BadContentType(ValidationError, code=9207):
    def __init__(self) -> None:
        super().__init__("Content-type must be application/json.")


class BodyTooLarge(ValidationError, code=9210):
    def __init__(self, limit: int) -> None:
        super().__init__(f"Request body too large: the limit is {limit} bytes")


class UnencodableText(ValidationError):
    """Text in a request that cannot be encoded as UTF-8 (a lone surrogate, or bytes that are
    not UTF-8): refused where it enters, so it is never stored. ``source`` names where it is:
    ``{"pointer": ...}`` in a JSON body, ``{"parameter": ...}`` in the query string or path.
    """

    def __init__(self, where: str, problem: str, source: dict[str, str]) -> None:
        super().__init__(f"{where}: {problem}", source=source)

    @classmethod
    def in_body(cls, pointer: str, problem: str) -> UnencodableText:
        """Text at ``pointer`` (a JSON pointer) of the JSON body."""
        return cls(pointer or "/", problem, {"pointer": pointer or "/"})

    @classmethod
    def in_query(cls, name: str, problem: str) -> UnencodableText:
        """The query parameter ``name`` (or its name itself)."""
        return cls(f"query parameter {name}", problem, {"parameter": name})

    @classmethod
    def in_path(cls, segment: int, problem: str) -> UnencodableText:
        """Segment ``segment`` (from 1) of the request path."""
        return cls(f"path segment {segment}", problem, {"parameter": "path"})


class InvalidZoneBody(InvalidZone):
    """A zone-creation body of the wrong shape (the zone errors' code)."""


class InternalError(WorkbenchError, code=10500):
    """A bug: reported as a 500 envelope, never with a traceback."""

    def __init__(self) -> None:
        super().__init__("internal error")


class HttpStatusError(WorkbenchError):
    """Any other HTTP-level refusal from the framework, coded ``10000 + status``."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail, code=10000 + status)
        self.status = status
