"""Benchmark: replaying generated traffic through a zone, and the canned queries of the event log.

Run: ``python benchmarks/replay.py`` (long: the full run replays 1,000,000
requests several times; ``--quick`` for a smoke run of 20,000 requests and
200,000 events). Options: ``--requests N``, ``--sample N``, ``--runs N``,
``--events N``, ``--query-runs N``, ``--skip-replay``, ``--skip-queries``.

Prints, for a zone with 20 firewall rules, the old WAF on and both managed
rulesets deployed (validation mode, the real catalogues):

* requests per second on the whole-table path over ``--requests`` generated
  requests (median and worst of ``--runs`` runs), and where its time goes
  (building the table, DuckDB's checks, per-request fallbacks, deciding);
* requests per second on the per-request path, **measured on ``--sample``
  requests and extrapolated** to ``--requests`` (labelled as such), and the
  ratio of the two paths;
* the process's peak memory (``ru_maxrss``) and its resident size before the
  replays, with the requests already generated;
* the latency of each canned query over ``--events`` synthetic events made in
  DuckDB (not through the pipeline), median and worst of ``--query-runs``. The
  queries read the summaries the log keeps on append (``workbench.logs.summary``);
  folding the events into them is part of the time to make the events.

Aims on 2 cores: whole-table replay of 1,000,000 requests under 60 s; each
canned query under 1 s. Generation (seeded, in worker processes) is not
counted in the replay times. Progress bars are off (``WORKBENCH_PROGRESS=0``).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

os.environ.setdefault("WORKBENCH_PROGRESS", "0")

from workbench import Workbench  # noqa: E402
from workbench.logs import (  # noqa: E402
    EventLog,
    actions_over_time,
    add_synthetic_events,
    legit_blocked_by_new,
    new_allows_old_blocked,
    rule_comparison,
    top_rules,
)
from workbench.replay import Pipeline  # noqa: E402
from workbench.rulesets import CLOUDFLARE_MANAGED_ID, MANAGED_PHASE, OWASP_ID  # noqa: E402
from workbench.traffic.generators import generate  # noqa: E402

CHUNK = 50_000  # requests generated per worker task (each with its own seed)

FIREWALL_RULES: list[tuple[str, str, dict[str, Any]]] = [
    ('http.request.uri.path contains "/api/"', "bypass", {"products": ["waf"]}),
    ('ip.src.country in {"KP" "T1"}', "block", {}),
    ('http.request.uri.path eq "/health"', "allow", {}),
    ('http.request.method eq "POST"', "log", {}),
    ('http.user_agent contains "masscan"', "js_challenge", {}),
    ('lower(http.user_agent) contains "sqlmap"', "managed_challenge", {}),
    (
        'http.request.uri.path contains "/wp-login.php" and ip.src.asnum eq 14061',
        "managed_challenge",
        {},
    ),
    ("ip.src in {192.0.2.0/24 198.51.100.0/24}", "block", {}),
    ('http.request.uri.path matches "^/admin(/|$)"', "challenge", {}),
    ('http.host eq "blog.example.com" and http.request.method eq "DELETE"', "block", {}),
    ('http.referer contains "spam.example"', "block", {}),
    ('http.request.uri.query contains "debug=1"', "log", {}),
    ('any(http.request.headers.names[*] eq "X-Forwarded-Host")', "log", {}),
    ('http.request.uri.path.extension in {"env" "bak" "sql" "git"}', "block", {}),
    ('ip.src.asnum in {14061 16509} and http.request.uri.path contains "/xmlrpc.php"', "block", {}),
    ("len(http.request.uri.query) gt 512", "challenge", {}),
    ('http.cookie contains "admin=true"', "block", {}),
    ('starts_with(http.request.uri.path, "/.well-known/")', "allow", {}),
    ('http.request.method in {"TRACE" "TRACK" "CONNECT"}', "block", {}),
    ('ip.src.country eq "RU" and http.request.uri.path contains "/login"', "managed_challenge", {}),
]


def zone() -> tuple[Workbench, str]:
    """The benchmark zone: 20 firewall rules, the old WAF on, both managed rulesets executed."""
    wb = Workbench(seed=1)
    z = wb.create_zone("example.com", plan="enterprise")
    wb.firewall.create_rules(
        z.id,
        [{"filter": {"expression": e}, "action": a, **extra} for e, a, extra in FIREWALL_RULES],
    )
    wb.rulesets.put_entrypoint(
        z.id,
        MANAGED_PHASE,
        {
            "rules": [
                {"action": "execute", "expression": "true", "action_parameters": {"id": i}}
                for i in (CLOUDFLARE_MANAGED_ID, OWASP_ID)
            ]
        },
    )
    return wb, z.id


def _generate(task: tuple[int, int]) -> list[Any]:
    n, seed = task
    return generate(n, seed=seed)


def requests(n: int) -> list[Any]:
    """``n`` generated requests, made by seeded chunks in worker processes."""
    tasks = [(min(CHUNK, n - start), 1000 + i) for i, start in enumerate(range(0, n, CHUNK))]
    if len(tasks) == 1:
        return _generate(tasks[0])
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return [r for chunk in pool.map(_generate, tasks) for r in chunk]


def rss_mb() -> float:
    """The process's resident size now (Linux), in MB."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except OSError:
        return float("nan")


