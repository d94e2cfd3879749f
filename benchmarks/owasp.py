"""Benchmark: the workbench's CRS engine against libmodsecurity running the real CRS 3.3.4, rule for rule and in speed.

Run: ``python benchmarks/owasp.py`` (a few minutes; ``--quick`` for one run
on a smaller corpus, at paranoia level 1 unless ``--levels`` is given). Options: ``--levels 1,2,4``,
``--runs N``, ``--generated N`` (generated requests), ``--seed N``,
``--built N`` (built payloads per class), ``--worst N``. Needs the test
dependency ``libmodsecurity`` and Debian's ``modsecurity-crs``
(:func:`tools.crs_reference.oracle.available`).

The corpus (:mod:`tools.crs_reference.corpus`): the CRS project's
regression tests at v3.3.4 (one request a stage), ``--generated`` requests
of the seeded traffic generator, and payloads (the detection tests' public
lists and ``--built`` composed ones a class) in a query, a form and a JSON
body. Prints, for each paranoia level:

* the oracle's own pass rate on the regression tests' expectations (all
  stages, and the stages whose expected rules are at or below the level);
* the agreement of the engine's fired CRS rules with the oracle's
  (:mod:`tools.crs_reference.agreement`): pair recall and precision over
  rules 911000-944999, the share of requests with the same fired set,
  decision agreement at thresholds 5, 25, 40 and 60 (the engine's decisions
  score its fired rules with ``engine.scores``; the oracle's come from its
  reported totals, which count a rule once per matched variable), the worst
  rules; then recall, precision and equal sets per source;
* the speed of each, in requests per CPU-second (``time.process_time``,
  median and worst of ``--runs`` passes over the corpus), and the ratio
  engine / oracle.

When ``workbench.rulesets.crs.runtime`` does not import yet, says so and
prints the oracle's figures alone. Requests on which the oracle raises
(logdata that is not UTF-8) are counted and left out of the comparison.

Then the same for the old WAF's OWASP package, CRS 2.2.9 in anomaly mode
(:mod:`workbench.rulesets.crs.runtime_crs2` against libmodsecurity with CRS
2.2.9, :mod:`tools.crs_reference.oracle_crs2`), at each old sensitivity
(High 25, Medium 40, Low 60): pair recall and precision over the package's
rules, the share of requests with the same fired set, and decision agreement
with 981176, as the old engine decides (each fired rule's score once) and as
the program's anomaly score decides; per source; and the speed of each.
``--old-only`` runs this part alone, ``--no-old`` leaves it out. It needs the
CRS 2.2.9 source (a git mirror, ``$WORKBENCH_CRS2_REPO``) and says so when
it is absent.

With ``--table N`` (default 20,000; 0 leaves it out), the whole-table path at
PL2: ``N`` generated requests replayed through a zone whose only rule executes
the OWASP ruleset at PL2 (``Pipeline.replay(path="table")``, the CRS programs
in worker processes, one per core), in requests per wall-second; beside it
libmodsecurity at PL2 on the same requests, in requests per CPU-second times
the cores (what it would do on every core of this machine). The workbench's
rate is over a fresh Workbench each run (its workers' memos warm after the
first).

Aims: the engine's per-request path at least as fast as libmodsecurity
(ratio >= 1 at every level); the whole-table path at least 10 times
libmodsecurity at PL2. Recorded here only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

os.environ.setdefault("WORKBENCH_PROGRESS", "0")
# The CRS reference (libmodsecurity, the corpus, the figures) lives in tools/, beside the package.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tools.crs_reference import oracle as oracle_module  # noqa: E402
from tools.crs_reference import oracle_crs2  # noqa: E402
from tools.crs_reference.agreement import compare, rule_levels, rule_scores  # noqa: E402
from tools.crs_reference.agreement_crs2 import compare_crs2, table  # noqa: E402
from tools.crs_reference.corpus import (  # noqa: E402
    CorpusRequest,
    generated_requests,
    payload_requests,
    regression_corpus,
)
from workbench.rulesets.crs.request import RawRequest  # noqa: E402


def load_engine() -> tuple[Any, str]:
    """The CrsEngine class, or None and why it is not there."""
    try:
        from workbench.rulesets.crs.runtime import CrsEngine
    except ImportError as exc:
        return None, f"{type(exc).__name__}: {exc}"
    return CrsEngine, ""


def source_of(request: RawRequest) -> str:
    if request.id.startswith("generated-"):
        return "generated"
    if request.id.startswith("payload-"):
        return "payloads"
    return "regression"


def speed(
    run: Callable[[RawRequest], Any], requests: Sequence[RawRequest], runs: int
) -> tuple[str, list[float]]:
    """Requests per CPU-second over ``runs`` passes: median and worst."""
    rates = []
    for _ in range(runs):
        started = time.process_time()
        for r in requests:
            run(r)
        rates.append(len(requests) / max(time.process_time() - started, 1e-9))
    return f"median {statistics.median(rates):8,.0f}   worst {min(rates):8,.0f} req/CPU-s", rates


@contextmanager
def quiet_stderr() -> Iterator[None]:
    """libxml2 prints XML body parse errors on file descriptor 2: hidden while the oracle runs."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def safe(run: Callable[[RawRequest], Any]) -> Callable[[RawRequest], Any]:
    def call(r: RawRequest) -> Any:
        try:
            return run(r)
        except Exception:  # timed passes go on; failures are counted elsewhere
            return None

    return call


