"""The old WAF's objects as the API shows them, and the per-zone state behind them.

A zone stores only what it changed from the catalogue: the ``waf`` setting
once set, each anomaly package's sensitivity and action, group and rule modes
that differ from their defaults, and its URI-based overrides. The views
(:class:`Package`, :class:`Group`, :class:`Rule`) are snapshots built on read.

    >>> from workbench.waf_legacy.catalog import load_catalog
    >>> catalog = load_catalog([{
    ...     "id": "1" * 32, "name": "OWASP", "description": "", "detection_mode": "anomaly",
    ...     "groups": [{"id": "2" * 32, "name": "SQLi", "description": "", "default_mode": "on",
    ...                 "rules": [{"id": "950001", "description": "SQL injection", "priority": "1",
    ...                            "default_mode": "on", "score": 20, "expression": 'http.request.uri.path contains "x"'}]}]}])
    >>> state = ZoneState()
    >>> package = state.package(catalog.packages[0], "z" * 32)
    >>> package.to_dict()["sensitivity"], package.to_dict()["action_mode"]
    ('high', 'challenge')
    >>> state.group(catalog.packages[0].groups[0]).to_dict()["rules_count"]
    1
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

from ..core.clock import iso
from .catalog import ON_OFF, GroupDef, PackageDef, RuleDef

SENSITIVITIES = ("high", "medium", "low", "off")
ACTION_MODES = ("simulate", "block", "challenge")
#: Anomaly score thresholds ("and up") by sensitivity, for normal and AJAX requests.
THRESHOLDS = {"high": 25, "medium": 40, "low": 60}
AJAX_THRESHOLDS = {"high": 65, "medium": 80, "low": 120}
#: The rule id Sampled logs show when the OWASP package acts on a request.
OWASP_RULE_ID = "981176"
#: The values of an override's ``rewrite_action`` (keys and values) and ``rules``.
OVERRIDE_ACTIONS = ("block", "challenge", "default", "disable", "simulate")
#: The values of an override's ``groups``: the documented two, and the group modes.
OVERRIDE_GROUP_ACTIONS = ("default", "disable", "on", "off")
DEFAULT_SENSITIVITY = "high"
DEFAULT_ACTION_MODE = "challenge"
D = TypeVar("D", PackageDef, GroupDef, RuleDef)


@dataclass(frozen=True)
class _View(Generic[D]):
    """A zone's view of a catalogue object (its ``definition``), with the catalogue's id."""

    definition: D

    @property
    def id(self) -> str:
        """The catalogue id."""
        return self.definition.id


@dataclass(frozen=True)
class Package(_View[PackageDef]):
    """A package of one zone; anomaly packages carry ``sensitivity`` and ``action_mode``."""

    zone_id: str
    sensitivity: str | None = None
    action_mode: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The package as the API shows it."""
        d = self.definition
        out: dict[str, Any] = {
            "id": d.id,
            "name": d.name,
            "description": d.description,
            "zone_id": self.zone_id,
            "detection_mode": d.detection_mode,
            "status": "active",
        }
        if d.anomaly:
            out["sensitivity"] = self.sensitivity
            out["action_mode"] = self.action_mode
        return out


@dataclass(frozen=True)
class Group(_View[GroupDef]):
    """A group of one zone with its configured mode."""

    mode: str
    modified_rules_count: int

    def to_dict(self) -> dict[str, Any]:
        """The group as the API shows it."""
        d = self.definition
        return {
            "id": d.id,
            "name": d.name,
            "description": d.description,
            "rules_count": len(d.rules),
            "modified_rules_count": self.modified_rules_count,
            "package_id": d.package_id,
            "mode": self.mode,
            "allowed_modes": list(ON_OFF),
        }


@dataclass(frozen=True)
class Rule(_View[RuleDef]):
    """A rule of one zone with its configured mode (``default`` for an untouched deny rule)."""

    group_name: str
    mode: str

    def to_dict(self) -> dict[str, Any]:
        """The rule as the API shows it (``default_mode`` on traditional deny rules only)."""
        d = self.definition
        out: dict[str, Any] = {
            "id": d.id,
            "description": d.description,
            "priority": d.priority,
            "group": {"id": d.group_id, "name": self.group_name},
            "package_id": d.package_id,
            "allowed_modes": list(d.allowed_modes),
            "mode": self.mode,
        }
        if d.kind == "deny":
            out["default_mode"] = d.default_mode
        return out


