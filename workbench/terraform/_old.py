"""The old WAF configuration as provider 3.x resources: the migration's starting point.

:func:`old_resources` takes one zone's old-WAF configuration, a dict of
lists shaped like the old API's objects (extra keys are ignored)::

    {"zone_id": "<zone id>",
     "packages":  [{"id", "name", "sensitivity", "action_mode"}],   # anomaly packages
     "groups":    [{"id", "name", "package_id", "mode"}],            # mode on | off
     "rules":     [{"id", "package_id", "mode"}],                    # on | off, or default | disable | simulate | block | challenge
     "overrides": [{"id", "description", "urls", "rules", "groups",
                    "rewrite_action", "priority", "paused"}]}         # URI-based overrides

and writes the ``cloudflare_waf_package``, ``cloudflare_waf_group``,
``cloudflare_waf_rule`` and ``cloudflare_waf_override`` resources a
configuration managed with provider 3.x (3.35 at most) would hold. An item's
own ``zone_id`` wins over the top-level one. Resource names come from the
item's ``name`` (or ``description``), else from its kind and id.

    >>> print(old_resources({"zone_id": "z1", "groups": [
    ...     {"id": "g1", "name": "WordPress", "package_id": "p1", "mode": "off"}]}))
    # Provider 3.x resources (supported up to 3.35; removed in v4: use cloudflare_ruleset).
    <BLANKLINE>
    resource "cloudflare_waf_group" "wordpress" {
      zone_id    = "z1"
      group_id   = "g1"
      package_id = "p1"
      mode       = "off"
    }
    <BLANKLINE>
"""

from __future__ import annotations

import re
from typing import Any

from ._hcl import Map, render_block

HEADER = "# Provider 3.x resources (supported up to 3.35; removed in v4: use cloudflare_ruleset).\n"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:48].strip("_")


class _Names:
    """Unique resource names per type: the first ``wordpress`` wins, later ones get the id."""

    def __init__(self) -> None:
        self.seen: set[tuple[str, str]] = set()

    def __call__(self, rtype: str, kind: str, item: dict[str, Any], titled: bool = True) -> str:
        ident = _slug(str(item.get("id", ""))) or str(len(self.seen))
        title = _slug(str(item.get("name") or item.get("description") or "")) if titled else ""
        name = title if title and not title[0].isdigit() else f"{kind}_{ident}"
        if (rtype, name) in self.seen:
            name = f"{name}_{ident}"
        self.seen.add((rtype, name))
        return name


def _zone(item: dict[str, Any], config: dict[str, Any]) -> str:
    zone = item.get("zone_id") or config.get("zone_id")
    if not zone:
        raise ValueError(f"no zone_id for {item.get('id', item)!r}")
    return str(zone)


def _strings(value: Any) -> Map:
    return Map({str(k): str(v) for k, v in (value or {}).items()})


def old_resources(old_config: dict[str, Any]) -> str:
    """HCL for the old WAF resources of ``old_config`` (shape in the module docstring)."""
    names = _Names()
    blocks: list[str] = []

    def add(rtype: str, name: str, pairs: list[tuple[str, Any]]) -> None:
        blocks.append(render_block(f'resource "{rtype}" "{name}"', pairs, blocks=True))

    for p in old_config.get("packages") or []:
        add(
            "cloudflare_waf_package",
            names("cloudflare_waf_package", "package", p),
            [
                ("zone_id", _zone(p, old_config)),
                ("package_id", str(p["id"])),
                ("sensitivity", p.get("sensitivity")),
                ("action_mode", p.get("action_mode")),
            ],
        )
    for g in old_config.get("groups") or []:
        add(
            "cloudflare_waf_group",
            names("cloudflare_waf_group", "group", g),
            [
                ("zone_id", _zone(g, old_config)),
                ("group_id", str(g["id"])),
                ("package_id", g.get("package_id")),
                ("mode", g.get("mode")),
            ],
        )
    for r in old_config.get("rules") or []:
        # Rule descriptions are sentences; the id names a rule better.
        add(
            "cloudflare_waf_rule",
            names("cloudflare_waf_rule", "rule", r, titled=False),
            [
                ("zone_id", _zone(r, old_config)),
                ("rule_id", str(r["id"])),
                ("package_id", r.get("package_id")),
                ("mode", r.get("mode")),
            ],
        )
    for o in old_config.get("overrides") or []:
        add(
            "cloudflare_waf_override",
            names("cloudflare_waf_override", "override", o),
            [
                ("zone_id", _zone(o, old_config)),
                ("description", o.get("description")),
                ("urls", [str(u) for u in o.get("urls") or []]),
                ("priority", o.get("priority")),
                ("paused", o.get("paused")),
                ("groups", _strings(o.get("groups")) or None),
                ("rules", _strings(o.get("rules")) or None),
                ("rewrite_action", _strings(o.get("rewrite_action")) or None),
            ],
        )
    return HEADER + "".join("\n" + b for b in blocks)
