"""Reading a zone's managed-WAF entry point from any v4 API, as the generator tool does.

One call, ``GET {base}/zones/{zone_id}/rulesets/phases/http_request_firewall_managed/entrypoint``,
with an API token (``Authorization: Bearer``) or the global key
(``X-Auth-Email`` and ``X-Auth-Key``). Whatever goes wrong (no entry point
yet, an API error, no answer) is one :class:`EntrypointError` whose message
carries the API's error codes and messages.

    >>> import httpx
    >>> def api(request):
    ...     return httpx.Response(404, json={"success": False, "result": None, "errors": [
    ...         {"code": 10003, "message": "could not find entrypoint ruleset"}]})
    >>> try:
    ...     fetch_entrypoint("https://api.example/client/v4", "z1", token="t",
    ...                      transport=httpx.MockTransport(api))
    ... except EntrypointError as exc:
    ...     print(exc)
    GET https://api.example/client/v4/zones/z1/rulesets/phases/http_request_firewall_managed/entrypoint: HTTP 404, error 10003: could not find entrypoint ruleset
"""

from __future__ import annotations

from typing import Any

import httpx

MANAGED_PHASE = "http_request_firewall_managed"


class EntrypointError(Exception):
    """The entry point could not be read; ``status`` is the HTTP status (``None``: no answer)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def entrypoint_url(base_url: str, zone_id: str, phase: str = MANAGED_PHASE) -> str:
    """The entry point's URL under ``base_url`` (which ends in ``/client/v4``)."""
    return f"{base_url.rstrip('/')}/zones/{zone_id}/rulesets/phases/{phase}/entrypoint"


def auth_headers(
    token: str | None = None, email: str | None = None, key: str | None = None
) -> dict[str, str]:
    """The headers of one of the two ways to authenticate (a token wins over a key)."""
    if token:
        return {"Authorization": f"Bearer {token}"}
    if email and key:
        return {"X-Auth-Email": email, "X-Auth-Key": key}
    raise ValueError("give an API token, or an email and a global API key")


def _errors(body: Any) -> str:
    errors = body.get("errors") if isinstance(body, dict) else None
    shown = []
    for e in errors or []:
        if not isinstance(e, dict):
            continue
        chain = [c for c in e.get("error_chain") or [] if isinstance(c, dict)]
        why = "; ".join(f"{c.get('code')}: {c.get('message')}" for c in chain)
        shown.append(f"error {e.get('code')}: {e.get('message')}" + (f" ({why})" if why else ""))
    return "; ".join(shown) or "no error detail"


def fetch_entrypoint(
    base_url: str,
    zone_id: str,
    *,
    token: str | None = None,
    email: str | None = None,
    key: str | None = None,
    timeout: float = 30.0,
    transport: httpx.BaseTransport | None = None,
) -> dict[str, Any]:
    """The zone's ``http_request_firewall_managed`` entry point (the envelope's ``result``)."""
    url = entrypoint_url(base_url, zone_id)
    headers = auth_headers(token, email, key)
    try:
        with httpx.Client(timeout=timeout, transport=transport) as client:
            response = client.get(url, headers=headers)
    except httpx.HTTPError as exc:
        raise EntrypointError(f"GET {url}: no answer ({type(exc).__name__}: {exc})") from exc
    try:
        body = response.json()
    except ValueError:
        body = None
    if response.status_code != 200 or not isinstance(body, dict) or not body.get("success"):
        detail = _errors(body) if body is not None else "the answer is not JSON"
        raise EntrypointError(
            f"GET {url}: HTTP {response.status_code}, {detail}", response.status_code
        )
    result = body.get("result")
    if not isinstance(result, dict) or not result.get("id"):
        raise EntrypointError(f"GET {url}: the answer holds no ruleset", response.status_code)
    return result
