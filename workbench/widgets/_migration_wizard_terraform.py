"""The migration wizard's Terraform tab: the new resource, its import, and the old state's clean-up.

:func:`terraform_view` calls :func:`workbench.terraform.generate` on
the entry point the wizard read through the API. The clean-up steps need the
old resources a Terraform state would hold: :func:`old_terraform_config` takes
them from the zone's previous-version configuration (only what differs from
the defaults, which is what a Terraform configuration sets), and
:func:`state_of` makes the state those resources would leave.

    >>> entrypoint = {"id": "e1", "name": "default", "phase": "http_request_firewall_managed",
    ...     "rules": [{"action": "execute", "expression": "true", "enabled": True,
    ...                "action_parameters": {"id": "efb7b8c949ac4650a09736fc376e9aee"}}]}
    >>> old = {"zone_id": "z1", "groups": [{"id": "g1", "name": "WordPress",
    ...         "package_id": "p1", "mode": "on"}]}
    >>> view = terraform_view(entrypoint, "z1", 4, old)
    >>> view.result.commands[-1]
    'terraform import cloudflare_ruleset.terraform_managed_resource_e1 zone/z1/e1'
    >>> view.addresses, view.result.cleanup_steps[1]
    (['cloudflare_waf_group.wordpress'], 'terraform state rm -dry-run cloudflare_waf_group.wordpress')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..terraform import TerraformResult, generate, old_resources, tf_resources
from ..waf_legacy.models import DEFAULT_ACTION_MODE, DEFAULT_SENSITIVITY


@dataclass(frozen=True)
class TerraformView:
    """What the tab shows: the generated result, the old resources (HCL) and their addresses."""

    provider: int
    result: TerraformResult
    old_hcl: str = ""
    addresses: list[str] = field(default_factory=list)


def old_terraform_config(config: dict[str, Any]) -> dict[str, Any]:
    """The previous-version resources of ``config`` (``wb.waf_legacy.config``'s shape), in the
    shape :func:`~workbench.terraform.old_resources` takes: changed packages, groups,
    rules, and every URI-based override."""
    out: dict[str, Any] = {"zone_id": config["zone_id"], "packages": [], "groups": [],
                           "rules": [], "overrides": list(config.get("overrides") or [])}  # fmt: skip
    for package in config.get("packages") or []:
        settings = (package.get("sensitivity"), package.get("action_mode"))
        if settings[0] is not None and settings != (DEFAULT_SENSITIVITY, DEFAULT_ACTION_MODE):
            out["packages"].append({"id": package["id"], "name": package["name"],
                                    "sensitivity": settings[0], "action_mode": settings[1]})  # fmt: skip
        for group in package.get("groups") or []:
            if group.get("modified"):
                out["groups"].append({"id": group["id"], "name": group["name"],
                                      "package_id": package["id"], "mode": group["mode"]})  # fmt: skip
            for rule in group.get("rules") or []:
                if rule.get("modified"):
                    out["rules"].append({"id": rule["id"], "package_id": package["id"],
                                         "mode": rule["mode"]})  # fmt: skip
    return out


def state_of(addresses: list[str]) -> dict[str, Any]:
    """A Terraform state (version 4) holding one instance at each of ``addresses``."""
    resources = []
    for address in addresses:
        rtype, name = address.split(".", 1)
        resources.append({"mode": "managed", "type": rtype, "name": name,
                          "instances": [{"attributes": {}}]})  # fmt: skip
    return {"version": 4, "resources": resources}


def terraform_view(
    entrypoint: dict[str, Any], zone_id: str, provider: int, old: dict[str, Any] | None
) -> TerraformView:
    """Generate for ``provider``; ``old`` (see :func:`old_terraform_config`) gives the clean-up."""
    if not old or not any(old.get(k) for k in ("packages", "groups", "rules", "overrides")):
        return TerraformView(provider, generate(entrypoint, zone_id, provider=provider))
    old_hcl = old_resources(old)
    addresses = [address for address, _ in tf_resources(old_hcl)]
    result = generate(entrypoint, zone_id, provider=provider, state=state_of(addresses))
    return TerraformView(provider, result, old_hcl, addresses)
