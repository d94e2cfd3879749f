"""Fixtures for the real-browser tests: Jupyter servers on loopback, Debian's Chromium.

The servers run on 127.0.0.1, on a free port, with a random token and their
own JUPYTER_* directories, so they neither see nor touch the user's settings.
Chromium comes from Debian (``/usr/bin/chromium``, or ``$CHROMIUM_PATH``); the
tests are skipped when it or Playwright is missing. ``playwright install`` is
never needed. Fixture names avoid ``browser``/``page`` so that pytest-playwright,
if installed, does not parametrize these tests.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from workbench.lab import LAB_SERVER_OPTIONS

ROOT = Path(__file__).resolve().parents[2]
START_NOTEBOOK = ROOT / "notebooks" / "00-start-here.ipynb"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(
    os.environ.get("WIDGET_SCREENSHOT_DIR", ROOT / "tests" / "browser" / "screenshots")
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    """A Jupyter server process we started, and where to reach it."""

    process: subprocess.Popen
    port: int
    token: str
    log: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_tail(self, chars: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-chars:]

    def wait_until_listening(self, path: str, timeout: float = 30) -> None:
        """Poll ``path`` until the server answers (any HTTP status), or fail with its log."""
        # No proxies: a stray http_proxy must not send loopback traffic elsewhere.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            try:
                opener.open(self.base + path, timeout=2).close()
                return
            except urllib.error.HTTPError:
                return
            except OSError:
                time.sleep(0.2)
        raise AssertionError(f"server did not start:\n{self.log_tail()}")

    def stop(self) -> None:
        """End the server's process group (it includes the kernels it started)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)


def isolated_env(home: Path) -> dict[str, str]:
    """Environment with private Jupyter/IPython dirs under ``home``."""
    env = dict(os.environ)
    for var, sub in {
        "JUPYTER_CONFIG_DIR": "config",
        "JUPYTERLAB_SETTINGS_DIR": "lab-settings",
        "JUPYTERLAB_WORKSPACES_DIR": "lab-workspaces",
        "JUPYTER_RUNTIME_DIR": "runtime",
        "IPYTHONDIR": "ipython",
    }.items():
        (home / sub).mkdir(parents=True, exist_ok=True)
        env[var] = str(home / sub)
    # No "Jupyter news?" toast in a fresh Lab.
    labconfig = home / "config" / "labconfig"
    labconfig.mkdir(parents=True, exist_ok=True)
    (labconfig / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}})
    )
    env["PYTHONUNBUFFERED"] = "1"
    return env


def start_server(args: list[str], home: Path, name: str, port: int, token: str) -> Server:
    log = home / f"{name}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", *args],
            cwd=home,
            env=isolated_env(home),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    return Server(process, port, token, log)


def copy_notebook(directory: Path, *, clear_outputs: bool = False) -> Path:
    """Copy the start notebook into ``directory`` (outputs and widget state dropped if asked)."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / START_NOTEBOOK.name
    if not clear_outputs:
        shutil.copy(START_NOTEBOOK, target)
        return target
    nb = nbformat.read(START_NOTEBOOK, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, target)
    return target


def one_cell_notebook(directory: Path, name: str, source: str) -> Path:
    """Write a notebook with one code cell (and a Python 3 kernelspec) into ``directory``."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    nb.metadata["kernelspec"] = {
        "display_name": "Python 3",
        "language": "python",
        "name": "python3",
    }
    path = directory / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.fixture
def voila(tmp_path: Path) -> Iterator:
    """``voila(notebook)`` serves a notebook on 127.0.0.1 (run on page load); stopped afterwards."""
    pytest.importorskip("voila")
    servers: list[Server] = []

    def start(notebook: Path) -> Server:
        port, token = free_port(), secrets.token_hex(16)
        args = [
            "voila",
            str(notebook),
            "--no-browser",
            "--Voila.ip=127.0.0.1",
            f"--port={port}",
            f"--token={token}",
            "--show_tracebacks=True",
        ]
        server = start_server(args, tmp_path, f"voila-{len(servers)}", port, token)
        servers.append(server)
        server.wait_until_listening("/login")
        return server

    try:
        yield start
    finally:
        for server in servers:
            server.stop()


@pytest.fixture
def voila_panel(tmp_path: Path, voila):
    """``voila_panel(name, source)`` serves a one-cell notebook; returns (URL with token, log)."""

    def serve(name: str, source: str) -> tuple[str, Path]:
        server = voila(one_cell_notebook(tmp_path, name, source))
        return f"{server.base}/?token={server.token}", server.log

    return serve


@pytest.fixture
def voila_server(tmp_path: Path, voila) -> Server:
    """Voila serving a copy of the start notebook."""
    return voila(copy_notebook(tmp_path / "notebooks"))


@pytest.fixture
def shop_events_explorer() -> str:
    """A one-cell notebook's source: the events explorer on the sample logs' zone."""
    return (
        "from workbench.replay.run import demo_zone\n"
        "from workbench.widgets import EventsExplorer\n\n"
        'wb, zone_id = demo_zone("shop.example")\n'
        "panel = EventsExplorer(wb, zone_id)\n"
        "panel"
    )


