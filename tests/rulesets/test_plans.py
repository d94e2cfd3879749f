"""The SystemPlan contract: checks, decide, caching; and the catalogue loader."""

from __future__ import annotations

import doctest
import importlib
import json
import pkgutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruleset_helpers import CATALOG_DATA, CF, OWASP, SQLI, THRESHOLD, execute, request, skip

import workbench.rulesets
from workbench.core.security import SystemPlan
from workbench.rules_language import MANAGED, compile_expression
from workbench.rulesets import (
    CATALOG_DIR,
    CUSTOM_PHASE,
    MANAGED_PHASE,
    CatalogError,
    RulesetsService,
    default_catalog,
    load_catalog,
)
from workbench.traffic.request import Request

ADMIN = 'http.request.uri.path contains "/admin"'
FULL = [
    skip({"rules": {CF: [SQLI]}}, 'http.user_agent contains "bot"'),
    skip({"ruleset": "current"}, 'http.request.uri.path contains "/health"'),
    execute(CF, {"categories": [{"category": "cms", "enabled": True}]}),
    skip({"rulesets": [OWASP]}, 'http.request.uri.query contains "ok"', logging={"enabled": False}),
    execute(OWASP, {"rules": [{"id": THRESHOLD, "score_threshold": 25, "action": "log"}]}),
]
CUSTOM = [
    {"action": "log", "expression": ADMIN},
    skip({"phases": [MANAGED_PHASE]}, 'http.request.uri.path contains "/static"'),
    {"action": "block", "expression": 'http.request.uri.path contains "/admin/block"'},
]
PATHS = st.sampled_from(
    [
        "/",
        "/admin",
        "/admin/block",
        "/health",
        "/static",
        "/cms",
        "/struts",
        "/wp-admin",
        "/etc/passwd",
        "/..",
    ]
)
QUERIES = st.sampled_from(["", "union", "select", "<script", "ok select <script", "union select"])
AGENTS = st.sampled_from(["browser", "curl", "bot", "curl bot"])


@pytest.fixture
def configured(rs, zone):
    rs.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": FULL})
    rs.put_entrypoint(zone.id, CUSTOM_PHASE, {"rules": CUSTOM})
    return rs, zone


def test_plans_are_system_plans_with_unique_compilable_checks(configured):
    rs, zone = configured
    for phase in (CUSTOM_PHASE, MANAGED_PHASE, None):
        plan: SystemPlan = rs.plan(zone.id, phase)
        keys = [c.key for c in plan.checks]
        assert len(keys) == len(set(keys))
        for check in plan.checks:  # the SQL path compiles each check itself
            compile_expression(check.expression, MANAGED)
    assert all("true" != c.expression for c in rs.plan(zone.id, None).checks)


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(path=PATHS, query=QUERIES, agent=AGENTS)
def test_decide_asks_only_about_checks_and_agrees_with_evaluate(path, query, agent):
    # Built here, not by fixtures: hypothesis runs the body many times per fixture.
    from ruleset_helpers import small_catalog

    from workbench import Workbench

    wb = Workbench(seed=0)
    zone = wb.create_zone("example.com", plan="enterprise")
    rs = RulesetsService(wb, catalog=small_catalog())
    rs.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": FULL})
    rs.put_entrypoint(zone.id, CUSTOM_PHASE, {"rules": CUSTOM})
    req = request(path, query, agent)
    for phase in (CUSTOM_PHASE, MANAGED_PHASE, None):
        plan = rs.plan(zone.id, phase)
        keys = {c.key for c in plan.checks}
        expressions = {c.key: compile_expression(c.expression, MANAGED) for c in plan.checks}

        def matched(key, keys=keys, expressions=expressions):
            assert key in keys
            return expressions[key].matches(req)

        assert plan.decide(matched) == rs.evaluate(zone.id, req, phase)


def test_the_plan_is_cached_until_the_next_put(configured):
    rs, zone = configured
    plan = rs.plan(zone.id)
    assert rs.plan(zone.id) is plan and rs.plan(zone.id, None) is rs.plan(zone.id, None)
    chain = rs.plan(zone.id, None)
    rs.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": [execute(CF)]})
    assert rs.plan(zone.id) is not plan and rs.plan(zone.id, None) is not chain
    assert rs.evaluate(zone.id, request("/", "union")).action == "block"


def test_a_zone_without_entry_points_has_an_empty_plan(rs, zone):
    plan = rs.plan(zone.id, None)
    assert plan.checks == [] and plan.decide(lambda key: True).events == []


def test_the_loader_takes_a_folder_a_file_or_dicts(tmp_path):
    (tmp_path / "cloudflare_managed.json").write_text(json.dumps(CATALOG_DATA[0]))
    (tmp_path / "owasp_core.json").write_text(json.dumps(CATALOG_DATA[1]))
    (tmp_path / "something_else.json").write_text("not json")  # not a catalogue file
    assert list(load_catalog(tmp_path)) == [CF, OWASP]
    assert list(load_catalog(str(tmp_path / "owasp_core.json"))) == [OWASP]
    owasp = load_catalog(CATALOG_DATA)[OWASP]
    assert owasp.threshold_rule.id == THRESHOLD and owasp.threshold_rule.score_threshold == 40
    assert owasp.rules[0].paranoia_level == 1 and owasp.rules[0].score == 5


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda d: d.update(kind="zone"), "kind"),
        (lambda d: d.update(id="XYZ"), "32 lowercase hex"),
        (lambda d: d["rules"][0].update(expression="http.host eq"), "Filter parsing error"),
        (lambda d: d["rules"].append(dict(d["rules"][0])), "share an id"),
        (lambda d: d["rules"][0].update(score="5"), "score"),
        (lambda d: d.update(last_updated="yesterday"), "ISO-8601"),
    ],
)
def test_a_broken_catalogue_is_refused_with_where(change, problem):
    data = json.loads(json.dumps(CATALOG_DATA[1]))
    change(data)
    with pytest.raises(CatalogError, match=problem):
        load_catalog([data])


