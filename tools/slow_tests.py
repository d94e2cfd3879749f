"""Write ``tests/slow.txt``, the test files ``make check`` leaves out, from a durations report.

Run the suite with every duration reported, then this tool on the report:

    .venv/bin/python -m pytest tests --durations=0 -q -p no:cacheprovider > /tmp/durations.txt
    .venv/bin/python tools/slow_tests.py /tmp/durations.txt [--budget 150]

Each test's time (set-up, call and tear-down) is added to its file's; the
slowest files are marked slow, whole (a module's fixtures would otherwise move
their set-up to the next test), until the rest fits ``--budget`` seconds. The
20 slowest tests are printed, for the closing note. ``tests/conftest.py`` marks
every test of a listed file ``slow``; browser tests are left out of the quick
tier by their own marker and are not listed.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SLOW_LIST = ROOT / "tests" / "slow.txt"
LINE = re.compile(r"^\s*([\d.]+)s\s+(setup|call|teardown)\s+(\S+)")
HEADER = """\
# Test files `make check` leaves out (marked `slow` by tests/conftest.py): the slowest files
# of the suite, whole, until the rest runs in the quick tier's budget. `make test` and CI run
# them all. Regenerate with tools/slow_tests.py from a `pytest --durations=0` report.
"""


def read_report(text: str) -> dict[str, float]:
    """Each test's seconds (set-up, call and tear-down together), by node id."""
    out: dict[str, float] = defaultdict(float)
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            out[m.group(3)] += float(m.group(1))
    return dict(out)


def slow_files(tests: dict[str, float], budget: float) -> tuple[list[str], float]:
    """The files to leave out (slowest first) and the seconds the rest takes."""
    files: dict[str, float] = defaultdict(float)
    for node, seconds in tests.items():
        path = node.split("::", 1)[0]
        if path.startswith("tests/") and not path.startswith("tests/browser/"):
            files[path] += seconds
    left = sum(files.values())
    out = []
    for path, seconds in sorted(files.items(), key=lambda kv: -kv[1]):
        if left <= budget:
            break
        out.append(path)
        left -= seconds
    return out, left


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--budget", type=float, default=150.0, help="seconds for the quick tier")
    args = parser.parse_args()
    tests = read_report(args.report.read_text(encoding="utf-8"))
    if not tests:
        raise SystemExit(f"{args.report}: no durations (run pytest with --durations=0)")
    print("the 20 slowest tests:")
    for node, seconds in sorted(tests.items(), key=lambda kv: -kv[1])[:20]:
        print(f"  {seconds:8.1f} s  {node}")
    files, left = slow_files(tests, args.budget)
    SLOW_LIST.write_text(HEADER + "".join(f"{f}\n" for f in sorted(files)), encoding="utf-8")
    print(
        f"{len(files)} files marked slow in {SLOW_LIST.relative_to(ROOT)}; the rest: {left:.0f} s"
    )


if __name__ == "__main__":
    main()
