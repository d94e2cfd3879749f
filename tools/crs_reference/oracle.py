"""libmodsecurity 3 running the real Core Rule Set: the reference the translated rulesets are tested against.

The oracle loads ModSecurity's recommended body-processor rules (XML and JSON
by Content-Type, 200000-200005), CRS's set-up with the paranoia level and
threshold asked for, and the request rule files (``REQUEST-901``...``949``,
without ``910``, which needs GeoIP, and the application exclusions ``903.*``).
It needs the test dependency ``libmodsecurity`` and Debian's
``modsecurity-crs``; :func:`available` says whether both are here.

    >>> oracle = Oracle(paranoia_level=1) if available() else None
    >>> oracle is None or 942100 in oracle.run(RawRequest("GET", "/?q=1%27%20or%20%271%27%3D%271")).rule_ids
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.rulesets.crs.request import RawRequest

CRS3_RULES = Path("/usr/share/modsecurity-crs/rules")
CRS3_SETUP = Path("/etc/modsecurity/crs/crs-setup.conf")

#: ModSecurity's modsecurity.conf-recommended: the engine on, bodies read and parsed.
BASE_CONFIG = r"""
SecRuleEngine On
SecRequestBodyAccess On
SecRequestBodyLimit 13107200
SecRequestBodyNoFilesLimit 131072
SecRequestBodyLimitAction ProcessPartial
SecRequestBodyJsonDepthLimit 512
SecPcreMatchLimit 100000
SecPcreMatchLimitRecursion 100000
SecRule REQUEST_HEADERS:Content-Type "^(?:application(?:/soap\+|/)|text/)xml" \
     "id:'200000',phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=XML"
SecRule REQUEST_HEADERS:Content-Type "^application/json" \
     "id:'200001',phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=JSON"
SecRule REQBODY_ERROR "!@eq 0" \
"id:'200002', phase:2,t:none,log,deny,status:400,msg:'Failed to parse request body.',logdata:'%{reqbody_error_msg}',severity:2"
SecRule MULTIPART_STRICT_ERROR "!@eq 0" \
"id:'200003',phase:2,t:none,log,deny,status:400,msg:'Multipart request body failed strict validation'"
SecRule MULTIPART_UNMATCHED_BOUNDARY "@eq 1" \
    "id:'200004',phase:2,t:none,log,deny,msg:'Multipart parser detected a possible unmatched boundary.'"
SecRule TX:/^MSC_/ "!@streq 0" \
        "id:'200005',phase:2,t:none,deny,msg:'ModSecurity internal error flagged: %{MATCHED_VAR_NAME}'"
