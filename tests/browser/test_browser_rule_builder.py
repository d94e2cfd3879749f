"""The rule builder in a real browser: Voila runs a small notebook, Chromium clicks.

    python -m pytest -v -m browser tests/browser/test_browser_rule_builder.py

Skipped when /usr/bin/chromium or Playwright is missing (fixtures in conftest.py).
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
from workbench import Workbench
from workbench.widgets import RuleBuilder

wb = Workbench(seed=0)
zone = wb.create_zone("shop.example", plan="free")
wb.firewall.create_rules(zone.id, [
    {"filter": {"expression": f'http.host eq "h{i}.shop.example"'}, "action": "block"} for i in range(4)])
panel = RuleBuilder(wb, zone.id)
panel"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def voila_rule_builder(tmp_path: Path):
    """Voila on 127.0.0.1 serving a one-cell notebook with a RuleBuilder; yields its URL."""
    pytest.importorskip("voila")
    notebook = tmp_path / "rule_builder.ipynb"
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


def test_voila_rule_builder_both_sequences(voila_rule_builder, browser_page, screenshot):
    from playwright.sync_api import expect

    url, log = voila_rule_builder
    page = browser_page
    try:
        page.goto(url)
        value = page.locator(".wb-rb-value input").first
        expect(value).to_be_visible(timeout=45_000)
        value.fill("/admin")
        value.press("Enter")
        preview = page.locator(".wb-rb-preview")
        expect(preview).to_contain_text('http.request.uri.path eq "/admin"')
        expect(page.locator(".wb-rb-matches")).to_contain_text("match")

        page.locator("button.wb-rb-create").click()
        outcome = page.locator(".wb-rb-outcome")
        expect(outcome).to_contain_text("created rule", timeout=20_000)
        http = page.locator(".wb-rb-http")
        expect(http).to_contain_text('curl -X POST "$CF_BASE/zones/')
        expect(http).to_contain_text("POST /zones/")
        expect(page.locator(".wb-rb-filters")).to_contain_text("5 of 5 active rules")
        screenshot("voila_rule_builder_created")

        # The zone is now at its quota: the one-call form leaves the filter behind.
        value.fill("/login")
        value.press("Enter")
        expect(preview).to_contain_text('"/login"')
        page.locator("button.wb-rb-one-call").click()
        expect(outcome).to_contain_text("partial: filter", timeout=20_000)
        expect(http).to_contain_text("10200")
        expect(page.locator(".wb-rb-filters")).to_contain_text("(no rule)")

        screenshot("voila_rule_builder_partial")

        # A second condition joins with "and" in the preview.
        page.locator("button.wb-rb-add").click()
        second = page.locator(".wb-rb-value input").nth(1)
        second.fill("/x")
        second.press("Enter")
        expect(preview).to_contain_text('"/login" and http.request.uri.path eq "/x"')
    except Exception as err:
        raise AssertionError(
            f"{err}\n--- voila log ---\n{log.read_text(errors='replace')[-3000:]}"
        ) from err
