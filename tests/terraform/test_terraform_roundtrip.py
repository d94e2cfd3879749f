"""The generated HCL converts back to the entry point it came from (providers 4 and 5).

The HCL is parsed with python-hcl2 and the rules are rebuilt from the
parsed blocks or objects. python-hcl2 8 gives strings in their source form;
they are decoded with ``hcl_value``, itself checked against python-hcl2's
own decoding below.
"""

from __future__ import annotations

from typing import Any

import hcl2
import pytest
from hcl2 import SerializationOptions
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench import Workbench
from workbench.rulesets import CLOUDFLARE_MANAGED_ID, MANAGED_PHASE, OWASP_ID
from workbench.terraform import generate
from workbench.terraform._hcl import hcl_string, hcl_value

OWASP_LAST_RULE = "6179ae15870a4bb7b2d480d4843b323c"
RID = "060013b1eeb14c93b0dcd896537e0d2c"
ZONE = "023e105f4ecef8ad9ca31a8372d0c353"
# Block names provider 4 writes once (a list of one after parsing) or repeats.
SINGLE_BLOCKS = {"action_parameters", "overrides", "logging", "matched_data"}

TRICKY = [
    'http.host eq "example.com"',
    r'http.request.uri.path matches "^/a\\b\.php$"',
    'http.request.uri.path eq "/${var.x}" or http.request.uri.query contains "%{if}"',
    'http.request.uri.path eq "/$${already}" and http.user_agent contains "%%{x}"',
    'http.user_agent contains "café ☕ 漢字 🚀"',
    'http.request.uri.path eq "/a\\\\b" and\nhttp.host eq "tab\there"',
    'http.request.body.raw matches r#"(?i)information_schema|\\bsys\\.(?:tables)\\b"#',
    'ends_with(http.host, "$") and http.host ne "%" and http.host ne "\\"',
]


def _ep(rules: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "id": RID,
        "name": "zone",
        "kind": "zone",
        "phase": MANAGED_PHASE,
        "rules": rules,
        **extra,
    }


def _execute(ruleset: str, **params: Any) -> dict[str, Any]:
    return {
        "action": "execute",
        "expression": "true",
        "action_parameters": {"id": ruleset, **params},
    }


ENTRYPOINTS = {
    "execute without overrides": _ep([_execute(CLOUDFLARE_MANAGED_ID, version="latest")]),
    "execute with overrides": _ep(
        [
            {
                **_execute(
                    OWASP_ID,
                    overrides={
                        "categories": [
                            {"category": "paranoia-level-3", "enabled": False},
                            {"category": "paranoia-level-4", "enabled": False, "action": "log"},
                        ],
                        "rules": [
                            {"id": OWASP_LAST_RULE, "action": "log", "score_threshold": 60},
                            {"id": "a" * 32, "enabled": True},
                        ],
                    },
                ),
                "description": "OWASP at PL2",
                "ref": "owasp",
            },
            _execute(CLOUDFLARE_MANAGED_ID, overrides={"action": "log", "enabled": True}),
        ],
        description="migrated from the old WAF",
    ),
    "skip of each kind": _ep(
        [
            {
                "action": "skip",
                "expression": "ip.src in {192.0.2.0/24}",
                "action_parameters": {"ruleset": "current"},
                "logging": {"enabled": False},
            },
            {
                "action": "skip",
                "expression": 'http.host eq "a"',
                "action_parameters": {"rulesets": [OWASP_ID, CLOUDFLARE_MANAGED_ID]},
            },
            {
                "action": "skip",
                "expression": "ssl",
                "description": "two rulesets",
                "action_parameters": {
                    "rules": {CLOUDFLARE_MANAGED_ID: ["b" * 32, "c" * 32], OWASP_ID: ["d" * 32]}
                },
                "logging": {"enabled": True},
            },
            {
                "action": "skip",
                "expression": "not ssl",
                "action_parameters": {
                    "phases": ["http_ratelimit", "http_request_sbfm"],
                    "products": ["waf", "zoneLockdown", "uaBlock"],
                },
            },
            _execute(CLOUDFLARE_MANAGED_ID),
        ]
    ),
    "disabled rules": _ep(
        [
            {**_execute(OWASP_ID), "enabled": False},
            {
                "action": "skip",
                "expression": "ssl",
                "enabled": False,
                "action_parameters": {"ruleset": "current"},
            },
        ]
    ),
    "tricky expressions": _ep(
        [
            {
                "action": "skip",
                "expression": e,
                "description": f'#{n} "{e[:12]}" ${{x}}',
                "action_parameters": {"ruleset": "current"},
            }
            for n, e in enumerate(TRICKY)
        ]
    ),
    "no rules": _ep([]),
}


def _simulated() -> dict[str, Any]:
    """An entry point exactly as the simulator's API returns it."""
    wb = Workbench(seed=0)
    zone = wb.create_zone("example.com", plan="enterprise")
    managed = wb.rulesets.get_ruleset(zone.id, CLOUDFLARE_MANAGED_ID).to_dict()
    body = ENTRYPOINTS["execute with overrides"]["rules"][:1] + [
        {
            "action": "skip",
            "expression": TRICKY[2],
            "action_parameters": {"rules": {CLOUDFLARE_MANAGED_ID: [managed["rules"][0]["id"]]}},
        },
        _execute(CLOUDFLARE_MANAGED_ID, version="latest"),
    ]
    body[0]["action_parameters"]["overrides"]["rules"] = body[0]["action_parameters"]["overrides"][
        "rules"
    ][:1]
    return wb.rulesets.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": body}).to_dict()