def pass_rate(
    corpus: list[CorpusRequest],
    fired: dict[str, frozenset[int]],
    level: int,
    levels: dict[int, int],
) -> str:
    ran = [c for c in corpus if c.request.id in fired]
    ok = [c for c in ran if c.passes(fired[c.request.id])]
    mine = [c for c in ran if all(levels.get(i, 1) <= level for i in c.expect)]
    mine_ok = [c for c in mine if c.passes(fired[c.request.id])]
    return (
        f"{len(ok):,} / {len(ran):,} stages ({len(ok) / max(len(ran), 1):.2%}); "
        f"of those whose expected rules are at PL{level} or below: {len(mine_ok):,} / "
        f"{len(mine):,} ({len(mine_ok) / max(len(mine), 1):.2%})"
    )


def bench_level(
    level: int,
    corpus: list[CorpusRequest],
    requests: list[RawRequest],
    engine_class: Any,
    runs: int,
    worst: int,
    crs_scores: dict[int, int],
    levels: dict[int, int],
) -> None:
    print(f"\n=== paranoia level {level} ===")
    oracle = oracle_module.Oracle(paranoia_level=level)
    results: dict[str, Any] = {}
    raised: Counter[str] = Counter()
    with quiet_stderr():
        for r in requests:
            try:
                results[r.id] = oracle.run(r)
            except Exception as exc:  # counted and reported
                raised[type(exc).__name__] += 1
    if raised:
        print(f"the oracle raised on {sum(raised.values())} requests ({dict(raised)}): left out")
    fired = {k: v.rule_ids for k, v in results.items()}
    print(f"oracle on the CRS regression expectations: {pass_rate(corpus, fired, level, levels)}")
    with quiet_stderr():
        text, oracle_rates = speed(safe(oracle.run), requests, runs)
    print(f"oracle (libmodsecurity) speed:  {text}")

    if engine_class is None:
        return
    engine = engine_class(paranoia_level=level)
    compared = [r for r in requests if r.id in results]
    ours: list[set[int]] = []
    failures: Counter[str] = Counter()
    for r in compared:
        try:
            ours.append(set(engine.fired(r)))
        except Exception as exc:  # counted and reported
            failures[f"{type(exc).__name__}: {str(exc)[:80]}"] += 1
            ours.append(set())
    if failures:
        print(
            f"the engine raised on {sum(failures.values())} requests (counted as firing nothing):"
        )
        for why, n in failures.most_common(5):
            print(f"  {n:6d}  {why}")
    theirs = [results[r.id].rule_ids for r in compared]
    totals = [results[r.id].reported_score or 0 for r in compared]
    scores = dict(getattr(engine, "scores", None) or crs_scores)
    agreement = compare(ours, theirs, scores, oracle_totals=totals, label=f"PL{level}")
    print(agreement.table(worst=worst))
    for source in ("regression", "generated", "payloads"):
        picked = [k for k, r in enumerate(compared) if source_of(r) == source]
        if picked:
            part = compare([ours[k] for k in picked], [theirs[k] for k in picked], scores, ())
            print(
                f"  {source:10s} {len(picked):6,d} requests: recall {part.recall:7.2%}  "
                f"precision {part.precision:7.2%}  same set {part.equal_share:7.2%}"
            )
    engine_fired = {r.id: frozenset(s) for r, s in zip(compared, ours, strict=True)}
    print(
        f"engine on the CRS regression expectations: {pass_rate(corpus, engine_fired, level, levels)}"
    )
    text, engine_rates = speed(safe(engine.fired), requests, runs)
    print(f"engine (workbench) speed:       {text}")
    ratio = statistics.median(engine_rates) / statistics.median(oracle_rates)
    aim = "met" if ratio >= 1 else "NOT met"
    print(f"ratio engine / oracle (medians): {ratio:.2f}x  (aim >= 1: {aim})")


