"""The v4 API client panels use: records each exchange, runs the creation sequences.

By default it talks to the Workbench's own ASGI app in process (no socket, no
thread), so a panel makes exactly the request a script would and gets the same
envelope; ``base_url`` points it at a served workbench or any v4 API instead.
The seed's two creation sequences live here, reading structured fields of the
envelopes (error codes, ``meta``), never their message text.

    >>> from workbench import Workbench
    >>> wb = Workbench(seed=0); zone = wb.create_zone("example.com")
    >>> client = ApiClient(wb)
    >>> outcome = client.create_filter_then_rule(zone.id, 'ip.src eq 192.0.2.1', {"action": "block"})
    >>> outcome.kind, [ex.path.split("/")[-1] for ex in outcome.exchanges]
    ('created', ['filters', 'rules'])
    >>> print(outcome.exchanges[0].curl().replace(zone.id, "ZONE"))
    curl -X POST "$CF_BASE/zones/ZONE/filters" \\
      -H "X-Auth-Email: $CF_EMAIL" -H "X-Auth-Key: $CF_KEY" \\
      -H "Content-Type: application/json" \\
      --data '[{"expression":"ip.src eq 192.0.2.1"}]'
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

from ..firewall.errors import DuplicateFilter
from .app import PREFIX, create_app
from .transport import InProcessTransport

if TYPE_CHECKING:
    from ..core.platform import Workbench

IN_PROCESS_URL = f"http://workbench.internal{PREFIX}"


@dataclass
class Exchange:
    """One request and the envelope it got back."""

    method: str
    path: str
    body: Any
    status: int
    response: dict[str, Any]

    @property
    def success(self) -> bool:
        """The envelope's ``success``."""
        return bool(self.response.get("success"))

    @property
    def error(self) -> dict[str, Any] | None:
        """The envelope's first error, or None."""
        errors = self.response.get("errors") or []
        return errors[0] if errors else None

    def request_json(self) -> str:
        """The request as indented JSON (method, path under the base URL, body)."""
        shown: dict[str, Any] = {"method": self.method, "path": self.path}
        if self.body is not None:
            shown["body"] = self.body
        return json.dumps(shown, indent=2)

    def response_json(self) -> str:
        """The HTTP status and the envelope as indented JSON."""
        return json.dumps({"status": self.status, **self.response}, indent=2)

    def curl(self) -> str:
        """The equivalent curl command (base URL and credentials from the environment)."""
        lines = [
            f'curl -X {self.method} "$CF_BASE{self.path}"',
            '  -H "X-Auth-Email: $CF_EMAIL" -H "X-Auth-Key: $CF_KEY"',
        ]
        if self.body is not None:
            data = json.dumps(self.body, separators=(",", ":")).replace("'", "'\\''")
            lines += ['  -H "Content-Type: application/json"', f"  --data '{data}'"]
        return " \\\n".join(lines)


@dataclass
class CreationOutcome:
    """What a creation sequence did: its exchanges and the objects that now exist.

    ``kind`` is ``created`` (filter and rule exist), ``partial`` (a filter
    exists, its rule does not) or ``refused`` (nothing new exists).
    """

    how: str
    exchanges: list[Exchange]
    kind: str
    filter_id: str | None = None
    filter_created: bool = False
    rule: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    left_behind: list[str] = field(default_factory=list)

    def summary(self, message: bool = True) -> str:
        """One line saying which objects exist after the sequence, each named once.

        With ``message=False`` the API's message is left out (a panel shows it whole
        beneath the line, so its first line would be read twice).
        """
        if self.kind == "created" and self.rule is not None:
            how = "created" if self.filter_created else "reused existing"
            return (
                f"created rule {self.rule['id']} ({self.rule['action']}) on filter "
                f"{self.filter_id} ({how} filter)"
            )
        err = self.error or {}
        code, text = err.get("code"), str(err.get("message") or "")
        first_line = text.splitlines()[0] if text else ""
        why = f"{code}: {first_line}" if message else f"{code}, the API's message below"
        if self.kind == "partial":
            ids = ", ".join(self.left_behind or ([self.filter_id] if self.filter_id else []))
            made = "was created" if self.filter_created else "exists"
            that = "that filter" if len(self.left_behind) <= 1 else "those filters"
            return (
                f"partial: filter {ids} {made} but the rule was refused ({why}); "
                f"fix the rule, then 'Create filter, then rule' creates it on {that}"
            )
        if not message:
            return f"refused, nothing created ({code}); the API's message:"
        return f"refused, nothing created ({code}): {first_line}"


