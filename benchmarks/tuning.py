"""Tuning: the paranoia/threshold sweep over 1,000,000 replayed requests, and ranking candidates.

A real what-if first (not timed): ``--real`` generated requests replayed on a
migrated Pro zone at paranoia level 4 and threshold 25. Replaying a million
requests would take minutes and is not what is measured, so the million-request
breakdown is built from it:

* ``resampled``: each of the 1,000,000 requests takes the row of matches (and
  label) of a request of the real replay, drawn with a seed. This is how a
  breakdown of real traffic looks: many requests share a row.
* ``dense``: the worst case, every request with its own row (random matches
  with the real per-rule match rates), so nothing is shared.

Then ``wb.tuning.propose`` for 100 marked requests (requests the OWASP ruleset
blocks), which decides every candidate again over the whole real replay.

    $ python benchmarks/tuning.py
    sweep of 1000000 requests (resampled, 4 levels x 5 thresholds): median ... s, worst ... s
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from workbench import Workbench
from workbench.rulesets import MANAGED_PHASE, OWASP_ID, OWASP_THRESHOLD_RULE_ID
from workbench.traffic import generate
from workbench.tuning import Breakdown

THRESHOLDS = (25, 40, 60, 10, 100)


def strict_zone() -> tuple[Workbench, str]:
    wb = Workbench(seed=0)
    zone = wb.create_zone("example.com", plan="pro")
    owasp = {
        "action": "execute",
        "expression": "true",
        "action_parameters": {
            "id": OWASP_ID,
            "overrides": {
                "rules": [{"id": OWASP_THRESHOLD_RULE_ID, "score_threshold": 25, "action": "block"}]
            },
        },
    }
    body = {"rules": [owasp]}  # OWASP alone: it decides every block, so there are 100 to mark
    wb.migration.put_entrypoint(
        zone.id, MANAGED_PHASE, body, waf_migration="pending", phase_two="1"
    )
    return wb, zone.id


def timed(fn, repeat: int) -> tuple[float, float, object]:
    seconds, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), max(seconds), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=1_000_000, help="breakdown size (1000000)")
    parser.add_argument("--real", type=int, default=5_000, help="requests really replayed (5000)")
    parser.add_argument("--marked", type=int, default=100, help="requests marked (100)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each (5)")
    args = parser.parse_args()

    wb, zone_id = strict_zone()
    start = time.perf_counter()
    w = wb.tuning.whatif(zone_id, generate(args.real, seed=1), progress=False)
    real = w.breakdown
    print(
        f"what-if of {args.real} real requests (not timed): {time.perf_counter() - start:.1f} s, "
        f"{len(real.rows)} distinct rows of {len(real.rules)} OWASP scoring rules"
    )

    rng = np.random.default_rng(0)
    pick = rng.integers(0, len(real.codes), args.requests)
    resampled = Breakdown(
        real.rules, real.rows, real.codes[pick], real.label_names, real.label_codes[pick]
    )
    rates = real.rows[real.codes].mean(axis=0)
    dense = Breakdown(
        real.rules,
        rng.random((args.requests, len(real.rules))) < rates,
        np.arange(args.requests),
        real.label_names,
        real.label_codes[pick],
    )
    for name, b in (("resampled", resampled), ("dense", dense)):
        median, worst, sweep = timed(lambda b=b: b.sweep((1, 2, 3, 4), THRESHOLDS), args.repeat)
        print(
            f"sweep of {args.requests} requests ({name}, 4 levels x {len(THRESHOLDS)} "
            f"thresholds, {len(sweep)} rows): median {median:.3f} s, worst {worst:.3f} s"
        )

    ev = w.new.events
    blocked = ev[(ev.rule_id == OWASP_THRESHOLD_RULE_ID) & (ev.action == "block")].ray_id
    marked = list(dict.fromkeys(blocked))[: args.marked]
    median, worst, found = timed(lambda: wb.tuning.propose(w, marked), max(1, args.repeat // 2))
    print(
        f"rank candidates for {len(marked)} marked requests over {args.real} replayed "
        f"({len(found)} candidates): median {median:.2f} s, worst {worst:.2f} s"
    )


if __name__ == "__main__":
    main()