def peak_mb() -> float:
    """The process's peak resident size so far (ru_maxrss is in KB on Linux), in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def spread(times: list[float]) -> str:
    return f"median {statistics.median(times):8.3f} s   worst {max(times):8.3f} s"


def bench_replay(n: int, sample: int, runs: int) -> None:
    started = time.perf_counter()
    traffic = requests(n)
    made = time.perf_counter() - started
    print(f"generated {n:,} requests in {made:.1f} s (not counted below)")
    print(f"resident size with the requests generated: {rss_mb():,.0f} MB")
    wb, zone_id = zone()
    plan = Pipeline(wb, zone_id).plan()
    print(
        f"zone: {len(FIREWALL_RULES)} firewall rules, systems {plan.systems}, "
        f"{len(plan.checks)} checks, {len(plan.expressions)} distinct expressions"
    )

    # Per request: a sample, extrapolated.
    part = traffic[:sample]
    single = Pipeline(wb, zone_id).replay(part, path="request", log=EventLog(), keep_events=False)
    per_request_rps = len(part) / single.seconds
    print(
        f"per-request path: {per_request_rps:10,.0f} req/s  (MEASURED ON {len(part):,} requests; "
        f"{n:,} would take about {n / per_request_rps:,.0f} s, EXTRAPOLATED)"
    )

    times = []
    stats: dict[str, Any] = {}
    for run in range(runs):
        log = EventLog()
        result = Pipeline(wb, zone_id).replay(traffic, log=log, keep_events=False)
        times.append(result.seconds)
        stats = result.stats
        print(
            f"  whole-table run {run + 1}: {result.seconds:8.1f} s  "
            f"{n / result.seconds:10,.0f} req/s  {log.count():,} events"
        )
        del log, result
    table_rps = n / statistics.median(times)
    print(f"whole-table path over {n:,} requests: {spread(times)}  ({table_rps:,.0f} req/s median)")
    seconds = stats.get("seconds", {})
    share = ", ".join(f"{k} {v:,.1f} s" for k, v in seconds.items())
    # DuckDB's checks (sql) run on a worker thread beside the main thread's steps
    # (wait: the main thread waiting for them), so the steps add up to more than the run.
    print(f"  last run's time by step (sql beside the rest): {share}")
    print(
        f"  fallbacks: {stats.get('rows_left_out', 0)} rows left out of the table, "
        f"{stats.get('checks_without_sql', 0)} checks without SQL, "
        f"{stats.get('guarded_cells', 0):,} guarded (row, check) cells"
    )
    print(f"ratio whole-table / per-request: {table_rps / per_request_rps:,.1f}x")
    projected = statistics.median(times) * 1_000_000 / n
    aim = "met" if projected < 60 else "NOT met"
    scaled = "" if n == 1_000_000 else f" (projected from {n:,} requests: {projected:,.0f} s)"
    print(f"aim (1,000,000 requests under 60 s on 2 cores): {aim} here{scaled}")
    print(f"peak resident size of the process: {peak_mb():,.0f} MB")


QUERIES: list[tuple[str, Callable[[EventLog], Any]]] = [
    ("new_allows_old_blocked", new_allows_old_blocked),
    ("legit_blocked_by_new", legit_blocked_by_new),
    ("top_rules", top_rules),
    ("actions_over_time", lambda log: actions_over_time(log, "1 minute")),
    ("rule_comparison", rule_comparison),
]


def bench_queries(events: int, runs: int) -> None:
    log = EventLog()
    started = time.perf_counter()
    add_synthetic_events(log, events, seed=1)
    print(f"made {events:,} synthetic events in DuckDB in {time.perf_counter() - started:.1f} s")
    worst_all = 0.0
    for name, query in QUERIES:
        times, rows = [], 0
        for _ in range(runs):
            start = time.perf_counter()
            rows = len(query(log))
            times.append(time.perf_counter() - start)
        worst_all = max(worst_all, max(times))
        print(f"  {name:24s} {spread(times)}   {rows:>8,} rows")
    aim = "met" if worst_all < 1 else "NOT met"
    print(
        f"aim (each canned query under 1 s over 10,000,000 events): {aim} here (worst {worst_all:.3f} s)"
    )
    print(f"peak resident size of the process: {peak_mb():,.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="20,000 requests, 200,000 events")
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--sample", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--query-runs", type=int, default=5)
    parser.add_argument("--skip-replay", action="store_true")
    parser.add_argument("--skip-queries", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.requests, args.sample, args.events, args.runs = 20_000, 2_000, 200_000, 2
    print(f"cores: {os.cpu_count()}, load average now: {os.getloadavg()[0]:.1f}")
    if not args.skip_replay:
        bench_replay(args.requests, min(args.sample, args.requests), args.runs)
    if not args.skip_queries:
        bench_queries(args.events, args.query_runs)


if __name__ == "__main__":
    main()
