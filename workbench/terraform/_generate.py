"""Terraform for a migrated zone: the ``cloudflare_ruleset`` resource, its import, the clean-up.

After the migration a zone's managed WAF lives in its
``http_request_firewall_managed`` entry point, so its Terraform
configuration becomes one ``cloudflare_ruleset`` resource, named as the
platform's generator tool names it (``terraform_managed_resource_<ruleset
id>``) and imported rather than created (a fresh ``apply`` would fail: the
entry point exists). :func:`generate` writes that resource in provider 5
syntax (nested objects and lists) or provider 4 syntax (repeated blocks,
skip-rules maps of comma-joined ids), the import commands or ``import``
block, and, given the old state and ``.tf`` files, the steps that drop the
old ``cloudflare_waf_*`` resources and warnings about them.

    >>> entrypoint = {"id": "e1", "name": "zone", "phase": "http_request_firewall_managed",
    ...     "rules": [{"action": "skip", "expression": 'http.host eq "a"', "enabled": True,
    ...                "action_parameters": {"rules": {"rs1": ["r1", "r2"]}}}]}
    >>> result = generate(entrypoint, "z1", provider=4)
    >>> print(result.hcl)
    resource "cloudflare_ruleset" "terraform_managed_resource_e1" {
      zone_id = "z1"
      name    = "zone"
      kind    = "zone"
      phase   = "http_request_firewall_managed"
      rules {
        description = ""
        expression  = "http.host eq \\"a\\""
        action      = "skip"
        enabled     = true
        action_parameters {
          rules = {
            "rs1" = "r1,r2"
          }
        }
      }
    }
    <BLANKLINE>
    >>> result.commands[-1]
    'terraform import cloudflare_ruleset.terraform_managed_resource_e1 zone/z1/e1'
    >>> generate(entrypoint, "z1", modern_import_block=True).hcl.splitlines()[-3:]
    ['  to = cloudflare_ruleset.terraform_managed_resource_e1', '  id = "zones/z1/e1"', '}']
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ._hcl import Map, render_block
from ._state import (
    STATE_TYPES,
    cleanup_steps,
    old_resource_warnings,
    read_state,
    state_resources,
    tf_warnings,
)

RESOURCE_TYPE = "cloudflare_ruleset"
MANAGED_PHASE = "http_request_firewall_managed"
PROVIDERS = (4, 5)
_SAFE_ID = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class TerraformResult:
    """What :func:`generate` writes: HCL, commands to run, state clean-up, warnings."""

    hcl: str
    commands: list[str] = field(default_factory=list)
    cleanup_steps: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The four parts as a plain dict."""
        return asdict(self)

    def to_json(self, indent: int | None = None) -> str:
        """The four parts as one JSON object (what ``workbench terraform --json`` prints)."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def to_text(self) -> str:
        """The four parts as readable sections."""

        def section(title: str, lines: list[str]) -> str:
            return f"== {title} ==\n" + ("\n".join(lines) if lines else "(none)") + "\n"

        return "\n".join(
            [
                section("HCL", [self.hcl.rstrip("\n")]),
                section("Commands", self.commands),
                section(
                    "Cleanup steps", [f"{n}. {s}" for n, s in enumerate(self.cleanup_steps, 1)]
                ),
                section("Warnings", [f"- {w}" for w in self.warnings]),
            ]
        )


def _check_id(what: str, value: Any) -> str:
    # Both ids end up in a resource name and in shell commands.
    if not isinstance(value, str) or not _SAFE_ID.fullmatch(value):
        raise ValueError(f"{what} must be letters, digits, '-' or '_', not {value!r}")
    return value


def resource_address(ruleset_id: str) -> str:
    """``cloudflare_ruleset.terraform_managed_resource_<ruleset_id>``, as cf-terraforming names it."""
    return f"{RESOURCE_TYPE}.terraform_managed_resource_{_check_id('ruleset id', ruleset_id)}"


def import_id(zone_id: str, ruleset_id: str, provider: int = 5) -> str:
    """The import id: ``zone/<zone>/<ruleset>`` for provider 4, ``zones/<zone>/<ruleset>`` for 5."""
    if provider not in PROVIDERS:
        raise ValueError(f"provider must be 4 or 5, not {provider!r}")
    prefix = "zone" if provider == 4 else "zones"
    return f"{prefix}/{_check_id('zone id', zone_id)}/{_check_id('ruleset id', ruleset_id)}"


def _params(params: dict[str, Any], provider: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in params.items():
        if key == "rules" and isinstance(value, dict):
            # The skip-rules map: provider 4 keeps each ruleset's ids as one
            # comma-joined string, provider 5 as a list.
            out[key] = Map(
                {
                    str(rs): ",".join(ids) if provider == 4 else list(ids)
                    for rs, ids in value.items()
                }
            )
        elif key == "overrides" and isinstance(value, dict) and provider == 4:
            # An empty list of categories or rules has no block form: leave it out.
            out[key] = {k: v for k, v in value.items() if v != []}
        else:
            out[key] = value
    return out


def _rule(rule: dict[str, Any], provider: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if rule.get("ref"):
        out["ref"] = rule["ref"]
    out["description"] = rule.get("description") or ""
    out["expression"] = rule.get("expression", "")
    out["action"] = rule.get("action")
    out["enabled"] = rule.get("enabled", True)
    if rule.get("action_parameters") is not None:
        out["action_parameters"] = _params(rule["action_parameters"], provider)
    if rule.get("logging") is not None:
        out["logging"] = dict(rule["logging"])
    return out


def ruleset_hcl(
    entrypoint: dict[str, Any],
    zone_id: str,
    *,
    provider: int = 5,
    modern_import_block: bool = False,
) -> str:
    """The ``cloudflare_ruleset`` resource (and ``import`` block) for one entry point."""
    address = resource_address(entrypoint.get("id", ""))
    target = import_id(zone_id, entrypoint["id"], provider)
    rules = [_rule(r, provider) for r in entrypoint.get("rules") or []]
    pairs: list[tuple[str, Any]] = [
        ("zone_id", zone_id),
        ("name", entrypoint.get("name") or "default"),
        ("description", entrypoint.get("description") or None),
        ("kind", "zone"),
        ("phase", entrypoint.get("phase") or MANAGED_PHASE),
        # Provider 4 has no empty form of a repeated block: no rules, no block.
        ("rules", rules if rules or provider == 5 else None),
    ]
    name = address.split(".", 1)[1]
    text = render_block(f'resource "{RESOURCE_TYPE}" "{name}"', pairs, blocks=provider == 4)
    if modern_import_block:
        # `to` is a reference, not a string: Terraform refuses a quoted address.
        text += f'\nimport {{\n  to = {address}\n  id = "{target}"\n}}\n'
    return text


def commands(
    zone_id: str, ruleset_id: str, *, provider: int = 5, modern_import_block: bool = False
) -> list[str]:
    """The generator's two commands, then ``terraform import`` unless an import block does it."""
    zone = _check_id("zone id", zone_id)
    out = [
        f'cf-terraforming generate --zone {zone} --resource-type "{RESOURCE_TYPE}"',
        f'cf-terraforming import --resource-type "{RESOURCE_TYPE}" --zone {zone}'
        + (" --modern-import-block" if modern_import_block else ""),
    ]
    if not modern_import_block:
        address = resource_address(ruleset_id)
        out.append(f"terraform import {address} {import_id(zone, ruleset_id, provider)}")
    return out


