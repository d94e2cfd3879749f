r"""The old OWASP package from CRS 2.2.9: the request rule files in, the program and the package out.

The old WAF's OWASP package was CRS 2.x in anomaly mode (``waf-migration.md``
§1.2). :func:`.source_crs2.checkout` takes CRS 2.2.9 from a git mirror of
``coreruleset/coreruleset`` (tag ``v2.2.9``) into a folder; from it

* :func:`build_program` makes ``workbench/waf_legacy/catalog/owasp_crs2.json``:
  the program (the set-up's rules that read the request, then every rule and
  marker of the request-side base rule files, in load order), the ``TX``
  values the set-up gives in anomaly mode, the phrase files, the scoring rules
  (id, file, message, severity, score) and the provenance (tag, commit,
  SHA-256 of each file) with CRS's notice;
* :func:`build_package` makes the OWASP package of the waf_legacy catalogue
  from that data alone: one group per base rule file with scoring rules, one
  rule per scoring CRS rule (its id, its ``msg``, the score it adds), whose
  expression asks ``cf.waf.crs2.rules`` whether the program fired it.

Anomaly mode is what the set-up file documents: ``SecDefaultAction`` with
``pass`` instead of ``deny``, rule 900004 (``tx.anomaly_score_blocking=on``)
uncommented, the threshold in 900003 (:func:`anomaly_setup`). Left out: the
response side (``50``, ``59``, ``60``, and ``950922``, a phase-4 rule of
``45``), the example file ``48``, and rule ``981227`` (``WEBSERVER_ERROR_LOG``,
phase 5), which libmodsecurity does not load.

A score is what the rule adds to ``tx.anomaly_score``
(``setvar:tx.anomaly_score=+%{tx.warning_anomaly_score}``), by the set-up's
critical 5, error 4, warning 3, notice 2. It is not always its severity's:
47 of the 220 rules have no severity, 13 add another severity's score
(:func:`severity_mismatches`).

    >>> setup = "\n".join([
    ...     'SecDefaultAction "phase:2,deny,log"',
    ...     "#SecAction \\",
    ...     "  \"id:'900004',phase:1,setvar:tx.anomaly_score_blocking=on,nolog,pass\"",
    ...     "SecAction \"id:'900003',phase:1,setvar:tx.inbound_anomaly_score_level=5,nolog,pass\""])
    >>> print(anomaly_setup(setup, 25))
    SecDefaultAction "phase:2,pass,log"
    SecAction \
      "id:'900004',phase:1,setvar:tx.anomaly_score_blocking=on,nolog,pass"
    SecAction "id:'900003',phase:1,setvar:tx.inbound_anomaly_score_level=25,nolog,pass"
    >>> strip_comments(setup).splitlines()[1:3]  # a continued comment is a comment to its end
    ['', '']
    >>> rule = parse("SecRule ARGS x \"id:1,msg:'M',severity:'4',"
    ...              "setvar:tx.anomaly_score=+%{tx.notice_anomaly_score}\"")[0]
    >>> rule_score(rule), is_scoring(rule)
    (2, True)
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.rulesets.crs.seclang import Item, Rule, parse

from .source_crs2 import BASE, CRS_VERSION, REPOSITORY, SETUP, Checkout
from .translate import phrase_files, program_entries

OWASP_PACKAGE = "a25a9a7e9c00afc1fb2e0245519d725b"
#: The field the package's expressions read: the CRS 2 rule ids the program fired.
FIELD = "cf.waf.crs2.rules"
GENERATOR = "tools/build_old_owasp_package.py"

#: The set-up's anomaly scores (900001), by the name the rules' setvars use.
NAMED_SCORES = {"critical": 5, "error": 4, "warning": 3, "notice": 2}
#: CRS 2 writes severities as syslog numbers.
SEVERITY_NAMES = {"0": "EMERGENCY", "1": "ALERT", "2": "CRITICAL", "3": "ERROR", "4": "WARNING"}
SEVERITY_NAMES |= {"5": "NOTICE", "6": "INFO", "7": "DEBUG"}


@dataclass(frozen=True)
class RuleFile:
    """A request-side base rule file, and the package group its scoring rules make (if any)."""

    name: str
    group: str = ""
    group_id: str = ""
    description: str = ""


def _group_id(file: str) -> str:
    return hashlib.sha256(f"owasp-crs2-group:{file}".encode()).hexdigest()[:32]


#: The request-side base rule files in load order. Groups that existed in the hand-written
#: package keep their ids and descriptions (zones' and tests' data name them).
RULE_FILES = (
    RuleFile(
        "modsecurity_crs_20_protocol_violations.conf",
        "OWASP Protocol Violations",
        "db48f3ac82d63325360606bba318ade9",
        "Requests that break the HTTP protocol: invalid characters, encoding abuse.",
    ),
    RuleFile(
        "modsecurity_crs_21_protocol_anomalies.conf",
        "OWASP Protocol Anomalies",
        "2da7bbc2fab62ea06023eb132b1e1286",
        "Requests missing headers that browsers send.",
    ),
    RuleFile(
        "modsecurity_crs_23_request_limits.conf",
        "OWASP Request Limits",
        _group_id("modsecurity_crs_23_request_limits.conf"),
        "Requests beyond the set-up's limits: too many arguments, arguments or files too large.",
    ),
    RuleFile(
        "modsecurity_crs_30_http_policy.conf",
        "OWASP HTTP Policy",
        _group_id("modsecurity_crs_30_http_policy.conf"),
        "Methods, content types, HTTP versions, file extensions and headers the policy forbids.",
    ),
    RuleFile(
        "modsecurity_crs_35_bad_robots.conf",
        "OWASP Bad Robots",
        "d81973a72b64268eee8363759d83aef6",
        "Security scanners and rogue crawlers.",
    ),
    RuleFile(
        "modsecurity_crs_40_generic_attacks.conf",
        "OWASP Generic Attacks",
        "34af2e55757a0bb800a9a158315316d0",
        "Command injection, file inclusion, code injection and protocol attacks.",
    ),
    RuleFile(
        "modsecurity_crs_41_sql_injection_attacks.conf",
        "OWASP SQL Injection Attacks",
        "65a7c4d7abf94b512bc58a77ea790bd7",
        "SQL injection in arguments, bodies and cookies.",
    ),
    RuleFile(
        "modsecurity_crs_41_xss_attacks.conf",
        "OWASP XSS Attacks",
        "5b7d75240cd9bed5e4c5301b2be09bbe",
        "Cross-site scripting in arguments, bodies, cookies and selected headers.",
    ),
    RuleFile(
        "modsecurity_crs_42_tight_security.conf",
        "OWASP Tight Security",
        _group_id("modsecurity_crs_42_tight_security.conf"),
        "Path traversal in the URI, the body and the headers.",
    ),
    RuleFile(
        "modsecurity_crs_45_trojans.conf",
        "OWASP Trojans",
        "1a3537fb6d01b4063cbc1245d60db3f8",
        "Known backdoors and web shells.",
    ),
    # Exceptions and the blocking rule: program only, no scoring rules.
    RuleFile("modsecurity_crs_47_common_exceptions.conf"),
    RuleFile("modsecurity_crs_49_inbound_blocking.conf"),
)

#: What the program leaves out, and why (provenance keeps the list).
LEFT_OUT_FILES = {
    "modsecurity_crs_48_local_exceptions.conf.example": "an example for local exceptions, not loaded",
    "modsecurity_crs_50_outbound.conf": "response side",
    "modsecurity_crs_59_outbound_blocking.conf": "response side",
    "modsecurity_crs_60_correlation.conf": "logging phase (5)",
}
#: Rules of the kept files that are removed from the oracle's text too.
REMOVED_RULES = {981227: "WEBSERVER_ERROR_LOG in phase 5: libmodsecurity does not load it"}

NOTICE = (
    "Derived from the OWASP ModSecurity Core Rule Set (CRS) {version}, Copyright (C) 2006-2012 "
    "Trustwave and contributors. Licensed under the Apache License, Version 2.0 "
    "(http://www.apache.org/licenses/LICENSE-2.0). Source: {repository}, tag {tag}, commit "
    "{commit}. The rules' logic, messages and phrase lists are CRS's; the translation into "
    "this catalogue is the workbench's."
)

_ANOMALY_ADD = re.compile(r"tx\.anomaly_score=\+(.*)", re.I | re.S)
_NAMED_SCORE = re.compile(r"%\{tx\.(\w+?)_anomaly_score\}", re.I)
_SPACES = re.compile(r"\s+")


# -- texts as libmodsecurity reads them ---------------------------------------------------------
def strip_comments(text: str) -> str:
    """Comment lines blanked, with the lines a trailing backslash continues them onto.

    libmodsecurity (as Apache) joins continued lines before it sees the ``#``, so the
    set-up's ``#SecAction \\`` blocks are comments to their end. Line numbers are kept.
    """
    out: list[str] = []
    continued = False
    for line in text.split("\n"):
        if continued or line.lstrip().startswith("#"):
            continued = line.rstrip().endswith("\\")
            out.append("")
        else:
            out.append(line)
    return "\n".join(out)


def anomaly_setup(text: str, threshold: int = 5) -> str:
    """The set-up in anomaly mode, as its comments say: ``pass`` by default, 900004 on, the threshold."""
    out, n = re.subn(r'(SecDefaultAction "phase:[12]),deny,', r"\1,pass,", text)
    if n == 0:
        raise ValueError("the set-up has no SecDefaultAction with deny")
    out, n = re.subn(r"(?m)^#(SecAction \\\n\s*\"id:'900004')", r"\1", out)
    if n != 1:
        raise ValueError("the set-up has no commented rule 900004")
    out, n = re.subn(
        r"setvar:tx\.inbound_anomaly_score_level=\d+",
        f"setvar:tx.inbound_anomaly_score_level={threshold}",
        out,
    )
    if n != 1:
        raise ValueError("the set-up does not set tx.inbound_anomaly_score_level once")
    return out


def without_rules(text: str, ids: Iterable[int]) -> str:
    """``text`` with the directives of rules ``ids`` (and their chained links) blanked."""
    drop = {str(i) for i in ids}
    lines = text.split("\n")
    logical: list[tuple[int, int, str]] = []  # first and last line, joined text
    start = 0
    buf: list[str] = []
    for number, line in enumerate(strip_comments(text).split("\n")):
        if not buf:
            start = number
        buf.append(line.rstrip().removesuffix("\\"))
        if not line.rstrip().endswith("\\"):
            logical.append((start, number, " ".join(buf)))
            buf = []
    chained = False
    for first, last, joined in logical:
        m = re.search(r"\bid:'?(\d+)", joined)
        if chained or (m and m.group(1) in drop and joined.lstrip().startswith("Sec")):
            chained = bool(re.search(r"[\",]\s*chain\s*[,\"]|\bchain\s*$", joined))
            for k in range(first, last + 1):
                lines[k] = ""
    return "\n".join(lines)


def rule_file_text(path: Path) -> str:
    """A base rule file's text as the program and the oracle read it (removed rules blanked)."""
    return without_rules(path.read_text(encoding="utf-8"), REMOVED_RULES)


