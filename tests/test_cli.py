"""The terminal face: `workbench --help` and `workbench lab --dry-run`."""

import argparse
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from workbench import cli
from workbench.lab import LAB_SERVER_OPTIONS

ROOT = Path(__file__).resolve().parent.parent


def test_help_lists_the_lab_command(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: workbench")
    assert "lab" in out and "00-start-here.ipynb" in out


ROOT_FLAG = ["--allow-root"] if os.name == "posix" and os.geteuid() == 0 else []


def test_lab_dry_run_prints_the_command(capsys):
    assert cli.main(["lab", "--dry-run"]) == 0
    expected = shlex.join(
        ["jupyter", "lab", *LAB_SERVER_OPTIONS, *ROOT_FLAG, "notebooks/00-start-here.ipynb"]
    )
    assert capsys.readouterr().out == expected + "\n"


def test_lab_raises_the_servers_message_limit_for_uploads():
    # A panel's upload is one websocket message; the server's default drops one over 10 MB.
    (option,) = LAB_SERVER_OPTIONS
    name, _, value = option.partition("=")
    assert name == "--ServerApp.tornado_settings"
    assert json.loads(value) == {"websocket_max_message_size": 200 * 1024 * 1024}


def test_lab_runs_jupyter_from_the_repo_root(monkeypatch):
    calls = []
    monkeypatch.setattr(cli.subprocess, "call", lambda cmd, cwd: calls.append((cmd, cwd)) or 0)
    assert cli.main(["lab"]) == 0
    command = ["jupyter", "lab", *LAB_SERVER_OPTIONS, *ROOT_FLAG]
    assert calls == [([*command, "notebooks/00-start-here.ipynb"], ROOT)]


def test_no_command_prints_help_and_fails(capsys):
    assert cli.main([]) == 2
    assert "usage: workbench" in capsys.readouterr().out


def test_a_command_is_one_function_and_one_registry_entry(monkeypatch, capsys):
    def cmd_hello(args: argparse.Namespace) -> int:
        print(f"hello {args.name}")
        return 0

    def configure(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("name")

    monkeypatch.setitem(cli.COMMANDS, "hello", cli.Command("say hello", cmd_hello, configure))
    assert cli.main(["hello", "world"]) == 0
    assert capsys.readouterr().out == "hello world\n"


def test_python_dash_m_workbench():
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "lab", "--dry-run"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert done.stdout.startswith("jupyter lab")


@pytest.fixture
def served(monkeypatch):
    """`workbench serve` up to the point it would listen: the Workbench and banner note it got."""
    from workbench.api import server

    calls = []
    monkeypatch.setattr(
        server, "run", lambda wb, host, port, note=None: calls.append((wb, host, note))
    )
    return calls


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_serve_on_loopback_keeps_the_seeded_credentials(served, host):
    from workbench import Workbench

    assert cli.main(["serve", "--host", host, "--seed", "4"]) == 0
    [(wb, _, note)] = served
    seeded = Workbench(seed=4).account
    assert (wb.account.api_key, wb.account.tokens[0].value) == (
        seeded.api_key,
        seeded.tokens[0].value,
    )
    assert note == "seeded from --seed 4, the same on every run (loopback only)"


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "example.com", "::ffff:10.0.0.1"])
def test_serve_beyond_loopback_draws_random_credentials(served, host):
    from workbench import Workbench

    assert cli.main(["serve", "--host", host]) == 0
    assert cli.main(["serve", "--host", host]) == 0
    (first, _, note), (second, _, _) = served
    seeded = Workbench(seed=0).account
    for wb in (first, second):
        assert wb.account.email == seeded.email  # the email stays
        assert wb.account.api_key != seeded.api_key
        assert [t.value for t in wb.account.tokens] != [t.value for t in seeded.tokens]
        assert seeded.tokens[0].value not in {t.value for t in wb.account.tokens}
        assert [z.id for z in wb.zones] == [z.id for z in served[0][0].zones]  # ids follow the seed
    assert first.account.api_key != second.account.api_key
    assert first.account.tokens[0].value != second.account.tokens[0].value
    assert note == (
        f"X-Auth-Key and API token random for this run, since {host} is not a loopback "
        "address (--seeded-credentials for the seeded ones)"
    )


def test_serve_beyond_loopback_keeps_what_was_given_and_seeded_on_request(served):
    from workbench import Workbench

    seeded = Workbench(seed=0).account
    assert cli.main(["serve", "--host", "0.0.0.0", "--key", "K" * 37]) == 0
    assert cli.main(["serve", "--host", "0.0.0.0", "--seeded-credentials"]) == 0
    (given, _, given_note), (asked, _, asked_note) = served
    assert given.account.api_key == "K" * 37
    assert given.account.tokens[0].value != seeded.tokens[0].value
    assert given_note.startswith("API token random for this run")
    assert asked.account.api_key == seeded.api_key
    assert asked.account.tokens[0].value == seeded.tokens[0].value
    assert asked_note == (
        "seeded from --seed 0 (--seeded-credentials): anyone who knows the seed can use "
        "them on 0.0.0.0"
    )


