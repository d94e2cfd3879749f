"""An OWASP event says what each contributing rule matched in its request, on both replay paths."""

from __future__ import annotations

import json

import pytest

from workbench import Workbench
from workbench.replay import Pipeline
from workbench.rulesets import MANAGED_PHASE, OWASP_ID
from workbench.rulesets.crs.explain import VALUE_LIMIT, crs_id_of, explained
from workbench.traffic.request import Request

SQLI = Request(
    "GET",
    "https://example.com/search?q=1%27%20union%20select%20password%20from%20users--",
    headers={"User-Agent": "Mozilla/5.0", "Accept": "*/*"},
)
XSS = Request(
    "POST",
    "https://example.com/f",
    headers={"Content-Type": "application/x-www-form-urlencoded", "User-Agent": "Mozilla/5.0"},
    body=b"id=1%27%20or%20%271%27%3D%271&comment=<script>alert(1)</script>" + b"x" * 300,
)


def _replay(path: str, new: bool = True):
    """The two requests through a zone's new OWASP ruleset, or (``new=False``) its old WAF."""
    wb = Workbench(seed=9)
    zone = wb.create_zone("example.com", plan="enterprise")
    if new:
        execute = {"action": "execute", "expression": "true", "action_parameters": {"id": OWASP_ID}}
        wb.rulesets.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": [execute]})
    copies = [Request(r.method, r.url, headers=dict(r.headers), body=r.body) for r in (SQLI, XSS)]
    return Pipeline(wb, zone.id).replay(copies, path=path, progress=False).events


@pytest.fixture(scope="module")
def events():
    return {
        (path, new): _replay(path, new) for path in ("table", "request") for new in (True, False)
    }


def _owasp(frame, source):
    rows = frame[frame.source == source]
    return [
        (ray, json.loads(m))
        for ray, m in zip(rows.ray_id, rows.metadata, strict=True)
        if "contributing" in json.loads(m)
    ]


def test_each_new_owasp_rule_names_the_field_and_value_it_matched(events):
    (ray, meta), (_, xss) = _owasp(events["table", True], "firewallManaged")
    by_crs = {crs_id_of(c["description"]): c for c in meta["contributing"]}
    assert by_crs[942100]["field"] == "ARGS:q"
    assert by_crs[942100]["value"] == "1' union select password from users--"
    # libinjection's fingerprint is what 942100 reports as matched data, as CRS logs it.
    assert by_crs[942100]["data"] == "sUEnk"
    assert all("field" in c for c in meta["contributing"])
    # A long value is cut to a readable length.
    long_values = [c["value"] for c in xss["contributing"] if c["field"] == "ARGS:comment"]
    assert long_values and all(len(v) <= VALUE_LIMIT for v in long_values)
    assert long_values[0].startswith("<script>alert(1)</script>xxx") and long_values[0][-1] == "…"


def test_each_old_owasp_rule_is_listed_with_what_it_matched(events):
    *_, (_, xss) = _owasp(events["table", False], "waf")
    found = {m["rule_id"]: m for m in xss["matched"]}
    assert set(found) <= set(xss["contributing"])
    assert found["958051"]["field"] == "ARGS:comment" and found["958051"]["data"] == "<script"


def test_both_paths_give_the_same_explained_events(events):
    for new in (True, False):
        assert events["table", new].equals(events["request", new])


def test_without_a_kept_crs_run_the_metadata_is_left_as_it_is():
    meta = {"contributing": [{"rule_id": "x", "description": "942100: SQL Injection"}]}
    fresh = Request("GET", "https://example.com/?q=1")
    assert explained(meta, "firewallManaged", fresh) is meta
    assert explained(meta, "firewallRules", fresh) is meta


def test_both_wafs_explanations_read_in_one_shape(events):
    from workbench.rulesets.crs.explain import is_owasp_event, matched_entries

    (_, new), *_ = _owasp(events["table", True], "firewallManaged")
    *_, (_, old) = _owasp(events["table", False], "waf")
    assert is_owasp_event("firewallManaged", new) and is_owasp_event("waf", old)
    assert not is_owasp_event("firewallRules", new) and not is_owasp_event("waf", {})
    first = matched_entries(new)[0]
    assert set(first) == {"rule", "field", "value", "data"}
    assert first["rule"].split(":")[0].isdigit()  # the new WAF's "NNNNNN: msg"
    assert {e["rule"] for e in matched_entries(old)} <= set(old["contributing"])
    assert matched_entries({"contributing": [{"rule_id": "x"}]}) == []