# -- the program --------------------------------------------------------------------------------
def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tx_defaults(setup_text: str) -> dict[str, str]:
    """The TX values the anomaly-mode set-up's unconditional ``SecAction``s give."""
    tx: dict[str, str] = {}
    for item in parse(strip_comments(anomaly_setup(setup_text)), SETUP):
        if not isinstance(item, Rule) or len(item.links) != 1:
            continue
        link = item.links[0]
        if link.operator != "unconditionalMatch" or link.targets:
            continue
        for spec in link.setvars:
            name, eq, value = spec.partition("=")
            coll, _, key = name.partition(".")
            if coll.lower() == "tx" and eq and "%{" not in value:
                tx[key.lower()] = value
    return tx


def rule_score(rule: Rule) -> int:
    """What ``rule`` adds to ``tx.anomaly_score`` when it fires (0: nothing)."""
    total = 0
    for spec in (s for link in rule.links for s in link.setvars):
        if m := _ANOMALY_ADD.fullmatch(spec.strip()):
            value = m.group(1).strip()
            named = _NAMED_SCORE.fullmatch(value)
            if named and named.group(1).lower() in NAMED_SCORES:
                total += NAMED_SCORES[named.group(1).lower()]
            elif value.isdigit():
                total += int(value)
    return total


def is_scoring(rule: Rule) -> bool:
    """A rule of the package: request phases, it logs with a message and adds to the score."""
    return rule.phase <= 2 and rule.log and bool(rule.msg) and rule_score(rule) > 0


