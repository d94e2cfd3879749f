"""The catalogue format, its checks, and the real catalogue when it is there."""

from __future__ import annotations

import copy

import pytest
from waf_helpers import CATALOG_DATA

from workbench.rules_language import MANAGED, compile_expression
from workbench.waf_legacy import CLOUDFLARE_PACKAGE, OWASP_PACKAGE, CatalogError, load_catalog
from workbench.waf_legacy.catalog import CATALOG_FILE, default_catalog


def _broken(change):
    data = copy.deepcopy(CATALOG_DATA)
    change(data)
    return data


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda d: d[0].update(detection_mode="hybrid"), "packages[0].detection_mode"),
        (lambda d: d.append(copy.deepcopy(d[0])), "package ids"),
        (lambda d: d[0]["groups"][0]["rules"][0].update(kind="maybe"), "rules[0].kind"),
        (
            lambda d: d[0]["groups"][0]["rules"][0].update(default_mode="on"),
            "rules[0].default_mode",
        ),
        (lambda d: d[0]["groups"][0]["rules"][1].update(id="100015"), "rule ids"),
        (
            lambda d: d[0]["groups"][0]["rules"][0].update(expression="http.nope eq 1"),
            "rules[0].expression",
        ),
        (lambda d: d[1]["groups"][0]["rules"][0].pop("score"), "rules[0].score"),
        (lambda d: d[1]["groups"][0].update(default_mode="maybe"), "groups[0].default_mode"),
        (lambda d: d[0]["groups"][1].update(id=d[0]["groups"][0]["id"]), "group ids"),
        (lambda d: d[0].update(groups="none"), "packages[0].groups"),
    ],
)
def test_a_broken_catalogue_says_where(change, where):
    with pytest.raises(CatalogError, match=where.replace("[", r"\[").replace("]", r"\]")):
        load_catalog(_broken(change))


def test_a_catalogue_file_loads(tmp_path):
    import json

    path = tmp_path / "packages.json"
    path.write_text(json.dumps({"packages": CATALOG_DATA}), encoding="utf-8")
    assert [p.id for p in load_catalog(path).packages] == [CLOUDFLARE_PACKAGE, OWASP_PACKAGE]
    path.write_text("[]", encoding="utf-8")
    with pytest.raises(CatalogError, match="packages"):
        load_catalog(path)


@pytest.mark.skipif(not CATALOG_FILE.exists(), reason="the catalogue data is not written yet")
def test_the_real_catalogue_has_both_packages_and_usable_expressions():
    catalog = default_catalog()
    cf, owasp = catalog.package(CLOUDFLARE_PACKAGE), catalog.package(OWASP_PACKAGE)
    assert cf is not None and cf.detection_mode == "traditional" and cf.rules
    assert owasp is not None and owasp.detection_mode == "anomaly" and owasp.rules
    assert all(r.score is not None for r in owasp.rules)
    for package in catalog.packages:
        for rule in package.rules:
            # Each is a check of a plan: it must also compile to SQL for the whole-table path.
            compile_expression(rule.expression, MANAGED).to_sql()
