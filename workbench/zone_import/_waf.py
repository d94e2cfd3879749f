"""The old WAF part of a zone import: saved packages, groups and rules against the catalogue.

A real zone's saved lists name every package, group and rule, nearly all at
their defaults; only what differs from the catalogue's defaults becomes an
edit. Packages are matched by id, then by name (package ids are per zone in
the real API); groups by id, then by name within their package; rules by id.

What the catalogue does not know is skipped with one warning per file when it
is at its default (dropping it changes nothing). When it was changed (an
anomaly package's sensitivity or action, a rule's mode) the import stops with
an error naming the file and the id, since the simulated zone would behave
otherwise. An unknown group is always a warning: its default cannot be told.

    >>> from workbench.waf_legacy.catalog import default_catalog, CLOUDFLARE_PACKAGE
    >>> rules = [(CLOUDFLARE_PACKAGE, Item("waf_rules.json", "/result/0", {"id": "100000", "mode": "disable"})),
    ...          (CLOUDFLARE_PACKAGE, Item("waf_rules.json", "/result/1", {"id": "100001", "mode": "default"}))]
    >>> plan = plan_waf(default_catalog(), [], [], rules)
    >>> [(e.kind, e.target_id, e.body) for e in plan.edits]
    [('rule', '100000', {'mode': 'disable'})]
    >>> rules = [(CLOUDFLARE_PACKAGE, Item("waf_rules.json", "/result/0", {"id": "999999", "mode": "block"}))]
    >>> plan_waf(default_catalog(), [], [], rules)
    Traceback (most recent call last):
    ...
    workbench.zone_import.ZoneImportError: waf_rules.json: /result/0/id: rule 999999 is not in the simulator's catalogue (package CloudFlare) and its mode was changed to 'block'; the import cannot reproduce it
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..waf_legacy.catalog import Catalog, PackageDef
from ..waf_legacy.models import DEFAULT_ACTION_MODE, DEFAULT_SENSITIVITY
from ._files import Item, ZoneImportError, page_files, read_list, unique

# waf_groups_<package id>.json, waf_rules_<package id>-2.json ...
_PER_PACKAGE = re.compile(r"^waf_(groups|rules)_([^-]+?)(?:-[^/]*)?\.json$")
_SHOWN = 5  # ids a warning lists before "..."


@dataclass(frozen=True)
class WafEdit:
    """One change to make: a package (``target_id`` empty), group or rule, and its PATCH body."""

    item: Item
    kind: str
    package_id: str
    target_id: str
    body: dict[str, Any]


@dataclass
class WafPlan:
    """The edits, the ids matched to the catalogue (file id -> catalogue id) and the warnings."""

    edits: list[WafEdit] = field(default_factory=list)
    packages: dict[str, str] = field(default_factory=dict)
    groups: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def read_waf_lists(folder: Path, what: str) -> list[tuple[str, Item]]:
    """``(package id, item)`` for every group (``what="groups"``) or rule saved in the folder.

    ``waf_<what>_<package id>.json`` takes the package from its name; the
    all-in-one ``waf_<what>.json`` needs ``package_id`` in each object.
    """
    out: list[tuple[str, Item]] = []
    stems = sorted(
        {m.group(2) for p in folder.glob(f"waf_{what}_*.json") if (m := _PER_PACKAGE.match(p.name))}
    )
    for package_id in stems:
        for item in read_list(folder, f"waf_{what}_{package_id}", f"WAF {what}"):
            out.append((package_id, item))
    for item in read_list(folder, f"waf_{what}", f"WAF {what}"):
        out.append((item.text("package_id"), item))
    # Ids are unique within a package only; look each item's package up by identity.
    package_of = {id(item): package_id for package_id, item in out}
    kept = unique(
        [item for _, item in out],
        f"WAF {what[:-1]}",
        key=lambda item: f"{package_of[id(item)]}/{item.data['id']}",
    )
    return [(package_of[id(item)], item) for item in kept]


def waf_file_names(folder: Path) -> set[str]:
    """The names of every WAF list file the import reads in ``folder``."""
    names = {p.name for p in folder.glob("waf_*.json") if _PER_PACKAGE.match(p.name)}
    for stem in ("waf_packages", "waf_groups", "waf_rules", "waf_overrides"):
        names.update(p.name for p in page_files(folder, stem))
    return names


def plan_waf(
    catalog: Catalog,
    packages: list[Item],
    groups: list[tuple[str, Item]],
    rules: list[tuple[str, Item]],
) -> WafPlan:
    """What the saved packages, groups and rules change from the catalogue's defaults."""
    plan = WafPlan()
    names: dict[str, str] = {}
    for item in packages:
        file_id = item.text("id")
        names[file_id] = str(item.data.get("name") or file_id)
        found = _match_package(catalog, file_id, item.data.get("name"))
        if found is None:
            _unknown_package(catalog, item, plan)
            continue
        plan.packages[file_id] = found.id
        body = {k: item.data[k] for k in ("sensitivity", "action_mode") if k in item.data}
        if found.anomaly and body != _defaults(body):
            plan.edits.append(WafEdit(item, "package", found.id, "", body))
    skipped: dict[tuple[str, str], list[str]] = {}
    for file_package, item in groups:
        _group(catalog, file_package, item, plan, skipped)
    for file_package, item in rules:
        _rule(catalog, file_package, item, plan, skipped, names)
    for (source, what), ids in skipped.items():
        shown = ", ".join(ids[:_SHOWN]) + (", ..." if len(ids) > _SHOWN else "")
        plan.warnings.append(
            f"{source}: {len(ids)} {what if len(ids) > 1 else what[:-1]} not in the simulator's "
            "catalogue, left at their "
            f"defaults; skipped ({shown})"
        )
    return plan


