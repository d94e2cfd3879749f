"""Write notebooks/data/pro-zone-access.log and pro-zone-labels.csv for notebook 05.

The log is a week-day morning of a Pro zone (``blog.example``) in the nginx
combined log format: 600 seeded generated requests (benign, API, bots and the
attack classes of :mod:`workbench.traffic.generators`), re-hosted on the
zone, plus a few editors of the blog previewing security articles whose text
quotes HTML, SQL and shell (benign, but the OWASP ruleset scores them high).
The combined format keeps no host, no body and no verdict: the labels file
is the team's triage of each line (``line,label``), so the notebook can count
what an exception would let through.

    $ python notebooks/build/write_pro_zone_log.py
    wrote notebooks/data/pro-zone-access.log (606 lines) and notebooks/data/pro-zone-labels.csv

Deterministic: the same seed gives the same bytes.
"""

from __future__ import annotations

import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote_plus, urlsplit

from workbench.traffic.generators import generate

DATA = Path(__file__).resolve().parent.parent / "data"
LOG, LABELS = DATA / "pro-zone-access.log", DATA / "pro-zone-labels.csv"
HOST = "blog.example"
START = datetime(2026, 11, 12, 9, 0, tzinfo=UTC)
EDITOR_UA = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.5 Safari/605.1.15"
)
# Drafts the blog's editors preview: articles about web security quote attack text.
ARTICLES = [
    (
        "Bound parameters, finally",
        "<p>We changed <code>select * from orders where id='1' or '1'='1'</code> to a bound "
        'parameter; <iframe src="https://video.example/embed/42"></iframe></p>',
    ),
    (
        "Bound parameters, finally",
        "<p>We changed <code>select * from orders where id='1' or '1'='1'</code> to a bound "
        'parameter (the talk: <iframe src="https://video.example/embed/42"></iframe>).</p>'
        "<p>Thanks to the reader who found it.</p>",
    ),
    (
        "What an XSS looks like",
        "<p>An attacker posts <img src=x onerror=alert(document.cookie)> and it runs in "
        "every reader's browser.</p>",
    ),
]


def _escape(text: str) -> str:
    """A quoted field as nginx writes it: quotes, backslashes and control bytes escaped."""
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    return "".join(f"\\x{ord(c):02X}" if ord(c) < 0x20 or ord(c) == 0x7F else c for c in text)


def _target(text: str) -> str:
    """A request target as it crossed the wire: whitespace and control bytes percent-encoded."""
    return "".join(f"%{ord(c):02X}" if ord(c) <= 0x20 or ord(c) == 0x7F else c for c in text)


def _line(ip: str, when: datetime, method: str, target: str, referer: str, agent: str) -> str:
    stamp = when.strftime("%d/%b/%Y:%H:%M:%S +0000")
    size = 512 + (sum(map(ord, target)) % 9000)
    return (
        f'{ip} - - [{stamp}] "{_escape(method)} {_escape(target)} HTTP/1.1" 200 {size} '
        f'"{_escape(referer or "-")}" "{_escape(agent or "-")}"'
    )


def lines(seed: int = 5) -> list[tuple[str, str]]:
    """(log line, label) pairs in time order."""
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    when = START
    editors = {rng.randrange(40, 560): i for i in range(len(ARTICLES))}
    for n, raw in enumerate(generate(600, seed=seed)):
        when += timedelta(milliseconds=rng.randrange(200, 4000))
        parts = urlsplit(raw.url)
        target = _target((parts.path or "/") + (f"?{parts.query}" if parts.query else ""))
        headers = {k.lower(): v for k, v in raw.headers.items()}
        out.append(
            (
                _line(
                    raw.client_ip,
                    when,
                    raw.method,
                    target,
                    headers.get("referer", ""),
                    headers.get("user-agent", ""),
                ),
                raw.label,
            )
        )
        if n in editors:
            title, body = ARTICLES[editors[n]]
            post = 800 + int(title != ARTICLES[0][0])
            target = (
                f"/wp-admin/post.php?post={post}&action=preview"
                f"&title={quote_plus(title)}&content={quote_plus(body)}"
            )
            referer = f"https://{HOST}/wp-admin/post.php?post={post}&action=edit"
            out.append((_line("198.51.100.23", when, "GET", target, referer, EDITOR_UA), "benign"))
    return out


def main() -> int:
    pairs = lines()
    DATA.mkdir(exist_ok=True)
    LOG.write_text("".join(line + "\n" for line, _ in pairs), encoding="utf-8")
    LABELS.write_text(
        "line,label\n" + "".join(f"{i},{lab}\n" for i, (_, lab) in enumerate(pairs, 1)),
        encoding="utf-8",
    )
    print(
        f"wrote {LOG.relative_to(Path.cwd())} ({len(pairs)} lines) and {LABELS.relative_to(Path.cwd())}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
