"""Building an imported zone through the services' own calls, and what the import reports.

:class:`Builder` replays a checked folder (:class:`~workbench.zone_import._zone.ZoneFolder`)
as the calls a client would make: the zone, its filters, rules (pointing at
the new filter ids), page rules, URI-based overrides, old WAF edits and the
``waf`` setting. One object per call, so a refusal names the exact object:
the service's JSON pointer (relative to the body) is joined to the object's
place in its file.

    >>> from workbench.core.errors import ValidationError
    >>> item = Item("firewall_rules.json", "/result/3", {})
    >>> located(ValidationError("/0/filter/expression: bad", source={"pointer": "/0/filter/expression"}), item, "", batch=True).message
    'firewall_rules.json: /result/3/filter/expression: bad'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from ..core.errors import WorkbenchError
from ._files import Item, ZoneImportError

if TYPE_CHECKING:
    from ..core.platform import Workbench, Zone
    from ..firewall.service import FirewallService
    from ..waf_legacy.service import WafLegacyService
    from ._zone import ZoneFolder

T = TypeVar("T")

FILTER_FIELDS = ("expression", "paused", "description", "ref")
RULE_FIELDS = ("action", "paused", "description", "ref", "priority", "products")
PAGE_RULE_FIELDS = ("targets", "actions", "priority", "status")
OVERRIDE_FIELDS = ("urls", "rules", "groups", "rewrite_action", "priority", "description", "paused")
# Optional fields a saved response may show as null: null means "not set".
_NULL_IS_ABSENT = frozenset({"paused", "description", "ref", "priority", "products"})
_FIRST_OF_BATCH = re.compile(r"^/0(?=/|$)")
_ACTION_INDEX = re.compile(r"^/actions/(\d+)")


@dataclass
class ZoneImport:
    """What an import made: the zone, old id -> new id per kind, counts and warnings.

    ``ids`` has ``zones``, ``filters``, ``firewall_rules``, ``page_rules`` and
    ``waf_overrides`` (the services give new ids), and ``waf_packages`` /
    ``waf_groups`` (catalogue ids, kept; they differ only where matched by name).
    """

    zone: Zone
    ids: dict[str, dict[str, str]]
    counts: dict[str, int]
    waf_setting: str
    waf_changes: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """Plain data for ``--json``: the zone, counts, old WAF changes and warnings."""
        kinds = [c["kind"] for c in self.waf_changes]
        return {
            "zone": self.zone.name,
            "zone_id": self.zone.id,
            "source_zone_id": next(iter(self.ids["zones"]), None),
            "plan": self.zone.plan,
            **self.counts,
            "waf_setting": self.waf_setting,
            "waf_changed": {k: kinds.count(k) for k in ("package", "group", "rule")},
            "waf_changes": self.waf_changes,
            "warnings": list(self.warnings),
        }

    def lines(self) -> list[str]:
        """The summary as text, one fact a line."""
        s = self.summary()
        changed = s["waf_changed"]
        was = f"; was {s['source_zone_id']}" if s["source_zone_id"] else ""
        out = [
            f"zone: {s['zone']} ({s['zone_id']}{was})",
            f"plan: {s['plan']}",
            f"filters: {s['filters']}",
            f"firewall rules: {s['firewall_rules']} (bypass waf: {s['bypass_waf_rules']})",
            f"page rules: {s['page_rules']}",
            f"waf overrides: {s['waf_overrides']}",
            f"waf setting: {s['waf_setting']}",
            "old WAF modes changed from defaults: "
            f"packages {changed['package']}, groups {changed['group']}, rules {changed['rule']}",
        ]
        for change in self.waf_changes:
            body = ", ".join(f"{k} {v}" for k, v in change["set"].items())
            out.append(f"  {change['kind']} {change['id']} ({change['name']}): {body}")
        return out


def located(
    exc: WorkbenchError,
    item: Item,
    field: str,
    *,
    batch: bool = False,
    remap: Callable[[str], str] | None = None,
) -> ZoneImportError:
    """A service's refusal of ``item`` as an error naming its file and field.

    A refusal without a pointer is put on ``field`` (relative to the item);
    ``batch`` drops the ``/0`` of a one-object batch; ``remap`` rewrites the
    pointer where the body sent differs from the saved object.
    """
    source = exc.extra.get("source")
    pointer = source.get("pointer") if isinstance(source, Mapping) else None
    if not isinstance(pointer, str):
        return item.error(field, exc.message)
    detail = exc.message
    if pointer not in ("", "/") and detail.startswith(f"{pointer}: "):
        detail = detail[len(pointer) + 2 :]
    pointer = "" if pointer == "/" else pointer
    if batch:
        pointer = _FIRST_OF_BATCH.sub("", pointer)
    if remap is not None:
        pointer = remap(pointer)
    return item.error(pointer, detail)


def _fields(data: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {
        k: data[k] for k in keys if k in data and not (data[k] is None and k in _NULL_IS_ABSENT)
    }


class Builder:
    """Replays a checked folder on ``wb``, through the ``firewall`` and ``waf`` given.

    ``zone`` is set as soon as the zone exists, so a caller can undo a failed run.
    """

    def __init__(
        self, wb: Workbench, firewall: FirewallService, waf: WafLegacyService, folder: ZoneFolder
    ) -> None:
        self.wb, self.firewall, self.waf, self.folder = wb, firewall, waf, folder
        self.zone: Zone | None = None

    def _call(
        self,
        item: Item,
        field: str,
        call: Callable[..., T],
        *args: Any,
        batch: bool = False,
        remap: Callable[[str], str] | None = None,
    ) -> T:
        try:
            return call(*args)
        except WorkbenchError as exc:
            raise located(exc, item, field, batch=batch, remap=remap) from None

    def run(self) -> ZoneImport:
        """Make the zone and everything in it; the first refusal stops the run."""
        f = self.folder
        zone = self._call(f.zone, "/name", self.wb.create_zone, f.name, f.plan)
        self.zone = zone
        ids: dict[str, dict[str, str]] = {
            "zones": {f.source_id: zone.id} if f.source_id else {},
            "filters": {},
            "firewall_rules": {},
            "page_rules": {},
            "waf_overrides": {},
            "waf_packages": dict(f.waf.packages),
            "waf_groups": dict(f.waf.groups),
        }
        made: dict[str, str] = {}  # filter key (file id, or the rule's place) -> new id
        for key, item in f.filters:
            body = _fields(item.data, FILTER_FIELDS)
            [flt] = self._call(item, "", self.firewall.create_filters, zone.id, [body], batch=True)
            made[key] = flt.id
            if key == item.data.get("id"):
                ids["filters"][key] = flt.id
        bypass_waf = 0
        for item, key in f.rules:
            body = {**_fields(item.data, RULE_FIELDS), "filter": {"id": made[key]}}
            [rule] = self._call(item, "", self.firewall.create_rules, zone.id, [body], batch=True)
            ids["firewall_rules"][item.data["id"]] = rule.id
            bypass_waf += rule.action == "bypass" and "waf" in (rule.products or [])
        for item, kept in f.page_rules:
            made_rule = self._page_rule(zone, item, kept)
            ids["page_rules"][item.data["id"]] = made_rule
        for item in f.overrides:
            body = _fields(item.data, OVERRIDE_FIELDS)
            if isinstance(body.get("groups"), Mapping):
                body["groups"] = {f.waf.groups.get(k, k): v for k, v in body["groups"].items()}
            override = self._call(item, "", self.waf.create_override, zone.id, body)
            ids["waf_overrides"][item.data["id"]] = override.id
        changes = self._waf_edits(zone)
        if f.setting is not None:
            value = f.setting.data["value"]
            if value != self.waf.get_setting(zone.id).value:
                self._call(f.setting, "/value", self.waf.set_setting, zone.id, {"value": value})
        counts = {
            "filters": len(made),
            "firewall_rules": len(f.rules),
            "bypass_waf_rules": int(bypass_waf),
            "page_rules": len(f.page_rules),
            "waf_overrides": len(f.overrides),
        }
        setting = self.waf.get_setting(zone.id).value
        return ZoneImport(zone, ids, counts, setting, changes, list(f.warnings))

    def _page_rule(self, zone: Zone, item: Item, kept: list[int] | None) -> str:
        body = _fields(item.data, PAGE_RULE_FIELDS)
        remap = None
        if kept is not None:
            body["actions"] = [item.data["actions"][i] for i in kept]

            def remap(pointer: str) -> str:
                # The body holds only the simulated actions: point at the saved index.
                return _ACTION_INDEX.sub(lambda m: f"/actions/{kept[int(m.group(1))]}", pointer)

        return self._call(item, "", self.firewall.page_rules.create, zone.id, body, remap=remap).id

    def _waf_edits(self, zone: Zone) -> list[dict[str, Any]]:
        changes = []
        for edit in self.folder.waf.edits:
            if edit.kind == "package":
                self._call(
                    edit.item, "", self.waf.edit_package, zone.id, edit.package_id, edit.body
                )
            else:
                call = self.waf.edit_group if edit.kind == "group" else self.waf.edit_rule
                self._call(edit.item, "", call, zone.id, edit.package_id, edit.target_id, edit.body)
            changes.append(
                {
                    "kind": edit.kind,
                    "package_id": edit.package_id,
                    "id": edit.target_id or edit.package_id,
                    "set": dict(edit.body),
                    "name": str(
                        edit.item.data.get("name") or edit.item.data.get("description") or ""
                    ),
                    "from": f"{edit.item.source} {edit.item.pointer or '/'}",
                }
            )
        return changes

    def undo(self) -> None:
        """Take the zone out of the workbench again (after a run that failed half-way).

        The trial run on a scratch workbench makes this a last resort. There
        is no public call that deletes a zone; ids are never reused, so what
        the services keep under the forgotten id can no longer be reached.
        """
        if self.zone is not None:
            self.wb._zones.pop(self.zone.id, None)
            self.zone = None
