"""`workbench.api.serve(wb)`/`stop(wb)` in-process and `python -m workbench serve` as a process."""

import re
import subprocess
import sys

import httpx
import pytest

from workbench import Workbench
from workbench.api import demo_workbench, serve, stop


def test_serve_returns_a_base_url_reused_until_stopped():
    wb = Workbench(seed=0)
    zone = wb.create_zone("example.com")
    url = serve(wb)
    try:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/client/v4", url)
        assert serve(wb) == url  # already running: the same server
        headers = {"X-Auth-Email": wb.account.email, "X-Auth-Key": wb.account.api_key}
        r = httpx.get(f"{url}/zones/{zone.id}", headers=headers)
        assert r.status_code == 200 and r.json()["result"]["name"] == "example.com"
    finally:
        stop(wb)
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/zones", timeout=2)
    stop(wb)  # stopping twice is fine
    again = serve(wb)
    try:
        assert httpx.get(f"{again}/openapi.json").status_code == 200
    finally:
        again.stop()  # the URL can stop its server too
    third = serve(wb)  # a fresh server, not the stopped one
    try:
        assert httpx.get(f"{third}/openapi.json").status_code == 200
    finally:
        stop(wb)


def test_demo_workbench_takes_command_line_credentials():
    wb = demo_workbench(seed=3, email="me@corp.example", key="K" * 37, token="t-" * 20)
    assert [z.plan for z in wb.zones] == ["free", "pro", "business", "enterprise"]
    assert (wb.account.email, wb.account.api_key, wb.account.tokens[0].value) == (
        "me@corp.example",
        "K" * 37,
        "t-" * 20,
    )
    with pytest.raises(ValueError, match="--key must be 37"):
        demo_workbench(key="short")
    with pytest.raises(ValueError, match="--email"):
        demo_workbench(email="nobody")
    with pytest.raises(ValueError, match="--token"):
        demo_workbench(token="x" * 39)


def test_python_m_workbench_serve_prints_url_credentials_and_zones():
    token = "a" * 40
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "workbench",
            "serve",
            "--port",
            "0",
            "--seed",
            "1",
            "--token",
            token,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        lines = []
        while not lines or "OpenAPI:" not in lines[-1]:
            line = proc.stdout.readline()
            assert line, "server exited early"
            lines.append(line)
        text = "".join(lines)
        url = re.search(r"API at (http://127\.0\.0\.1:\d+/client/v4)", text).group(1)
        zones = re.findall(r"^\s+([0-9a-f]{32})\s+(\S+)\s+(\w+)$", text, re.M)
        assert [plan for _, _, plan in zones] == ["free", "pro", "business", "enterprise"]
        assert f"API token:    {token}" in text and "X-Auth-Key:" in text
        r = httpx.get(f"{url}/zones", headers={"Authorization": f"Bearer {token}"})
        assert [z["id"] for z in r.json()["result"]] == [z for z, _, _ in zones]
    finally:
        proc.terminate()
        proc.wait(10)


def test_serve_refuses_malformed_credentials():
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "serve", "--key", "short"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--key must be 37 letters or digits" in done.stderr
