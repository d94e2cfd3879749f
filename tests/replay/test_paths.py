"""The per-request and whole-table replays give exactly the same events."""

from __future__ import annotations

import pytest
from traffic_helpers import workbench_with_zone

from workbench import Workbench
from workbench.replay import Pipeline
from workbench.rulesets import CLOUDFLARE_MANAGED_ID, MANAGED_PHASE, OWASP_ID
from workbench.traffic.generators import generate
from workbench.traffic.placements import placements
from workbench.traffic.request import Request

# Requests the generators do not make: text that is not UTF-8 (DuckDB cannot hold it),
# decodings to bytes that are not UTF-8, and a query only url_decode's "u" option reads.
ODD = [
    Request("GET", b"https://example.com/caf\xe9/..%c0%af..%c0%afetc/passwd", label="traversal"),
    Request(
        "POST",
        "https://example.com/f",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        body=b"q=\xff\xfe union select 1",
        label="sqli",
    ),
    Request("GET", "https://example.com/?q=%u0025u0041", label="benign"),
    Request(
        "GET", "https://example.com/x", headers={"X-Api": "${jndi:ldap://%c0%ae}"}, label="cmdi"
    ),
    Request("GET", "https://example.com/%25c0%25ae%25c0%25ae/win.ini", label="traversal"),
]


def _both(build, requests, **options):
    runs = []
    for path in ("table", "request"):
        wb, zone_id = build()
        runs.append(Pipeline(wb, zone_id).replay(requests, path=path, progress=False, **options))
    return runs


def test_both_paths_agree_on_ten_thousand_generated_requests():
    requests = generate(10_000, seed=42) + ODD
    table, single = _both(workbench_with_zone, requests, chunk_size=4_000)
    assert table.systems == ["fw", "new", "old"]
    assert table.ray_ids == single.ray_ids and table.times_ms == single.times_ms
    assert table.actions == single.actions
    assert table.events.equals(single.events)
    # The run exercised every fallback of the whole-table path, and every system acted.
    assert table.stats["rows_left_out"] >= 2
    # Decoders give byte views that these checks read exactly: no guard, no row sent back
    # (tests/replay/test_guards.py exercises guards on checks that need them).
    assert table.stats["guarded_cells"] == 0
    # url_decode's "u" option has a SQL translation now (sql_decode), so every check has SQL.
    assert table.stats["checks_without_sql"] == 0
    assert set(table.events.source) == {"firewallRules", "firewallManaged", "waf"}
    assert {"block", "log", "bypass", "allow", "challenge"} <= set(table.events.action)
    assert len(table.events) > 3_000


def _real_catalogs():
    wb = Workbench(seed=9)
    zone = wb.create_zone("example.com", plan="enterprise")
    wb.firewall.create_rules(
        zone.id,
        [
            {
                "filter": {"expression": 'http.request.uri.path contains "/api/"'},
                "action": "bypass",
                "products": ["waf"],
            },
            {"filter": {"expression": 'http.request.method eq "POST"'}, "action": "log"},
        ],
    )
    wb.rulesets.put_entrypoint(
        zone.id,
        MANAGED_PHASE,
        {
            "rules": [
                {"action": "execute", "expression": "true", "action_parameters": {"id": i}}
                for i in (CLOUDFLARE_MANAGED_ID, OWASP_ID)
            ]
        },
    )
    wb.waf_legacy.enabled(zone.id)  # loads the old catalogue now, so a broken one skips the test
    return wb, zone.id


def test_both_paths_agree_through_the_real_catalogues():
    try:
        _real_catalogs()
    except Exception as exc:  # the catalogues are written apart; test them once they load
        pytest.skip(f"the real catalogues do not load yet: {exc}")
    table, single = _both(_real_catalogs, generate(600, seed=43) + ODD)
    assert table.actions == single.actions
    assert table.events.equals(single.events)


# Spellings from public payload lists that decode to bytes that are not UTF-8, or that only
# the newer catalogue patterns read (dotdotpwn's encodings, entity-split URIs, bare commands).
ENCODED = [
    "..%f8%80%80%80%af..%f8%80%80%80%afetc%f8%80%80%80%afpasswd",
    "%c0%2e%c0%2e%c0%2f%c0%2e%c0%2e%c0%2fetc%c0%2fpasswd",
    "..%uF025..%uF025etc%uF025passwd",
    "0x2e0x2e0x2f0x2e0x2e0x2fetc0x2fpasswd",
    "..%%32%%66..%%32%%66etc%%32%%66passwd",
    "<a href=javascript&colon;alert&lpar;document&period;cookie&rpar;>x</a>",
    '<!--#exec cmd="/usr/bin/id;-->',
    "ipconfig /all",
]


def test_both_paths_agree_on_encoded_public_payloads():
    requests = [raw for i, payload in enumerate(ENCODED) for raw in placements(payload, i)]
    table, single = _both(_real_catalogs, requests)
    assert table.actions == single.actions
    assert table.events.equals(single.events)
    # Every one of them is seen by the managed rules on both paths.
    managed = table.events[table.events.source == "firewallManaged"]
    assert managed.ray_id.nunique() == len(requests)
