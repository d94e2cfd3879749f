"""Write the sample logs of notebooks/data (shop-*.ndjson, shop-session.har) for the agreement.

What they hold, and the three planted disagreements, is described in
:mod:`workbench.traffic.sample_logs`, which makes them; this script only
writes them. tests/traffic/test_sample_logs.py checks that the committed
files are what it writes now.

    $ python notebooks/build/write_sample_logs.py
    wrote notebooks/data/shop-http_requests.ndjson (62 lines)
    wrote notebooks/data/shop-firewall_events.ndjson (16 lines)
    wrote notebooks/data/shop-session.har (278 lines)

Deterministic: the same code gives the same bytes.
"""

from __future__ import annotations

from pathlib import Path

from workbench.traffic.sample_logs import sample_logs

DATA = Path(__file__).resolve().parent.parent / "data"


def main() -> None:
    for name, text in sample_logs().items():
        path = DATA / name
        path.write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote notebooks/data/{name} ({text.count(chr(10))} lines)")


if __name__ == "__main__":
    main()
