r"""Detection rates of the new managed rulesets on public payload lists, file by file.

Each line of each list (blank lines and ``#`` comments left out; at most ``--cap``
lines a file, a seeded sample) is sent three ways, as the detection tests send
theirs (:func:`workbench.traffic.placements.placements`): in a query argument, a
form body and a JSON body. The requests replay on the whole-table path through a
new Enterprise zone whose managed phase holds what its migration would deploy by
default (the Cloudflare Managed Ruleset; the OWASP Core Ruleset at paranoia level
2, threshold 40). *Flagged*: at least one managed-rule event; *blocked*: the
request's final action is ``block``; *stopped*: ``block`` or a challenge (the
OWASP ruleset's default action). Lists are sampled in the order given, so the
same arguments give the same figures.

    .venv/bin/python tools/payload_rates.py \
        "sqli=/path/PayloadsAllTheThings/SQL Injection/Intruder/*" \
        "traversal=/path/PayloadsAllTheThings/Directory Traversal/Intruder/*"

A checkout of a public repository of lists (PayloadsAllTheThings, SecLists) gives
the files; lists of single words (event handler names, charset names) are not
attacks on their own and read low.
"""

from __future__ import annotations

import argparse
import glob
import os
import random
from collections import Counter
from pathlib import Path

os.environ.setdefault("WORKBENCH_PROGRESS", "0")

from workbench import Workbench  # noqa: E402
from workbench.replay import Pipeline  # noqa: E402
from workbench.rulesets import MANAGED_PHASE  # noqa: E402
from workbench.traffic.placements import placements  # noqa: E402
from workbench.tuning.whatif import stops  # noqa: E402


def zone() -> tuple[Workbench, str]:
    """A new Enterprise zone with the managed rulesets its migration would deploy by default
    (``wb.migration.review``: the Cloudflare Managed Ruleset, and the OWASP Core Ruleset at
    paranoia level 2, threshold 40, action challenge)."""
    wb = Workbench(seed=1)
    z = wb.create_zone("example.com", plan="enterprise")
    wb.rulesets.put_entrypoint(z.id, MANAGED_PHASE, wb.migration.review(z.id).config)
    return wb, z.id


def lines_of(path: str, cap: int, rng: random.Random) -> list[str]:
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = [s.rstrip("\r\n") for s in f if s.strip() and not s.startswith("#")]
    return rng.sample(lines, cap) if len(lines) > cap else lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("lists", nargs="+", help="CLASS=GLOB: the files of one attack class")
    parser.add_argument("--cap", type=int, default=300, help="lines sampled per file")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    wb, zone_id = zone()
    pipe = Pipeline(wb, zone_id, systems="new")
    for spec in args.lists:
        cls, _, pattern = spec.partition("=")
        total: Counter[str] = Counter()
        for path in sorted(glob.glob(pattern)):
            requests = [
                r for i, p in enumerate(lines_of(path, args.cap, rng)) for r in placements(p, i)
            ]
            if not requests:
                continue
            run = pipe.replay(requests, progress=False)
            managed = run.events[run.events.source == "firewallManaged"]
            flagged = set(managed.ray_id)
            counts = Counter(
                n=len(requests),
                flagged=sum(ray in flagged for ray in run.ray_ids),
                blocked=sum(action == "block" for action in run.actions),
                stopped=sum(map(stops, run.actions)),
            )
            total.update(counts)
            print(f"  {Path(path).name[:56]:56s} {_rates(counts)}")
        if total["n"]:
            print(f"{cls}: {_rates(total)}\n")


def _rates(c: Counter[str]) -> str:
    return (
        f"n={c['n']:6d}  flagged {c['flagged'] / c['n']:6.1%}  blocked {c['blocked'] / c['n']:6.1%}"
        f"  stopped {c['stopped'] / c['n']:6.1%}"
    )


if __name__ == "__main__":
    main()
