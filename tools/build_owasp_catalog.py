"""Writes the OWASP managed ruleset's catalogue from Debian's CRS 3.3.4 (``modsecurity-crs``).

Run: ``python tools/build_owasp_catalog.py`` (options: ``--rules DIR``, ``--setup FILE``,
``--out FILE``, ``--check`` to compare with the committed file instead of writing it).
The translation itself is :mod:`tools.crs_reference.translate`; this script only
reads, writes and compares. The test ``tests/rulesets/crs/test_catalog.py`` regenerates
the catalogue the same way whenever the package is installed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tools.crs_reference

from tools.crs_reference.translate import RULES_DIR, SETUP_FILE, build_catalog, dump_catalog  # noqa: E402

OUT = (
    Path(__file__).resolve().parent.parent
    / "workbench"
    / "rulesets"
    / "catalog"
    / "owasp_core.json"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", type=Path, default=RULES_DIR)
    parser.add_argument("--setup", type=Path, default=SETUP_FILE)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    if not args.rules.is_dir():
        print(f"no CRS rules in {args.rules}: apt-get install modsecurity-crs", file=sys.stderr)
        return 2
    text = dump_catalog(build_catalog(args.rules, args.setup))
    if args.check:
        same = args.out.exists() and args.out.read_text(encoding="utf-8") == text
        print("the catalogue is up to date" if same else f"{args.out} differs from the rules")
        return 0 if same else 1
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(text):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
