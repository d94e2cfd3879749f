"""Requests per second for creating and listing firewall rules over HTTP.

Starts ``python -m workbench serve --port 0`` in a subprocess (or uses
``--url`` with ``--email``/``--key`` for a server already running), fills the
enterprise demo zone with 1,000 rules one POST at a time, then lists them.

    $ python benchmarks/api.py
    create 1000 rules (1 per POST, inline filter): ... requests/s
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx


def start_server(seed: int) -> tuple[subprocess.Popen, str, dict[str, str], str]:
    """A subprocess server; returns it, its base URL, auth headers and the enterprise zone id."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", "serve", "--port", "0", "--seed", str(seed)],
        stdout=subprocess.PIPE,
        text=True,
    )
    lines = []
    assert proc.stdout is not None
    while not any("OpenAPI:" in line for line in lines):
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("server exited:\n" + "".join(lines))
        lines.append(line)
    text = "".join(lines)
    url = re.search(r"API at (\S+)", text).group(1)
    headers = {
        "X-Auth-Email": re.search(r"X-Auth-Email: (\S+)", text).group(1),
        "X-Auth-Key": re.search(r"X-Auth-Key:\s+(\S+)", text).group(1),
    }
    zone = re.search(r"(\w{32})\s+\S+\s+enterprise", text).group(1)
    return proc, url, headers, zone


def rate(label: str, count: int, seconds: float, extra: str = "") -> None:
    print(
        f"{label:<52} {count:>6} requests in {seconds:6.2f} s = {count / seconds:8.1f} requests/s{extra}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="base URL of a running server (default: start one)")
    parser.add_argument("--email")
    parser.add_argument("--key")
    parser.add_argument("--zone", help="zone id to fill (an enterprise zone: quota 1000)")
    parser.add_argument("--rules", type=int, default=1000)
    parser.add_argument("--lists", type=int, default=300)
    args = parser.parse_args()
    proc = None
    if args.url:
        url, zone = args.url, args.zone
        headers = {"X-Auth-Email": args.email, "X-Auth-Key": args.key}
    else:
        proc, url, headers, zone = start_server(seed=0)
    try:
        with httpx.Client(base_url=url, headers=headers, timeout=30) as client:
            path = f"/zones/{zone}/firewall/rules"
            start = time.perf_counter()
            for i in range(args.rules):
                body = [
                    {
                        "filter": {"expression": f'http.request.uri.path eq "/b/{i}"'},
                        "action": "block",
                    }
                ]
                r = client.post(path, json=body)
                assert r.status_code == 200, r.text
            rate(
                f"create {args.rules} rules (1 per POST, inline filter)",
                args.rules,
                time.perf_counter() - start,
            )

            total = client.get(path, params={"per_page": 5}).json()["result_info"]["total_count"]
            assert total >= args.rules, total
            for per_page in (25, 100):
                pages = -(-total // per_page)
                start = time.perf_counter()
                rows = 0
                for n in range(args.lists):
                    r = client.get(path, params={"page": n % pages + 1, "per_page": per_page})
                    rows += len(r.json()["result"])
                took = time.perf_counter() - start
                rate(
                    f"list rules, per_page={per_page} ({total} in the zone)",
                    args.lists,
                    took,
                    f", {rows / took:9.0f} rules/s",
                )

            start = time.perf_counter()
            for _ in range(args.lists):
                r = client.get(path, params={"per_page": 100, "action": "allow", "paused": "false"})
                assert r.status_code == 200
            rate(
                "list with query filters (action, paused)", args.lists, time.perf_counter() - start
            )

        # Eight clients at once, listing (the server serialises calls into the core).
        done = threading.Lock()
        count = [0]

        def lister(_: int) -> None:
            with httpx.Client(base_url=url, headers=headers, timeout=30) as c:
                for n in range(args.lists // 8):
                    c.get(path, params={"page": n % 10 + 1, "per_page": 100})
                    with done:
                        count[0] += 1

        start = time.perf_counter()
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lister, range(8)))
        rate("list rules, per_page=100, 8 client threads", count[0], time.perf_counter() - start)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
