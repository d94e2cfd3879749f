"""Replay over partitioned Parquet logs: DuckDB engine against the pipeline, Spark against DuckDB."""

import builtins
import importlib
import os
import sys
import time
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.logs import EventLog
from workbench.replay import Pipeline, connect, count, log_zones, replay_duckdb, write_log
from workbench.replay.run import demo_zone
from workbench.traffic.generators import generate

# The issue asks for at least 100,000 requests on local[2] in CI (about 10 minutes on 2 cores);
# WORKBENCH_SPARK_TEST_REQUESTS lowers it for a quick local run.
SPARK_REQUESTS = int(os.environ.get("WORKBENCH_SPARK_TEST_REQUESTS", "100000"))


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    """A demo zone, 3,000 generated requests and their log written with the zone's clock."""
    wb, zone_id = demo_zone("example.com", seed=1)
    requests = generate(3000, seed=7)
    folder = tmp_path_factory.mktemp("log")
    write_log(requests, folder, zone="example.com", seed=42, start_ms=wb.clock.now_ms())
    return wb, zone_id, requests, folder


def test_log_is_partitioned_by_zone_and_hour(logged, tmp_path):
    _, _, requests, folder = logged
    assert log_zones(folder) == ["example.com"]
    hours = sorted(p.name for p in (folder / "zone=example.com").iterdir())
    assert hours and all(h.startswith("hour=") for h in hours)
    assert count(folder, "example.com") == len(requests)
    write_log(requests[:10], tmp_path)  # default partition: each request's own host
    assert set(log_zones(tmp_path)) == {r.url.split("/")[2] for r in requests[:10]}


def test_duckdb_spills_rather_than_fails(tmp_path):
    con = connect(memory_limit="200MB", threads=2, temp_directory=tmp_path / "spill")
    assert con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0] in (
        "190.7 MiB",
        "200.0 MB",
    )
    # A sort of 3,000,000 wide rows needs more than 200 MB: it spills to the temp folder.
    rows = con.execute(
        "SELECT count(*) FROM (SELECT i, repeat('x', 100) || i AS s FROM range(3000000) t(i) "
        "ORDER BY s DESC)"
    ).fetchall()
    assert rows == [(3_000_000,)]


def test_duckdb_engine_gives_the_pipelines_events(logged, tmp_path):
    wb, zone_id, requests, folder = logged
    done = replay_duckdb(wb, zone_id, folder, tmp_path / "events.parquet", log_zone="example.com")
    # The same zone (fresh, same seed) through the pipeline, its clock where the log started.
    wb2, zone2 = demo_zone("example.com", seed=1)
    run = Pipeline(wb2, zone2).replay(requests, seed=42, progress=False)
    expected = EventLog()
    expected.append(run.events.assign(zone_id=zone_id))
    got = EventLog.from_parquet(tmp_path / "events.parquet").frame()
    assert done.requests == len(requests) and done.events == len(got)
    assert got.equals(expected.frame())
    assert sum(done.actions.values()) == len(requests)


def test_cli_replay_duckdb(logged, tmp_path, capsys):
    _, _, _, folder = logged
    code = main(["replay", str(folder), "--zone", "example.com", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0 and "engine: duckdb" in out and "requests: 3,000" in out
    assert EventLog.from_parquet(tmp_path / "events.parquet").count() > 0


def test_cli_replay_unknown_zone(logged, capsys):
    _, _, _, folder = logged
    assert main(["replay", str(folder), "--zone", "nope.example"]) == 1
    assert "--zone: the log holds no requests of 'nope.example'" in capsys.readouterr().err


def test_cli_spark_without_pyspark_says_how_to_install(logged, monkeypatch, capsys):
    _, _, _, folder = logged
    real = importlib.import_module

    def no_pyspark(name, *args, **kwargs):
        if name.split(".")[0] == "pyspark":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib, "import_module", no_pyspark)
    monkeypatch.setattr(builtins, "__import__", builtins.__import__)
    code = main(["replay", str(folder), "--zone", "example.com", "--engine", "spark"])
    assert code == 1
    assert "pip install 'workbench[spark]'" in capsys.readouterr().err


def test_spark_gives_duckdbs_events(spark, tmp_path):
    """Same log, same zone: the same events row for row from Spark (local[2]) and DuckDB.

    pyspark is part of the test extra: a missing pyspark fails here rather than skips.
    """
    from workbench.replay import replay_spark

    wb, zone_id = demo_zone("example.com", seed=1)
    write_log(generate(SPARK_REQUESTS, seed=11), tmp_path / "log", zone="example.com", seed=5)
    duck = replay_duckdb(wb, zone_id, tmp_path / "log", tmp_path / "duck.parquet")
    started = time.perf_counter()
    on_spark = replay_spark(wb, zone_id, tmp_path / "log", tmp_path / "spark.parquet", spark=spark)
    print(
        f"spark replay of {SPARK_REQUESTS} requests: {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )
    a = EventLog.from_parquet(tmp_path / "duck.parquet").frame()
    b = EventLog.from_parquet(Path(tmp_path / "spark.parquet")).frame()
    assert on_spark.requests == duck.requests == SPARK_REQUESTS
    assert b.equals(a)


def test_bytes_that_are_not_utf8_are_kept_and_judged_per_request(tmp_path):
    from workbench import Workbench
    from workbench.traffic.request import Request

    wb = Workbench(seed=0)
    zone = wb.create_zone("b.example", plan="enterprise")
    wb.firewall.create_rules(
        zone.id,
        [{"filter": {"expression": 'http.request.body.raw contains "\\xff"'}, "action": "block"}],
    )
    requests = [
        Request("POST", "https://b.example/up", body=b"a\xffb"),
        Request("POST", "https://b.example/up", body="plain"),
    ]
    write_log(requests, tmp_path / "log", seed=3)
    done = replay_duckdb(wb, zone.id, tmp_path / "log", tmp_path / "e.parquet", systems="none")
    assert done.stats["fallback_requests"] == 1
    assert done.actions == {"block": 1, "pass": 1}


def test_a_given_plan_replaces_the_zones_own(logged, tmp_path):
    """The what-if hook: any ZonePlan replays over the same log."""
    from workbench.core.security import Check, SecurityEvent, StaticPlan, Verdict
    from workbench.traffic.zone_plan import ZonePlan

    wb, zone_id, requests, folder = logged
    plan = ZonePlan(
        StaticPlan(
            [Check("post", 'http.request.method eq "POST"')],
            lambda m: (
                Verdict([SecurityEvent("firewallRules", "log", "post", None, "")])
                if m("post")
                else Verdict([])
            ),
        )
    )
    done = replay_duckdb(wb, zone_id, folder, tmp_path / "e.parquet", plan=plan)
    posts = sum(1 for r in requests if r.method == "POST")
    assert done.events == posts and done.actions == {"pass": len(requests)}
