"""The app's own outer layer: odd request lines, and errors nobody expected.

Three things no route should have to do, done once for every request:

* A path with an empty, ``.`` or ``..`` segment, a trailing slash or an encoded
  slash (``%2F``) names no route: it gets the v4 ``7000`` envelope, never a
  redirect and never a guess at what was meant.
* Text in the path or the query string that is not UTF-8 is refused with a 400
  naming it: a percent-encoded lone surrogate (``%ED%A0%80``) or bytes that are
  not UTF-8 at all, which the framework would otherwise replace silently.
* Any unexpected exception becomes the v4 500 envelope, and its traceback goes
  to the ``workbench.api`` log. Nothing is re-raised to the server: Starlette's
  ServerErrorMiddleware would answer too, but then re-raise, and uvicorn closes
  the connection after that, so a client that reuses connections (httpx, the
  SDK) would get "connection reset" on its next, valid request.

    >>> odd_request({"type": "http", "path": "/client/v4/zones/", "query_string": b""}).code
    7000
    >>> odd_request({"type": "http", "path": "/client/v4/zones", "query_string": b"name=%ED%A0%80"}).message
    'query parameter name: holds a lone surrogate (U+D800) at character 1, which cannot be encoded as UTF-8'
"""

from __future__ import annotations

import logging
from urllib.parse import quote, unquote_to_bytes

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..core.errors import WorkbenchError
from ..core.text import quotable, utf8_problem
from .envelope import error_response
from .errors import InternalError, NoRoute, UnencodableText

log = logging.getLogger("workbench.api")


def _decoded(raw: bytes) -> tuple[str, str | None]:
    """Percent-decoded ``raw`` as text, and what makes it unacceptable (None when fine)."""
    data = unquote_to_bytes(raw)
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        pass
    try:
        # UTF-8 that spells surrogates (CESU-8, WTF-8): say which one.
        text = data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:
        shown = data.decode("utf-8", "backslashreplace")
        return shown, (
            f"holds bytes that are not UTF-8 (0x{data[exc.start]:02X} at byte {exc.start + 1})"
        )
    return quotable(text), utf8_problem(text)


def _raw_path(scope: Scope) -> bytes:
    raw = scope.get("raw_path")
    if isinstance(raw, bytes):
        return raw.split(b"?", 1)[0]
    # Servers may leave raw_path out (it is optional in ASGI): re-encode the path.
    return quote(scope["path"], safe="/", errors="surrogatepass").encode("ascii")


def odd_request(scope: Scope) -> WorkbenchError | None:
    """The error for a path or query string no route should see, or None."""
    segments = _raw_path(scope).split(b"/")
    if segments[0] != b"":
        return NoRoute()
    for number, raw in enumerate(segments[1:], 1):
        if not raw or b"%2f" in raw.lower():
            return NoRoute()  # //, a trailing slash, an encoded slash
        text, problem = _decoded(raw)
        if text in (".", ".."):
            return NoRoute()
        if problem is not None:
            return UnencodableText.in_path(number, problem)
    # A server may have decoded the path to text that is not UTF-8 (surrogateescape).
    for number, segment in enumerate(scope["path"].split("/")[1:], 1):
        problem = utf8_problem(segment)
        if problem is not None:
            return UnencodableText.in_path(number, problem)
    for pair in scope.get("query_string", b"").split(b"&"):
        if not pair:
            continue
        raw_name, _, raw_value = pair.replace(b"+", b" ").partition(b"=")
        name, problem = _decoded(raw_name)
        if problem is not None:
            return UnencodableText.in_query(name, "its name " + problem)
        _, problem = _decoded(raw_value)
        if problem is not None:
            return UnencodableText.in_query(name, problem)
    return None


class Guard:
    """Pure ASGI middleware, inside Starlette's error layer: see the module's description."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = odd_request(scope)
        if refused is not None:
            await error_response(refused)(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception:
            # A bug, not an answer: its traceback goes to the log, never into a body.
            log.exception(
                "unexpected error on %s %s",
                scope.get("method"),
                quotable(scope["path"]),
            )
            if started:
                # Half a response is out: only closing the connection can tell the client.
                raise
            await error_response(InternalError())(scope, receive, send)
