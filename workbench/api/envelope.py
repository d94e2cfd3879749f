"""The v4 envelope: a service's answer shown in it, and the HTTP status of each core error.

The core raises :class:`~workbench.core.errors.WorkbenchError` subclasses that
carry a v4 code and message; this module is the one place that turns them into
``{"success": false, "errors": [...], ...}`` with a 4xx status.

    >>> from workbench.core.errors import NotFound
    >>> status_of(ZoneNotFound("x"))
    404
    >>> ok([1, 2])["success"]
    True
    >>> from workbench.core.paging import Page
    >>> from workbench.firewall.models import Filter
    >>> shown_page(Page.of([Filter("f", "ssl")], 1, 25)).body[42:]
    b'"result":[{"id":"f","expression":"ssl","paused":false}],"result_info":{"page":1,...}}'
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Protocol

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
    ZoneNotFound,
)
from ..core.paging import Page
from ..core.text import quotable
from .errors import (
    FILTER_LEFT_BEHIND,
    BodyTooLarge,
    HttpStatusError,
    InternalError,
    InvalidHeaders,
    MethodNotAllowed,
    MissingCredentials,
    NoRoute,
)

# The first class that matches gives the status, so the specific come first.
# Malformed credentials are 400 (facts); conflicts, quotas and missing features
# are 400, never 409/429, since the SDK retries those.
_STATUS_BY_CLASS: list[tuple[type, int]] = [
    (MissingCredentials, 400),
    (InvalidHeaders, 400),
    (NoRoute, 400),
    (MethodNotAllowed, 405),
    (BodyTooLarge, 413),
    (InternalError, 500),
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
    if isinstance(error, HttpStatusError):
        return error.status
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


class Shown(Protocol):
    """What a service answers with: a model that shows itself as the API does."""

    def to_dict(self) -> dict[str, Any]: ...


def shown(model: Shown) -> Envelope:
    """The success envelope of one model (its ``to_dict()``)."""
    return Envelope(ok(model.to_dict()))


def shown_all(models: Iterable[Shown]) -> Envelope:
    """The success envelope of a plain array of models (each one's ``to_dict()``)."""
    return Envelope(ok([m.to_dict() for m in models]))


def shown_page(page: Page[Any]) -> Envelope:
    """The success envelope of one page of a list: each item's ``to_dict()``, and ``result_info``."""
    return Envelope(ok([m.to_dict() for m in page.items], page.result_info))


def error_response(error: WorkbenchError) -> Envelope:
    """The envelope for a core error, with extra entries for the cases that need them."""
    errors = [error.to_error()]
    messages: list[dict[str, Any]] = []
    if isinstance(error, ZoneNotFound):
        errors.append(NoRoute().to_error())
    meta = error.extra.get("meta")
    for made in meta.get("filters_created", []) if isinstance(meta, dict) else []:
        messages.append(
            {
                "code": FILTER_LEFT_BEHIND,
                "message": f"filter {made['id']} was created; its rule was not. Create the rule "
                f'later with {{"filter": {{"id": "{made["id"]}"}}}}.',
            }
        )
    body = failure(errors, messages)
    try:
        return Envelope(body, status_code=status_of(error))
    except UnicodeEncodeError:
        # A message may quote what the client sent; quoting it must never fail.
        return Envelope(_escaped(body), status_code=status_of(error))


def _escaped(value: Any) -> Any:
    """``value`` with text that cannot be encoded as UTF-8 escaped (``\\ud800``)."""
    if isinstance(value, str):
        return quotable(value)
    if isinstance(value, dict):
        return {_escaped(k): _escaped(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_escaped(v) for v in value]
    return value
