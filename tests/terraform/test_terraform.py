"""Terraform for a migrated zone: the library conventions, then `workbench terraform` live."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

import hcl2
import httpx
import pytest

from workbench import Workbench, cli
from workbench.api import serve, stop
from workbench.rulesets import CLOUDFLARE_MANAGED_ID, MANAGED_PHASE, OWASP_ID
from workbench.terraform import (
    EntrypointError,
    TerraformResult,
    fetch_entrypoint,
    generate,
    import_id,
    old_resources,
)

RID = "060013b1eeb14c93b0dcd896537e0d2c"
ZONE = "023e105f4ecef8ad9ca31a8372d0c353"
NAME = f"terraform_managed_resource_{RID}"
ENTRYPOINT: dict[str, Any] = {
    "id": RID,
    "name": "zone",
    "description": "",
    "kind": "zone",
    "phase": MANAGED_PHASE,
    "rules": [
        {
            "id": "r1" * 16,
            "ref": "owasp",
            "action": "execute",
            "expression": "true",
            "enabled": True,
            "description": "OWASP",
            "action_parameters": {
                "id": OWASP_ID,
                "overrides": {
                    "categories": [{"category": "paranoia-level-3", "enabled": False}],
                    "rules": [
                        {
                            "id": "6179ae15870a4bb7b2d480d4843b323c",
                            "action": "log",
                            "score_threshold": 60,
                            "enabled": True,
                        }
                    ],
                },
            },
        },
        {
            "action": "skip",
            "expression": 'http.request.uri.path eq "/${x}"',
            "enabled": True,
            "action_parameters": {"rules": {CLOUDFLARE_MANAGED_ID: ["a" * 32, "b" * 32]}},
            "logging": {"enabled": False},
        },
    ],
}


def _resource(text: str) -> dict[str, Any]:
    (resource,) = hcl2.loads(text)["resource"]
    return resource['"cloudflare_ruleset"'][f'"{NAME}"']


# -- the resource -------------------------------------------------------------
@pytest.mark.parametrize("provider", [4, 5])
def test_one_resource_named_after_the_entry_point_with_the_zone_fields(provider):
    text = generate(ENTRYPOINT, ZONE, provider=provider).hcl
    assert text.count('resource "cloudflare_ruleset"') == 1
    body = _resource(text)
    assert (body["zone_id"], body["name"], body["kind"], body["phase"]) == (
        f'"{ZONE}"',
        '"zone"',
        '"zone"',
        f'"{MANAGED_PHASE}"',
    )
    assert "description" not in body  # the ruleset's is empty
    described = generate({**ENTRYPOINT, "description": "WAF"}, ZONE, provider=provider).hcl
    assert _resource(described)["description"] == '"WAF"'


def test_provider_5_writes_nested_objects_and_no_nested_block():
    text = generate(ENTRYPOINT, ZONE).hcl  # 5 is the default
    nested_blocks = [line for line in text.splitlines()[1:] if re.match(r"\s+[\w-]+\s*\{", line)]
    assert nested_blocks == []
    assert "  rules = [\n" in text and "action_parameters = {" in text
    assert "overrides = {" in text and "categories = [" in text
    assert f'"{CLOUDFLARE_MANAGED_ID}" = ["{"a" * 32}", "{"b" * 32}"]' in text
    rule = _resource(text)["rules"][1]
    assert rule["logging"] == {"enabled": False}


def test_provider_4_writes_repeated_blocks_and_comma_joined_skip_rules():
    text = generate(ENTRYPOINT, ZONE, provider=4).hcl
    for block in ("rules {", "action_parameters {", "overrides {", "categories {", "logging {"):
        assert block in text
    assert " = [" not in text.replace("rulesets = [", "")
    assert f'"{CLOUDFLARE_MANAGED_ID}" = "{"a" * 32},{"b" * 32}"' in text
    rules = _resource(text)["rules"]
    assert len(rules) == 2 and all(r["__is_block__"] for r in rules)
    overrides = rules[0]["action_parameters"][0]["overrides"][0]
    assert overrides["rules"][0]["score_threshold"] == 60
    assert overrides["rules"][0]["enabled"] is True and "status" not in text


def test_strings_are_escaped_for_hcl():
    tricky = {
        "action": "skip",
        "expression": 'a eq "q" and b eq "\\\\" and c eq "${x} %{y}"\nor d',
        "description": "café ☕",
        "action_parameters": {"ruleset": "current"},
    }
    text = generate({**ENTRYPOINT, "rules": [tricky]}, ZONE).hcl
    assert r'"a eq \"q\" and b eq \"\\\\\" and c eq \"$${x} %%{y}\"\nor d"' in text
    assert '"café ☕"' in text
    hcl2.loads(text)


@pytest.mark.parametrize("provider", [4, 5])
def test_rules_carry_ref_enabled_and_description(provider):
    text = generate(ENTRYPOINT, ZONE, provider=provider).hcl
    first, second = _resource(text)["rules"]
    assert (first["ref"], first["enabled"], first["description"]) == ('"owasp"', True, '"OWASP"')
    assert "ref" not in second and second["description"] == '""'


# -- commands and imports -------------------------------------------------------
@pytest.mark.parametrize(
    ("provider", "target"), [(4, f"zone/{ZONE}/{RID}"), (5, f"zones/{ZONE}/{RID}")]
)
def test_commands_end_with_terraform_import(provider, target):
    result = generate(ENTRYPOINT, ZONE, provider=provider)
    assert result.commands == [
        f'cf-terraforming generate --zone {ZONE} --resource-type "cloudflare_ruleset"',
        f'cf-terraforming import --resource-type "cloudflare_ruleset" --zone {ZONE}',
        f"terraform import cloudflare_ruleset.{NAME} {target}",
    ]
    assert import_id(ZONE, RID, provider) == target
    assert "import {" not in result.hcl


@pytest.mark.parametrize(
    ("provider", "target"), [(4, f"zone/{ZONE}/{RID}"), (5, f"zones/{ZONE}/{RID}")]
)
def test_modern_import_block_replaces_the_import_command(provider, target):
    result = generate(ENTRYPOINT, ZONE, provider=provider, modern_import_block=True)
    assert result.hcl.rstrip().endswith(
        f'import {{\n  to = cloudflare_ruleset.{NAME}\n  id = "{target}"\n}}'
    )
    (block,) = hcl2.loads(result.hcl)["import"]
    assert block["to"] == f"${{cloudflare_ruleset.{NAME}}}"  # a reference, not a string
    assert block["id"] == f'"{target}"'
    assert result.commands == [
        f'cf-terraforming generate --zone {ZONE} --resource-type "cloudflare_ruleset"',
        f'cf-terraforming import --resource-type "cloudflare_ruleset" --zone {ZONE} '
        "--modern-import-block",
    ]


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="provider"):
        generate(ENTRYPOINT, ZONE, provider=3)
    with pytest.raises(ValueError, match="ruleset id"):
        generate({**ENTRYPOINT, "id": 'x" y'}, ZONE)
    with pytest.raises(ValueError, match="zone id"):
        generate(ENTRYPOINT, "zone; rm -rf /")


def test_result_as_json_and_text():
    result = generate(ENTRYPOINT, ZONE)
    assert isinstance(result, TerraformResult)
    assert json.loads(result.to_json()) == {
        "hcl": result.hcl,
        "commands": result.commands,
        "cleanup_steps": [],
        "warnings": [],
    }
    text = result.to_text()
    for title in ("== HCL ==", "== Commands ==", "== Cleanup steps ==", "== Warnings =="):
        assert title in text
    assert generate({"result": ENTRYPOINT, "success": True}, ZONE).hcl == result.hcl


# -- state files and .tf files ------------------------------------------------------
RAW_STATE = {
    "version": 4,
    "terraform_version": "1.5.7",
    "serial": 3,
    "lineage": "x",
    "outputs": {},
    "resources": [
        {
            "mode": "managed",
            "type": "cloudflare_zone",
            "name": "example",
            "instances": [{"attributes": {}}],
        },
        {
            "mode": "managed",
            "type": "cloudflare_waf_group",
            "name": "wordpress",
            "instances": [{"schema_version": 0, "attributes": {"mode": "off"}}],
        },
        {"mode": "data", "type": "cloudflare_waf_groups", "name": "all", "instances": [{}]},
        {
            "mode": "managed",
            "type": "cloudflare_waf_rule",
            "name": "r",
            "instances": [{"index_key": "100015"}, {"index_key": "100016"}],
        },
        {"mode": "managed", "type": "cloudflare_waf_override", "name": "shop", "instances": [{}]},
        {
            "module": "module.waf",
            "mode": "managed",
            "type": "cloudflare_waf_package",
            "name": "owasp",
            "instances": [{"index_key": 0}],
        },
    ],
}
SHOW_JSON_STATE = {
    "format_version": "1.0",
    "terraform_version": "1.5.7",
    "values": {
        "root_module": {
            "resources": [
                {
                    "address": "cloudflare_waf_package.owasp",
                    "mode": "managed",
                    "type": "cloudflare_waf_package",
                    "name": "owasp",
                    "values": {},
                },
                {
                    "address": "cloudflare_ruleset.other",
                    "mode": "managed",
                    "type": "cloudflare_ruleset",
                    "name": "other",
                    "values": {},
                },
            ],
            "child_modules": [
                {
                    "address": "module.waf",
                    "resources": [
                        {
                            "address": 'module.waf.cloudflare_waf_rule.r["100015"]',
                            "mode": "managed",
                            "type": "cloudflare_waf_rule",
                            "name": "r",
                            "index": "100015",
                            "values": {},
                        },
                    ],
                }
            ],
        }
    },
}
RAW_ADDRESSES = [
    "cloudflare_waf_group.wordpress",
    'cloudflare_waf_rule.r["100015"]',
    'cloudflare_waf_rule.r["100016"]',
    "module.waf.cloudflare_waf_package.owasp[0]",
]
LIST_STEP = "terraform state list | grep -E '^cloudflare_waf_(package|group|rule)\\.'"
PLAN_STEP = 'terraform plan  # expect "No changes"'


def test_raw_tfstate_gives_the_five_cleanup_steps_in_state_order():
    steps = generate(ENTRYPOINT, ZONE, state=RAW_STATE).cleanup_steps
    quoted = (
        "cloudflare_waf_group.wordpress 'cloudflare_waf_rule.r[\"100015\"]' "
        "'cloudflare_waf_rule.r[\"100016\"]' 'module.waf.cloudflare_waf_package.owasp[0]'"
    )
    assert steps[0] == LIST_STEP
    assert steps[1] == f"terraform state rm -dry-run {quoted}"
    assert steps[2] == f"terraform state rm {quoted}"
    assert all(a in steps[3] for a in RAW_ADDRESSES) and ".tf" in steps[3]
    assert "override" not in steps[3] and "cloudflare_zone" not in steps[3]
    assert steps[4] == PLAN_STEP and len(steps) == 5


def test_show_json_state_with_a_module():
    steps = generate(ENTRYPOINT, ZONE, state=SHOW_JSON_STATE).cleanup_steps
    assert steps[2] == (
        "terraform state rm cloudflare_waf_package.owasp "
        "'module.waf.cloudflare_waf_rule.r[\"100015\"]'"
    )


def test_no_old_resources_no_steps():
    state = {"version": 4, "resources": [RAW_STATE["resources"][0]]}
    assert generate(ENTRYPOINT, ZONE, state=state).cleanup_steps == []
    assert generate(ENTRYPOINT, ZONE).cleanup_steps == []
    assert generate(ENTRYPOINT, ZONE, state={"format_version": "1.0"}).warnings == []


def test_state_warnings_name_each_old_resource_and_overrides_twice():
    warnings = generate(ENTRYPOINT, ZONE, state=RAW_STATE).warnings
    removed = [w for w in warnings if "removed in provider v4" in w]
    assert [w.split(" ", 1)[0] for w in removed] == [
        *RAW_ADDRESSES[:3],
        "cloudflare_waf_override.shop",
        RAW_ADDRESSES[3],
    ]
    assert all("3.35" in w and "cloudflare_ruleset" in w for w in removed)
    (destroy,) = [w for w in warnings if "destroy" in w]
    assert "cloudflare_waf_override.shop" in destroy and "before migrating" in destroy
    assert "ineligible" in destroy and len(warnings) == 6


OLD_TF = """
resource "cloudflare_waf_package" "owasp" {
  zone_id     = var.zone_id
  package_id  = "a25a9a7e9c00afc1fb2e0245519d725b"
  sensitivity = "medium"
}
resource "cloudflare_waf_override" "shop" {
  zone_id = var.zone_id
  urls    = ["example.com/shop/*"]
  rules   = { "100015" = "disable" }
}
resource "cloudflare_record" "www" {
  zone_id = var.zone_id
}
"""


def test_tf_file_and_folder_are_checked(tmp_path):
    (tmp_path / "waf.tf").write_text(OLD_TF)
    (tmp_path / "group.tf").write_text(
        'resource "cloudflare_waf_group" "wp" {\n  group_id = "g"\n  mode = "off"\n}\n'
    )
    (tmp_path / "notes.txt").write_text('resource "cloudflare_waf_rule" "no" {}')
    from_file = generate(ENTRYPOINT, ZONE, tf_sources=[str(tmp_path / "waf.tf")]).warnings
    assert [w.split(" ", 1)[0] for w in from_file] == [
        "cloudflare_waf_package.owasp",
        "cloudflare_waf_override.shop",
        "cloudflare_waf_override.shop",
    ]
    assert "waf.tf" in from_file[0] and "destroy" in from_file[2]
    from_folder = generate(ENTRYPOINT, ZONE, tf_sources=[str(tmp_path)]).warnings
    assert [w.split(" ", 1)[0] for w in from_folder] == [
        "cloudflare_waf_group.wp",
        "cloudflare_waf_package.owasp",
        "cloudflare_waf_override.shop",
        "cloudflare_waf_override.shop",
    ]
    assert (
        generate(ENTRYPOINT, ZONE, tf_sources=[OLD_TF])
        .warnings[0]
        .startswith("cloudflare_waf_package.owasp (in <tf source 1>)")
    )


def test_a_tf_file_that_does_not_parse_is_a_warning(tmp_path):
    bad = tmp_path / "broken.tf"
    bad.write_text('resource "cloudflare_waf_rule" "r" {\n  mode = \n')
    result = generate(ENTRYPOINT, ZONE, tf_sources=[str(bad), str(tmp_path / "missing.tf")])
    assert len(result.warnings) == 2
    assert str(bad) in result.warnings[0] and "does not parse" in result.warnings[0]
    assert "missing.tf" in result.warnings[1]
    assert result.hcl and result.commands  # flagged, not refused


def test_paths_are_accepted_for_the_state_and_a_single_tf_file(tmp_path):
    state = tmp_path / "terraform.tfstate"
    state.write_text(json.dumps(RAW_STATE))
    tf = tmp_path / "waf.tf"
    tf.write_text(OLD_TF)
    by_path = generate(ENTRYPOINT, ZONE, state=state, tf_sources=tf)  # type: ignore[arg-type]
    by_value = generate(ENTRYPOINT, ZONE, state=RAW_STATE, tf_sources=[str(tf)])
    assert by_path == by_value


# -- the old resources, the starting point ---------------------------------------
OLD_CONFIG = {
    "zone_id": ZONE,
    "packages": [
        {
            "id": "a25a9a7e9c00afc1fb2e0245519d725b",
            "name": "OWASP ModSecurity Core Rule Set",
            "sensitivity": "high",
            "action_mode": "simulate",
        }
    ],
    "groups": [
        {
            "id": "de677e5818985db1285d0e80225f06e5",
            "name": "WordPress",
            "package_id": "1e334934fd7ae32ad705667f8c1057aa",
            "mode": "on",
        },
        {"id": "x1", "name": "WordPress", "mode": "off"},
    ],
    "rules": [
        {
            "id": "100015",
            "package_id": "1e334934fd7ae32ad705667f8c1057aa",
            "mode": "disable",
            "description": 'Rule with "quotes"',
        }
    ],
    "overrides": [
        {
            "id": "de677e5818985db1285d0e80225f06e5",
            "description": "Shop",
            "urls": ["shop.example.com/*"],
            "priority": 1,
            "paused": False,
            "rules": {"100015": "disable"},
            "groups": {},
            "rewrite_action": {"default": "block", "challenge": "block"},
        }
    ],
}


def test_old_resources_show_the_starting_point():
    text = old_resources(OLD_CONFIG)
    parsed = hcl2.loads(text)
    found = {
        (t.strip('"'), n.strip('"')): body
        for entry in parsed["resource"]
        for t, named in entry.items()
        for n, body in named.items()
    }
    assert sorted(found) == [
        ("cloudflare_waf_group", "wordpress"),
        ("cloudflare_waf_group", "wordpress_x1"),
        ("cloudflare_waf_override", "shop"),
        ("cloudflare_waf_package", "owasp_modsecurity_core_rule_set"),
        ("cloudflare_waf_rule", "rule_100015"),
    ]
    package = found["cloudflare_waf_package", "owasp_modsecurity_core_rule_set"]
    assert (package["sensitivity"], package["action_mode"]) == ('"high"', '"simulate"')
    assert found["cloudflare_waf_group", "wordpress"]["mode"] == '"on"'
    assert found["cloudflare_waf_rule", "rule_100015"]["mode"] == '"disable"'
    override = found["cloudflare_waf_override", "shop"]
    assert override["rules"] == {'"100015"': '"disable"'} and "groups" not in override
    assert override["rewrite_action"] == {'"default"': '"block"', '"challenge"': '"block"'}
    assert "3.35" in text.splitlines()[0]
    with pytest.raises(ValueError, match="zone_id"):
        old_resources({"rules": [{"id": "1", "mode": "on"}]})


# -- reading the entry point ----------------------------------------------------------
def test_fetch_reports_api_errors_and_odd_answers():
    def answer(status: int, body: Any) -> httpx.MockTransport:
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        return httpx.MockTransport(lambda request: httpx.Response(status, content=content))

    chained = {
        "success": False,
        "result": None,
        "errors": [
            {
                "code": 6003,
                "message": "Invalid request headers",
                "error_chain": [{"code": 6111, "message": "Invalid format"}],
            }
        ],
    }
    with pytest.raises(
        EntrypointError,
        match="HTTP 400, error 6003: Invalid request headers "
        r"\(6111: Invalid format\)",
    ):
        fetch_entrypoint("http://x/client/v4", ZONE, token="t", transport=answer(400, chained))
    with pytest.raises(EntrypointError, match="HTTP 502, the answer is not JSON"):
        fetch_entrypoint("http://x/client/v4", ZONE, token="t", transport=answer(502, b"<html>"))
    with pytest.raises(EntrypointError, match="holds no ruleset"):
        fetch_entrypoint(
            "http://x/client/v4",
            ZONE,
            token="t",
            transport=answer(200, {"success": True, "result": None}),
        )
    with pytest.raises(ValueError, match="token"):
        fetch_entrypoint("http://x/client/v4", ZONE, email="a@b.c")


# -- the CLI against a live simulator ---------------------------------------------------
@pytest.fixture
def live():
    """A served Workbench with one enterprise zone, before any entry point exists."""
    wb = Workbench(seed=0)
    zone = wb.create_zone("example.com", plan="enterprise")
    url = serve(wb)
    yield wb, zone.id, url
    stop(wb)


def _deploy(wb: Workbench, zone_id: str) -> str:
    managed = wb.rulesets.get_ruleset(zone_id, CLOUDFLARE_MANAGED_ID).to_dict()
    rules = [
        {
            "action": "skip",
            "expression": 'http.request.uri.path eq "/wp-admin"',
            "action_parameters": {"rules": {CLOUDFLARE_MANAGED_ID: [managed["rules"][0]["id"]]}},
            "logging": {"enabled": False},
        },
        {
            "action": "execute",
            "expression": "true",
            "description": "OWASP",
            "action_parameters": {
                "id": OWASP_ID,
                "overrides": {"categories": [{"category": "paranoia-level-3", "enabled": False}]},
            },
        },
        {
            "action": "execute",
            "expression": "true",
            "enabled": False,
            "action_parameters": {"id": CLOUDFLARE_MANAGED_ID, "version": "latest"},
        },
    ]
    return wb.rulesets.put_entrypoint(zone_id, MANAGED_PHASE, {"name": "zone", "rules": rules}).id


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(["terraform", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_json_with_a_token(live, capsys):
    wb, zone_id, url = live
    rid = _deploy(wb, zone_id)
    code, out, err = _run(
        capsys,
        "--base-url",
        url,
        "--zone",
        zone_id,
        "--token",
        wb.account.tokens[0].value,
        "--json",
    )
    assert (code, err) == (0, "")
    result = json.loads(out)
    assert sorted(result) == ["cleanup_steps", "commands", "hcl", "warnings"]
    expected = generate(wb.rulesets.get_entrypoint(zone_id, MANAGED_PHASE).to_dict(), zone_id)
    assert result == json.loads(expected.to_json())
    assert f'"terraform_managed_resource_{rid}"' in result["hcl"]
    assert result["commands"][-1].endswith(f"zones/{zone_id}/{rid}")


def test_cli_key_auth_and_provider_4(live, capsys):
    wb, zone_id, url = live
    rid = _deploy(wb, zone_id)
    code, out, _ = _run(
        capsys,
        "--base-url",
        url,
        "--zone",
        zone_id,
        "--email",
        wb.account.email,
        "--key",
        wb.account.api_key,
        "--provider",
        "4",
        "--json",
    )
    result = json.loads(out)
    assert code == 0 and "  rules {" in result["hcl"]
    assert result["commands"][-1] == (
        f"terraform import cloudflare_ruleset.terraform_managed_resource_{rid} zone/{zone_id}/{rid}"
    )


def test_cli_fails_on_a_missing_entry_point(live, capsys):
    wb, zone_id, url = live
    code, out, err = _run(
        capsys,
        "--base-url",
        url,
        "--zone",
        zone_id,
        "--token",
        wb.account.tokens[0].value,
        "--json",
    )
    assert code != 0 and out == ""
    assert "404" in err and "10003" in err and "could not find entrypoint" in err


def test_cli_reports_bad_credentials(live, capsys):
    _, zone_id, url = live
    code, _, err = _run(capsys, "--base-url", url, "--zone", zone_id, "--token", "x" * 40)
    assert code != 0 and re.search(r"error \d+: ", err)


def test_cli_reports_a_closed_port(capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, out, err = _run(
        capsys,
        "--base-url",
        f"http://127.0.0.1:{port}/client/v4",
        "--zone",
        ZONE,
        "--token",
        "t" * 40,
    )
    assert code != 0 and out == "" and "no answer" in err and "ConnectError" in err


def test_cli_email_needs_key(capsys):
    code, _, err = _run(capsys, "--base-url", "http://x", "--zone", ZONE, "--email", "a@b.c")
    assert code == 2 and "--key" in err


def test_cli_state_file_and_tf_paths(live, capsys, tmp_path):
    wb, zone_id, url = live
    _deploy(wb, zone_id)
    state = tmp_path / "terraform.tfstate"
    state.write_text(json.dumps(RAW_STATE))
    (tmp_path / "tf").mkdir()
    (tmp_path / "tf" / "waf.tf").write_text(OLD_TF)
    (tmp_path / "broken.tf").write_text("resource {")
    code, out, err = _run(
        capsys,
        "--base-url",
        url,
        "--zone",
        zone_id,
        "--token",
        wb.account.tokens[0].value,
        "--state-file",
        str(state),
        "--tf",
        str(tmp_path / "tf"),
        "--tf",
        str(tmp_path / "broken.tf"),
        "--json",
    )
    assert (code, err) == (0, "")
    result = json.loads(out)
    assert result["cleanup_steps"][0] == LIST_STEP and len(result["cleanup_steps"]) == 5
    assert sum("in the state file" in w for w in result["warnings"]) == 6
    assert sum("waf.tf" in w for w in result["warnings"]) == 3
    assert "broken.tf" in result["warnings"][-1]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, _, err = _run(
        capsys,
        "--base-url",
        url,
        "--zone",
        zone_id,
        "--token",
        wb.account.tokens[0].value,
        "--state-file",
        str(bad),
    )
    assert code == 1 and "bad.json" in err


@pytest.mark.parametrize(("provider", "prefix"), [("4", "zone"), ("5", "zones")])
def test_cli_modern_import_block(live, capsys, provider, prefix):
    wb, zone_id, url = live
    rid = _deploy(wb, zone_id)
    code, out, _ = _run(
        capsys,
        "--base-url",
        url,
        "--zone",
        zone_id,
        "--token",
        wb.account.tokens[0].value,
        "--provider",
        provider,
        "--modern-import-block",
        "--json",
    )
    result = json.loads(out)
    assert code == 0 and len(result["commands"]) == 2
    assert result["commands"][1].endswith(" --modern-import-block")
    (block,) = hcl2.loads(result["hcl"])["import"]
    assert block["id"] == f'"{prefix}/{zone_id}/{rid}"'


def test_cli_readable_sections(live, capsys, tmp_path):
    wb, zone_id, url = live
    _deploy(wb, zone_id)
    state = tmp_path / "state.json"
    state.write_text(json.dumps(SHOW_JSON_STATE))
    code, out, _ = _run(
        capsys,
        "--base-url",
        url + "/",
        "--zone",
        zone_id,
        "--token",
        wb.account.tokens[0].value,
        "--state-file",
        str(state),
    )
    assert code == 0
    assert out.index("== HCL ==") < out.index("== Commands ==") < out.index("== Cleanup steps ==")
    assert "1. " + LIST_STEP in out and "5. " + PLAN_STEP in out
    assert 'resource "cloudflare_ruleset"' in out and "- cloudflare_waf_package.owasp" in out


def test_terraform_is_a_registered_command():
    assert "terraform" in cli.COMMANDS
    assert Path(cli.__file__).name == "cli.py"