"""

#: The ids of the body-processor rules above (not CRS rules).
BASE_IDS = frozenset(range(200000, 200006))

_LEFT_OUT = re.compile(r"REQUEST-(?:910|903\.)")


def available(rules_dir: Path = CRS3_RULES) -> bool:
    """True when libmodsecurity imports and the CRS rule files are present."""
    try:
        import libmodsecurity  # noqa: F401
    except ImportError:
        return False
    return rules_dir.is_dir() and any(rules_dir.glob("REQUEST-9*.conf"))


def unavailable_reason(rules_dir: Path = CRS3_RULES) -> str:
    """Why :func:`available` is False (for a test's skip message)."""
    try:
        import libmodsecurity  # noqa: F401
    except ImportError:
        return "libmodsecurity is not installed (pip install libmodsecurity)"
    return f"the CRS rules are not in {rules_dir} (apt-get install modsecurity-crs)"


@dataclass(frozen=True)
class OracleResult:
    """What libmodsecurity did with one request: the CRS rules that fired, with their logdata."""

    rule_ids: frozenset[int]
    logdata: dict[int, str]
    #: The total inbound anomaly score 949110 reported (None when it did not fire).
    reported_score: int | None
    #: A body-processor rule (200002-200005) that denied the request first, if any.
    body_error: int | None


def crs3_files(rules_dir: Path = CRS3_RULES) -> list[Path]:
    """The request rule files the oracle loads, in load order."""
    return [p for p in sorted(rules_dir.glob("REQUEST-9*.conf")) if not _LEFT_OUT.search(p.name)]


def crs3_config(
    paranoia_level: int, threshold: int = 5, rules_dir: Path = CRS3_RULES, setup: Path = CRS3_SETUP
) -> str:
    """The whole configuration text for CRS 3.3 at ``paranoia_level``."""
    parts = [BASE_CONFIG, setup.read_text()]
    parts.append(
        f'SecAction "id:900000,phase:1,nolog,pass,t:none,setvar:tx.paranoia_level={paranoia_level}"\n'
        f'SecAction "id:900001,phase:1,nolog,pass,t:none,'
        f'setvar:tx.executing_paranoia_level={paranoia_level}"\n'
        f'SecAction "id:900110,phase:1,nolog,pass,t:none,'
        f"setvar:tx.inbound_anomaly_score_threshold={threshold},"
        f'setvar:tx.outbound_anomaly_score_threshold=4"\n'
    )
    parts.extend(_with_data_paths(p) for p in crs3_files(rules_dir))
    return "\n".join(parts)


_FROM_FILE = re.compile(r"(@pmFromFile|@pmf|@ipMatchFromFile) +([\w.-]+\.data)")


def _with_data_paths(path: Path) -> str:
    """A rule file's text with its data files named by absolute path (text loads have no folder)."""
    return _FROM_FILE.sub(lambda m: f"{m.group(1)} {path.parent / m.group(2)}", path.read_text())


_SCORE = re.compile(r"Total Score: (\d+)")


def _text(msg: Any, name: str) -> str:
    """A rule message's text field; the binding cannot hand over bytes that are not UTF-8."""
    try:
        return str(getattr(msg, name))
    except UnicodeDecodeError:
        return "<not UTF-8>"


def transaction(lib: Any, modsec: Any, rules: Any, request: RawRequest) -> Any:
    """A libmodsecurity transaction driven through the request's phases (connection, URI,
    headers, body), before logging: its rule messages are ready to read."""
    tx = lib.Transaction(modsec, rules)
    tx.process_connection(request.client_ip, 40000, "203.0.113.1", 80)
    version = request.protocol.split("/", 1)[1] if "/" in request.protocol else "1.1"
    tx.process_uri(request.uri, request.method, version)
    for name, value in request.headers:
        tx.add_request_header(name, value)
    tx.process_request_headers()
    if request.body:
        tx.append_request_body(request.body)
    tx.process_request_body()
    return tx


class Oracle:
    """libmodsecurity loaded with a configuration; :meth:`run` replays one request."""

    def __init__(
        self,
        paranoia_level: int = 1,
        threshold: int = 5,
        config: str | None = None,
    ) -> None:
        import libmodsecurity

        self._lib = libmodsecurity
        self.modsec = libmodsecurity.ModSecurity()
        self.modsec.set_log_callback(lambda *args: None)
        self.rules = libmodsecurity.RulesSet()
        text = config if config is not None else crs3_config(paranoia_level, threshold)
        if self.rules.load(text) < 0:
            raise RuntimeError(f"libmodsecurity refused the rules: {self.rules.get_parser_error()}")

    def messages(self, request: RawRequest) -> list[tuple[int, str, str]]:
        """Drive one transaction with ``request``: ``(rule id, logdata, message)`` of each rule
        that logged, in order (texts that are not UTF-8 as ``<not UTF-8>``)."""
        tx = transaction(self._lib, self.modsec, self.rules, request)
        found = [
            (int(msg.rule_id), _text(msg, "data"), _text(msg, "message"))
            for msg in tx.get_rule_messages()
        ]
        tx.process_logging()
        return found

    def run(self, request: RawRequest) -> OracleResult:
        """Replay ``request``; the rules that fired (body-processor rules apart)."""
        ids: set[int] = set()
        logdata: dict[int, str] = {}
        reported = None
        body_error = None
        for rule_id, data, message in self.messages(request):
            if rule_id in BASE_IDS:
                body_error = body_error or rule_id
                continue
            ids.add(rule_id)
            logdata.setdefault(rule_id, data)
            if rule_id == 949110 and (m := _SCORE.search(message)):
                reported = int(m.group(1))
        return OracleResult(frozenset(ids), logdata, reported, body_error)