def bench_old_package(requests: list[RawRequest], runs: int, worst: int) -> None:
    """The old OWASP package (CRS 2.2.9) against libmodsecurity at its three sensitivities."""
    print("\n=== old OWASP package: CRS 2.2.9, anomaly mode ===")
    if why := oracle_crs2.oracle_unavailable_reason():
        print(f"not measured: {why}")
        return
    from workbench.rulesets.crs.runtime_crs2 import THRESHOLDS, Crs2Engine

    engine = Crs2Engine()
    ours: list[set[int]] = []
    totals: list[int] = []
    failures: Counter[str] = Counter()
    for r in requests:
        try:
            fired, total = engine.outcome(r)
        except Exception as exc:  # counted and reported
            failures[f"{type(exc).__name__}: {str(exc)[:80]}"] += 1
            fired, total = set(), 0
        ours.append(fired)
        totals.append(total)
    if failures:
        print(f"the engine raised on {sum(failures.values())} requests (counted as firing nothing)")
    figures = []
    oracle = None
    for sensitivity, threshold in THRESHOLDS.items():
        oracle = oracle_crs2.Crs2Oracle(threshold)
        with quiet_stderr():
            results = [oracle.replay(r) for r in requests]
        figures.append(compare_crs2(ours, totals, results, engine.scores, sensitivity, threshold))
        if sensitivity == "high":
            for source in ("regression", "generated", "payloads"):
                picked = [k for k, r in enumerate(requests) if source_of(r) == source]
                if not picked:
                    continue
                part = compare_crs2(
                    [ours[k] for k in picked],
                    [totals[k] for k in picked],
                    [results[k] for k in picked],
                    engine.scores,
                    sensitivity,
                    threshold,
                )
                print(
                    f"  {source:10s} {len(picked):6,d} requests: recall {part.recall:7.2%}  "
                    f"precision {part.precision:7.2%}  same set {part.equal_share:7.2%}  "
                    f"decisions at 25: package {part.package.share:7.2%}  "
                    f"program {part.program.share:7.2%}"
                )
    print(table(figures, worst=worst))
    assert oracle is not None
    with quiet_stderr():
        text, oracle_rates = speed(safe(oracle.replay), requests, runs)
    print(f"oracle (libmodsecurity, CRS 2.2.9) speed: {text}")
    text, engine_rates = speed(safe(engine.outcome), requests, runs)
    print(f"engine (workbench, CRS 2.2.9) speed:      {text}")
    ratio = statistics.median(engine_rates) / statistics.median(oracle_rates)
    print(f"ratio engine / oracle (medians): {ratio:.2f}x")


