"""The storage inspector in a real browser: Voila runs a small notebook, Chromium clicks.

    python -m pytest -v -m browser tests/browser/test_browser_storage.py

Skipped when /usr/bin/chromium or Playwright is missing (``chromium_browser`` and
``browser_page`` come from conftest.py). The alarm step also checks that the
panel can run the runtime's coroutines from a widget callback inside a live
kernel, whose event loop is already running.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

pytestmark = pytest.mark.browser

SETUP = """\
from types import SimpleNamespace
from workbench.storage import DurableObject, Runtime
from workbench.widgets import StorageInspector

class Notes(DurableObject):
    async def fetch(self, request):
        await self.ctx.storage.put(request, len(request))
    async def alarm(self, info=None):
        await self.ctx.storage.put("alarm-ran", info.retryCount)

rt = Runtime()
ns = rt.namespace(Notes)
stub = ns.get(ns.id_from_name("notes"))
for word in ("apple", "apricot", "banana"):
    await stub.fetch(word)
panel = StorageInspector(rt)
panel"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def voila_storage(tmp_path: Path):
    """Voila on 127.0.0.1 serving a one-cell notebook with a StorageInspector; yields its URL."""
    pytest.importorskip("voila")
    notebook = tmp_path / "storage.ipynb"
    nb = new_notebook(cells=[new_code_cell(SETUP)])
    nb.metadata["kernelspec"] = {
        "display_name": "Python 3",
        "language": "python",
        "name": "python3",
    }
    nbformat.write(nb, notebook)
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ)
    for var in ("JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        (tmp_path / var).mkdir()
        env[var] = str(tmp_path / var)
    log = tmp_path / "voila.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "voila", str(notebook), "--no-browser", "--Voila.ip=127.0.0.1",
             f"--port={port}", f"--token={token}", "--show_tracebacks=True"],
            cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                opener.open(base + "/login", timeout=2).close()
                break
            except urllib.error.HTTPError:
                break
            except OSError:
                time.sleep(0.2)
        else:
            raise AssertionError("voila did not start:\n" + log.read_text(errors="replace")[-3000:])
        yield f"{base}/?token={token}", log
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


def test_storage_inspector_in_chromium(voila_storage, browser_page):
    url, log = voila_storage
    page = browser_page
    page.goto(url)
    try:
        page.get_by_text("3 pairs").wait_for(timeout=60_000)
    except Exception:
        raise AssertionError(
            "panel did not render:\n" + log.read_text(errors="replace")[-3000:]
        ) from None

    # KV browser: a prefix narrows the list
    page.locator(".widget-text", has=page.locator("label", has_text="prefix")).locator(
        "input"
    ).fill("ap")
    page.get_by_role("button", name="List", exact=True).click()
    page.get_by_text("2 pairs").wait_for()
    assert page.get_by_text("apricot").count() >= 1

    # SQL console: rows and counters
    page.locator(".lm-TabBar-tab", has_text="SQL").click()
    sql = page.locator(".widget-textarea textarea")
    sql.fill("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2); SELECT x FROM t")
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text("2 rows · columnNames ['x'] · rowsRead 2 · rowsWritten 0").wait_for()

    # Alarm: set one, advance the virtual clock, see the handler's run in the log
    page.locator(".lm-TabBar-tab", has_text="Alarm").click()
    page.get_by_role("button", name="Set alarm", exact=True).click()
    page.get_by_text("alarm 2026-01-01T00:00:01Z").wait_for()
    page.get_by_role("button", name="Advance clock", exact=True).click()
    page.get_by_text("alarm none").wait_for()
    assert "ok" in page.locator(".wb-storage-inspector").inner_text()
