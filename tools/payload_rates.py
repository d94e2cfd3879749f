r"""Detection rates of the new managed rulesets on public payload lists, file by file.

Each line of each list (blank lines and ``#`` comments left out; at most ``--cap``
lines a file, a seeded sample) is sent three ways, as the detection tests send
theirs: in a query argument, a form body and a JSON body. The requests replay
through a zone whose managed phase executes the Cloudflare Managed Ruleset and the
OWASP Core Ruleset as a migration of a default zone configures them (paranoia level
2, threshold 40), on the whole-table path. *Flagged*: at least one managed-rule
event; *blocked*: the request's final action is ``block``.

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
import json
import os
import random
from collections import Counter
from pathlib import Path
from urllib.parse import quote, quote_plus

os.environ.setdefault("WORKBENCH_PROGRESS", "0")

from workbench import Workbench  # noqa: E402
from workbench.migration.mapping import owasp_parameters  # noqa: E402
from workbench.rulesets import CLOUDFLARE_MANAGED_ID, MANAGED_PHASE  # noqa: E402
from workbench.traffic.pipeline import Pipeline  # noqa: E402
from workbench.traffic.request import Request  # noqa: E402

UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/124.0.0.0 Safari/537.36"


def placements(payload: str, n: int) -> list[Request]:
    """``payload`` in a query argument, a form body and a JSON body."""
    headers = {"Host": "www.example.com", "User-Agent": UA, "Accept": "*/*"}
    form = dict(headers, **{"Content-Type": "application/x-www-form-urlencoded"})
    js = dict(headers, **{"Content-Type": "application/json"})
    base = "https://www.example.com"
    return [
        Request("GET", f"{base}/item?id={n}&q={quote(payload, safe='')}", headers),
        Request("POST", f"{base}/submit", form, f"name={quote_plus(payload)}&x=1"),
        Request("POST", f"{base}/api/v1/items", js, json.dumps({"value": payload})),
    ]


def zone() -> tuple[Workbench, str]:
    """A zone with both managed rulesets deployed at paranoia level 2, threshold 40."""
    wb = Workbench(seed=1)
    z = wb.create_zone("example.com", plan="enterprise")
    owasp = owasp_parameters({"sensitivity": "high", "action_mode": "block"})
    wb.rulesets.put_entrypoint(
        z.id,
        MANAGED_PHASE,
        {
            "rules": [
                {"action": "execute", "expression": "true", "action_parameters": params}
                for params in ({"id": CLOUDFLARE_MANAGED_ID}, owasp)
            ]
        },
    )
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
            )
            total.update(counts)
            print(f"  {Path(path).name[:56]:56s} {_rates(counts)}")
        if total["n"]:
            print(f"{cls}: {_rates(total)}\n")


def _rates(c: Counter[str]) -> str:
    return (
        f"n={c['n']:6d}  flagged {c['flagged'] / c['n']:6.1%}  blocked {c['blocked'] / c['n']:6.1%}"
    )


if __name__ == "__main__":
    main()
