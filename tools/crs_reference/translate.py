"""The translator: CRS 3.3 rule files in, the OWASP managed ruleset's catalogue data out.

:func:`build_catalog` reads Debian's ``modsecurity-crs`` (the set-up file and
the request rule files ``REQUEST-911`` to ``REQUEST-949``) and returns the
catalogue dict that ``workbench/rulesets/catalog/owasp_core.json`` holds:

* ``rules``: one managed rule per request-side CRS rule that logs (scores),
  plus ``949110``. Its description is ``"NNNNNN: <msg>"``, its categories the
  CRS tags (attack type, language, platform) and ``paranoia-level-N``, its
  score the CRS severity's, its id a fixed hex id derived from the CRS id.
  Its expression asks the field ``cf.waf.crs.rules`` whether the CRS program
  fired the rule (see ``docs/decisions.md``, "The OWASP rulesets from CRS").
* ``crs``: the program itself (every rule and marker in order, control rules
  included), the ``TX`` values the set-up gives, and provenance: the CRS
  version and the SHA-256 of each source file, with CRS's notice.

Left out: ``REQUEST-910`` (IP reputation needs GeoIP), ``REQUEST-912`` (DoS
protection needs persistent IP collections and the response phase), the
application exclusions (``903.*``) and ``905`` (exceptions for the server's own
loopback checks).

    >>> rule_hex_id(942100) == rule_hex_id(942100) != rule_hex_id(942101)
    True
    >>> rule_hex_id(949110)
    '6179ae15870a4bb7b2d480d4843b323c'
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from workbench.rulesets.crs.operators import pm_file_phrases
from workbench.rulesets.crs.seclang import Item, Marker, Rule, parse, rule_to_json

RULES_DIR = Path("/usr/share/modsecurity-crs/rules")
SETUP_FILE = Path("/etc/modsecurity/crs/crs-setup.conf")
DEBIAN_VERSION = "3.3.4-1+deb12u3"

#: Scores per severity, CRS's defaults (crs-setup.conf).
SEVERITY_SCORES = {"CRITICAL": 5, "ERROR": 4, "WARNING": 3, "NOTICE": 2}
#: Ids the platform's documentation fixes.
FIXED_IDS = {949110: "6179ae15870a4bb7b2d480d4843b323c"}
FIXED_REFS = {949110: "ad0beb2fce9f149e565ee78d6e659d47"}
#: The field the expressions read: the CRS rule ids the program fired for the request.
FIELD = "cf.waf.crs.rules"

NOTICE = (
    "Derived from the OWASP ModSecurity Core Rule Set (CRS) {version}, "
    "Copyright (c) 2006-2020 Trustwave and contributors, Copyright (c) 2021-2022 "
    "Core Rule Set project. Licensed under the Apache License, Version 2.0 "
    "(http://www.apache.org/licenses/LICENSE-2.0). Source: Debian package "
    "modsecurity-crs {debian}. The rules' logic, messages, tags and phrase lists are "
    "CRS's; the translation into this catalogue is the workbench's."
)

_KEEP = re.compile(r"REQUEST-9(1[13]|2\d|3\d|4\d)-")
_PL_TAG = re.compile(r"paranoia-level/([1-4])")
_SCORE_SETVAR = re.compile(r"tx\.(?:anomaly_score_pl\d|inbound_anomaly_score)", re.I)


def rule_hex_id(crs_id: int, salt: str = "owasp-crs") -> str:
    """The managed rule id of CRS rule ``crs_id``: fixed by the docs, else a hash of the id."""
    if crs_id in FIXED_IDS and salt == "owasp-crs":
        return FIXED_IDS[crs_id]
    return hashlib.sha256(f"{salt}:{crs_id}".encode()).hexdigest()[:32]


def source_files(rules_dir: Path = RULES_DIR) -> list[Path]:
    """The rule files the program is made of, in load order."""
    return [p for p in sorted(rules_dir.glob("REQUEST-9*.conf")) if _KEEP.match(p.name)]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tx_defaults(setup: Path, init: Path) -> dict[str, str]:
    """The TX values crs-setup.conf and REQUEST-901 give before any request is read.

    The set-up's ``SecAction``s apply as written; 901's ``&TX:x "@eq 0"`` rules
    apply their defaults where the set-up left the name unset. 901's rules that
    read the request (User-Agent hash, sampling, body processor) are the
    interpreter's and the variables' business, not defaults.
    """
    tx: dict[str, str] = {}
    for item in [*parse(setup.read_text(), setup.name), *parse(init.read_text(), init.name)]:
        if not isinstance(item, Rule):
            continue
        first = item.links[0]
        unconditional = first.operator == "unconditionalMatch" and not first.targets
        default = first.targets.startswith("&TX:") and first.operator == "eq"
        if not (unconditional or default):
            continue
        if default and first.targets[4:].lower() in tx:
            continue
        for spec in (s for link in item.links for s in link.setvars):
            name, eq, value = spec.partition("=")
            coll, _, key = name.partition(".")
            if coll.lower() == "tx" and eq and "%{" not in value:
                tx[key.lower()] = value
    return tx


def read_phrases(path: Path) -> list[str]:
    """A phrase file's phrases as ``@pmFromFile`` reads them, as latin-1 text (a char a byte)."""
    return [p.decode("latin-1") for p in pm_file_phrases(path)]


