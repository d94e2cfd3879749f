"""Running the v4 API with uvicorn: in the foreground (CLI) or on a background thread.

The face owns its servers: the core knows nothing of them. ``serve(wb)``
starts one per Workbench (reused while it runs) and ``stop(wb)`` ends it.

>>> from workbench import Workbench
>>> from workbench.api import serve, stop
>>> wb = Workbench(seed=0)
>>> url = serve(wb)             # a background thread on a free port  # doctest: +SKIP
>>> url.endswith("/client/v4")  # doctest: +SKIP
True
>>> stop(wb)                    # doctest: +SKIP
"""

from __future__ import annotations

import ipaddress
import shlex
import socket
import threading
import time
import weakref
from datetime import datetime
from typing import Any

import uvicorn

from ..core.platform import PLANS, ApiToken, Workbench
from .app import PREFIX, create_app
from .auth import check_credentials
from .auth import random_credentials as fresh_credentials


def is_loopback(host: str) -> bool:
    """True when ``host`` is a loopback address (127.0.0.0/8, ::1) or ``localhost``.

    >>> [is_loopback(h) for h in ("127.0.0.1", "127.8.9.1", "::1", "localhost", "0.0.0.0", "::")]
    [True, True, True, True, False, False]
    """
    if host.lower() == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False  # any other name may resolve anywhere
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def demo_workbench(
    seed: int = 0,
    email: str | None = None,
    key: str | None = None,
    token: str | None = None,
    *,
    random_credentials: bool = False,
    start: datetime | None = None,
) -> Workbench:
    """A Workbench with one demo zone per plan and, when given, these credentials.

    Its virtual clock starts at ``start`` (timezone-aware), by default the
    Workbench's fixed start; ``workbench serve`` passes the real time or ``--now``.

    With ``random_credentials`` the key and token not given are drawn from
    :mod:`secrets` instead of the seed, and the seeded ones are not accepted:
    for a server other machines can reach. Zone ids still follow the seed.
    """
    problems = check_credentials(email, key, token)
    if problems:
        raise ValueError("; ".join(problems))
    wb = Workbench(seed=seed) if start is None else Workbench(seed=seed, start=start)
    if email is not None:
        wb.account.email = email
    if random_credentials:
        fresh_key, fresh_token = fresh_credentials()
        wb.account.api_key = key or fresh_key
        wb.account.tokens[0].value = token or fresh_token  # replaces the seeded token
    else:
        if key is not None:
            wb.account.api_key = key
        if token is not None:
            wb.account.tokens.insert(0, ApiToken(id=wb.new_id(), value=token))
    for plan in PLANS:
        wb.create_zone(f"{plan}.example.com", plan=plan)
    return wb


def _config(wb: Workbench, host: str, port: int) -> uvicorn.Config:
    return uvicorn.Config(
        create_app(wb),
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="off",
        # Keep-alive long enough for SDK clients that pause between calls.
        timeout_keep_alive=30,
    )


def banner(wb: Workbench, base_url: str, note: str | None = None) -> str:
    """What ``workbench serve`` prints: base URL, credentials (and ``note`` on them), zone ids."""
    lines = [
        f"workbench v4 API at {base_url}",
        f"  X-Auth-Email: {wb.account.email}",
        f"  X-Auth-Key:   {wb.account.api_key}",
        f"  API token:    {wb.account.tokens[0].value}",
    ]
    if note:
        lines.append(f"  credentials:  {note}")
    lines += ["  zones:"]
    lines += [f"    {z.id}  {z.name:<26} {z.plan}" for z in wb.zones]
    # The panels' curl lines read these variables: lines a shell can paste as they are.
    lines.append("  to replay the panels' curl lines, paste into a shell:")
    exports = {
        "CF_BASE": base_url,
        "CF_EMAIL": wb.account.email,
        "CF_KEY": wb.account.api_key,
        "CF_TOKEN": wb.account.tokens[0].value,
    }
    lines += [f"export {name}={shlex.quote(value)}" for name, value in exports.items()]
    lines.append("  OpenAPI: " + base_url + "/openapi.json")
    return "\n".join(lines)


def run(
    wb: Workbench, host: str = "127.0.0.1", port: int = 8787, *, note: str | None = None
) -> None:
    """Serve ``wb`` in the foreground until interrupted (Ctrl-C); ``note`` goes in the banner."""
    sock = _bind(host, port)
    actual = sock.getsockname()[1]
    print(banner(wb, f"http://{_netloc(host, actual)}{PREFIX}", note), flush=True)
    uvicorn.Server(_config(wb, host, actual)).run(sockets=[sock])


def _netloc(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit this. Without it uvicorn's separate writes of
    # headers and body meet the client's delayed ACK: ~45 ms per request.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    # Listen before the URL is printed or returned: clients that connect before
    # uvicorn's loop starts wait in the backlog instead of being refused.
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


class BaseURL(str):
    """The server's base URL (a plain string) that can also stop the server."""

    server: BackgroundServer

    def stop(self) -> None:
        """Stop the server behind this URL."""
        self.server.stop()


class BackgroundServer:
    """uvicorn on a daemon thread, for notebooks and tests."""

    def __init__(self, wb: Workbench, host: str = "127.0.0.1", port: int = 0) -> None:
        self.wb = wb
        self.host = host
        self._sock = _bind(host, port)
        self.port = self._sock.getsockname()[1]
        self._server = uvicorn.Server(_config(wb, host, self.port))
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> BaseURL:
        """``http://host:port/client/v4``."""
        url = BaseURL(f"http://{_netloc(self.host, self.port)}{PREFIX}")
        url.server = self
        return url

    def start(self, timeout: float = 10.0) -> BaseURL:
        """Start serving and return the base URL once requests are accepted."""
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [self._sock]},
            daemon=True,
            name=f"workbench-api-{self.port}",
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.005)
        if not self._server.started:
            self.stop()
            raise RuntimeError(f"the API server did not start on {self.host}:{self.port}")
        return self.base_url

    def stop(self, timeout: float = 10.0) -> None:
        """Ask uvicorn to finish and wait for the thread; closes the socket."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
        self._sock.close()

    @property
    def alive(self) -> bool:
        """True while the server thread runs and has not been asked to stop."""
        return self._thread is not None and self._thread.is_alive() and not self._server.should_exit

    def __enter__(self) -> BaseURL:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


# One background server per Workbench, held here so the core never holds a server.
_SERVERS: weakref.WeakKeyDictionary[Workbench, BackgroundServer] = weakref.WeakKeyDictionary()
_SERVERS_LOCK = threading.Lock()


def serve(wb: Workbench, host: str = "127.0.0.1", port: int = 0) -> BaseURL:
    """Serve ``wb``'s v4 API on a background thread and return its base URL.

    ``port=0`` lets the system pick a free port; a server of ``wb`` already
    running on ``host`` (and ``port``, when given) is reused. :func:`stop` ends it.
    """
    with _SERVERS_LOCK:
        running = _SERVERS.get(wb)
        if running is not None and running.alive and running.host == host:
            if port in (0, running.port):
                return running.base_url
        if running is not None:
            running.stop()
        server = BackgroundServer(wb, host=host, port=port)
        _SERVERS[wb] = server
        return server.start()


def stop(wb: Workbench) -> None:
    """Stop the server :func:`serve` started for ``wb``, if any (twice is fine)."""
    with _SERVERS_LOCK:
        server = _SERVERS.pop(wb, None)
    if server is not None:
        server.stop()
