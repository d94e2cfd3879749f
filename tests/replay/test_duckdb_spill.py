"""The DuckDB engine under a memory limit far below its work: it spills to disk rather than fails."""

import duckdb
import pytest

from workbench import Workbench
from workbench.replay import _duckdb_log as duckdb_engine
from workbench.replay._duckdb_log import replay_duckdb, time_slices
from workbench.replay._parquet_logs import connect, scan, write_log
from workbench.traffic.generators import generate

ZONE = "example.com"
RULES = [
    {"filter": {"expression": 'http.request.uri.path contains "/admin"'}, "action": "block"},
    {"filter": {"expression": 'http.request.method eq "POST"'}, "action": "log"},
    {"filter": {"expression": 'not ip.src.country in {"US" "GB"}'}, "action": "log"},
]
COPIES = 40


@pytest.fixture(scope="module")
def big_log(tmp_path_factory):
    """120,000 requests: 3,000 generated ones written with write_log, then 40 copies made in
    SQL with their own ids, ray ids and times (an hour apart), partitioned by zone and hour."""
    base = tmp_path_factory.mktemp("base")
    write_log(generate(3000, seed=3), base, zone=ZONE, seed=5, start_ms=1_700_000_000_000)
    folder = tmp_path_factory.mktemp("big")
    con = connect(memory_limit="1GB", threads=2, temp_directory=folder / "_spill")
    renewed = ("request_id", "ray_id", "datetime", "hour", "zone")
    names = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {scan(base, ZONE)}").fetchall()]
    kept = ", ".join(f'"{c}"' for c in names if c not in renewed)
    con.execute(
        f"COPY (SELECT request_id + k * 3000 AS request_id, "
        "lpad(to_hex(hash(request_id, k)), 16, '0') AS ray_id, "
        "datetime + k * INTERVAL 1 HOUR AS datetime, "
        f"{kept}, zone, strftime(datetime + k * INTERVAL 1 HOUR, '%Y-%m-%d-%H') AS hour "
        f"FROM {scan(base, ZONE)}, range({COPIES}) c(k)) TO ? "
        "(FORMAT PARQUET, PARTITION_BY (zone, hour))",
        [str(folder)],
    ).fetchall()
    con.close()
    return folder


def _replay(folder, out, **kw):
    wb = Workbench(seed=1)
    zone = wb.create_zone(ZONE, plan="enterprise")
    wb.firewall.create_rules(zone.id, RULES)
    return replay_duckdb(wb, zone.id, folder, out, systems="none", threads=2, **kw)


def _rows(path):
    return duckdb.sql(f"SELECT * FROM read_parquet('{path}')").fetchall()


def test_replay_under_a_tiny_memory_limit_spills_and_gives_the_same_events(big_log, tmp_path):
    roomy = _replay(big_log, tmp_path / "roomy.parquet", memory_limit="2GB")
    spill = tmp_path / "spill"
    tight = _replay(big_log, tmp_path / "tight.parquet", memory_limit="64MB", temp_directory=spill)
    assert tight.requests == roomy.requests == 3000 * COPIES
    assert tight.events == roomy.events > 90_000
    assert _rows(tmp_path / "tight.parquet") == _rows(tmp_path / "roomy.parquet")
    assert not list(spill.iterdir())  # the spill files and sorted parts are gone afterwards


def test_the_tight_replay_needs_the_disk(big_log, tmp_path, monkeypatch):
    # With no room on disk the same replay fails: under 64 MB it only succeeds by spilling.
    def no_disk(**kw):
        con = connect(**kw)
        con.execute("SET max_temp_directory_size = '0KB'").fetchall()
        return con

    monkeypatch.setattr(duckdb_engine, "connect", no_disk)
    with pytest.raises(duckdb.OutOfMemoryException):
        _replay(big_log, tmp_path / "e.parquet", memory_limit="64MB", temp_directory=tmp_path)


def test_events_are_sorted_in_time_slices_that_concatenate_in_order(big_log, tmp_path):
    one = _replay(big_log, tmp_path / "one.parquet", memory_limit="2GB")
    sliced = _replay(big_log, tmp_path / "sliced.parquet", memory_limit="2GB", slice_rows=7000)
    assert sliced.events == one.events
    assert _rows(tmp_path / "sliced.parquet") == _rows(tmp_path / "one.parquet")


def test_time_slices_cut_busy_hours_and_group_quiet_ones():
    counts = {"2024-01-01-00": 10, "2024-01-01-01": 10, "2024-01-01-02": 100}
    assert time_slices(counts, 25) == [
        (None, "2024-01-01 02:00:00"),
        ("2024-01-01 02:00:00", "2024-01-01 02:15:00"),
        ("2024-01-01 02:15:00", "2024-01-01 02:30:00"),
        ("2024-01-01 02:30:00", "2024-01-01 02:45:00"),
        ("2024-01-01 02:45:00", None),
    ]
    with pytest.raises(ValueError, match="budget must be >= 1"):
        time_slices(counts, 0)
    with pytest.raises(ValueError, match="slice_rows must be >= 1"):
        duckdb_engine.DuckDBBackend(None, slice_rows=0)
