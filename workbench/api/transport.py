"""An httpx transport that calls the v4 ASGI app in process: no socket, no thread.

A panel's click handler runs inside the notebook kernel's event loop, where
neither ``asyncio.run`` nor a second loop may start. The app's handlers never
wait on real I/O (the body is handed over whole, the core is synchronous), so
the app's coroutine can be driven to its end directly; a handler that did wait
on a real future would be a bug, reported as such.

    >>> import httpx
    >>> from workbench import Workbench
    >>> from workbench.api.app import create_app
    >>> client = httpx.Client(transport=InProcessTransport(create_app(Workbench(seed=0))),
    ...                       base_url="http://workbench/client/v4")
    >>> client.get("/zones").json()["errors"][0]["code"]
    9106
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import unquote

import httpx

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
AsgiApp = Callable[
    [Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
    Awaitable[None],
]


class InProcessTransport(httpx.BaseTransport):
    """Hands each request to ``app`` and returns its response, in the calling thread."""

    def __init__(self, app: AsgiApp, client: tuple[str, int] = ("127.0.0.1", 0)) -> None:
        self.app = app
        self.client = client

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.read()
        url = request.url
        raw_path = url.raw_path.split(b"?")[0]
        scope: Scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": request.method,
            "scheme": url.scheme,
            # Decoded once, from the bytes sent, as uvicorn does (url.path is decoded already).
            "path": unquote(raw_path.decode("ascii")),
            "raw_path": raw_path,
            "root_path": "",
            "query_string": url.query,
            "headers": [(k.lower(), v) for k, v in request.headers.raw],
            "client": self.client,
            "server": (url.host, url.port or (443 if url.scheme == "https" else 80)),
        }
        received = False
        status = 500
        headers: list[tuple[bytes, bytes]] = []
        chunks: list[bytes] = []
        started = False

        async def receive() -> Message:
            nonlocal received
            if received:
                return {"type": "http.disconnect"}
            received = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: Message) -> None:
            nonlocal status, headers, started
            if message["type"] == "http.response.start":
                status, headers, started = message["status"], list(message["headers"]), True
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        try:
            _drive(self.app(scope, receive, send))
        except Exception:
            # The app answers its own bugs with a 500 envelope and raises nothing;
            # what still comes out is a framework layer's, after its own answer.
            if not started:
                raise
        return httpx.Response(status, headers=headers, content=b"".join(chunks), request=request)


def _drive(awaitable: Awaitable[None]) -> None:
    """Run a coroutine that never suspends on real I/O to its end."""
    coro = awaitable.__await__()
    try:
        while True:
            yielded = coro.send(None)
            if yielded is not None:
                raise RuntimeError(
                    f"the in-process transport cannot wait on real I/O; the app awaited {yielded!r}"
                )
    except StopIteration:
        return