def bench_table(n: int, seed: int, runs: int) -> None:
    """The whole-table path at PL2 beside libmodsecurity on every core (see the docstring)."""
    from workbench import Workbench
    from workbench.replay import Pipeline
    from workbench.rulesets import MANAGED_PHASE, OWASP_ID
    from workbench.rulesets.crs.request import raw_from_request
    from workbench.rulesets.overrides import paranoia_categories
    from workbench.traffic.generators import generate
    from workbench.traffic.request import Request

    cores = os.cpu_count() or 1
    print(
        f"\n=== whole-table path at PL2: {n:,} generated requests (seed {seed}), {cores} cores ==="
    )
    traffic = generate(n, seed=seed)
    execute = {
        "action": "execute",
        "expression": "true",
        "action_parameters": {
            "id": OWASP_ID,
            "overrides": {"categories": paranoia_categories(2)},
        },
    }
    rates = []
    for _ in range(runs + 1):  # the first run warms the workers (imports, memos): not counted
        wb = Workbench(seed=seed)
        zone = wb.create_zone("bench.example", plan="enterprise")
        wb.rulesets.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": [execute]})
        started = time.perf_counter()
        Pipeline(wb, zone.id).replay(traffic, path="table", progress=False)
        rates.append(n / (time.perf_counter() - started))
    rates = rates[1:]
    print(
        f"workbench whole-table: median {statistics.median(rates):8,.0f}   "
        f"worst {min(rates):8,.0f} req/s (wall, {cores} cores)"
    )
    oracle = oracle_module.Oracle(paranoia_level=2)
    raws = [raw_from_request(Request.from_raw(r)) for r in traffic]
    with quiet_stderr():
        _, oracle_rates = speed(safe(oracle.run), raws, runs)
    every_core = statistics.median(oracle_rates) * cores
    print(
        f"libmodsecurity:        median {statistics.median(oracle_rates):8,.0f} req/CPU-s, "
        f"{every_core:8,.0f} req/s on {cores} cores"
    )
    ratio = statistics.median(rates) / every_core
    print(
        f"ratio whole-table / libmodsecurity on every core: {ratio:.2f}x  (aim >= 10: "
        f"{'met' if ratio >= 10 else 'NOT met'})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--levels", default=None, help="paranoia levels, comma-separated (1,2,4)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--generated", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--built", type=int, default=25, help="built payloads per class")
    parser.add_argument("--worst", type=int, default=15)
    parser.add_argument(
        "--quick", action="store_true", help="one run, 200 generated, PL1 unless --levels"
    )
    parser.add_argument("--no-old", action="store_true", help="leave out the old package")
    parser.add_argument("--old-only", action="store_true", help="the old package alone")
    parser.add_argument(
        "--table", type=int, default=20_000, help="generated requests for the whole-table path"
    )
    args = parser.parse_args()
    if args.quick:
        args.levels, args.runs, args.generated, args.built = args.levels or "1", 1, 200, 5
        args.table = min(args.table, 5_000)
    args.levels = args.levels or "1,2,4"
    if not args.old_only and not oracle_module.available():
        raise SystemExit(f"no oracle: {oracle_module.unavailable_reason()}")
    engine_class, why = load_engine()
    if engine_class is None:
        print(f"the workbench CRS engine is not built yet ({why}): the oracle's figures alone")

    corpus = regression_corpus()
    generated = generated_requests(args.generated, seed=args.seed)
    payloads = payload_requests(per_class=args.built, seed=args.seed)
    requests = [c.request for c in corpus] + generated + payloads
    mean = sum(
        len(r.uri) + len(r.body) + sum(len(k) + len(v) for k, v in r.headers) for r in requests
    )
    print(
        f"corpus: {len(requests):,} requests ({len(corpus):,} CRS 3.3.4 regression stages, "
        f"{len(generated):,} generated with seed {args.seed}, {len(payloads):,} payload requests); "
        f"{mean / max(len(requests), 1):,.0f} bytes a request on average"
    )
    if not args.old_only:
        crs_scores = rule_scores()
        levels = rule_levels()
        for level in (int(x) for x in args.levels.split(",") if x.strip()):
            bench_level(
                level, corpus, requests, engine_class, args.runs, args.worst, crs_scores, levels
            )
    if not args.no_old:
        bench_old_package(requests, args.runs, args.worst)
    if args.table and not args.old_only:
        bench_table(args.table, args.seed, args.runs)


if __name__ == "__main__":
    main()
