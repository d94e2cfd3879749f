"""A long fuzz run of the Rules language that prints its figures instead of stopping.

It feeds the inputs of ``test_fuzz.py`` (random text, mutated corpus expressions,
generated requests) through ``compile_expression``, ``matches()`` and ``to_sql()``
and prints: inputs tried, how many compiled, requests evaluated, SQL produced,
exceptions other than the language's own (each kind with its first input), and the
slowest input with its time (the five slowest are run again, best of three, so that
a moment of a busy machine is not taken for a slow input). The exit status is 1 when any such exception was seen
or an input took a second or more.

Run: ``.venv/bin/python tests/rules_language/fuzz_survey.py --inputs 100000``
(``--seed N`` for another sequence; the same seed gives the same inputs).
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
import test_fuzz  # noqa: E402 - the inputs and the check live beside this script


def survey(inputs: int, seed: int) -> dict[str, Any]:
    """Run ``inputs`` inputs through ``test_fuzz.check`` and return the figures."""
    counts: dict[str, int] = {}
    exceptions: dict[str, list[Any]] = {}
    slowest: list[tuple[float, str, int]] = []  # the five slowest: time, input, request seed
    tried = [0]

    def one(source: str, request_seed: int) -> None:
        tried[0] += 1
        start = time.perf_counter()
        try:
            took = test_fuzz.check(source, request_seed, counts)
        except Exception as exc:  # noqa: BLE001 - counting them is the point
            seen = exceptions.setdefault(type(exc).__name__, [0, source, traceback.format_exc()])
            seen[0] += 1
            took = time.perf_counter() - start
        slowest.append((took, source, request_seed))
        slowest.sort(key=lambda item: -item[0])
        del slowest[5:]

    # Seed 0: hypothesis's own fixed sequence; another seed: another repeatable one.
    run = settings(
        max_examples=inputs,
        deadline=None,
        database=None,
        derandomize=seed == 0,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )(given(source=test_fuzz.sources, request_seed=st.integers(0, 2**32))(one))
    if seed:
        run = hypothesis_seed(seed)(run)
    run()
    # A slow input may only have met a busy machine: time the slowest again, best of three.
    retimed = [
        (min(test_fuzz.check(source, request_seed) for _ in range(3)), took, source)
        for took, source, request_seed in slowest
    ]
    return {
        "inputs": tried[0],
        "counts": counts,
        "exceptions": exceptions,
        "slowest": max(retimed, default=(0.0, 0.0, "")),
    }


def main() -> int:
    """Run the survey and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    figures = survey(args.inputs, args.seed)
    elapsed = time.perf_counter() - started
    counts = figures["counts"]
    slowest_time, first_time, slowest_source = figures["slowest"]
    others = sum(count for count, _, _ in figures["exceptions"].values())
    print(f"inputs tried:             {figures['inputs']:,}")
    print(f"compiled:                 {counts.get('compiled', 0):,}")
    print(f"requests evaluated:       {counts.get('requests', 0):,}")
    print(
        f"SQL produced:             {counts.get('sql', 0):,} "
        f"(and {counts.get('sql_untranslated', 0):,} SqlTranslationError)"
    )
    print(f"non-language exceptions:  {others:,}")
    for kind, (count, source, trace) in sorted(figures["exceptions"].items()):
        print(f"  {kind} x{count}, first for {source[:200]!r}\n{trace}")
    shown = slowest_source if len(slowest_source) <= 200 else slowest_source[:200] + "..."
    print(
        f"slowest input:            {slowest_time * 1000:.1f} ms (best of 3 re-runs; "
        f"{first_time * 1000:.1f} ms in the run) for {shown!r}"
    )
    print(f"wall time:                {elapsed:.0f} s")
    if slowest_time >= test_fuzz.SLOWEST_ALLOWED:
        print(f"slowest input in full:    {slowest_source!r}")
    return 1 if others or slowest_time >= test_fuzz.SLOWEST_ALLOWED else 0


if __name__ == "__main__":
    sys.exit(main())
