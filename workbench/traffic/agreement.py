"""Agreement: the workbench's decision on real traffic against the one the platform recorded.

Requests imported with their recorded decisions (the Security fields of an
http_requests log, or firewall events joined to any log: see
:mod:`workbench.traffic.decisions` and
:mod:`workbench.traffic.importers_events`) are replayed through a zone set up
as the real one, and each simulated outcome is compared with the recorded
one. The :class:`Agreement` has one row per request (``frame``), recorded
against simulated outcomes (``by_action``), agreement per rule of the sources
the workbench simulates (``by_rule``), the requests that disagree with an
explanation and the rules that acted on each side (``disagreements``), and
what the log cannot tell, counted on this log (``cannot_tell``).
``wb.traffic.agreement(zone_id, imported)`` replays and compares;
:func:`compare` is the comparison alone.

    >>> from workbench import Workbench
    >>> from workbench.traffic.importers import read_http_requests
    >>> wb = Workbench(seed=0)
    >>> zone = wb.create_zone("shop.example", plan="enterprise")
    >>> [rule] = wb.firewall.create_rules(zone.id, [
    ...     {"filter": {"expression": 'http.request.uri.path eq "/admin"'}, "action": "block"}])
    >>> line = ('{{"RayID": "{ray}", "ClientRequestHost": "shop.example", "ClientRequestURI": "{uri}", '
    ...         '"SecurityAction": "{action}", "SecurityRuleID": "{rule}", "SecurityActions": [{actions}], '
    ...         '"SecuritySources": [{sources}], "SecurityRuleIDs": [{rules}]}}')
    >>> log = read_http_requests([
    ...     line.format(ray="a1", uri="/admin", action="block", rule=rule.id, actions='"block"',
    ...                 sources='"firewallRules"', rules=f'"{rule.id}"'),
    ...     line.format(ray="a2", uri="/", action="", rule="", actions="", sources="", rules=""),
    ...     line.format(ray="a3", uri="/login", action="block", rule="rl1", actions='"block"',
    ...                 sources='"rateLimit"', rules='"rl1"')])
    >>> done = wb.traffic.agreement(zone.id, log)
    >>> {k: done.summary[k] for k in ("requests", "compared", "agree", "disagree")}
    {'requests': 3, 'compared': 3, 'agree': 2, 'disagree': 1}
    >>> done.summary["by_action"]
    {'allow': {'allow': 1}, 'block': {'allow': 1, 'block': 1}}
    >>> print(done.disagreements.reason.iloc[0])
    recorded block by rate limiting (rateLimit rule rl1), which the workbench does not simulate
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd  # type: ignore[import-untyped]  # no pandas-stubs in the dev dependencies

from ..core.text import plural
from .decisions import (
    CHALLENGE_PAGE,
    SIMULATED_SOURCES,
    Recorded,
    RuleMatch,
    outcomes_agree,
    product,
)
from .log_reading import Imported, Logged
from .request import Request

#: Methods whose requests usually carry a body.
BODY_METHODS = ("POST", "PUT", "PATCH")
#: Where a recorded decision was read (``Recorded.origin``), in words.
ORIGINS = {
    "http_requests": "the log's Security fields",
    "firewall_events": "the firewall events",
    "har": "the HAR's cf-mitigated headers",
}
#: A request's verdict: its outcomes agree, disagree, or it has no recorded decision.
VERDICTS = ("agree", "disagree", "no recorded decision")
#: Actions by which a rule lets a request through the rules after it.
EXCEPTIONS = ("skip", "allow", "bypass")
#: What each part of a request a log may lack keeps rules from seeing.
MISSING: dict[str, str] = {
    "body": "no request body (Logpush and combined logs never hold one): rules on "
    "http.request.body.* cannot match here",
    "headers": "no request headers beyond Host, User-Agent and Referer (Logpush logs them "
    "only through the RequestHeaders custom field)",
    "cookies": "no cookies (Logpush logs them only through the Cookies custom field)",
    "client_ip": "no client IP address: rules on ip.src cannot match",
    "country": "no client country: rules on ip.src.country cannot match",
    "asn": "no client ASN: rules on ip.src.asnum cannot match",
    "host": "no host in the log (the requests were given the zone's)",
    "tls": "no TLS version (TLS 1.3 assumed for https)",
}


@dataclass
class Agreement:
    """The comparison of a log's recorded decisions with the workbench's (module docstring).

    ``frame`` has one row per request: its ``line`` and ``ray_id`` in the
    log, ``method``, ``host``, ``uri``, the ``recorded`` and ``simulated``
    outcomes with the rule that decided each (``recorded_rule``,
    ``recorded_source``, ``simulated_rule``, ``simulated_source``), the
    ``verdict`` (:data:`VERDICTS`), the ``reason`` of a disagreement, every
    rule that acted on each side (``recorded_rules``, ``simulated_rules``),
    where the recorded decision was read (``origin``) and the workbench's
    ray id of the replayed request (``simulated_ray_id``).
    """

    frame: Any
    by_action: Any
    by_rule: Any
    cannot_tell: Any
    summary: dict[str, Any]

    @property
    def disagreements(self) -> Any:
        """The rows whose outcomes differ, each with its reason and the rules of each side."""
        return self.frame[self.frame["verdict"] == "disagree"]

    def to_json(self) -> dict[str, Any]:
        """The summary, the rules, the disagreements and what the log cannot tell, as JSON."""
        columns = ["line", "ray_id", "method", "uri", "recorded", "simulated", "reason"]
        columns += ["recorded_rules", "simulated_rules"]
        return {
            **self.summary,
            "by_rule": self.by_rule.to_dict("records"),
            "disagreements": self.disagreements[columns].to_dict("records"),
            "cannot_tell": self.cannot_tell.to_dict("records"),
        }

    def headline(self) -> str:
        """One line: how many requests were compared and how many agree."""
        s = self.summary
        share = f" ({s['agreement']:.1%})" if s["agreement"] is not None else ""
        return (
            f"{plural(s['requests'], 'request')} on {s['zone'] or 'the zone'}: {s['compared']} with a "
            f"recorded decision, {s['agree']} agree, {s['disagree']} disagree{share}"
        )

    def provenance(self) -> str:
        """Where the requests and their recorded decisions were read, in words."""
        origins = ", ".join(
            f"{ORIGINS.get(k, k)} ({v:,})" for k, v in sorted(self.summary["recorded_from"].items())
        )
        return f"read as {self.summary['format']}; recorded decisions from {origins or 'none'}"

    def text(self) -> str:
        """The report as plain text: the table, the rules, each disagreement, what is unknown."""
        out = [self.headline(), self.provenance(), ""]
        if len(self.by_action):
            out += ["recorded (rows) against simulated (columns):", self.by_action.to_string(), ""]
        if len(self.by_rule):
            out += ["rules of the simulated sources:", self.by_rule.to_string(index=False), ""]
        for row in self.disagreements.itertuples():
            ray = f" ray {row.ray_id}" if row.ray_id else ""
            out.append(f"line {row.line}{ray}: {row.method} {row.uri}")
            out.append(f"  recorded {row.recorded}, simulated {row.simulated}: {row.reason}")
            out.append(f"  recorded rules: {row.recorded_rules or 'none'}")
            out.append(f"  simulated rules: {row.simulated_rules or 'none'}")
        if len(self.disagreements):
            out.append("")
        if len(self.cannot_tell):
            out.append("what the log cannot tell:")
            out += [f"- {r.requests} of {r.of}: {r.note}" for r in self.cannot_tell.itertuples()]
        return "\n".join(out).rstrip("\n")

    def __repr__(self) -> str:
        return f"<Agreement: {self.headline()}>"

    def _repr_html_(self) -> str:
        parts = [f"<p><b>{html.escape(self.headline())}</b></p>"]
        for title, frame in (
            ("Recorded (rows) against simulated (columns)", self.by_action),
            ("Rules of the simulated sources", self.by_rule),
            ("Disagreements", self.disagreements.drop(columns=["simulated_ray_id"])),
            ("What the log cannot tell", self.cannot_tell),
        ):
            if len(frame):
                parts.append(f"<h4>{title}</h4>{frame.to_html(index=frame is self.by_action)}")
        return "".join(parts)


def compare(
    imported: Imported,
    simulated: Sequence[Recorded],
    *,
    simulated_ray_ids: Sequence[str] | None = None,
    rule_ids: Mapping[str, str] | None = None,
    zone: str = "",
) -> Agreement:
    """Compare each request's recorded decision with ``simulated[i]``, the workbench's.

    ``rule_ids`` maps the log's rule ids to the workbench's where they differ
    (an imported zone's firewall rules get new ids:
    ``ZoneImport.ids["firewall_rules"]``); the report speaks the log's.
    """
    back = {new: old for old, new in (rule_ids or {}).items()}
    simulated = [_renamed(s, back) for s in simulated]
    if len(simulated) != len(imported.requests):
        raise ValueError(
            f"{len(simulated)} simulated decisions for {len(imported.requests)} requests"
        )
    rays = list(simulated_ray_ids or [""] * len(simulated))
    rows = [
        _row(r, imported.logged_at(i), s, rays[i])
        for i, (r, s) in enumerate(zip(imported.requests, simulated, strict=True))
    ]
    frame = pd.DataFrame(rows, columns=_COLUMNS)
    compared = frame[frame["verdict"] != VERDICTS[2]]
    by_action = pd.crosstab(
        compared["recorded"].rename("recorded"), compared["simulated"].rename("simulated")
    )
    recorded_pairs = [imported.logged_at(i).recorded for i in range(len(rows))]
    by_rule = _by_rule(recorded_pairs, simulated)
    counts = Counter(frame["verdict"])
    n = int(len(compared))
    summary = {
        "zone": zone,
        "format": imported.format,
        "requests": len(frame),
        "compared": n,
        "agree": counts["agree"],
        "disagree": counts["disagree"],
        "not_compared": counts[VERDICTS[2]],
        "agreement": round(counts["agree"] / n, 4) if n else None,
        "recorded_from": dict(Counter(o for o in frame["origin"] if o)),
        "by_action": {
            str(rec): {str(sim): int(c) for sim, c in row.items() if c}
            for rec, row in by_action.iterrows()
        },
    }
    cannot = _cannot_tell(imported, recorded_pairs, zone)
    return Agreement(frame, by_action, by_rule, cannot, summary)


_COLUMNS = [
    "line",
    "ray_id",
    "method",
    "host",
    "uri",
    "recorded",
    "recorded_rule",
    "recorded_source",
    "simulated",
    "simulated_rule",
    "simulated_source",
    "verdict",
    "reason",
    "recorded_rules",
    "simulated_rules",
    "origin",
    "simulated_ray_id",
]


def _renamed(decided: Recorded, back: Mapping[str, str]) -> Recorded:
    if not back:
        return decided

    def one(m: RuleMatch) -> RuleMatch:
        return replace(m, rule_id=back.get(m.rule_id, m.rule_id))

    ending = one(decided.ending) if decided.ending is not None else None
    return replace(decided, rules=tuple(one(m) for m in decided.rules), ending=ending)


def _deciding(decided: Recorded | None) -> RuleMatch | None:
    """The rule that ended the request (None when nothing did)."""
    return decided.ending if decided is not None and decided.outcome != "allow" else None


def _row(r: Request, seen: Logged, sim: Recorded, ray: str) -> dict[str, Any]:
    rec = seen.recorded
    rec_end, sim_end = _deciding(rec), _deciding(sim)
    if rec is None:
        verdict, reason = VERDICTS[2], ""
    elif outcomes_agree(rec.outcome, sim.outcome):
        verdict, reason = "agree", ""
    else:
        verdict, reason = "disagree", explain(rec, sim, r, seen.parts)
    return {
        "line": seen.line,
        "ray_id": seen.ray_id,
        "method": r.method,
        "host": r.host,
        "uri": r.uri,
        "recorded": rec.outcome if rec is not None else None,
        "recorded_rule": rec_end.rule_id if rec_end else "",
        "recorded_source": rec_end.source if rec_end else "",
        "simulated": sim.outcome,
        "simulated_rule": sim_end.rule_id if sim_end else "",
        "simulated_source": sim_end.source if sim_end else "",
        "verdict": verdict,
        "reason": reason,
        "recorded_rules": "; ".join(m.text() for m in rec.rules) if rec else "",
        "simulated_rules": "; ".join(m.text() for m in sim.rules),
        "origin": rec.origin if rec is not None else "",
        "simulated_ray_id": ray,
    }


def explain(rec: Recorded, sim: Recorded, request: Request, parts: frozenset[str]) -> str:
    """Why the recorded and simulated outcomes of one request differ, in a sentence."""
    rec_end, sim_end = _deciding(rec), _deciding(sim)
    here = f"; here {sim_end.text()} ended it" if sim_end else ""
    if rec_end is not None:
        said = f"{rec_end.source} rule {rec_end.rule_id or '(no id)'}"
        if rec_end.source not in SIMULATED_SOURCES:
            return (
                f"recorded {rec.outcome} by {product(rec_end.source)} ({said}), "
                f"which the workbench does not simulate{here}"
            )
        same = [m for m in sim.rules if (m.source, m.rule_id) == (rec_end.source, rec_end.rule_id)]
        if same:
            return (
                f"{said} matched here too, but with action {same[-1].action} where the log "
                f"has {rec_end.action}: the zone set up here gives it another action{here}"
            )
        if sim_end is not None:
            return f"recorded {rec.outcome} by {said}, which did not match here{here}"
        lacking = _lacking(request, parts)
        if lacking:
            return (
                f"recorded {rec.outcome} by {said}, which did not match here: the log holds "
                f"{lacking}, and the rule most likely matched there"
            )
        return (
            f"recorded {rec.outcome} by {said}, which did not match here: the zone set up "
            "here differs from the real one (the rule is missing, off, or matches otherwise)"
        )
    if rec.outcome == CHALLENGE_PAGE:  # a HAR names neither the product nor the rule
        here = f"{sim_end.text()} gave {sim.outcome} here" if sim_end else "nothing acted here"
        return (
            "the response was a challenge page (cf-mitigated: challenge) from a product the HAR "
            f"does not name; {here} (firewall events would say which rule challenged it)"
        )
    if sim_end is None:  # a decision made by hand may name no rule
        return f"recorded {rec.outcome}, simulated {sim.outcome}; neither side names a rule"
    let_through = [m for m in rec.rules if m.action in EXCEPTIONS]
    if let_through:
        return (
            f"the real zone let it through ({let_through[-1].text()}); the zone set up here "
            f"has no such exception, so {sim_end.text()} gave {sim.outcome}"
        )
    return (
        f"{sim_end.text()} gave {sim.outcome} here, but the real WAF took no action: the zone "
        "set up here is stricter than the real one (the rule is not deployed there, is "
        "excepted, or only logs)"
    )


def _lacking(request: Request, parts: frozenset[str]) -> str:
    """The part the log lacks that a rule most likely matched (``""`` when none is missing)."""
    if "body" not in parts and request.method.upper() in BODY_METHODS:
        return f"no body for this {request.method.upper()}"
    missing = [p for p in ("headers", "cookies") if p not in parts]
    return f"no {' or '.join(missing)} for this request" if missing else ""


def _outside(zone: str, hosts: Sequence[str]) -> list[tuple[str, int]]:
    """The hosts that are neither ``zone`` nor under it, with their counts, commonest first."""
    zone = zone.lower()
    if not zone:
        return []
    found = Counter(
        h
        for h in (host.lower() for host in hosts)
        if h and h != zone and not h.endswith("." + zone)
    )
    return sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))


def _by_rule(recorded: Sequence[Recorded | None], simulated: Sequence[Recorded]) -> Any:
    """Per rule of a simulated source: requests it acted on in the log, here, and both."""
    counts: dict[tuple[str, str], list[int]] = {}
    described: dict[tuple[str, str], str] = {}
    for rec, sim in zip(recorded, simulated, strict=True):
        if rec is None:
            continue
        sides = []
        for decided in (rec, sim):
            keys = set()
            for m in decided.rules:
                if m.source in SIMULATED_SOURCES and m.rule_id:
                    keys.add((m.source, m.rule_id))
                    if m.description:
                        described.setdefault((m.source, m.rule_id), m.description)
            sides.append(keys)
        for key in sides[0] | sides[1]:
            tally = counts.setdefault(key, [0, 0, 0])
            tally[0] += key in sides[0]
            tally[1] += key in sides[1]
            tally[2] += key in sides[0] and key in sides[1]
    ordered = sorted(counts.items(), key=lambda kv: (-(kv[1][0] + kv[1][1]), kv[0]))
    rows = [
        {
            "source": source,
            "rule_id": rule_id,
            "description": described.get((source, rule_id), ""),
            "recorded": a,
            "simulated": b,
            "both": both,
            "agreement": round(both / (a + b - both), 4),
        }
        for (source, rule_id), (a, b, both) in ordered
    ]
    columns = ["source", "rule_id", "description", "recorded", "simulated", "both", "agreement"]
    return pd.DataFrame(rows, columns=columns)


def _cannot_tell(imported: Imported, recorded: Sequence[Recorded | None], zone: str = "") -> Any:
    """What the log cannot tell, each counted on its requests (only what applies)."""
    n = len(imported.requests)
    rows = []
    outside = _outside(zone, [r.host for r in imported.requests])
    if outside:
        named = ", ".join(f"{h} {c}" for h, c in outside[:3]) + (", ..." * (len(outside) > 3))
        rows.append(
            (
                "zone",
                sum(c for _, c in outside),
                n,
                f"requests for hosts outside zone {zone} ({named}): replayed through its "
                "rules all the same",
            )
        )
    without = [
        r for i, r in enumerate(imported.requests) if "body" not in imported.logged_at(i).parts
    ]
    if without:
        methods = Counter(r.method.upper() for r in without if r.method.upper() in BODY_METHODS)
        which = ", ".join(f"{m} {c}" for m, c in sorted(methods.items())) or "none"
        rows.append(("body", len(without), n, f"{MISSING['body']} (POST, PUT or PATCH: {which})"))
    for part in ("headers", "cookies", "client_ip", "country", "asn", "host", "tls"):
        lacking = sum(part not in imported.logged_at(i).parts for i in range(n))
        if lacking:
            rows.append((part, lacking, n, MISSING[part]))
    missing = sum(d is None for d in recorded)
    if missing:
        rows.append(
            (
                "decision",
                missing,
                n,
                "no recorded decision (no Security fields, no firewall event): not compared",
            )
        )
    others = Counter(
        d.ending.source
        for d in recorded
        if d is not None and d.ending is not None and d.outcome != "allow"
        and d.ending.source not in SIMULATED_SOURCES
    )  # fmt: skip
    if others:
        named = ", ".join(f"{product(s)} ({s}) {c}" for s, c in sorted(others.items()))
        rows.append(
            (
                "source",
                sum(others.values()),
                n,
                f"decisions by products the workbench does not simulate: {named}; "
                "they cannot agree",
            )
        )
    return pd.DataFrame(rows, columns=["what", "requests", "of", "note"])