def phrase_files(items: Iterable[Item], rules_dir: Path) -> dict[str, list[str]]:
    """Every phrase file a rule's ``@pmFromFile`` names, read into the catalogue."""
    names = sorted(
        {
            link.argument.strip()
            for item in items
            if isinstance(item, Rule)
            for link in item.links
            if link.operator in ("pmFromFile", "pmf")
        }
    )
    return {name: read_phrases(rules_dir / name) for name in names}


def _level(rule: Rule, current: int) -> int:
    for tag in rule.tags:
        if m := _PL_TAG.fullmatch(tag):
            return int(m.group(1))
    return current


def _categories(rule: Rule, level: int) -> list[str]:
    out: list[str] = []
    for tag in rule.tags:
        kind, _, name = tag.partition("-")
        if kind in ("attack", "language", "platform") and name and name != "multi":
            if name not in out:
                out.append(name)
    return [*out, f"paranoia-level-{level}"]


def _scores(rule: Rule) -> bool:
    return any(_SCORE_SETVAR.match(s) for link in rule.links for s in link.setvars)


def program_entries(items: Iterable[Item]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, Marker):
            out.append({"marker": item.name})
        elif isinstance(item, Rule):
            entry: dict[str, Any] = {"id": item.id, **rule_to_json(item)}
            if item.msg:
                entry["msg"] = item.msg
            if item.severity:
                entry["severity"] = item.severity
            out.append(entry)
    return out


def managed_rule(rule: Rule, level: int, version: str) -> dict[str, Any]:
    """The catalogue entry of one scoring CRS rule."""
    return {
        "id": rule_hex_id(rule.id),
        "ref": rule_hex_id(rule.id, "owasp-crs-ref"),
        "version": version,
        "description": f"{rule.id}: {rule.msg}",
        "categories": _categories(rule, level),
        "action": "log",
        "enabled": True,
        "expression": f"any({FIELD}[*] == {rule.id})",
        "score": SEVERITY_SCORES.get(rule.severity, 0),
        "paranoia_level": level,
        "crs_id": rule.id,
    }


def build_catalog(
    rules_dir: Path = RULES_DIR, setup: Path = SETUP_FILE, crs_version: str = "3.3.4"
) -> dict[str, Any]:
    """The whole OWASP catalogue dict, deterministic for the same source files."""
    files = source_files(rules_dir)
    items: list[Item] = []
    managed: list[dict[str, Any]] = []
    for path in files:
        level = 1
        parsed = parse(path.read_text(), path.name)
        items.extend(parsed)
        for item in parsed:
            if not isinstance(item, Rule):
                continue
            level = _level(item, level)
            if item.log and item.msg and _scores(item) and 911000 <= item.id < 945000:
                managed.append(managed_rule(item, level, "1"))
    managed.append(
        {
            "id": FIXED_IDS[949110],
            "ref": FIXED_REFS[949110],
            "version": "35",
            "description": "949110: Inbound Anomaly Score Exceeded",
            "categories": [],
            "action": "block",
            "enabled": True,
            "expression": "true",
            "score_threshold": 40,
            "crs_id": 949110,
        }
    )
    init = rules_dir / "REQUEST-901-INITIALIZATION.conf"
    return {
        "id": "4814384a9e5d4991b9815dcfc25d2f1f",
        "name": "Cloudflare OWASP Core Ruleset",
        "description": (
            "Cloudflare's implementation of the Open Web Application Security Project (OWASP) "
            "ModSecurity Core Rule Set. We routinely monitor for updates from OWASP based on "
            "the latest version available from the official code repository"
        ),
        "kind": "managed",
        "phase": "http_request_firewall_managed",
        "version": "35",
        "last_updated": "2022-01-24T10:34:20.000000Z",
        "notice": NOTICE.format(version=crs_version, debian=DEBIAN_VERSION),
        "provenance": {
            "crs_version": crs_version,
            "debian_package": f"modsecurity-crs {DEBIAN_VERSION}",
            "generator": "tools/build_owasp_catalog.py",
            "files": {p.name: _sha(p) for p in [setup, init, *files]},
            "data_files": {p.name: _sha(p) for p in sorted(rules_dir.glob("*.data"))},
            "left_out": ["REQUEST-903.*", "REQUEST-905", "REQUEST-910", "REQUEST-912"],
        },
        "crs": {
            "tx": tx_defaults(setup, init),
            "program": program_entries(items),
            "data": phrase_files(items, rules_dir),
        },
        "rules": managed,
    }


def dump_catalog(catalog: dict[str, Any]) -> str:
    """The catalogue's file text: one-space indent as the other catalogues, a final newline."""
    return json.dumps(catalog, indent=1, ensure_ascii=False) + "\n"
