"""The old WAF's catalogue: packages, their groups and rules, checked and compiled once.

The data lives in ``workbench/waf_legacy/catalog/packages.json``
(``{"packages": [...]}``, see :func:`load_catalog` for the format). Ids are
the catalogue's, the same in every zone. Tests and notebooks can bring their
own small catalogue as plain dicts:

    >>> catalog = load_catalog([{
    ...     "id": "1" * 32, "name": "Tiny", "description": "", "detection_mode": "traditional",
    ...     "groups": [{"id": "2" * 32, "name": "Specials", "description": "", "default_mode": "on",
    ...                 "rules": [{"id": "100001", "description": "admin probe", "priority": "1",
    ...                            "kind": "deny", "default_mode": "block", "new_id": None,
    ...                            "expression": 'http.request.uri.path contains "/admin"'}]}]}])
    >>> rule = catalog.package("1" * 32).rule("100001")
    >>> rule.kind, rule.initial_mode, rule.allowed_modes[:2], rule.compiled.matches({"http.request.uri.path": "/admin"})
    ('deny', 'default', ('default', 'disable'), True)
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..rules_language import MANAGED, Expression, ExpressionError, compile_expression

CATALOG_FILE = Path(__file__).resolve().parent / "catalog" / "packages.json"

#: Well-known package ids (the catalogue's; public code uses them).
CLOUDFLARE_PACKAGE = "1e334934fd7ae32ad705667f8c1057aa"
OWASP_PACKAGE = "a25a9a7e9c00afc1fb2e0245519d725b"

DENY_MODES = ("default", "disable", "simulate", "block", "challenge")
DENY_DEFAULTS = ("block", "challenge", "simulate", "disable")
ON_OFF = ("on", "off")
DETECTION_MODES = ("traditional", "anomaly")


class CatalogError(ValueError):
    """A catalogue that breaks the format: a bug in the data, never a client's mistake."""


@dataclass(frozen=True)
class RuleDef:
    """One rule of the catalogue.

    ``kind`` is ``deny`` or ``allow`` (traditional packages) or ``anomaly``.
    A deny rule's configured mode starts as ``default`` (meaning its
    ``default_mode``); allow and anomaly rules start at their ``default_mode``.
    """

    id: str
    description: str
    priority: str
    kind: str
    default_mode: str
    expression: str
    package_id: str
    group_id: str
    score: int | None = None
    new_id: str | None = None
    compiled: Expression | None = field(default=None, compare=False, repr=False)

    @property
    def allowed_modes(self) -> tuple[str, ...]:
        """The modes the API accepts for this rule."""
        return DENY_MODES if self.kind == "deny" else ON_OFF

    @property
    def initial_mode(self) -> str:
        """The configured mode of a zone that never changed the rule."""
        return "default" if self.kind == "deny" else self.default_mode


@dataclass(frozen=True)
class GroupDef:
    """One group of a package, with its rules in catalogue order."""

    id: str
    name: str
    description: str
    default_mode: str
    package_id: str
    rules: tuple[RuleDef, ...]


@dataclass(frozen=True)
class PackageDef:
    """One package (``traditional`` or ``anomaly`` detection), with its groups."""

    id: str
    name: str
    description: str
    detection_mode: str
    groups: tuple[GroupDef, ...]
    _groups: dict[str, GroupDef] = field(default_factory=dict, compare=False, repr=False)
    _rules: dict[str, RuleDef] = field(default_factory=dict, compare=False, repr=False)

    @property
    def anomaly(self) -> bool:
        """True for a scoring package (OWASP)."""
        return self.detection_mode == "anomaly"

    @property
    def rules(self) -> list[RuleDef]:
        """Every rule, group by group, in catalogue order."""
        return list(self._rules.values())

    def group(self, group_id: str) -> GroupDef | None:
        """The group with this id, or None."""
        return self._groups.get(group_id)

    def rule(self, rule_id: str) -> RuleDef | None:
        """The rule with this id, or None."""
        return self._rules.get(rule_id)


@dataclass(frozen=True)
class Catalog:
    """The packages, in catalogue order."""

    packages: tuple[PackageDef, ...]

    def package(self, package_id: str) -> PackageDef | None:
        """The package with this id, or None."""
        return next((p for p in self.packages if p.id == package_id), None)

    def rules_named(self, rule_id: str) -> list[RuleDef]:
        """Every rule with this id (one per package that has it)."""
        return [r for p in self.packages if (r := p.rule(rule_id)) is not None]

    def groups_named(self, group_id: str) -> list[GroupDef]:
        """Every group with this id (one per package that has it)."""
        return [g for p in self.packages if (g := p.group(group_id)) is not None]


