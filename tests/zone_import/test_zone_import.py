"""Importing a real zone from saved API responses (issue 12, "Import a real zone").

Two folders under tests/zone_import/data/ hold a Pro and an Enterprise zone as
curl saves them; the error cases copy one into tmp_path and break one file.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from workbench import Workbench, cli
from workbench.zone_import import ZoneImportError, import_zone

DATA = Path(__file__).resolve().parent / "data"
PRO = DATA / "import_pro_zone"
ENT = DATA / "import_enterprise_zone"
CF = "1e334934fd7ae32ad705667f8c1057aa"
OWASP = "a25a9a7e9c00afc1fb2e0245519d725b"
WORDPRESS = "f50040c10c64935119876a147e217e0e"
XSS = "5b7d75240cd9bed5e4c5301b2be09bbe"


def envelope(result):
    return {"result": result, "success": True, "errors": [], "messages": []}


def copy_of(tmp_path, folder=PRO):
    target = tmp_path / folder.name
    shutil.copytree(folder, target)
    return target


def load(folder, name):
    return json.loads((folder / name).read_text())


def save(folder, name, data):
    (folder / name).write_text(json.dumps(data))


def error_of(wb, folder):
    with pytest.raises(ZoneImportError) as info:
        import_zone(wb, folder)
    return info.value


def fingerprint(wb):
    """Everything a face can read about every zone of ``wb``, as plain data."""
    out = {"zones": [z.to_dict() for z in wb.zones], "now": wb.now().isoformat()}
    for z in wb.zones:
        out[z.id] = {
            "filters": [f.to_dict() for f in wb.firewall.list_filters(z.id, per_page=100).items],
            "rules": [r.to_dict() for r in wb.firewall.evaluation_order(z.id)],
            "page_rules": [p.to_dict() for p in wb.firewall.page_rules.list(z.id)],
            "waf": wb.waf_legacy.config(z.id),
            "waf_setting": wb.waf_legacy.get_setting(z.id).to_dict(),
            "rulesets": [r.to_dict() for r in wb.rulesets.list_rulesets(z.id)],
            "migration": wb.migration.status(z.id).to_dict(),
        }
    return out


def busy_workbench(seed=5):
    """A workbench that already holds a configured zone."""
    wb = Workbench(seed=seed)
    zone = wb.create_zone("existing.example", plan="business")
    [f] = wb.firewall.create_filters(zone.id, [{"expression": 'http.host eq "a.example"'}])
    wb.firewall.create_rules(zone.id, [{"filter": {"id": f.id}, "action": "block"}])
    wb.waf_legacy.edit_rule(zone.id, CF, "100000", {"mode": "simulate"})
    return wb


# -- the Pro zone -------------------------------------------------------------------
def test_pro_zone_imports_filters_rules_page_rules_and_old_waf_changes():
    wb = Workbench(seed=1)
    done = import_zone(wb, PRO)
    zone = done.zone
    assert (zone.name, zone.plan) == ("shop.example.com", "pro")
    assert wb.zone("shop.example.com") is zone
    assert done.ids["zones"] == {"023e105f4ecef8ad9ca31a8372d0c353": zone.id}
    rules = {r.description: r for r in wb.firewall.list_rules(zone.id).items}
    stripe = rules["Stripe webhooks skip the WAF"]
    assert (stripe.action, stripe.products, stripe.priority, stripe.ref) == (
        "bypass",
        ["waf"],
        1,
        "BYPASS-STRIPE",
    )
    assert stripe.filter.to_dict() == {
        "id": done.ids["filters"]["b1e5d2a0c3f84e7e9b6a1d2c3e4f5a61"],
        "expression": 'http.request.uri.path eq "/webhooks/stripe"',
        "paused": False,
        "description": "Stripe webhooks",
        "ref": "STRIPE",
    }
    office = rules["office skips WAF and security level"]
    paused = rules["office allow (paused)"]
    assert office.products == ["waf", "securityLevel"]
    assert (paused.paused, paused.priority, paused.action) == (True, None, "allow")
    assert office.filter is paused.filter  # one filter, shared by two rules
    assert len(wb.firewall.list_filters(zone.id).items) == 3
    assert done.counts == {
        "filters": 3,
        "firewall_rules": 4,
        "bypass_waf_rules": 2,
        "page_rules": 2,
        "waf_overrides": 0,
    }


def test_rule_ids_map_to_new_rules_that_point_at_the_new_filters():
    wb = Workbench(seed=2)
    done = import_zone(wb, PRO)
    saved = load(PRO, "firewall_rules.json")["result"]
    for rule in saved:
        made = wb.firewall.get_rule(done.zone.id, done.ids["firewall_rules"][rule["id"]])
        assert made.filter.id == done.ids["filters"][rule["filter"]["id"]]
        assert made.action == rule["action"]
        assert made.paused == rule["paused"]


def test_pro_page_rules_keep_waf_off_and_disable_security_and_drop_the_rest():
    wb = Workbench(seed=1)
    done = import_zone(wb, PRO)
    rules = wb.firewall.page_rules.list(done.zone.id)
    assert [(r.value, r.actions, r.priority, r.status) for r in rules] == [
        ("*shop.example.com/api/*", [{"id": "waf", "value": "off"}], 3, "active"),
        ("*shop.example.com/static/*", [{"id": "disable_security"}], 2, "active"),
    ]
    assert sorted(done.ids["page_rules"]) == [
        "9a7806061c88ada191ed06f989cc3dac",
        "9a7806061c88ada191ed06f989cc3dad",
    ]
    assert any("cache_level not simulated" in w for w in done.warnings)
    assert any("9a7806061c88ada191ed06f989cc3dae" in w and "skipped" in w for w in done.warnings)


def test_pro_old_waf_changes_apply_only_where_they_differ_from_the_catalogue():
    wb = Workbench(seed=1)
    done = import_zone(wb, PRO)
    zid, waf = done.zone.id, wb.waf_legacy
    owasp = waf.get_package(zid, OWASP)
    assert (owasp.sensitivity, owasp.action_mode) == ("low", "simulate")
    assert waf.get_rule(zid, CF, "100000").mode == "disable"
    assert waf.get_rule(zid, CF, "100001").mode == "default"
    assert waf.get_rule(zid, OWASP, "960901").mode == "off"
    assert waf.get_group(zid, CF, WORDPRESS).mode == "on"
    # Only the four changes are stored: the group lists count one modified rule.
    specials = waf.get_group(zid, CF, "627074f7688c4ae4a9cc63621842206c")
    assert specials.modified_rules_count == 1
    assert done.summary()["waf_changed"] == {"package": 1, "group": 1, "rule": 2}
    assert waf.get_setting(zid).value == "on"
    # 100999 is not in the catalogue but at its default: a warning, not an error.
    assert any("100999" in w and "skipped" in w for w in done.warnings)


# -- the Enterprise zone ---------------------------------------------------------------
def test_enterprise_zone_with_paged_filters_one_file_per_kind_and_a_uri_override():
    wb = Workbench(seed=3)
    done = import_zone(wb, ENT)
    zid = done.zone.id
    assert done.zone.plan == "enterprise"
    filters = wb.firewall.list_filters(zid).items
    assert len(filters) == 3  # two pages that overlap, plus one only a rule embeds
    rules = {r.description: r for r in wb.firewall.list_rules(zid).items}
    assert rules["log admin hits"].action == "log"  # Enterprise only
    health = rules["health checks skip the WAF"]
    assert (health.priority, health.ref, health.products) == (5, "HC", ["waf", "bic"])
    partner = rules["partner skips WAF"]
    assert partner.filter.description == "partner API"
    assert done.ids["filters"]["d0000000000000000000000000000003"] == partner.filter.id
    [override] = wb.waf_legacy.list_overrides(zid).items
    assert override.to_dict() | {"id": "x"} == {
        "id": "x",
        "description": "admin area: no SQLi rule, challenge becomes block",
        "urls": ["bank.example.org/admin/*", "bank.example.org/api/v1/upload"],
        "priority": 1,
        "groups": {WORDPRESS: "default"},
        "rules": {"100000": "disable"},
        "rewrite_action": {"default": "block", "challenge": "block"},
        "paused": False,
    }
    assert done.ids["waf_overrides"] == {"de677e5818985db1285d0e80225f06e5": override.id}
    [page_rule] = wb.firewall.page_rules.list(zid)
    assert page_rule.actions == [
        {"id": "waf", "value": "off"},
        {"id": "security_level", "value": "high"},
    ]


def test_enterprise_owasp_package_is_matched_by_name_and_its_groups_and_rules_follow():
    wb = Workbench(seed=3)
    done = import_zone(wb, ENT)
    zid, waf = done.zone.id, wb.waf_legacy
    assert done.ids["waf_packages"]["c504870194831cd12c3fc0284f294abb"] == OWASP
    owasp = waf.get_package(zid, OWASP)
    assert (owasp.sensitivity, owasp.action_mode) == ("medium", "block")
    assert waf.get_group(zid, OWASP, XSS).mode == "off"
    assert waf.get_rule(zid, OWASP, "981231").mode == "off"
    assert waf.get_rule(zid, CF, "100001").mode == "simulate"
    assert done.warnings == []


def test_wb_import_zone_returns_the_zone():
    wb = Workbench(seed=4)
    zone = wb.import_zone(PRO)
    assert wb.zones == [zone] and zone.name == "shop.example.com"


def test_the_same_seed_gives_the_same_ids():
    a, b = import_zone(Workbench(seed=9), ENT), import_zone(Workbench(seed=9), ENT)
    assert a.ids == b.ids and a.summary() == b.summary()


def test_only_zone_json_is_required(tmp_path):
    folder = tmp_path / "bare"
    folder.mkdir()
    save(folder, "zone.json", {"name": "tiny.example", "plan": {"legacy_id": "free"}})
    done = import_zone(Workbench(), folder)
    assert done.counts["firewall_rules"] == 0 and done.waf_setting == "off"
    assert done.ids["zones"] == {}


def test_a_saved_zone_list_of_one_is_taken_as_the_zone(tmp_path):
    folder = tmp_path / "listed"
    folder.mkdir()
    save(folder, "zone.json", envelope([{"name": "one.example", "plan": {"legacy_id": "pro"}}]))
    assert import_zone(Workbench(), folder).zone.name == "one.example"


def test_rules_that_embed_their_filters_need_no_filters_file(tmp_path):
    folder = copy_of(tmp_path)
    (folder / "filters.json").unlink()
    wb = Workbench(seed=1)
    done = import_zone(wb, folder)
    assert done.counts["filters"] == 3
    office = done.ids["filters"]["b1e5d2a0c3f84e7e9b6a1d2c3e4f5a62"]
    users = wb.firewall.filter_usage(done.zone.id)[office]
    assert len(users) == 2


def test_a_rule_whose_filter_was_deleted_is_skipped_with_a_warning(tmp_path):
    folder = copy_of(tmp_path)
    rules = load(folder, "firewall_rules.json")
    rules["result"][3]["filter"] = {"id": "b1e5d2a0c3f84e7e9b6a1d2c3e4f5a63", "deleted": True}
    save(folder, "firewall_rules.json", rules)
    done = import_zone(Workbench(), folder)
    assert done.counts["firewall_rules"] == 3
    assert any("deleted filter" in w and "/result/3" in w for w in done.warnings)


def test_other_json_files_are_ignored_with_a_warning(tmp_path):
    folder = copy_of(tmp_path)
    save(folder, "dns_records.json", envelope([]))
    done = import_zone(Workbench(), folder)
    assert "dns_records.json: not a file the import reads; ignored" in done.warnings


def test_round_trip_of_a_zone_built_in_the_workbench(tmp_path):
    """Save a workbench zone the way the API shows it, import it, and get the same zone."""
    src = Workbench(seed=11)
    zone = src.create_zone("round.example", plan="business")
    fw, waf = src.firewall, src.waf_legacy
    filters = fw.create_filters(
        zone.id,
        [
            {"expression": 'http.request.uri.path matches "^/api/"', "description": "api"},
            {"expression": "ip.src in {203.0.113.0/24}", "ref": "OPS", "paused": True},
        ],
    )
    fw.create_rules(
        zone.id,
        [
            {
                "filter": {"id": filters[0].id},
                "action": "bypass",
                "products": ["waf"],
                "priority": 3,
            },
            {"filter": {"id": filters[1].id}, "action": "allow", "description": "ops", "ref": "R"},
            {"filter": {"id": filters[1].id}, "action": "bypass", "products": ["hot"]},
        ],
    )
    fw.page_rules.create(
        zone.id,
        {
            "targets": [{"target": "url", "constraint": {"operator": "matches", "value": "*/x*"}}],
            "actions": [{"id": "disable_security"}],
            "status": "active",
            "priority": 4,
        },
    )
    waf.edit_package(zone.id, OWASP, {"sensitivity": "off"})
    waf.edit_group(zone.id, CF, WORDPRESS, {"mode": "on"})
    waf.edit_rule(zone.id, CF, "100015", {"mode": "challenge"})
    waf.create_override(zone.id, {"urls": ["round.example/a*"], "rules": {"100000": "simulate"}})
    waf.set_setting(zone.id, {"value": "off"})

    folder = tmp_path / "round"
    folder.mkdir()
    save(folder, "zone.json", envelope(zone.to_dict()))
    save(folder, "filters.json", envelope([f.to_dict() for f in filters]))
    save(
        folder, "firewall_rules.json", envelope([r.to_dict() for r in fw.list_rules(zone.id).items])
    )
    save(folder, "pagerules.json", envelope([p.to_dict() for p in fw.page_rules.list(zone.id)]))
    save(
        folder,
        "waf_packages.json",
        envelope([p.to_dict() for p in waf.list_packages(zone.id).items]),
    )
    for package in (CF, OWASP):
        groups = waf.list_groups(zone.id, package, per_page=100).items
        save(folder, f"waf_groups_{package}.json", envelope([g.to_dict() for g in groups]))
        rules = waf.list_rules(zone.id, package, per_page=100).items
        save(folder, f"waf_rules_{package}.json", envelope([r.to_dict() for r in rules]))
    save(
        folder,
        "waf_overrides.json",
        envelope([o.to_dict() for o in waf.list_overrides(zone.id).items]),
    )
    save(folder, "settings_waf.json", envelope(waf.get_setting(zone.id).to_dict()))

    dst = Workbench(seed=12)
    done = import_zone(dst, folder)
    assert done.warnings == []

    def shown(wb, zid, ids):
        data = json.dumps(fingerprint(wb)[zid], sort_keys=True)
        for old, new in ids.items():
            data = data.replace(new, old)
        return json.loads(data)

    renamed = {v: k for kind in done.ids.values() for k, v in kind.items()}
    # Ids of the new zone's objects read back as the source's; timestamps follow each clock.
    mine, theirs = (
        shown(dst, done.zone.id, {v: k for k, v in renamed.items()}),
        fingerprint(src)[zone.id],
    )
    for side in (mine, theirs):
        for rule in side["rules"]:
            rule.pop("created_on"), rule.pop("modified_on")
        for rule in side["page_rules"]:
            rule.pop("created_on"), rule.pop("modified_on")
        side["waf_setting"].pop("modified_on")
        side.pop("migration")
    assert mine == theirs


# -- errors name the file and the field -----------------------------------------------
def test_malformed_json_names_the_file_and_the_position(tmp_path):
    folder = copy_of(tmp_path)
    (folder / "filters.json").write_text('{"result": [{"id": "a",}]}')
    err = error_of(Workbench(), folder)
    assert err.file == "filters.json"
    assert str(err).startswith("filters.json: line 1 column 24: malformed JSON")


def test_a_wrong_type_names_the_file_and_the_field(tmp_path):
    folder = copy_of(tmp_path)
    rules = load(folder, "firewall_rules.json")
    rules["result"][2]["paused"] = "yes"
    save(folder, "firewall_rules.json", rules)
    err = error_of(Workbench(), folder)
    assert str(err) == "firewall_rules.json: /result/2/paused: must be true or false, got a string"
    assert (err.file, err.pointer) == ("firewall_rules.json", "/result/2/paused")


def test_a_list_file_holding_an_object_is_a_wrong_type(tmp_path):
    folder = copy_of(tmp_path)
    save(folder, "pagerules.json", envelope({"id": "x"}))
    err = error_of(Workbench(), folder)
    assert str(err) == "pagerules.json: /result: must be an array of page rules, got an object"


def test_a_missing_required_field_names_the_file_and_the_field(tmp_path):
    folder = copy_of(tmp_path)
    rules = load(folder, "firewall_rules.json")
    del rules["result"][1]["action"]
    save(folder, "firewall_rules.json", rules)
    assert str(error_of(Workbench(), folder)) == (
        "firewall_rules.json: /result/1/action: is required"
    )


def test_a_zone_without_a_name_names_the_field(tmp_path):
    folder = copy_of(tmp_path)
    zone = load(folder, "zone.json")
    del zone["result"]["name"]
    save(folder, "zone.json", zone)
    assert str(error_of(Workbench(), folder)) == "zone.json: /result/name: is required"


def test_an_unknown_plan_names_the_field(tmp_path):
    folder = copy_of(tmp_path)
    zone = load(folder, "zone.json")
    zone["result"]["plan"]["legacy_id"] = "platinum"
    save(folder, "zone.json", zone)
    err = error_of(Workbench(), folder)
    assert str(err) == (
        "zone.json: /result/plan/legacy_id: 'platinum' is not a plan of the simulator; "
        "use one of free, pro, business, enterprise"
    )


def test_a_rule_referring_to_a_filter_not_in_the_files(tmp_path):
    folder = copy_of(tmp_path)
    rules = load(folder, "firewall_rules.json")
    rules["result"][3]["filter"] = {"id": "f" * 32}
    save(folder, "firewall_rules.json", rules)
    assert str(error_of(Workbench(), folder)) == (
        f"firewall_rules.json: /result/3/filter/id: filter {'f' * 32} is in no filters file, "
        "and the rule does not embed its expression"
    )


def test_a_bad_embedded_expression_points_into_the_rule(tmp_path):
    folder = copy_of(tmp_path)
    (folder / "filters.json").unlink()
    rules = load(folder, "firewall_rules.json")
    rules["result"][3]["filter"]["expression"] = "http.request.uri.path contains"
    save(folder, "firewall_rules.json", rules)
    err = error_of(Workbench(), folder)
    assert str(err).startswith("firewall_rules.json: /result/3/filter/expression: ")
    assert "Filter parsing error" in err.detail


def test_an_embedded_filter_that_contradicts_filters_json(tmp_path):
    folder = copy_of(tmp_path)
    rules = load(folder, "firewall_rules.json")
    rules["result"][3]["filter"]["expression"] = 'http.host eq "other"'
    save(folder, "firewall_rules.json", rules)
    assert str(error_of(Workbench(), folder)).startswith(
        "firewall_rules.json: /result/3/filter/expression: differs from the expression of filter"
    )


def test_two_filters_with_one_expression(tmp_path):
    folder = copy_of(tmp_path)
    filters = load(folder, "filters.json")
    filters["result"][2]["expression"] = filters["result"][0]["expression"]
    save(folder, "filters.json", filters)
    (folder / "firewall_rules.json").unlink()  # whose embedded copies would disagree first
    assert str(error_of(Workbench(), folder)).startswith(
        "filters.json: /result/2/expression: is also the expression of filter"
    )


def test_a_page_with_another_version_of_an_object(tmp_path):
    folder = copy_of(tmp_path, ENT)
    page = load(folder, "filters-2.json")
    page["result"][0]["description"] = "changed"
    save(folder, "filters-2.json", page)
    assert str(error_of(Workbench(), folder)).startswith(
        "filters-2.json: /result/0/id: filter d0000000000000000000000000000001 appears twice "
        "with different contents (also in filters-1.json at /result/0)"
    )


def test_a_saved_failure_envelope(tmp_path):
    folder = copy_of(tmp_path)
    save(
        folder,
        "waf_overrides.json",
        {
            "result": None,
            "success": False,
            "errors": [{"code": 10000, "message": "Authentication error"}],
            "messages": [],
        },
    )
    assert str(error_of(Workbench(), folder)) == (
        "waf_overrides.json: /success: the saved response is a failure (Authentication error)"
    )


def test_missing_zone_json(tmp_path):
    folder = copy_of(tmp_path)
    (folder / "zone.json").unlink()
    err = error_of(Workbench(), folder)
    assert err.file == "zone.json" and "is required" in str(err)


def test_a_folder_that_does_not_exist(tmp_path):
    assert "is not a folder" in str(error_of(Workbench(), tmp_path / "nope"))


def test_an_unknown_changed_old_waf_rule_names_the_file_and_the_rule(tmp_path):
    folder = copy_of(tmp_path)
    name = f"waf_rules_{CF}.json"
    rules = load(folder, name)
    rules["result"][2]["mode"] = "disable"
    save(folder, name, rules)
    assert str(error_of(Workbench(), folder)) == (
        f"{name}: /result/2/id: rule 100999 is not in the simulator's catalogue (package "
        "CloudFlare) and its mode was changed to 'disable'; the import cannot reproduce it"
    )


def test_a_mode_a_rule_does_not_allow_names_the_field(tmp_path):
    folder = copy_of(tmp_path)
    name = f"waf_rules_{OWASP}.json"
    rules = load(folder, name)
    rules["result"][0]["mode"] = "block"
    save(folder, name, rules)
    assert str(error_of(Workbench(), folder)) == (
        f"{name}: /result/0/mode: must be one of on, off, got 'block'"
    )


def test_a_page_rule_error_points_at_the_saved_action(tmp_path):
    folder = copy_of(tmp_path)
    rules = load(folder, "pagerules.json")
    rules["result"][1]["actions"].append({"id": "waf", "value": "maybe"})
    save(folder, "pagerules.json", rules)
    assert str(error_of(Workbench(), folder)) == (
        "pagerules.json: /result/1/actions/2/value: waf takes one of on, off"
    )


def test_an_override_of_a_rule_the_catalogue_lacks(tmp_path):
    folder = copy_of(tmp_path, ENT)
    overrides = load(folder, "waf_overrides.json")
    overrides["result"][0]["rules"] = {"999999": "disable"}
    save(folder, "waf_overrides.json", overrides)
    assert str(error_of(Workbench(), folder)) == (
        "waf_overrides.json: /result/0/rules/999999: names no rule of any WAF package"
    )


def test_a_name_the_workbench_already_has(tmp_path):
    wb = Workbench()
    wb.create_zone("shop.example.com", plan="free")
    assert str(error_of(wb, PRO)) == (
        "zone.json: /result/name: the workbench already has a zone named shop.example.com"
    )


def test_a_plan_refusal_names_the_rule(tmp_path):
    folder = copy_of(tmp_path, ENT)
    zone = load(folder, "zone.json")
    zone["plan"]["legacy_id"] = "business"
    save(folder, "zone.json", zone)
    err = error_of(Workbench(), folder)
    assert err.file == "firewall_rules.json" and err.pointer == "/result/0"
    assert "log action is only available on the Enterprise plan" in err.detail


# -- nothing half-imported ---------------------------------------------------------------
def _over_quota(folder):
    rules = load(folder, "firewall_rules.json")
    template = rules["result"][3]
    rules["result"] += [
        {
            **template,
            "id": f"{i:032x}",
            "filter": {"id": f"{i:032x}", "expression": f'http.host eq "h{i}"'},
        }
        for i in range(1, 20)
    ]
    save(folder, "firewall_rules.json", rules)


def _bad_override(folder):
    save(
        folder,
        "waf_overrides.json",
        envelope([{"id": "o", "urls": ["shop.example.com/*"], "rules": {"nope": "disable"}}]),
    )


def _free_plan_with_waf_on(folder):
    zone = load(folder, "zone.json")
    zone["result"]["plan"]["legacy_id"] = "free"
    save(folder, "zone.json", zone)
    pages = load(folder, "pagerules.json")
    pages["result"] = pages["result"][:1]  # the Free plan allows 3 page rules
    save(folder, "pagerules.json", pages)


@pytest.mark.parametrize(
    ("breaks", "where"),
    [
        (_over_quota, "firewall_rules.json: /result/21: firewall rule quota exceeded"),
        (_bad_override, "waf_overrides.json: /result/0/rules/nope"),
        # The very last call of an import: the waf setting.
        (_free_plan_with_waf_on, "settings_waf.json: /result/value"),
    ],
    ids=["quota", "override", "setting"],
)
def test_a_failed_import_leaves_the_workbench_exactly_as_it_was(tmp_path, breaks, where):
    folder = copy_of(tmp_path)
    breaks(folder)
    wb, twin = busy_workbench(), busy_workbench()
    before = fingerprint(wb)
    err = error_of(wb, folder)
    assert str(err).startswith(where)
    assert fingerprint(wb) == before == fingerprint(twin)
    assert [z.name for z in wb.zones] == ["existing.example"]
    assert wb.new_id() == twin.new_id()  # not even an id was drawn
    # And the same folder, fixed, imports into it afterwards.
    shutil.rmtree(folder)
    assert import_zone(wb, copy_of(tmp_path)).zone.name == "shop.example.com"


def test_a_thousand_rules_import_in_reasonable_time(tmp_path):
    folder = tmp_path / "big"
    folder.mkdir()
    save(
        folder, "zone.json", envelope({"name": "big.example", "plan": {"legacy_id": "enterprise"}})
    )
    filters = [
        {
            "id": f"{i:032x}",
            "expression": f'http.request.uri.path eq "/p/{i}" and ip.src ne 10.0.{i // 250}.{i % 250}',
        }
        for i in range(1000)
    ]
    for page in range(10):
        save(folder, f"filters-{page + 1}.json", envelope(filters[page * 100 : (page + 1) * 100]))
    rules = [
        {
            "id": f"{i + 5000:032x}",
            "action": "block",
            "priority": i,
            "paused": False,
            "filter": filters[i],
        }
        for i in range(1000)
    ]
    save(folder, "firewall_rules.json", envelope(rules))
    start = time.perf_counter()
    done = import_zone(Workbench(), folder)
    assert time.perf_counter() - start < 20
    assert done.counts["firewall_rules"] == 1000 and done.counts["filters"] == 1000


# -- the command line -------------------------------------------------------------------
def test_cli_import_prints_a_summary(capsys):
    assert cli.main(["import", str(PRO)]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].startswith("zone: shop.example.com (")
    assert "plan: pro" in lines
    assert "filters: 3" in lines
    assert "firewall rules: 4 (bypass waf: 2)" in lines
    assert "page rules: 2" in lines
    assert "waf overrides: 0" in lines
    assert "old WAF modes changed from defaults: packages 1, groups 1, rules 2" in lines
    assert "  rule 100000 (SQLi - UNION Based): mode disable" in lines
    assert "warning: pagerules.json" in err


def test_cli_import_json_with_a_seed(capsys):
    assert cli.main(["import", str(ENT), "--seed", "7", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["zone"] == "bank.example.org" and summary["plan"] == "enterprise"
    assert summary["zone_id"] == import_zone(Workbench(seed=7), ENT).zone.id
    assert (summary["firewall_rules"], summary["waf_overrides"], summary["page_rules"]) == (3, 1, 1)
    assert summary["waf_changed"] == {"package": 1, "group": 1, "rule": 2}


def test_cli_import_error_goes_to_stderr_with_exit_1(tmp_path, capsys):
    folder = copy_of(tmp_path)
    (folder / "settings_waf.json").write_text("[")
    assert cli.main(["import", str(folder)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("workbench import: settings_waf.json: line 1 column 2: malformed JSON")


def test_cli_import_help_lists_the_file_names(capsys):
    with pytest.raises(SystemExit):
        cli.main(["import", "--help"])
    out = capsys.readouterr().out
    for name in (
        "zone.json",
        "filters.json",
        "firewall_rules.json",
        "waf_groups_<package>.json",
        "settings_waf.json",
    ):
        assert name in out
