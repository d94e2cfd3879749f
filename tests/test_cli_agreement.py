"""`workbench agreement LOG [--config FOLDER] [--events EVENTS] [--json]`: its output and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from workbench import cli

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "notebooks" / "data"
CONFIG = ROOT / "tests" / "zone_import" / "data" / "import_pro_zone"


def test_it_prints_the_table_the_disagreements_and_what_the_log_cannot_tell(capsys):
    assert cli.main(["agreement", str(DATA / "shop-http_requests.ndjson")]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == (
        "62 requests on shop.example: 62 with a recorded decision, 58 agree, 4 disagree (93.5%)"
    )
    assert "recorded (rows) against simulated (columns):" in out
    assert "rules of the simulated sources:" in out
    assert "  recorded block, simulated allow: recorded block by rate limiting" in out
    assert "what the log cannot tell:" in out and "- 62 of 62: no request body" in out
    assert not out.rstrip().splitlines()[-1].startswith("{")  # JSON only when asked


def test_json_ends_the_output_with_one_object(capsys):
    log, events = DATA / "shop-http_requests.ndjson", DATA / "shop-firewall_events.ndjson"
    assert cli.main(["agreement", str(log), "--events", str(events), "--json"]) == 0
    out = capsys.readouterr().out
    last = json.loads(out.rstrip("\n").splitlines()[-1])
    assert (last["requests"], last["compared"], last["agree"], last["disagree"]) == (62, 62, 58, 4)
    assert last["by_action"]["allow"]["allow"] == 50 and last["by_action"]["block"] == {
        "allow": 2,
        "block": 8,
    }
    assert sum(sum(row.values()) for row in last["by_action"].values()) == last["compared"]
    assert len(last["disagreements"]) == 4 and all(d["reason"] for d in last["disagreements"])
    assert out.splitlines()[0].startswith("62 requests on shop.example")  # the table first


def test_a_har_and_a_config_folder(tmp_path, capsys):
    assert (
        cli.main(["agreement", str(DATA / "shop-session.har"), "--config", str(CONFIG), "--json"])
        == 0
    )
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert (last["zone"], last["format"], last["requests"], last["compared"]) == (
        "shop.example.com",
        "har",
        4,
        0,
    )
    combined = tmp_path / "access.log"
    combined.write_text(
        '192.0.2.1 - - [02/Mar/2026:09:00:00 +0000] "GET /?q=1 HTTP/1.1" 200 5 "-" "curl/8"\n',
        encoding="utf-8",
    )
    assert cli.main(["agreement", str(combined), "--host", "shop.example", "--json"]) == 0
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert (last["zone"], last["format"], last["compared"]) == ("shop.example", "combined", 0)


def test_an_input_that_cannot_be_read_fails_with_a_message_naming_it(tmp_path, capsys):
    assert cli.main(["agreement", str(tmp_path / "nope.ndjson")]) == 1
    assert "workbench agreement: LOG: " in capsys.readouterr().err
    bad = tmp_path / "requests.ndjson"
    bad.write_text(
        '{"ClientRequestURI": "/"}\n{"ClientRequestURI": "/", "ClientASN": "x"}\n', encoding="utf-8"
    )
    assert cli.main(["agreement", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err == f"workbench agreement: LOG {bad}: line 2: ClientASN must be an integer, got str\n"
    events = tmp_path / "events.ndjson"
    events.write_text('{"RayID": "a", "Action": "explode"}\n', encoding="utf-8")
    assert cli.main(["agreement", str(DATA / "shop-session.har"), "--events", str(events)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"workbench agreement: --events {events}: line 1: Action: 'explode'")
    assert cli.main(["agreement", str(DATA / "shop-session.har"), "--config", str(tmp_path)]) == 1
    assert capsys.readouterr().err.startswith("workbench agreement: --config: ")


def test_files_are_checked_as_uploads_are(tmp_path, capsys):
    """The terminal reads its files through the upload's reader: an empty log, firewall events
    given as the log and a log given as the events are each named, not compared as nothing."""
    empty = tmp_path / "empty.ndjson"
    empty.write_bytes(b"")
    assert cli.main(["agreement", str(empty)]) == 1
    assert capsys.readouterr().err == f"workbench agreement: LOG {empty}: the file is empty\n"
    events = DATA / "shop-firewall_events.ndjson"
    assert cli.main(["agreement", str(events)]) == 1
    assert "holds firewall events, not requests" in capsys.readouterr().err
    log = DATA / "shop-http_requests.ndjson"
    assert cli.main(["agreement", str(DATA / "shop-session.har"), "--events", str(log)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"workbench agreement: --events {log}: holds HTTP requests")


def test_python_dash_m_workbench_agreement():
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "agreement", str(DATA / "shop-session.har"), "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["requests"] == 4
