"""A small v4 API client that records each exchange (request, curl line, envelope).

Panels use it to show the HTTP they made. The curl line names the base URL
and credentials as ``$CF_BASE``, ``$CF_EMAIL`` and ``$CF_KEY``: it stays the same
whatever port the server runs on, and never prints the key.

    >>> ex = Exchange("POST", "/zones/z/filters", [{"expression": "ssl"}], 200, {"success": True})
    >>> print(ex.curl())
    curl -X POST "$CF_BASE/zones/z/filters" \\
      -H "X-Auth-Email: $CF_EMAIL" -H "X-Auth-Key: $CF_KEY" \\
      -H "Content-Type: application/json" \\
      --data '[{"expression":"ssl"}]'
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx


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
        """The equivalent curl command."""
        lines = [
            f'curl -X {self.method} "$CF_BASE{self.path}"',
            '  -H "X-Auth-Email: $CF_EMAIL" -H "X-Auth-Key: $CF_KEY"',
        ]
        if self.body is not None:
            data = json.dumps(self.body, separators=(",", ":")).replace("'", "'\\''")
            lines += ['  -H "Content-Type: application/json"', f"  --data '{data}'"]
        return " \\\n".join(lines)


class ApiClient:
    """Calls a v4 API at ``base_url`` with the global key of an account."""

    def __init__(self, base_url: str, email: str, key: str) -> None:
        self.base_url = base_url
        self._http = httpx.Client(
            base_url=base_url,
            headers={"X-Auth-Email": email, "X-Auth-Key": key},
            timeout=30,
        )
        self.history: list[Exchange] = []

    @classmethod
    def for_workbench(cls, wb: Any) -> ApiClient:
        """A client for ``wb``'s own server (started with ``wb.serve()`` if needed)."""
        return cls(wb.serve(), wb.account.email, wb.account.api_key)

    def call(self, method: str, path: str, body: Any = None) -> Exchange:
        """Send one request and record it."""
        kwargs = {} if body is None else {"json": body}
        response = self._http.request(method, path, **kwargs)
        exchange = Exchange(method, path, body, response.status_code, response.json())
        self.history.append(exchange)
        return exchange

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()