def _plain(value: Any, provider: int, key: str = "") -> Any:
    """python-hcl2's blocks back to the API's objects."""
    if isinstance(value, list):
        items = [_plain(v, provider, key) for v in value]
        return items[0] if provider == 4 and key in SINGLE_BLOCKS else items
    if isinstance(value, dict):
        # Map keys (ruleset ids) come quoted too.
        return {
            hcl_value(k): _plain(v, provider, k) for k, v in value.items() if k != "__is_block__"
        }
    return hcl_value(value)


def rebuild(text: str, provider: int) -> dict[str, Any]:
    """The ruleset configuration the HCL describes."""
    (resource,) = hcl2.loads(text)["resource"]
    (named,) = resource['"cloudflare_ruleset"'].values()
    body = _plain(named, provider)
    rules = body.get("rules", [])
    for rule in rules:
        skipped = rule.get("action_parameters", {}).get("rules")
        if provider == 4 and isinstance(skipped, dict):
            rule["action_parameters"]["rules"] = {
                rs: ids.split(",") if ids else [] for rs, ids in skipped.items()
            }
    return {**body, "rules": rules}


def expected(entrypoint: dict[str, Any]) -> dict[str, Any]:
    rules = []
    for r in entrypoint["rules"]:
        rule = {
            "description": r.get("description", ""),
            "expression": r["expression"],
            "action": r["action"],
            "enabled": r.get("enabled", True),
        }
        if r.get("ref"):
            rule["ref"] = r["ref"]
        for key in ("action_parameters", "logging"):
            if key in r:
                rule[key] = r[key]
        rules.append(rule)
    out = {
        "zone_id": ZONE,
        "name": entrypoint["name"],
        "kind": "zone",
        "phase": entrypoint["phase"],
        "rules": rules,
    }
    if entrypoint.get("description"):
        out["description"] = entrypoint["description"]
    return out


@pytest.mark.parametrize("provider", [4, 5])
@pytest.mark.parametrize("name", sorted(ENTRYPOINTS))
def test_hcl_converts_back_to_the_same_configuration(name, provider):
    entrypoint = ENTRYPOINTS[name]
    result = generate(entrypoint, ZONE, provider=provider)
    assert rebuild(result.hcl, provider) == expected(entrypoint)


@pytest.mark.parametrize("provider", [4, 5])
def test_the_simulators_own_entry_point_converts_back(provider):
    entrypoint = _simulated()
    assert entrypoint["rules"][0]["ref"]  # the API fills ref in: it is written out
    result = generate(entrypoint, ZONE, provider=provider, modern_import_block=True)
    assert rebuild(result.hcl, provider) == expected(entrypoint)


@pytest.mark.parametrize("provider", [4, 5])
@settings(max_examples=40, deadline=None)
@given(text=st.text(st.characters(blacklist_categories=["Cs"]), max_size=30))
def test_any_expression_text_survives(provider, text):
    entrypoint = _ep(
        [
            {
                "action": "skip",
                "expression": text,
                "description": text[::-1],
                "action_parameters": {"ruleset": "current"},
            }
        ]
    )
    rule = rebuild(generate(entrypoint, ZONE, provider=provider).hcl, provider)["rules"][0]
    assert (rule["expression"], rule["description"]) == (text, text[::-1])


@settings(max_examples=300, deadline=None)
@given(text=st.text(st.sampled_from('ab$%{}"\\\n\té漢\x00\u2028'), max_size=20))
def test_every_string_parses_and_decodes_back(text):
    literal = hcl_string(text)
    # A "}" later in the file must not end an escaped "$${" early (python-hcl2 8 would).
    raw = hcl2.loads(f'x = {literal}\ny = "}}"\n')["x"]
    assert raw == literal  # python-hcl2 8 keeps the source form
    assert hcl_value(raw) == text


@settings(max_examples=100, deadline=None)
@given(
    text=st.text(
        st.characters(blacklist_categories=["Cs"], blacklist_characters="${%"), max_size=20
    )
)
def test_the_decoder_agrees_with_python_hcl2_where_it_decodes(text):
    # python-hcl2 resolves backslash escapes itself, but not $${ or %%{.
    options = SerializationOptions(strip_string_quotes=True)
    assert hcl2.loads(f"x = {hcl_string(text)}\n", serialization_options=options)["x"] == text
    assert hcl_value(hcl_string(text)) == text


def test_template_sequences_are_doubled_or_spelled_out():
    assert hcl_string("/${x}") == '"/$${x}"'
    assert hcl_string("%{if a}") == '"%%{if a}"'
    assert hcl_string("$${x}") == '"$$${x}"'
    assert hcl_string("a ${ b") == '"a \\u0024{ b"'  # unclosed: python-hcl2 cannot read $${
    assert hcl_string('q"b\\n\n') == '"q\\"b\\\\n\\n"'
    assert hcl_value("bare") == "bare"