def test_serve_now_starts_the_virtual_clock_there(served):
    from datetime import UTC, datetime

    assert cli.main(["serve", "--now", "2022-05-03T00:00:00Z"]) == 0
    [(wb, _, _)] = served
    assert wb.now() == datetime(2022, 5, 3, tzinfo=UTC)


def test_serve_without_now_starts_at_the_real_time(served):
    from datetime import UTC, datetime

    before = datetime.now(UTC).replace(microsecond=0)
    assert cli.main(["serve"]) == 0
    [(wb, _, _)] = served
    assert before <= wb.now() <= datetime.now(UTC)


def test_serve_refuses_a_now_that_is_not_a_time(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["serve", "--now", "yesterday"])
    assert stop.value.code == 2
    assert "--now takes an ISO time" in capsys.readouterr().err


# -- whatif ----------------------------------------------------------------
def test_whatif_prints_the_summary_and_writes_parquet(tmp_path, capsys):
    import duckdb

    from workbench.traffic import Request, generate
    from workbench.traffic.importers import write_lines

    log = tmp_path / "requests.ndjson"
    reqs = [Request.from_raw(r) for r in generate(60, seed=9)]
    log.write_text("\n".join(write_lines(reqs)) + "\n", encoding="utf-8")
    out = tmp_path / "cmp.parquet"
    code = cli.main(["whatif", str(log), "--zone", "example.com", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    assert "60 requests on example.com (pro)" in printed and "total" in printed
    frame = duckdb.sql(f"SELECT * FROM read_parquet('{out}')").df()
    assert len(frame) == 60 and {"old_action", "new_action", "change"} <= set(frame.columns)
    assert frame.path.tolist() == [r.path for r in reqs]


def test_whatif_reads_combined_logs_and_names_a_missing_file(tmp_path, capsys):
    log = tmp_path / "access.log"
    log.write_text(
        '192.0.2.1 - - [01/Jan/2026:00:00:00 +0000] "GET /wp-login.php HTTP/1.1" 200 5 "-" "curl/8"\n',
        encoding="utf-8",
    )
    out = tmp_path / "w.parquet"
    assert (
        cli.main(
            ["whatif", str(log), "--zone", "example.com", "--plan", "business", "--out", str(out)]
        )
        == 0
    )
    assert "1 requests on example.com (business)" in capsys.readouterr().out
    assert cli.main(["whatif", str(tmp_path / "nope.log"), "--zone", "example.com"]) == 1
    assert "workbench whatif:" in capsys.readouterr().err


def _ndjson_log(tmp_path, n, seed):
    from workbench.traffic import Request, generate
    from workbench.traffic.importers import write_lines

    log = tmp_path / "requests.ndjson"
    reqs = [Request.from_raw(r) for r in generate(n, seed=seed)]
    log.write_text("\n".join(write_lines(reqs)) + "\n", encoding="utf-8")
    return log


def test_whatif_on_duckdb_prints_and_writes_what_the_in_process_whatif_does(tmp_path, capsys):
    import duckdb

    log = _ndjson_log(tmp_path, 80, seed=13)
    common = ["whatif", str(log), "--zone", "example.com", "--plan", "enterprise"]
    common += ["--label", "imported"]
    assert cli.main([*common, "--out", str(tmp_path / "a.parquet")]) == 0
    in_process = capsys.readouterr().out
    assert cli.main([*common, "--engine", "duckdb", "--out", str(tmp_path / "b.parquet")]) == 0
    on_duckdb = capsys.readouterr().out
    assert "80 requests on example.com (enterprise)" in on_duckdb
    assert on_duckdb.replace("b.parquet", "a.parquet") == in_process
    a, b = (duckdb.sql(f"SELECT * FROM read_parquet('{tmp_path / f}.parquet')").df() for f in "ab")
    assert len(b) == 80 and b.equals(a)


def test_whatif_engine_errors_go_to_stderr(tmp_path, capsys):
    from workbench.replay import write_log
    from workbench.traffic import generate

    write_log(generate(5, seed=1), tmp_path / "log", zone="a.example")
    code = cli.main(["whatif", str(tmp_path / "log"), "--zone", "b.example", "--engine", "duckdb"])
    assert code == 1
    err = capsys.readouterr().err
    assert "workbench whatif: --zone: the log holds no requests of 'b.example'" in err
    assert "(zones: a.example)" in err
    (tmp_path / "empty.log").write_text("", encoding="utf-8")
    code = cli.main(
        ["whatif", str(tmp_path / "empty.log"), "--zone", "a.example", "--engine", "duckdb"]
    )
    assert code == 1
    assert "workbench whatif: LOG: " in capsys.readouterr().err


def test_whatif_on_spark_without_pyspark_says_how_to_install(tmp_path, monkeypatch, capsys):
    import importlib

    log = _ndjson_log(tmp_path, 3, seed=2)
    real = importlib.import_module

    def no_pyspark(name, *args, **kwargs):
        if name.split(".")[0] == "pyspark":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib, "import_module", no_pyspark)
    code = cli.main(["whatif", str(log), "--zone", "example.com", "--engine", "spark"])
    assert code == 1
    assert "pip install 'workbench[spark]'" in capsys.readouterr().err