def setup_rules(setup_text: str) -> list[Rule]:
    """The set-up's rules that read the request (not folded into :func:`tx_defaults`): 900017
    picks the XML body processor, 900018-900021 hash the User-Agent and open collections."""
    out = []
    for item in parse(strip_comments(anomaly_setup(setup_text)), SETUP):
        if not isinstance(item, Rule):
            continue
        link = item.links[0]
        if len(item.links) == 1 and link.operator == "unconditionalMatch" and not link.targets:
            continue
        out.append(item)
    return out


def build_program(source: Checkout) -> dict[str, Any]:
    """The data of ``owasp_crs2.json``: deterministic for the same source files."""
    setup_text = source.setup.read_text(encoding="utf-8")
    items: list[Item] = list(setup_rules(setup_text))
    scoring: list[dict[str, Any]] = []
    left_rules: dict[str, str] = {str(k): v for k, v in REMOVED_RULES.items()}
    for rule_file in RULE_FILES:
        path = source.base / rule_file.name
        for item in parse(strip_comments(rule_file_text(path)), rule_file.name):
            if isinstance(item, Rule) and item.phase > 2:
                # Response phases never run on a request.
                left_rules[str(item.id)] = f"phase {item.phase} (response side) in {path.name}"
                continue
            items.append(item)
            if isinstance(item, Rule) and is_scoring(item):
                scoring.append(
                    {
                        "id": item.id,
                        "file": rule_file.name,
                        "msg": item.msg,
                        "severity": item.severity,
                        "score": rule_score(item),
                    }
                )
    return {
        "name": "OWASP ModSecurity Core Rule Set 2.2.9: request rules in anomaly mode",
        "notice": NOTICE.format(
            version=CRS_VERSION, repository=REPOSITORY, tag=source.tag, commit=source.commit
        ),
        "provenance": {
            "crs_version": CRS_VERSION,
            "repository": REPOSITORY,
            "tag": source.tag,
            "commit": source.commit,
            "generator": GENERATOR,
            "mode": (
                "anomaly: SecDefaultAction pass instead of deny, rule 900004 "
                "(tx.anomaly_score_blocking=on) uncommented, as the set-up documents"
            ),
            "files": {
                name: _sha(source.root / name)
                for name in [SETUP, *(f"{BASE}/{f.name}" for f in RULE_FILES)]
            },
            "data_files": {f"{BASE}/{p.name}": _sha(p) for p in sorted(source.base.glob("*.data"))},
            "left_out_files": {f"{BASE}/{k}": v for k, v in LEFT_OUT_FILES.items()},
            "left_out_rules": dict(sorted(left_rules.items())),
        },
        "crs": {
            "tx": tx_defaults(setup_text),
            "program": program_entries(items),
            "data": phrase_files(items, source.base),
        },
        "rules": scoring,
    }


