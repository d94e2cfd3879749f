"""Spark's keys query with shared decoded columns (replay._checks) gives the plain query's keys."""

from workbench.core.security import Check, StaticPlan, Verdict
from workbench.replay._checks import plain_checks
from workbench.replay._log_replay import CompiledPlan
from workbench.replay._parquet_logs import write_log
from workbench.replay._spark import SparkBackend, register_log
from workbench.traffic.request import Request
from workbench.traffic.zone_plan import ZonePlan

CHECKS = [
    'url_decode(http.request.uri.query, "r") contains "<script"',
    'lower(url_decode(http.request.uri.query, "r")) matches r"union\\s+select"',
    'url_decode(concat(http.request.uri, "\\x0a", http.user_agent), "r") contains "../"',
    'http.request.method eq "POST"',
]
QUERIES = [
    "q=%3Cscript%3E",
    "q=%253Cscript%253E",  # decoded twice ("r": recursively)
    "q=1%20UNION%20%20SELECT%20x",
    "q=%c0%ae%c0%ae/",  # decodes to bytes that are not UTF-8
    "q=caf%C3%A9",
    "a=1+2&b=..%2f",
    "",
]


def test_shared_keys_give_the_plain_keys(spark, tmp_path):
    plan = ZonePlan(
        StaticPlan([Check(f"c{i}", e) for i, e in enumerate(CHECKS)], lambda m: Verdict([]))
    )
    requests = [
        Request(method, f"https://k.example/p?{q}" if q else "https://k.example/p", headers=h)
        for q in QUERIES
        for method in ("GET", "POST")
        for h in ({}, {"User-Agent": "x/../y"})
    ]
    write_log(requests, tmp_path / "log", zone="k.example", seed=1)
    source = register_log(spark, tmp_path / "log", "k.example", "enterprise", lambda n: f"`{n}`")
    compiled = CompiledPlan(plan, "spark", lambda n: f"`{n}`")
    keys, by_check = compiled.query, plain_checks(compiled.compiled, "spark")
    assert keys is not None and len(keys.columns) > 0
    plain_sql = (
        f"SELECT request_id, {by_check.key()} AS wb_key, {by_check.fallback()} AS wb_fb "
        f"FROM {source}"
    )
    shared_sql = (
        f"SELECT request_id, {keys.key()} AS wb_key, {keys.fallback()} AS wb_fb "
        f"FROM {keys.select(source)}"
    )
    order = "ORDER BY request_id"
    plain = spark.sql(f"{plain_sql} {order}").collect()
    assert SparkBackend(spark).materialize("wb_k", shared_sql) == "wb_k"
    shared = spark.sql(f"SELECT * FROM wb_k {order}").collect()
    assert [r.asDict() for r in shared] == [r.asDict() for r in plain]
    assert len({r.wb_key for r in plain}) > 3  # a real mix of keys, not one constant


def test_materializing_a_view_again_releases_the_old_cache(spark):
    # Each replay builds a new backend and materializes its keys under the same view name;
    # the earlier run's cached table must not stay in the executors' memory.
    def cached() -> int:
        return len(spark.sparkContext._jsc.sc().getRDDStorageInfo())

    for run in range(3):
        backend = SparkBackend(spark)
        backend.materialize("wb_again", f"SELECT id, id * {run + 2} AS k FROM range(100)")
        assert spark.sql("SELECT sum(k) AS s FROM wb_again").collect()[0].s == 4950 * (run + 2)
        if run == 0:
            first = cached()
    assert first >= 1 and cached() == first
