"""The what-if on an engine gives the in-process what-if's comparison, row for row, and its summary."""

import duckdb
import pandas as pd
import pytest

from workbench import Workbench
from workbench.replay import EngineError, write_log
from workbench.traffic.generators import generate
from workbench.tuning.whatif import default_seed
from workbench.tuning.whatif_engine import COMPARISON_COLUMNS, whatif_log, whatif_on_engine


def _parquet(path):
    return duckdb.sql(f"SELECT * FROM read_parquet('{path}')").df()


def _zone_and_log(tmp_path, n, seed, plan="enterprise"):
    """A fresh zone, ``n`` generated requests and their Parquet log with the what-if's ray ids and times."""
    wb = Workbench(seed=0)
    zone = wb.create_zone("example.com", plan=plan)
    requests = generate(n, seed=seed)
    folder = tmp_path / "log"
    write_log(
        requests,
        folder,
        zone=zone.name,
        seed=default_seed(zone.id),
        start_ms=wb.clock.now_ms(),
    )
    return wb, zone, requests, folder


def _same_whatif(tmp_path, in_process, on_engine):
    in_process.to_parquet(tmp_path / "in_process.parquet")
    expected = _parquet(tmp_path / "in_process.parquet")
    got = _parquet(on_engine.out)
    assert list(got.columns) == list(COMPARISON_COLUMNS)
    # Every row and every column, in the same order and with the same types.
    pd.testing.assert_frame_equal(got, expected)
    assert got.equals(in_process.requests)
    pd.testing.assert_frame_equal(on_engine.summary(), in_process.summary())
    assert on_engine.requests == len(in_process.requests)


@pytest.fixture(scope="module")
def enterprise(tmp_path_factory):
    """3,000 generated requests on an Enterprise zone and the in-process what-if of them."""
    tmp_path = tmp_path_factory.mktemp("whatif")
    wb, zone, requests, folder = _zone_and_log(tmp_path, 3000, seed=21)
    return wb, zone, folder, wb.tuning.whatif(zone.id, requests, progress=False)


def test_duckdb_whatif_is_the_in_process_one(enterprise, tmp_path):
    wb, zone, folder, in_process = enterprise
    # The comparison means something: the old WAF and the new configuration disagree somewhere.
    assert set(in_process.requests.change) > {"unchanged"}
    done = whatif_on_engine(wb, zone.id, folder, tmp_path / "duck.parquet", engine="duckdb")
    assert done.engine == "duckdb" and done.stats["distinct_keys"] > 1
    _same_whatif(tmp_path, in_process, done)


def test_whatif_log_converts_a_request_file_as_the_cli_reads_it(tmp_path):
    """A log file (here NDJSON) becomes a Parquet log with the in-process ray ids and times."""
    from workbench.traffic import Request
    from workbench.traffic.importers import read_log, write_lines

    log = tmp_path / "requests.ndjson"
    log.write_text(
        "\n".join(write_lines(Request.from_raw(r) for r in generate(200, seed=4))) + "\n",
        encoding="utf-8",
    )
    wb = Workbench(seed=3)
    zone = wb.create_zone("example.com", plan="business")
    in_process = wb.tuning.whatif(
        zone.id, list(read_log(log, host=zone.name, label="imported")), progress=False
    )
    done = whatif_log(
        log,
        "example.com",
        plan="business",
        seed=3,
        label="imported",
        out=tmp_path / "cmp.parquet",
    )
    assert done.stats["seconds"]["convert"] >= 0
    _same_whatif(tmp_path, in_process, done)


def test_a_parquet_log_folder_is_read_as_it_is(enterprise, tmp_path):
    _, _, folder, in_process = enterprise
    # The folder was written with the what-if's seed of the zone a fresh Workbench(seed=0) makes.
    done = whatif_log(folder, "example.com", plan="enterprise", out=tmp_path / "cmp.parquet")
    _same_whatif(tmp_path, in_process, done)


def test_engine_errors_name_the_argument(enterprise, tmp_path):
    wb, zone, folder, _ = enterprise
    with pytest.raises(EngineError, match=r"--zone: the log holds no requests of 'other.example'"):
        whatif_on_engine(wb, zone.id, folder, tmp_path / "x.parquet", log_zone="other.example")
    with pytest.raises(EngineError, match="--engine must be duckdb or spark, got 'trino'"):
        whatif_on_engine(wb, zone.id, folder, tmp_path / "x.parquet", engine="trino")
    with pytest.raises(EngineError, match="--cores must be >= 1, got 0"):
        whatif_log(folder, "example.com", out=tmp_path / "x.parquet", cores=0)


def test_spark_whatif_is_the_in_process_one(spark, tmp_path):
    """Spark (local[2], the tests' session) on a smaller log: the same comparison and summary.

    pyspark is part of the test extra: as for the other Spark tests, a missing pyspark
    fails here rather than skips.
    """
    wb, zone, requests, folder = _zone_and_log(tmp_path, 400, seed=8)
    in_process = wb.tuning.whatif(zone.id, requests, progress=False)
    done = whatif_on_engine(
        wb, zone.id, folder, tmp_path / "spark.parquet", engine="spark", spark=spark
    )
    assert done.engine == "spark"
    _same_whatif(tmp_path, in_process, done)