def load_catalog(source: str | Path | Iterable[Mapping[str, Any]] | None = None) -> Catalog:
    """The catalogue from ``source``: None (the package's file), a JSON file, or packages as dicts.

    Format: ``{"packages": [{id, name, description, detection_mode, groups: [{id,
    name, description, default_mode: on|off, rules: [{id, description, priority
    (string), kind: deny|allow (traditional only), default_mode, score (anomaly
    only), expression, new_id (traditional only, may be null)}]}]}]}``. A
    missing package file gives an empty catalogue (the data is written apart).
    """
    if source is None or isinstance(source, str | Path):
        path = CATALOG_FILE if source is None else Path(source)
        if not path.exists() and source is None:
            return Catalog(())
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CatalogError(f"{path}: {exc}") from None
        if not isinstance(raw, Mapping) or not isinstance(raw.get("packages"), list):
            raise CatalogError(f'{path}: must be {{"packages": [...]}}')
        items: Iterable[Mapping[str, Any]] = raw["packages"]
    else:
        items = source
    packages = [_package(p, f"packages[{i}]") for i, p in enumerate(items)]
    _unique([p.id for p in packages], "package ids")
    return Catalog(tuple(packages))


@functools.cache
def default_catalog() -> Catalog:
    """The package's catalogue, loaded and compiled once per process."""
    return load_catalog()


def _text(item: Mapping[str, Any], key: str, where: str, *, optional: bool = False) -> Any:
    value = item.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str) or (not value and key == "id"):
        raise CatalogError(f"{where}.{key}: must be a string")
    return value


def _one_of(value: Any, allowed: tuple[str, ...], where: str) -> str:
    if value not in allowed:
        raise CatalogError(f"{where}: must be one of {', '.join(allowed)}, got {value!r}")
    return str(value)


def _unique(ids: list[str], what: str) -> None:
    seen: set[str] = set()
    for i in ids:
        if i in seen:
            raise CatalogError(f"{what}: {i!r} appears twice")
        seen.add(i)


def _package(item: Any, where: str) -> PackageDef:
    if not isinstance(item, Mapping):
        raise CatalogError(f"{where}: must be an object")
    pid = _text(item, "id", where)
    mode = _one_of(item.get("detection_mode"), DETECTION_MODES, f"{where}.detection_mode")
    groups_raw = item.get("groups")
    if not isinstance(groups_raw, list):
        raise CatalogError(f"{where}.groups: must be an array")
    groups = [
        _group(g, f"{where}.groups[{i}]", pid, mode == "anomaly") for i, g in enumerate(groups_raw)
    ]
    _unique([g.id for g in groups], f"{where} group ids")
    rules = [r for g in groups for r in g.rules]
    _unique([r.id for r in rules], f"{where} rule ids")
    return PackageDef(
        id=pid,
        name=_text(item, "name", where),
        description=_text(item, "description", where, optional=True) or "",
        detection_mode=mode,
        groups=tuple(groups),
        _groups={g.id: g for g in groups},
        _rules={r.id: r for r in rules},
    )


def _group(item: Any, where: str, package_id: str, anomaly: bool) -> GroupDef:
    if not isinstance(item, Mapping):
        raise CatalogError(f"{where}: must be an object")
    gid = _text(item, "id", where)
    rules_raw = item.get("rules")
    if not isinstance(rules_raw, list):
        raise CatalogError(f"{where}.rules: must be an array")
    return GroupDef(
        id=gid,
        name=_text(item, "name", where),
        description=_text(item, "description", where, optional=True) or "",
        default_mode=_one_of(item.get("default_mode"), ON_OFF, f"{where}.default_mode"),
        package_id=package_id,
        rules=tuple(
            _rule(r, f"{where}.rules[{i}]", package_id, gid, anomaly)
            for i, r in enumerate(rules_raw)
        ),
    )


def _rule(item: Any, where: str, package_id: str, group_id: str, anomaly: bool) -> RuleDef:
    if not isinstance(item, Mapping):
        raise CatalogError(f"{where}: must be an object")
    kind = "anomaly" if anomaly else _one_of(item.get("kind"), ("deny", "allow"), f"{where}.kind")
    modes = DENY_DEFAULTS if kind == "deny" else ON_OFF
    score = item.get("score")
    if anomaly and (not isinstance(score, int) or isinstance(score, bool) or score < 0):
        raise CatalogError(f"{where}.score: an anomaly rule needs a whole score of 0 or more")
    expression = _text(item, "expression", where)
    try:
        compiled = compile_expression(expression, MANAGED)
    except ExpressionError as exc:
        raise CatalogError(f"{where}.expression: {exc}") from None
    priority = item.get("priority")
    return RuleDef(
        id=_text(item, "id", where),
        description=_text(item, "description", where, optional=True) or "",
        # The API shows priority as a string; a number in the data is taken as its text.
        priority=str(priority) if priority is not None else "",
        kind=kind,
        default_mode=_one_of(item.get("default_mode"), modes, f"{where}.default_mode"),
        expression=expression,
        package_id=package_id,
        group_id=group_id,
        score=score if anomaly else None,
        new_id=None if anomaly else _text(item, "new_id", where, optional=True),
        compiled=compiled,
    )
