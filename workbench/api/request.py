"""Reading a request: the JSON body (type, size, syntax) and query values.

>>> parse_bool("true", "paused"), parse_bool(None, "paused")
(True, None)
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from typing import Any

from starlette.requests import Request

from ..core.errors import ValidationError
from ..core.text import unencodable_strings
from .errors import BadContentType, BodyTooLarge, MalformedJson, UnencodableText

MAX_BODY = 1024 * 1024  # 1 MiB


def _too_large() -> BodyTooLarge:
    return BodyTooLarge(MAX_BODY)


async def read_json(request: Request, *, required: bool = True) -> Any:
    """The parsed JSON body; ``None`` when absent and not ``required``.

    Every string of the body, and every key, must be encodable as UTF-8.

    An empty body is accepted whatever its ``Content-Type`` when the body is
    optional (the SDK sends ``application/json`` on body-less DELETE and PATCH).
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_BODY:
        raise _too_large()
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise _too_large()
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip() and not required:
        return None
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "application/json":
        raise BadContentType()
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise MalformedJson() from None
    # JSON escapes can spell lone surrogates ("\\ud800"): refuse them here, keys included.
    for pointer, problem in unencodable_strings(data):
        raise UnencodableText.in_body(pointer, problem)
    return data


def parse_bool(value: str | None, name: str) -> bool | None:
    """``true``/``false`` query values (``None`` when absent)."""
    if value is None:
        return None
    if value.lower() in ("true", "1"):
        return True
    if value.lower() in ("false", "0"):
        return False
    raise ValidationError(f"{name} must be true or false, got {value!r}")


def query_args(
    request: Request, names: Iterable[str], *, booleans: Collection[str] = ()
) -> dict[str, Any]:
    """The query parameters ``names`` as keyword arguments of a service call.

    Each is its text, or None when absent; the ``booleans`` are read by :func:`parse_bool`.
    """
    q = request.query_params
    return {n: parse_bool(q.get(n), n) if n in booleans else q.get(n) for n in names}


def as_list(body: Any) -> Any:
    """A single object becomes a one-element array (the SDK's typed calls send objects)."""
    return [body] if isinstance(body, dict) else body