def test_a_catalogue_id_twice_is_refused():
    with pytest.raises(CatalogError, match="appears twice"):
        load_catalog([CATALOG_DATA[0], CATALOG_DATA[0]])


MODULES = sorted(
    name for _, name, _ in pkgutil.walk_packages(workbench.rulesets.__path__, "workbench.rulesets.")
) + ["workbench.rulesets"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    # tests/test_doctests.py does not list this package yet; run its examples here.
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


REAL = [CATALOG_DIR / "cloudflare_managed.json", CATALOG_DIR / "owasp_core.json"]
needs_real = pytest.mark.skipif(
    not all(p.exists() for p in REAL), reason="the catalogue files are not written yet"
)


@needs_real
def test_the_real_catalogue_loads_with_the_documented_ids():
    catalog = default_catalog()
    assert list(catalog)[:2] == [CF, OWASP]
    assert catalog[CF].name == "Cloudflare Managed Ruleset"
    owasp = catalog[OWASP]
    assert owasp.name == "Cloudflare OWASP Core Ruleset"
    assert owasp.rules[-1].id == THRESHOLD == owasp.threshold_rule.id
    assert owasp.threshold_rule.score_threshold == 40 and owasp.threshold_rule.action == "block"
    assert all(r.score is not None for r in owasp.rules[:-1])
    levels = {r.paranoia_level for r in owasp.rules[:-1]}
    assert levels <= {1, 2, 3, 4} and 1 in levels


@needs_real
def test_the_real_catalogue_runs_through_the_engine(wb, zone):
    rs = RulesetsService(wb)
    catalog = rs.catalog
    some_rule = next(r for r in catalog[CF].rules if r.enabled)
    rs.put_entrypoint(
        zone.id,
        MANAGED_PHASE,
        {
            "rules": [
                skip({"rules": {CF: [some_rule.id]}}, ADMIN),
                execute(CF, {"rules": [{"id": some_rule.id, "action": "log"}]}),
                execute(
                    OWASP,
                    {
                        "categories": [
                            {"category": "paranoia-level-3", "enabled": False},
                            {"category": "paranoia-level-4", "enabled": False},
                        ],
                        "rules": [{"id": THRESHOLD, "score_threshold": 25}],
                    },
                ),
            ]
        },
    )
    plan = rs.plan(zone.id)
    for check in plan.checks:
        compile_expression(check.expression, MANAGED)
    keys = {c.key for c in plan.checks}
    assert not any(
        f"{OWASP}:{r.id}" in keys for r in catalog[OWASP].rules if r.paranoia_level in (3, 4)
    )
    # Every request answers without asking about a key that is not a check.
    for req in (request(), request("/admin", "union select 1 <script>", "sqlmap curl")):
        plan.decide(lambda key, req=req: plan.compiled[key].matches(req) if key in keys else 1 / 0)


SQLI_REQUEST = {
    # What the OWASP ruleset's CRS program fires on this request, as the pipeline computes it.
    "cf.waf.crs.rules": Request(
        "GET",
        "https://example.com/index.php?id=1%20UNION%20SELECT%20password%20FROM%20users",
        headers={"User-Agent": "sqlmap/1.5", "Accept": "*/*"},
    ).fields(["cf.waf.crs.rules"])["cf.waf.crs.rules"],
    "http.request.uri": "/index.php?id=1 UNION SELECT password FROM users",
    "http.request.uri.path": "/index.php",
    "http.request.uri.query": "id=1 UNION SELECT password FROM users",
    "http.user_agent": "sqlmap/1.5",
    "http.request.method": "GET",
    "http.host": "example.com",
    "http.request.body.raw": "",
    "http.cookie": "",
    "http.referer": "",
}


@needs_real
def test_the_real_catalogue_on_a_sql_injection(wb, zone):
    rs = RulesetsService(wb)
    struts = "23ee7cebe6e8443e99ecf932ab579455"  # the migration guide's example override
    rs.put_entrypoint(
        zone.id,
        MANAGED_PHASE,
        {
            "rules": [
                execute(CF, {"rules": [{"id": struts, "action": "log", "enabled": False}]}),
                execute(OWASP),
            ]
        },
    )
    verdict = rs.evaluate(zone.id, SQLI_REQUEST)
    assert verdict.action == "block"
    assert {e.ruleset_id for e in verdict.events} == {CF}  # the first block ends the request
    pl2 = [{"category": f"paranoia-level-{n}", "enabled": False} for n in (3, 4)]
    rs.put_entrypoint(
        zone.id,
        MANAGED_PHASE,
        {
            "rules": [
                execute(
                    OWASP, {"categories": pl2, "rules": [{"id": THRESHOLD, "score_threshold": 25}]}
                )
            ]
        },
    )
    [event] = rs.evaluate(zone.id, SQLI_REQUEST).events
    assert (event.rule_id, event.ruleset_id, event.action) == (THRESHOLD, OWASP, "block")
    contributing = event.metadata["contributing"]
    assert event.score == sum(c["score"] for c in contributing) >= 25
    assert {c["paranoia_level"] for c in contributing} <= {1, 2}