def start_lab(home: Path, root: Path) -> Server:
    """JupyterLab on 127.0.0.1 serving ``root`` (its log and settings under ``home``)."""
    port, token = free_port(), secrets.token_hex(16)
    server = start_server(
        [
            "jupyter",
            "lab",
            "--no-browser",
            "--allow-root",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            *LAB_SERVER_OPTIONS,  # as `make lab` starts it: uploads over 10 MB arrive
        ],
        home,
        "lab",
        port,
        token,
    )
    try:
        server.wait_until_listening(f"/api/status?token={token}")
    except BaseException:
        server.stop()
        raise
    return server


@pytest.fixture
def lab_server(tmp_path: Path) -> Iterator[Server]:
    """JupyterLab rooted at a tmp dir holding an unexecuted copy of the start notebook."""
    pytest.importorskip("jupyterlab")
    copy_notebook(tmp_path / "notebooks", clear_outputs=True)
    server = start_lab(tmp_path, tmp_path / "notebooks")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def lab_notebook(tmp_path: Path) -> Iterator:
    """``lab_notebook(name, source)`` serves a one-cell notebook in JupyterLab (not run yet);
    returns (server, URL of the notebook with the token). Stopped afterwards."""
    pytest.importorskip("jupyterlab")
    servers: list[Server] = []

    def serve(name: str, source: str) -> tuple[Server, str]:
        root = tmp_path / "notebooks"
        root.mkdir(parents=True, exist_ok=True)
        path = one_cell_notebook(root, name, source)
        server = start_lab(tmp_path, root)
        servers.append(server)
        return server, f"{server.base}/lab/tree/{path.name}?reset&token={server.token}"

    try:
        yield serve
    finally:
        for server in servers:
            server.stop()


@pytest.fixture(scope="module")
def chromium_browser():
    """Debian's Chromium driven by Playwright; skips when either is missing.

    Module-scoped on purpose: Playwright's sync API keeps an event loop running
    in the main thread while it is open, and tests elsewhere call asyncio.run().
    """
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def browser_page(chromium_browser):
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        yield page
    finally:
        context.close()


@pytest.fixture
def screenshot(browser_page):
    """``screenshot("name")`` saves the page to tests/browser/screenshots/name.png."""

    def save(name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        browser_page.screenshot(path=str(path), full_page=True)
        return path

    return save


@pytest.fixture
def panel_shot(browser_page, screenshot):
    """``panel_shot("name", width)``: a PNG of the whole panel at ``width``, then no overflow.

    The viewport is made as tall as the panel so the picture shows all of it; the
    picture is taken before the check, so a failure leaves it to look at. Nothing may
    stick out at the right edge: wide parts scroll inside the panel.
    """
    page = browser_page

    def shoot(name: str, width: int = 1280) -> None:
        page.set_viewport_size({"width": width, "height": 1000})
        height = page.evaluate("document.querySelector('.wb-panel').scrollHeight")
        page.set_viewport_size({"width": width, "height": max(1000, int(height) + 80)})
        screenshot(name)
        overflow = page.evaluate(
            "(() => { const p = document.querySelector('.wb-panel');"
            " return p.scrollWidth - p.clientWidth; })()"
        )
        page.set_viewport_size({"width": 1280, "height": 1000})
        assert overflow <= 0, f"the panel overflows by {overflow}px at width {width}"

    return shoot


@pytest.fixture
def columns_in_view(browser_page):
    """``columns_in_view(box, names, width=None)``: where the named headers of the table in
    ``box`` (the selector of its ``.wb-scroll`` element) lie, unscrolled, at 1280x800.

    Returns ``{name: (left, right, visible)}``; ``visible`` is whether the header lies inside
    the box's visible part and inside the viewport. With ``width``, the panel is first made
    that wide (808: what JupyterLab gives a cell's output at 1280x800 with the file browser
    open), then put back.
    """
    page = browser_page
    page.set_viewport_size({"width": 1280, "height": 800})

    def where(box: str, names: list[str], width: int | None = None) -> dict[str, tuple]:
        style = None
        if width:
            style = page.add_style_tag(content=f".wb-panel{{max-width:{width}px !important}}")
            page.wait_for_timeout(300)  # Lumino lays the page out again on the next frame
        try:
            found = page.evaluate(
                """([box, names]) => {
                  const scroller = document.querySelector(box);
                  scroller.scrollLeft = 0;
                  scroller.scrollIntoView({block: "center"});
                  const r = scroller.getBoundingClientRect();
                  const out = {};
                  for (const th of scroller.querySelectorAll("th")) {
                    const name = th.textContent.trim();
                    if (!names.includes(name)) continue;
                    const b = th.getBoundingClientRect();
                    out[name] = [Math.round(b.left), Math.round(b.right),
                                 b.left >= r.left - 0.5 && b.right <= r.right + 0.5
                                 && b.right <= window.innerWidth];
                  }
                  return out;
                }""",
                [box, names],
            )
        finally:
            if style is not None:
                style.evaluate("s => s.remove()")
                page.wait_for_timeout(300)
        assert sorted(found) == sorted(names), f"headers found: {found}"
        return {name: tuple(v) for name, v in found.items()}

    return where