class ApiClient:
    """Calls a v4 API with the global key of ``wb``'s account, and records each exchange.

    With no ``base_url`` the calls go to ``wb``'s own app in process; give a
    ``base_url`` (``workbench.api.serve(wb)``'s, or a real API's) to go over HTTP,
    or any httpx ``transport``.
    """

    def __init__(
        self,
        wb: Workbench,
        base_url: str | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        email: str | None = None,
        key: str | None = None,
    ) -> None:
        if transport is None and base_url is None:
            transport = InProcessTransport(create_app(wb))
        self.base_url = base_url or IN_PROCESS_URL
        self._http = httpx.Client(
            base_url=self.base_url,
            transport=transport,
            headers={
                "X-Auth-Email": email or wb.account.email,
                "X-Auth-Key": key or wb.account.api_key,
            },
            timeout=30,
        )
        self.history: list[Exchange] = []

    def call(self, method: str, path: str, body: Any = None) -> Exchange:
        """Send one request and record it."""
        kwargs = {} if body is None else {"json": body}
        response = self._http.request(method, path, **kwargs)
        exchange = Exchange(method, path, body, response.status_code, response.json())
        self.history.append(exchange)
        return exchange

    # -- the seed's two creation sequences ---------------------------------------
    def create_filter_then_rule(
        self, zone_id: str, expression: str, rule: dict[str, Any]
    ) -> CreationOutcome:
        """The recommended sequence: POST the filter, then POST the rule that refers to it.

        When the filter already exists (a duplicate, ``meta.id`` names it), the
        rule refers to that filter: this is how a partial one-call creation is
        finished.
        """
        base = f"/zones/{zone_id}"
        first = self.call("POST", f"{base}/filters", [{"expression": expression}])
        made = [first]
        if first.success:
            filter_id, created = first.response["result"][0]["id"], True
        else:
            error = first.error or {}
            existing = (error.get("meta") or {}).get("id")
            if error.get("code") != DuplicateFilter.code or existing is None:
                return CreationOutcome("two calls", made, "refused", error=error)
            filter_id, created = existing, False
        second = self.call(
            "POST", f"{base}/firewall/rules", [{"filter": {"id": filter_id}, **rule}]
        )
        made.append(second)
        if second.success:
            return CreationOutcome(
                "two calls",
                made,
                "created",
                filter_id=filter_id,
                filter_created=created,
                rule=second.response["result"][0],
            )
        return CreationOutcome(
            "two calls",
            made,
            "partial",
            filter_id=filter_id,
            filter_created=created,
            error=second.error,
            left_behind=[filter_id],
        )

    def create_in_one_call(
        self, zone_id: str, expression: str, rule: dict[str, Any]
    ) -> CreationOutcome:
        """The shortened sequence: one POST of the rule with its filter inline."""
        body = [{"filter": {"expression": expression}, **rule}]
        ex = self.call("POST", f"/zones/{zone_id}/firewall/rules", body)
        if ex.success:
            made_rule = ex.response["result"][0]
            return CreationOutcome(
                "one call",
                [ex],
                "created",
                filter_id=made_rule["filter"]["id"],
                filter_created=True,
                rule=made_rule,
            )
        error = ex.error or {}
        meta = error.get("meta") if isinstance(error.get("meta"), dict) else {}
        left = [f["id"] for f in (meta or {}).get("filters_created", [])]
        if left:
            return CreationOutcome(
                "one call",
                [ex],
                "partial",
                filter_id=left[0],
                filter_created=True,
                error=error,
                left_behind=left,
            )
        return CreationOutcome("one call", [ex], "refused", error=error)

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()