def generate(
    entrypoint: dict[str, Any],
    zone_id: str,
    *,
    provider: int = 5,
    modern_import_block: bool = False,
    state: dict[str, Any] | str | os.PathLike[str] | None = None,
    tf_sources: Sequence[str | os.PathLike[str]] | None = None,
) -> TerraformResult:
    """Terraform for ``zone_id``'s managed-WAF ``entrypoint`` (a ruleset as the API returns it).

    ``state`` is a Terraform state (``terraform show -json`` or a raw
    ``.tfstate``, or the path of one); ``tf_sources`` are ``.tf`` files or
    folders of them (or HCL text). Old
    WAF resources found there are flagged in ``warnings``, never refused;
    those in the state also get the five ``cleanup_steps``.
    """
    if provider not in PROVIDERS:
        raise ValueError(f"provider must be 4 or 5, not {provider!r}")
    if "rules" not in entrypoint and isinstance(entrypoint.get("result"), dict):
        entrypoint = entrypoint["result"]  # a whole API envelope
    ruleset_id = _check_id("ruleset id", entrypoint.get("id"))
    hcl = ruleset_hcl(
        entrypoint, zone_id, provider=provider, modern_import_block=modern_import_block
    )
    steps: list[str] = []
    warnings: list[str] = []
    if state is not None:
        found = state_resources(state if isinstance(state, dict) else read_state(state))
        steps = cleanup_steps([a for a, t in found if t in STATE_TYPES])
        warnings += old_resource_warnings(found, "in the state file")
    if isinstance(tf_sources, str | os.PathLike):
        tf_sources = [tf_sources]  # one path given bare
    if tf_sources:
        warnings += tf_warnings(list(tf_sources))
    return TerraformResult(
        hcl=hcl,
        commands=commands(
            zone_id, ruleset_id, provider=provider, modern_import_block=modern_import_block
        ),
        cleanup_steps=steps,
        warnings=warnings,
    )
