"""Import a real zone: its configuration from the API's own responses, saved as JSON files.

Save each response with ``curl`` against the real API (the whole v4 envelope,
or only its ``result``) into one folder, under these names:

==============================  ==============================================================
file                            response
==============================  ==============================================================
``zone.json`` (required)        ``GET /zones/{id}``: ``name``, ``plan.legacy_id``
``filters.json``                ``GET /zones/{id}/filters``
``firewall_rules.json``         ``GET /zones/{id}/firewall/rules`` (rules embed their filter)
``pagerules.json``              ``GET /zones/{id}/pagerules``
``waf_packages.json``           ``GET /zones/{id}/firewall/waf/packages``
``waf_groups_<package>.json``   ``GET .../waf/packages/{package}/groups``
``waf_rules_<package>.json``    ``GET .../waf/packages/{package}/rules``
``waf_overrides.json``          ``GET /zones/{id}/firewall/waf/overrides``
``settings_waf.json``           ``GET /zones/{id}/settings/waf``
==============================  ==============================================================

Any list may be saved as pages: ``filters.json`` and/or ``filters-1.json``,
``filters-2.json``... (``waf_groups_<package>-2.json`` too). One
``waf_groups.json`` / ``waf_rules.json`` may hold every package's groups or
rules (each object then needs its ``package_id``). Every file but
``zone.json`` is optional; other ``.json`` files are ignored with a warning.

    >>> import json, tempfile
    >>> from pathlib import Path
    >>> from workbench import Workbench
    >>> tmp = tempfile.TemporaryDirectory()
    >>> folder = Path(tmp.name)
    >>> def save(name, result):
    ...     _ = (folder / name).write_text(json.dumps({"success": True, "errors": [], "result": result}))
    >>> save("zone.json", {"id": "0" * 32, "name": "shop.example", "plan": {"legacy_id": "pro"}})
    >>> save("firewall_rules.json", [{"id": "1" * 32, "action": "bypass", "products": ["waf"],
    ...     "filter": {"id": "2" * 32, "expression": 'http.request.uri.path eq "/hook"'}}])
    >>> wb = Workbench(seed=3)
    >>> done = import_zone(wb, folder)
    >>> done.zone.plan, done.counts["firewall_rules"], done.counts["bypass_waf_rules"]
    ('pro', 1, 1)
    >>> wb.firewall.list_rules(done.zone.id).items[0].filter.id == done.ids["filters"]["2" * 32]
    True
    >>> save("firewall_rules.json", [{"id": "1" * 32, "action": "block", "filter": {"id": "3" * 32}}])
    >>> import_zone(Workbench(), folder)
    Traceback (most recent call last):
    ...
    workbench.zone_import.ZoneImportError: firewall_rules.json: /result/0/filter/id: filter 33333333333333333333333333333333 is in no filters file, and the rule does not embed its expression
    >>> tmp.cleanup()

How it goes, so that a failed import leaves the workbench exactly as it was:

1. Read and check every file (JSON, types, references between files, the
   old WAF against the catalogue: :mod:`workbench.zone_import._waf`).
2. Build the zone on a scratch workbench through the services' own calls;
   a refusal becomes an error naming the file and the JSON pointer.
3. Only then build it again on ``wb`` (the same calls cannot fail now).

The services give objects their own ids: :attr:`ZoneImport.ids` maps each
old id to the new one, and rules point at the new ids of their filters (a
filter shared by several rules stays one filter). Catalogue ids (packages,
groups, rules of the old WAF) are the same everywhere and are kept.
Timestamps are not kept: the objects are made at the workbench's clock.
What the simulator does not model is dropped with a warning: page-rule
actions other than the security ones (a page rule left with none is skipped;
note that it no longer hides lower-priority page rules), rules whose filter
was deleted, and old WAF items outside the catalogue that keep their
defaults. Old WAF items outside the catalogue that were changed are errors.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.plans import PLAN_NAMES
from ..firewall.pagerules import SECURITY_ACTIONS
from ..waf_legacy.catalog import Catalog, default_catalog
from ..waf_legacy.service import WafLegacyService
from ._build import Builder, ZoneImport
from ._files import Item, ZoneImportError, kind, page_files, read_list, read_object, unique
from ._waf import WafPlan, plan_waf, read_waf_lists, waf_file_names

if TYPE_CHECKING:
    from ..core.platform import Workbench

__all__ = ["ZoneFolder", "ZoneImport", "ZoneImportError", "import_zone", "read_zone_folder"]

_LISTS = ("filters", "firewall_rules", "pagerules")
_SINGLE = ("zone.json", "settings_waf.json")


@dataclass
class ZoneFolder:
    """A folder read and checked: what to create, in order, each with its place in its file.

    ``filters`` are ``(key, filter object)``: the key is the filter's id, or the
    rule's place for a filter a rule embeds without an id; ``rules`` are
    ``(rule, key of its filter)``; ``page_rules`` are ``(page rule, indexes of
    the simulated actions kept, None when all are kept)``.
    """

    zone: Item
    name: str
    plan: str
    source_id: str | None
    filters: list[tuple[str, Item]] = field(default_factory=list)
    rules: list[tuple[Item, str]] = field(default_factory=list)
    page_rules: list[tuple[Item, list[int] | None]] = field(default_factory=list)
    overrides: list[Item] = field(default_factory=list)
    waf: WafPlan = field(default_factory=WafPlan)
    setting: Item | None = None
    warnings: list[str] = field(default_factory=list)


def import_zone(wb: Workbench, folder: str | os.PathLike[str]) -> ZoneImport:
    """Create a zone in ``wb`` from the saved responses in ``folder``; all or nothing.

    Raises :class:`ZoneImportError` (naming the file and the JSON pointer)
    and leaves ``wb`` unchanged when anything in the folder cannot be imported.
    """
    waf = wb.waf_legacy
    checked = read_zone_folder(folder, waf.catalog)
    if any(z.name == checked.name.lower() for z in wb.zones):
        raise checked.zone.error("/name", f"the workbench already has a zone named {checked.name}")
    # The trial: the same calls on a scratch workbench with the same catalogue and
    # plan, so every refusal surfaces before wb is touched (its ids and clock too).
    scratch = type(wb)(seed=wb.seed, start=wb.now())
    Builder(scratch, scratch.firewall, WafLegacyService(scratch, waf.catalog), checked).run()
    builder = Builder(wb, wb.firewall, waf, checked)
    try:
        return builder.run()
    except BaseException:
        builder.undo()
        raise


def read_zone_folder(folder: str | os.PathLike[str], catalog: Catalog | None = None) -> ZoneFolder:
    """Read and check every file of ``folder`` (nothing is created); see the module's table.

    ``catalog`` is the old WAF's (default: the package's); the services may
    still refuse what this reads, which :func:`import_zone` finds in its trial.
    """
    catalog = default_catalog() if catalog is None else catalog
    path = Path(folder)
    if not path.is_dir():
        raise ZoneImportError(str(folder), "", "is not a folder")
    zone = read_object(path, "zone.json", "a zone")
    if zone is None:
        raise ZoneImportError(
            "zone.json", "", f"is required (the GET /zones/{{zone_id}} response) in {path}"
        )
    out = ZoneFolder(zone, zone.text("name"), _plan(zone), _source_id(zone))
    _firewall(path, out)
    _page_rules(path, out)
    out.overrides = unique(read_list(path, "waf_overrides", "WAF overrides"), "WAF override")
    packages = unique(read_list(path, "waf_packages", "WAF packages"), "WAF package")
    groups, rules = read_waf_lists(path, "groups"), read_waf_lists(path, "rules")
    out.waf = plan_waf(catalog, packages, groups, rules)
    out.warnings.extend(out.waf.warnings)
    out.setting = read_object(path, "settings_waf.json", "the waf setting")
    if out.setting is not None:
        if out.setting.data.get("id", "waf") != "waf":
            raise out.setting.error(
                "/id",
                f'must be "waf" (the GET /zones/{{zone_id}}/settings/waf response), '
                f"got {out.setting.data['id']!r}",
            )
        out.setting.text("value")
    known = set(_SINGLE) | waf_file_names(path)
    known.update(p.name for stem in _LISTS for p in page_files(path, stem))
    for other in sorted(p.name for p in path.glob("*.json") if p.name not in known):
        out.warnings.append(f"{other}: not a file the import reads; ignored")
    return out


def _plan(zone: Item) -> str:
    legacy = zone.child("plan").text("legacy_id")
    if legacy.lower() not in PLAN_NAMES:
        raise zone.error(
            "/plan/legacy_id",
            f"{legacy!r} is not a plan of the simulator; use one of {', '.join(PLAN_NAMES)}",
        )
    return legacy.lower()


def _source_id(zone: Item) -> str | None:
    value = zone.data.get("id")
    return value if isinstance(value, str) and value else None


def _firewall(path: Path, out: ZoneFolder) -> None:
    """Filters (the files', then those only rules embed) and rules with their filter's key."""
    filters = unique(read_list(path, "filters", "filters"), "filter")
    by_id: dict[str, Item] = {f.data["id"]: f for f in filters}
    out.filters = [(f.data["id"], f) for f in filters]
    for rule in unique(read_list(path, "firewall_rules", "firewall rules"), "firewall rule"):
        embedded = rule.child("filter")
        if embedded.data.get("deleted") is True:
            out.warnings.append(
                f"{rule.source}: {rule.pointer}: rule {rule.data['id']} has a deleted filter "
                "and matches nothing; skipped"
            )
            continue
        filter_id = embedded.data.get("id")
        if filter_id is None:  # an inline filter of its own (saved by hand)
            key = f"{rule.source}{rule.pointer}"
            out.filters.append((key, embedded))
            out.rules.append((rule, key))
            continue
        if not isinstance(filter_id, str):
            raise embedded.error("/id", f"must be a string, got {kind(filter_id)}")
        known = by_id.get(filter_id)
        if known is None:
            if "expression" not in embedded.data:
                raise embedded.error(
                    "/id",
                    f"filter {filter_id} is in no filters file, and the rule does not embed "
                    "its expression",
                )
            by_id[filter_id] = embedded
            out.filters.append((filter_id, embedded))
        elif "expression" in embedded.data and embedded.data["expression"] != known.data.get(
            "expression"
        ):
            raise embedded.error(
                "/expression",
                f"differs from the expression of filter {filter_id} in {known.source} "
                f"at {known.pointer or '/'}",
            )
        out.rules.append((rule, filter_id))
    _refuse_shared_expressions(out.filters)


def _refuse_shared_expressions(filters: list[tuple[str, Item]]) -> None:
    # A zone holds each expression in one filter only: two saved filters with
    # one text cannot come from one zone, and the second would be refused.
    seen: dict[str, tuple[str, Item]] = {}
    for key, item in filters:
        text = item.data.get("expression")
        if not isinstance(text, str):
            continue
        first = seen.setdefault(text, (key, item))
        if first[1] is not item:
            raise item.error(
                "/expression",
                f"is also the expression of filter {first[0]} ({first[1].source} at "
                f"{first[1].pointer or '/'}); a zone holds each expression in one filter",
            )


def _page_rules(path: Path, out: ZoneFolder) -> None:
    """Page rules with the indexes of their simulated actions; the others are dropped."""
    for rule in unique(read_list(path, "pagerules", "page rules"), "page rule"):
        actions = rule.data.get("actions")
        if not isinstance(actions, list):
            out.page_rules.append((rule, None))  # the service names the problem
            continue
        others = [i for i, a in enumerate(actions) if _not_simulated(a)]
        if not others:
            out.page_rules.append((rule, None))
            continue
        dropped = ", ".join(sorted({actions[i]["id"] for i in others}))
        kept = [i for i in range(len(actions)) if i not in others]
        if not kept:
            out.warnings.append(
                f"{rule.source}: {rule.pointer}: page rule {rule.data['id']} has no security "
                f"action ({dropped}); skipped"
            )
            continue
        out.warnings.append(
            f"{rule.source}: {rule.pointer}/actions: {dropped} not simulated; dropped"
        )
        out.page_rules.append((rule, kept))


def _not_simulated(action: Any) -> bool:
    return (
        isinstance(action, Mapping)
        and isinstance(action.get("id"), str)
        and action["id"] not in SECURITY_ACTIONS
    )
