"""`workbench.api.serve(wb)`/`stop(wb)` in-process and `python -m workbench serve` as a process."""

import re
import subprocess
import sys

import httpx
import pytest

from workbench import Workbench
from workbench.api import demo_workbench, serve, stop
from workbench.widgets.parts import CURL_NOTE


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
        seeded_key = demo_workbench(seed=1).account.api_key  # loopback: the seeded key stays
        assert f"X-Auth-Key:   {seeded_key}" in text
        assert "credentials:  seeded from --seed 1, the same on every run (loopback only)" in text
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


def read_banner(proc):
    lines = []
    while not lines or "OpenAPI:" not in lines[-1]:
        line = proc.stdout.readline()
        assert line, "server exited early"
        lines.append(line)
    return "".join(lines)


def test_serve_on_all_addresses_uses_random_credentials_and_says_so():
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", "serve", "--host", "0.0.0.0", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        text = read_banner(proc)
        port = re.search(r"API at http://0\.0\.0\.0:(\d+)/client/v4", text).group(1)
        key = re.search(r"X-Auth-Key:\s+(\S+)", text).group(1)
        token = re.search(r"API token:\s+(\S+)", text).group(1)
        assert "credentials:  X-Auth-Key and API token random for this run" in text
        assert "--seeded-credentials" in text
        seeded = demo_workbench(seed=0).account
        assert key != seeded.api_key and token != seeded.tokens[0].value
        url = f"http://127.0.0.1:{port}/client/v4/zones"
        email = seeded.email  # the email stays
        assert httpx.get(url, headers={"X-Auth-Email": email, "X-Auth-Key": key}).status_code == 200
        assert httpx.get(url, headers={"Authorization": f"Bearer {token}"}).status_code == 200
        for refused in (
            {"X-Auth-Email": email, "X-Auth-Key": seeded.api_key},
            {"Authorization": f"Bearer {seeded.tokens[0].value}"},
        ):
            assert httpx.get(url, headers=refused).status_code == 403
    finally:
        proc.terminate()
        proc.wait(10)


def test_serve_on_all_addresses_with_seeded_credentials_when_asked():
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", "serve", "--host", "0.0.0.0", "--port", "0"]
        + ["--seeded-credentials", "--seed", "2"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        text = read_banner(proc)
        seeded = demo_workbench(seed=2).account
        assert f"X-Auth-Key:   {seeded.api_key}" in text
        assert f"API token:    {seeded.tokens[0].value}" in text
        assert "anyone who knows the seed can use them on 0.0.0.0" in text
    finally:
        proc.terminate()
        proc.wait(10)


def test_serve_prints_export_lines_a_shell_can_paste_and_curl_lines_can_use():
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", "serve", "--port", "0", "--seed", "3"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        text = read_banner(proc)
        exports = [line for line in text.splitlines() if line.startswith("export ")]
        assert [line.split("=")[0] for line in exports] == [
            "export CF_BASE",
            "export CF_EMAIL",
            "export CF_KEY",
            "export CF_TOKEN",
        ]
        shell = subprocess.run(
            [
                "bash",
                "-c",
                "\n".join(exports) + '\nprintf "%s\\n" "$CF_BASE" "$CF_EMAIL" "$CF_KEY"',
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        base, email, key = shell.stdout.splitlines()
        assert base.startswith("http://127.0.0.1:") and base.endswith("/client/v4")
        response = httpx.get(f"{base}/zones", headers={"X-Auth-Email": email, "X-Auth-Key": key})
        assert response.status_code == 200 and response.json()["success"] is True
        assert CURL_NOTE.count("$CF_") == 3 and "export lines" in CURL_NOTE
    finally:
        proc.terminate()
        proc.wait(10)
