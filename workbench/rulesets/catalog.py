"""Managed ruleset catalogues: JSON data, checked and compiled once when loaded.

The catalogue files live in ``workbench/rulesets/catalog/`` (one managed
ruleset per file, see :data:`CATALOG_FILES`). :func:`load_catalog` also takes
another folder, one file, or rulesets as plain dicts, so tests and notebooks
can bring their own small catalogue.

    >>> catalog = load_catalog([{
    ...     "id": "1" * 32, "name": "Tiny", "kind": "managed",
    ...     "phase": "http_request_firewall_managed", "version": "1",
    ...     "last_updated": "2026-01-01T00:00:00Z",
    ...     "rules": [{"id": "2" * 32, "description": "admin probe", "categories": ["probe"],
    ...                "action": "block", "enabled": True,
    ...                "expression": 'http.request.uri.path contains "/admin"'}]}])
    >>> tiny = catalog["1" * 32]
    >>> tiny.rules[0].ref == "2" * 32, tiny.rules[0].compiled.matches({"http.request.uri.path": "/admin"})
    (True, True)
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..rules_language import MANAGED, ExpressionError
from .expressions import compile_rule_expression
from .models import PHASES, ManagedRule, ManagedRuleset

CATALOG_DIR = Path(__file__).resolve().parent / "catalog"
#: The files of a catalogue folder, in the order the rulesets are listed.
CATALOG_FILES = ("cloudflare_managed.json", "owasp_core.json")

Catalog = dict[str, ManagedRuleset]

_ID = re.compile(r"[0-9a-f]{32}")
_PL_TAG = re.compile(r"paranoia-level-([1-4])")


class CatalogError(ValueError):
    """A catalogue that breaks the format: a bug in the data, never a client's mistake."""


def load_catalog(source: str | Path | Iterable[Mapping[str, Any]] | None = None) -> Catalog:
    """Managed rulesets by id, in catalogue order.

    ``source`` is None (the package's own folder), a folder (its
    :data:`CATALOG_FILES` that exist), one JSON file, or rulesets as dicts.
    """
    if source is None or isinstance(source, str | Path):
        path = CATALOG_DIR if source is None else Path(source)
        if path.is_dir() or source is None:
            # A catalogue file not written yet is simply absent from the catalogue.
            raw = [(f.name, _read(f)) for f in (path / n for n in CATALOG_FILES) if f.exists()]
        else:
            raw = [(path.name, _read(path))]
    else:
        raw = [(f"ruleset {i}", item) for i, item in enumerate(source)]
    catalog: Catalog = {}
    for where, data in raw:
        ruleset = _ruleset(data, where)
        if ruleset.id in catalog:
            raise CatalogError(f"{where}: ruleset id {ruleset.id} appears twice in the catalogue")
        catalog[ruleset.id] = ruleset
    return catalog


@functools.cache
def default_catalog() -> Catalog:
    """The package's catalogue, loaded and compiled once per process (rulesets are immutable)."""
    return load_catalog(None)


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CatalogError(f"{path.name}: {exc}") from None


def _need(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = data.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        raise CatalogError(f"{where}: {key!r} is missing or of the wrong type")
    return value


def _when(value: Any, where: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        raise CatalogError(f"{where}: last_updated {value!r} is not an ISO-8601 time") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _ruleset(data: Any, where: str) -> ManagedRuleset:
    if not isinstance(data, Mapping):
        raise CatalogError(f"{where}: a ruleset must be a JSON object")
    ruleset_id = _need(data, "id", str, where)
    if not _ID.fullmatch(ruleset_id):
        raise CatalogError(f"{where}: id {ruleset_id!r} is not 32 lowercase hex")
    if data.get("kind") != "managed":
        raise CatalogError(f"{where}: kind must be 'managed'")
    if data.get("phase") not in PHASES:
        raise CatalogError(f"{where}: phase must be one of {', '.join(PHASES)}")
    when = _when(_need(data, "last_updated", str, where), where)
    rules_raw = _need(data, "rules", list, where)
    rules = tuple(_rule(r, f"{where}: rules[{i}]", when) for i, r in enumerate(rules_raw))
    if len({r.id for r in rules}) != len(rules):
        raise CatalogError(f"{where}: two rules share an id")
    if sum(r.score_threshold is not None for r in rules) > 1:
        raise CatalogError(f"{where}: at most one rule may carry score_threshold")
    return ManagedRuleset(
        id=ruleset_id,
        name=_need(data, "name", str, where),
        description=str(data.get("description", "")),
        phase=data["phase"],
        version=str(_need(data, "version", (str, int), where)),
        last_updated=when,
        rules=rules,
    )


def _optional_int(data: Mapping[str, Any], key: str, where: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise CatalogError(f"{where}: {key!r} must be a whole number >= 0")
    return value


def _rule(data: Any, where: str, ruleset_time: datetime) -> ManagedRule:
    if not isinstance(data, Mapping):
        raise CatalogError(f"{where}: a rule must be a JSON object")
    rule_id = _need(data, "id", str, where)
    if not _ID.fullmatch(rule_id):
        raise CatalogError(f"{where}: id {rule_id!r} is not 32 lowercase hex")
    categories = data.get("categories", [])
    if not isinstance(categories, list) or not all(isinstance(c, str) for c in categories):
        raise CatalogError(f"{where}: categories must be a list of strings")
    expression = _need(data, "expression", str, where)
    try:
        compiled = compile_rule_expression(expression, MANAGED)
    except ExpressionError as exc:
        raise CatalogError(f"{where} ({rule_id}): {exc}") from None
    level = _optional_int(data, "paranoia_level", where)
    if level is None:
        # The level is also written as a category tag; either form is enough.
        tags = [int(m.group(1)) for c in categories if (m := _PL_TAG.fullmatch(c))]
        level = tags[0] if tags else None
    enabled = data.get("enabled", True)
    if not isinstance(enabled, bool):
        raise CatalogError(f"{where}: enabled must be true or false")
    return ManagedRule(
        id=rule_id,
        ref=str(data.get("ref") or rule_id),
        version=str(data.get("version", "1")),
        description=str(data.get("description", "")),
        categories=tuple(categories),
        action=_need(data, "action", str, where),
        enabled=enabled,
        expression=expression,
        last_updated=_when(data["last_updated"], where) if "last_updated" in data else ruleset_time,
        score=_optional_int(data, "score", where),
        paranoia_level=level,
        score_threshold=_optional_int(data, "score_threshold", where),
        compiled=compiled,
    )