# -- the package --------------------------------------------------------------------------------
def description(msg: str) -> str:
    """A rule's message as a one-line description (continued lines leave runs of blanks)."""
    return _SPACES.sub(" ", msg).strip()


def build_package(program: Mapping[str, Any]) -> dict[str, Any]:
    """The OWASP package in the waf_legacy catalogue's format, from ``owasp_crs2.json``'s data."""
    groups = []
    for rule_file in RULE_FILES:
        rules = [r for r in program["rules"] if r["file"] == rule_file.name]
        if not rule_file.group or not rules:
            continue
        groups.append(
            {
                "id": rule_file.group_id,
                "name": rule_file.group,
                "description": rule_file.description,
                "default_mode": "on",
                "rules": [
                    {
                        "id": str(r["id"]),
                        "description": description(r["msg"]),
                        "priority": str(n),
                        "default_mode": "on",
                        "score": int(r["score"]),
                        "expression": f"any({FIELD}[*] == {r['id']})",
                    }
                    for n, r in enumerate(rules, 1)
                ],
            }
        )
    return {
        "id": OWASP_PACKAGE,
        "name": "OWASP ModSecurity Core Rule Set",
        "description": (
            "Covers OWASP Top 10 vulnerabilities and more. Rules add to a request score; the "
            "package action applies when the score reaches the sensitivity threshold."
        ),
        "detection_mode": "anomaly",
        "notice": program["notice"],
        "groups": groups,
    }


def build_packages(program: Mapping[str, Any], packages: Mapping[str, Any]) -> dict[str, Any]:
    """``packages`` (``{"packages": [...]}``) with its OWASP package replaced, the others as they are."""
    new = build_package(program)
    return {"packages": [new if p.get("id") == OWASP_PACKAGE else p for p in packages["packages"]]}


def severity_mismatches(program: Mapping[str, Any]) -> list[tuple[int, str, int]]:
    """Scoring rules whose severity's score is not what they add: (id, severity, score)."""
    out = []
    for r in program["rules"]:
        name = SEVERITY_NAMES.get(r.get("severity", ""), "")
        expected = NAMED_SCORES.get(name.lower())
        if expected != r["score"]:
            out.append((int(r["id"]), name or "none", int(r["score"])))
    return out


def dump(data: Mapping[str, Any]) -> str:
    """A catalogue file's text: one-space indent as the other catalogues, a final newline."""
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"
