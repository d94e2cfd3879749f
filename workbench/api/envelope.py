"""The v4 envelope and the HTTP status of each core error.

The core raises :class:`~workbench.core.errors.WorkbenchError` subclasses that
carry a v4 code and message; this module is the one place that turns them into
``{"success": false, "errors": [...], ...}`` with a 4xx status.

    >>> from workbench.core.errors import NotFound
    >>> status_of(NotFound(7003, "Could not route to /zones/x"))
    404
    >>> ok([1, 2])["success"]
    True
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import Response

from ..core.errors import (
    AuthenticationError,
    Conflict,
    FeatureUnavailable,
    NotFound,
    NotImplementedYet,
    QuotaExceeded,
    ValidationError,
    WorkbenchError,
)

NO_ROUTE = 7000
METHOD_NOT_ALLOWED = 7001
MALFORMED_JSON = 6007
BAD_CONTENT_TYPE = 9207
BODY_TOO_LARGE = 9210

# Statuses fixed by the code rather than the class (facts: auth format errors are 400).
_STATUS_BY_CODE = {
    9106: 400,
    6003: 400,
    NO_ROUTE: 400,
    METHOD_NOT_ALLOWED: 405,
    BODY_TOO_LARGE: 413,
}
# Conflicts, quotas and missing features are 400, never 409/429: the SDK retries those.
_STATUS_BY_CLASS: list[tuple[type, int]] = [
    (AuthenticationError, 403),
    (NotFound, 404),
    (Conflict, 400),
    (QuotaExceeded, 400),
    (FeatureUnavailable, 400),
    (ValidationError, 400),
    (NotImplementedYet, 501),
]


def status_of(error: WorkbenchError) -> int:
    """The HTTP status a core error is reported with."""
    if error.code in _STATUS_BY_CODE:
        return _STATUS_BY_CODE[error.code]
    for cls, status in _STATUS_BY_CLASS:
        if isinstance(error, cls):
            return status
    return 400


def ok(result: Any, result_info: dict[str, Any] | None = None) -> dict[str, Any]:
    """A success envelope."""
    body: dict[str, Any] = {"success": True, "errors": [], "messages": [], "result": result}
    if result_info is not None:
        body["result_info"] = result_info
    return body


def failure(errors: list[dict[str, Any]], messages: list[dict[str, Any]] | None = None) -> dict:
    """A failure envelope."""
    return {"success": False, "errors": errors, "messages": messages or [], "result": None}


class Envelope(Response):
    """A compact JSON response (no spaces), the media type of the v4 API."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return json.dumps(content, separators=(",", ":"), ensure_ascii=False).encode()


def error_response(error: WorkbenchError) -> Envelope:
    """The envelope for a core error, with extra entries for the cases that need them."""
    errors = [error.to_error()]
    messages: list[dict[str, Any]] = []
    if isinstance(error, NotFound) and error.code == 7003:
        errors.append({"code": NO_ROUTE, "message": "No route for that URI"})
    meta = error.extra.get("meta") if isinstance(error.extra.get("meta"), dict) else {}
    for made in meta.get("filters_created", []):
        messages.append(
            {
                "code": 10204,
                "message": f"filter {made['id']} was created; its rule was not. Create the rule "
                f'later with {{"filter": {{"id": "{made["id"]}"}}}}.',
            }
        )
    return Envelope(failure(errors, messages), status_code=status_of(error))