@dataclass
class Override:
    """A URI-based WAF override: for requests to ``urls``, other modes and actions."""

    id: str
    urls: list[str]
    priority: int
    description: str | None = None
    groups: dict[str, str] = field(default_factory=dict)
    rules: dict[str, str] = field(default_factory=dict)
    rewrite_action: dict[str, str] = field(default_factory=dict)
    paused: bool = False
    seq: int = 0  # creation order: breaks priority ties (older first)

    def to_dict(self) -> dict[str, Any]:
        """The override as the API shows it."""
        return {
            "id": self.id,
            "description": self.description,
            "urls": list(self.urls),
            "priority": self.priority,
            "groups": dict(self.groups),
            "rules": dict(self.rules),
            "rewrite_action": dict(self.rewrite_action),
            "paused": self.paused,
        }


@dataclass(frozen=True)
class Setting:
    """The zone setting ``waf`` (the old system's global switch)."""

    value: str
    editable: bool
    modified_on: datetime | None

    def to_dict(self) -> dict[str, Any]:
        """The setting as the API shows it (``modified_on`` null until first changed)."""
        return {
            "id": "waf",
            "value": self.value,
            "editable": self.editable,
            "modified_on": None if self.modified_on is None else iso(self.modified_on),
        }


@dataclass
class ZoneState:
    """What one zone changed from the catalogue defaults; ``version`` counts the changes."""

    setting: str | None = None  # None: the plan's default (on where the plan has the old WAF)
    setting_modified: datetime | None = None
    retired_on: datetime | None = None
    anomaly: dict[str, tuple[str, str]] = field(default_factory=dict)
    group_modes: dict[tuple[str, str], str] = field(default_factory=dict)
    rule_modes: dict[tuple[str, str], str] = field(default_factory=dict)
    overrides: dict[str, Override] = field(default_factory=dict)
    version: int = 0
    seq: int = 0

    def settings_of(self, package: PackageDef) -> tuple[str, str]:
        """``(sensitivity, action_mode)`` of an anomaly package."""
        return self.anomaly.get(package.id, (DEFAULT_SENSITIVITY, DEFAULT_ACTION_MODE))

    def group_mode(self, group: GroupDef) -> str:
        """The group's configured mode."""
        return self.group_modes.get((group.package_id, group.id), group.default_mode)

    def rule_mode(self, rule: RuleDef) -> str:
        """The rule's configured mode."""
        return self.rule_modes.get((rule.package_id, rule.id), rule.initial_mode)

    def package(self, definition: PackageDef, zone_id: str) -> Package:
        """The package view."""
        if not definition.anomaly:
            return Package(definition, zone_id)
        sensitivity, action_mode = self.settings_of(definition)
        return Package(definition, zone_id, sensitivity, action_mode)

    def group(self, definition: GroupDef) -> Group:
        """The group view."""
        modified = sum(1 for r in definition.rules if (r.package_id, r.id) in self.rule_modes)
        return Group(definition, self.group_mode(definition), modified)

    def rule(self, definition: RuleDef, group: GroupDef) -> Rule:
        """The rule view (``group`` is the rule's group, for its name)."""
        return Rule(definition, group.name, self.rule_mode(definition))

    def set_group_mode(self, group: GroupDef, mode: str) -> None:
        """Store a group mode (a mode equal to the default is not stored)."""
        key = (group.package_id, group.id)
        if mode == group.default_mode:
            self.group_modes.pop(key, None)
        else:
            self.group_modes[key] = mode

    def set_rule_mode(self, rule: RuleDef, mode: str) -> None:
        """Store a rule mode (the initial mode is not stored, so it does not count as modified)."""
        key = (rule.package_id, rule.id)
        if mode == rule.initial_mode:
            self.rule_modes.pop(key, None)
        else:
            self.rule_modes[key] = mode