def _defaults(body: dict[str, Any]) -> dict[str, Any]:
    default = {"sensitivity": DEFAULT_SENSITIVITY, "action_mode": DEFAULT_ACTION_MODE}
    return {k: default[k] for k in body}


def _match_package(catalog: Catalog, file_id: str, name: Any) -> PackageDef | None:
    found = catalog.package(file_id)
    if found is None and isinstance(name, str):
        found = next((p for p in catalog.packages if p.name.lower() == name.lower()), None)
    return found


def _unknown_package(catalog: Catalog, item: Item, plan: WafPlan) -> None:
    body = {k: item.data[k] for k in ("sensitivity", "action_mode") if k in item.data}
    known = ", ".join(p.name for p in catalog.packages) or "none"
    what = f"package {item.data['id']} ({item.data.get('name', 'no name')})"
    if body != _defaults(body):
        raise item.error(
            "/id",
            f"{what} is not in the simulator's catalogue (known: {known}) and its "
            "sensitivity or action was changed; the import cannot reproduce it",
        )
    plan.warnings.append(
        f"{item.source}: {item.pointer}: {what} is not in the simulator's catalogue "
        f"(known: {known}); skipped"
    )


def _package_of(catalog: Catalog, plan: WafPlan, file_package: str) -> PackageDef | None:
    return catalog.package(plan.packages.get(file_package, file_package))


def _group(
    catalog: Catalog,
    file_package: str,
    item: Item,
    plan: WafPlan,
    skipped: dict[tuple[str, str], list[str]],
) -> None:
    file_id, mode = item.text("id"), item.text("mode")
    package = _package_of(catalog, plan, file_package)
    group = None
    if package is not None:
        group = package.group(file_id) or next(
            (g for g in package.groups if g.name == item.data.get("name")), None
        )
    if package is None or group is None:
        skipped.setdefault((item.source, "groups"), []).append(file_id)
        return
    plan.groups[file_id] = group.id
    if mode != group.default_mode:
        plan.edits.append(WafEdit(item, "group", package.id, group.id, {"mode": mode}))


def _rule(
    catalog: Catalog,
    file_package: str,
    item: Item,
    plan: WafPlan,
    skipped: dict[tuple[str, str], list[str]],
    names: dict[str, str],
) -> None:
    rule_id, mode = item.text("id"), item.text("mode")
    package = _package_of(catalog, plan, file_package)
    rule = None if package is None else package.rule(rule_id)
    if package is not None and rule is not None:
        if mode != rule.initial_mode:
            plan.edits.append(WafEdit(item, "rule", package.id, rule.id, {"mode": mode}))
        return
    # An unknown rule left alone shows "default" (deny rules), its default_mode,
    # or "on" (on/off rules, which all start on in the catalogue).
    default = item.data.get("default_mode")
    if mode == "default" or mode == default or (default is None and mode == "on"):
        skipped.setdefault((item.source, "rules"), []).append(rule_id)
        return
    where = names.get(file_package) if package is None else package.name
    raise ZoneImportError(
        item.source,
        f"{item.pointer}/id",
        f"rule {rule_id} is not in the simulator's catalogue (package {where or file_package}) "
        f"and its mode was changed to {mode!r}; the import cannot reproduce it",
    )
