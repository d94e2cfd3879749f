"""What made each contributing OWASP rule of an event match: the field and its value, as CRS's
logdata says it.

An OWASP event's template (one per verdict, shared by every request with that
verdict) lists its contributing rules; :func:`explained` adds, for one request,
what each of them matched in it: the variable (``ARGS:q``, ``REQUEST_HEADERS:User-Agent``),
its value after the rule's transformations and the matched data, each cut to
:data:`VALUE_LIMIT` characters. It reads the CRS run the request already keeps
(the one that decided ``cf.waf.crs.rules`` or ``cf.waf.crs2.rules``) and never
runs the program anew: a rule matched by other means has nothing to explain.

    >>> from workbench.traffic.request import Request
    >>> req = Request(url="https://a.example/?q=1%27%20or%20%271%27%3D%271")
    >>> _ = req.fields(["cf.waf.crs.rules"])  # what a replay computes
    >>> meta = {"contributing": [{"rule_id": "x", "description": "942100: SQL Injection"}]}
    >>> explained(meta, "firewallManaged", req)["contributing"][0]["field"]
    'ARGS:q'
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from ...core.security import NEW_WAF, OLD_WAF
from . import runtime, runtime_crs2
from .interpreter import Hit, Result

#: How much of a value or matched data an event keeps (CRS's logdata cuts at 100 too).
VALUE_LIMIT = 100
#: Where a traffic request keeps each system's CRS run (see ``runtime.kept_run``).
_KEPT = {NEW_WAF: runtime.KEPT_AS, OLD_WAF: runtime_crs2.KEPT_AS}


def crs_id_of(description: str) -> int:
    """The CRS rule id a managed OWASP rule's description starts with (``942100: ...``), or -1."""
    head = description.split(":", 1)[0]
    return int(head) if head.isdigit() else -1


def _cut(value: bytes) -> str:
    text = value.decode("utf-8", "backslashreplace")
    return text if len(text) <= VALUE_LIMIT else text[: VALUE_LIMIT - 1] + "…"


def what_matched(hit: Hit) -> dict[str, str]:
    """``field``, ``value`` (after transformations) and ``data`` (what the operator matched)."""
    return {"field": hit.name, "value": _cut(hit.value), "data": _cut(hit.data)}


def kept_result(request: Any, source: str) -> Result | None:
    """The CRS run ``request`` keeps for ``source``'s OWASP rules, or None when none ran."""
    key = _KEPT.get(source)
    found = None if key is None else getattr(request, "__dict__", {}).get(key)
    return found if isinstance(found, Result) else None


#: What each program matched, by CRS id: ``{crs id: {"field", "value", "data"}}``.
Matches = Mapping[int, Mapping[str, str]]


class _Hits(Mapping[int, Mapping[str, str]]):
    """A run's hits seen as :data:`Matches`, each made readable only when asked for."""

    def __init__(self, hits: Mapping[int, Hit]) -> None:
        self._hits = hits

    def __getitem__(self, key: int) -> Mapping[str, str]:
        return what_matched(self._hits[key])

    def __iter__(self) -> Iterator[int]:
        return iter(self._hits)

    def __len__(self) -> int:
        return len(self._hits)


def is_owasp_event(source: str, metadata: Mapping[str, Any]) -> bool:
    """Whether an event is an OWASP decision whose contributing rules can be explained: an
    anomaly-score event (with ``contributing`` rules) of the new or the old WAF."""
    return source in _KEPT and bool(metadata.get("contributing"))


def matched_entries(metadata: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What an explained event's metadata says each rule matched, in one shape for both WAFs:
    ``rule`` (the new WAF's description, or the old WAF's rule id), ``field``, ``value``,
    ``data``. Empty for an event that was not explained."""
    entries = metadata.get("matched") or metadata.get("contributing") or []
    return [
        {
            "rule": e.get("description") or e.get("rule_id"),
            "field": e["field"],
            "value": e.get("value"),
            "data": e.get("data"),
        }
        for e in entries
        if isinstance(e, dict) and "field" in e
    ]


def explained(metadata: dict[str, Any], source: str, request: Any) -> dict[str, Any]:
    """``metadata`` of an OWASP event with what each contributing rule matched in ``request``
    (see :func:`explained_by`); ``metadata`` itself when the request keeps no CRS run."""
    result = kept_result(request, source)
    if result is None:
        return metadata
    return explained_by(metadata, source, _Hits(result.hits))


def explained_by(metadata: dict[str, Any], source: str, matches: Matches) -> dict[str, Any]:
    """``metadata`` of an OWASP event with each contributing rule's entry from ``matches``.

    New WAF: each ``contributing`` entry gains ``field``, ``value`` and ``data``.
    Old WAF (whose entries are rule ids): a ``matched`` list of ``rule_id`` with the same
    three. Returns ``metadata`` itself when nothing is added.
    """
    contributing = metadata.get("contributing")
    if not contributing or not matches:
        return metadata
    if source == NEW_WAF:
        rows = []
        for entry in contributing:
            n = crs_id_of(str(entry.get("description", "")))
            rows.append({**entry, **matches[n]} if n in matches else entry)
        return {**metadata, "contributing": rows}
    if source != OLD_WAF:
        return metadata
    matched = [
        {"rule_id": str(rule_id), **matches[int(rule_id)]}
        for rule_id in contributing
        if str(rule_id).isdigit() and int(rule_id) in matches
    ]
    return {**metadata, "matched": matched} if matched else metadata


# -- stored with a request log --------------------------------------------------------------
# A Parquet request log keeps, per request, what each program matched (JSON, readable
# values only), so a replay over it on DuckDB or Spark explains its OWASP events exactly as
# the replay that wrote it did.


def stored_matches(request: Any) -> str | None:
    """What the request's kept CRS runs matched, as the log stores it (None: nothing)."""
    out: dict[str, dict[str, dict[str, str]]] = {}
    for source in (NEW_WAF, OLD_WAF):
        result = kept_result(request, source)
        if result is not None and result.hits:
            out[source] = {str(n): what_matched(h) for n, h in result.hits.items()}
    return json.dumps(out, sort_keys=True) if out else None


def matches_from_stored(text: str | None, source: str) -> Matches:
    """What :func:`stored_matches` stored for ``source``'s program."""
    if not text:
        return {}
    found = json.loads(text).get(source, {})
    return {int(n): entry for n, entry in found.items()}
