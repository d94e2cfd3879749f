"""Writes the old OWASP package from CRS 2.2.9: its program data and the regenerated package file.

Run: ``python tools/build_old_owasp_package.py`` (options: ``--repo DIR``, a git
mirror of coreruleset/coreruleset, default ``$WORKBENCH_CRS2_REPO`` or the
``fetch`` mirror; ``--tag v2.2.9``; ``--check`` to compare with the committed
files instead of writing them). It writes

* ``workbench/waf_legacy/catalog/owasp_crs2.json``: the program, the set-up's
  ``TX`` values, the phrase files, the scoring rules, provenance and notice;
* ``workbench/waf_legacy/catalog/packages.json``: ``packages.json`` with
  its OWASP package regenerated from that data (the Cloudflare package as it is).

The translation is :mod:`tools.crs_reference.translate_crs2`; this script only
reads, writes and compares. ``tests/waf_legacy/crs2/test_crs2_catalog.py``
regenerates both files the same way whenever the mirror is there.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tools.crs_reference

from tools.crs_reference.source_crs2 import TAG, checkout, default_repo, unavailable_reason  # noqa: E402
from tools.crs_reference.translate_crs2 import (  # noqa: E402
    build_packages,
    build_program,
    dump,
    severity_mismatches,
)

CATALOG = Path(__file__).resolve().parent.parent / "workbench" / "waf_legacy" / "catalog"
PROGRAM = CATALOG / "owasp_crs2.json"
PACKAGES = CATALOG / "packages.json"
OUT = CATALOG / "packages.json"


def texts(repo: Path, tag: str, packages: Path = PACKAGES) -> dict[Path, str]:
    """The two files' texts, by where they go."""
    program = build_program(checkout(repo, tag))
    current = json.loads(packages.read_text(encoding="utf-8"))
    return {PROGRAM: dump(program), OUT: dump(build_packages(program, current))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=None)
    parser.add_argument("--tag", default=TAG)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    repo = args.repo or default_repo()
    if why := unavailable_reason(repo, args.tag):
        print(why, file=sys.stderr)
        return 2
    out = texts(repo, args.tag)
    if args.check:
        stale = [p for p, t in out.items() if not p.exists() or p.read_text("utf-8") != t]
        for path in stale:
            print(f"{path} differs from what CRS {args.tag} gives")
        if not stale:
            print("the old OWASP package is up to date")
        return 1 if stale else 0
    for path, text in out.items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path} ({len(text):,} bytes)")
    program = json.loads(out[PROGRAM])
    for rule_id, severity, score in severity_mismatches(program):
        print(f"  {rule_id}: severity {severity}, adds {score}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
