"""How far a simulation of CRS fires the same rules as the real engine, request by request.

:func:`compare` takes, for the same requests in the same order, the CRS
rule ids a simulation fired and those the oracle (libmodsecurity) fired,
and gives an :class:`Agreement`:

* recall and precision over (request, rule id) pairs, counting only rules
  ``911000``-``944999`` (the detection rules; the blocking rule ``949110``
  and the initialisation, exclusion and correlation rules are left out);
* the share of requests whose counted fired sets are equal;
* decision agreement at anomaly thresholds (5, 25, 40, 60 by default): a
  request is blocked when the scores of its fired rules add up to the
  threshold or more (CRS: CRITICAL 5, ERROR 4, WARNING 3, NOTICE 2;
  :func:`rule_scores` reads each rule's score from the CRS rule files), or
  by the anomaly totals an engine reports;
* per rule, true positives, false positives and false negatives.

    >>> scores = {942100: 5, 920350: 3, 941100: 5}
    >>> a = compare([{942100}, {920350, 941100}, set()],      # the simulation
    ...             [{942100, 949110}, {920350}, {941100}],   # the oracle
    ...             scores, thresholds=(5,))
    >>> a.true_positives, a.false_positives, a.false_negatives, a.equal_sets
    (2, 1, 1, 1)
    >>> round(a.recall, 3), round(a.precision, 3), a.decision(5).agree
    (0.667, 0.667, 1)
    >>> [(r.rule_id, r.false_positives, r.false_negatives) for r in a.worst_rules(2)]
    [(941100, 1, 1), (920350, 0, 0)]

Pure Python: nothing here needs libmodsecurity.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

#: The detection rules the pair figures count (inclusive bounds).
COUNTED = (911000, 944999)
#: CRS's inbound blocking rule: never a pair.
BLOCKING_RULE = 949110
#: CRS's anomaly scores per severity (``crs-setup.conf``).
SEVERITY_SCORES = {"CRITICAL": 5, "ERROR": 4, "WARNING": 3, "NOTICE": 2}
#: Thresholds decisions are compared at: CRS's default, then the platform's High, Medium, Low.
DEFAULT_THRESHOLDS = (5, 25, 40, 60)
#: Where Debian's modsecurity-crs puts the CRS 3.3 rule files.
CRS_RULES = Path("/usr/share/modsecurity-crs/rules")


def counted(ids: Iterable[int]) -> frozenset[int]:
    """The ids among ``ids`` the pair figures count (``911000``-``944999``, never ``949110``)."""
    low, high = COUNTED
    return frozenset(i for i in ids if low <= i <= high and i != BLOCKING_RULE)


def score(ids: Iterable[int], scores: Mapping[int, int]) -> int:
    """The anomaly score of a request that fired ``ids`` (rules without a score add nothing)."""
    return sum(scores.get(i, 0) for i in set(ids))


class Pairs:
    """Recall and precision of (request, rule) pairs, for any figures with the three counts."""

    true_positives: int
    false_positives: int
    false_negatives: int

    @property
    def recall(self) -> float:
        """Of the oracle's pairs, the share the simulation fired too (1.0 when there are none)."""
        found = self.true_positives + self.false_negatives
        return self.true_positives / found if found else 1.0

    @property
    def precision(self) -> float:
        """Of the simulation's pairs, the share the oracle fired too (1.0 when there are none)."""
        fired = self.true_positives + self.false_positives
        return self.true_positives / fired if fired else 1.0


@dataclass(frozen=True)
class RuleCounts(Pairs):
    """One rule's pairs: fired by both, by the simulation only, by the oracle only."""

    rule_id: int
    true_positives: int
    false_positives: int
    false_negatives: int

    @property
    def errors(self) -> int:
        return self.false_positives + self.false_negatives


@dataclass(frozen=True)
class Decisions:
    """Blocking decisions at one threshold: requests both block, only one side blocks, agree on."""

    threshold: int
    requests: int
    both_block: int
    simulation_only: int
    oracle_only: int

    @property
    def agree(self) -> int:
        """Requests both sides decide alike (both block or neither does)."""
        return self.requests - self.simulation_only - self.oracle_only

    @property
    def share(self) -> float:
        return self.agree / self.requests if self.requests else 1.0


@dataclass(frozen=True)
class Agreement(Pairs):
    """The figures of :func:`compare`; :meth:`table` renders them as text."""

    requests: int
    true_positives: int
    false_positives: int
    false_negatives: int
    #: Requests whose counted fired sets are equal.
    equal_sets: int
    decisions: tuple[Decisions, ...]
    #: Every rule either side fired, by id.
    rules: tuple[RuleCounts, ...]
    label: str = ""

    @property
    def equal_share(self) -> float:
        return self.equal_sets / self.requests if self.requests else 1.0

    def decision(self, threshold: int) -> Decisions:
        """The decisions at ``threshold`` (KeyError when it was not compared)."""
        for d in self.decisions:
            if d.threshold == threshold:
                return d
        raise KeyError(threshold)

    def worst_rules(self, n: int = 10) -> list[RuleCounts]:
        """The ``n`` rules with the most false positives plus false negatives (then by id)."""
        return sorted(self.rules, key=lambda r: (-r.errors, r.rule_id))[:n]

    def table(self, worst: int = 10) -> str:
        """The figures as a text table, with the ``worst`` rules (those with any error)."""
        title = f"CRS agreement over {self.requests:,} requests"
        lines = [title + (f" ({self.label})" if self.label else "")]
        lines.append(
            f"  pairs (request, rule {COUNTED[0]}-{COUNTED[1]}): recall {self.recall:7.2%}  "
            f"precision {self.precision:7.2%}  (both {self.true_positives:,}, "
            f"simulation only {self.false_positives:,}, oracle only {self.false_negatives:,})"
        )
        lines.append(
            f"  requests with the same fired set: {self.equal_sets:,} / {self.requests:,} "
            f"({self.equal_share:.2%})"
        )
        if self.decisions:
            lines.append("  decisions (blocked when the score reaches the threshold):")
            lines.append("    threshold    agree   both block  simulation only  oracle only")
            for d in self.decisions:
                lines.append(
                    f"    {d.threshold:9d}  {d.share:7.2%}  {d.both_block:11,d}  "
                    f"{d.simulation_only:15,d}  {d.oracle_only:11,d}"
                )
        bad = [r for r in self.worst_rules(worst) if r.errors]
        if bad:
            lines.append(f"  worst rules ({len(bad)} of {sum(1 for r in self.rules if r.errors)}):")
            lines.append("      rule    both  sim only  oracle only   recall  precision")
            for r in bad:
                lines.append(
                    f"    {r.rule_id:6d}  {r.true_positives:6,d}  {r.false_positives:8,d}  "
                    f"{r.false_negatives:11,d}  {r.recall:7.1%}  {r.precision:9.1%}"
                )
        return "\n".join(lines)


def compare(
    simulated: Sequence[Iterable[int]],
    oracle: Sequence[Iterable[int]],
    scores: Mapping[int, int],
    thresholds: Iterable[int] = DEFAULT_THRESHOLDS,
    oracle_scores: Mapping[int, int] | None = None,
    label: str = "",
    simulated_totals: Sequence[int] | None = None,
    oracle_totals: Sequence[int] | None = None,
) -> Agreement:
    """The agreement of ``simulated`` with ``oracle`` (fired rule ids, one set a request, in the
    same order).

    Decisions score the simulation's rules with ``scores`` and the oracle's with
    ``oracle_scores`` (the same ``scores`` when not given), unless a side's anomaly totals
    are given (``simulated_totals``, ``oracle_totals``: one a request). libmodsecurity adds a
    rule's score once per matched variable, so a rule matching the path and an argument adds
    it twice: its totals (:attr:`OracleResult.reported_score`, ``949110``'s "Total Score",
    with 0 where 949110 did not fire) decide exactly at thresholds at or above the oracle's
    own, where scoring its fired set undercounts.
    """
    if len(simulated) != len(oracle):
        raise ValueError(f"{len(simulated)} simulated results for {len(oracle)} oracle results")
    for name, totals in (("simulated_totals", simulated_totals), ("oracle_totals", oracle_totals)):
        if totals is not None and len(totals) != len(oracle):
            raise ValueError(f"{len(totals)} {name} for {len(oracle)} requests")
    limits = tuple(thresholds)
    theirs_scores = scores if oracle_scores is None else oracle_scores
    tp = fp = fn = equal = 0
    per_rule: dict[int, list[int]] = {}
    both = [0] * len(limits)
    sim_only = [0] * len(limits)
    oracle_only = [0] * len(limits)
    for n, (sim_ids, oracle_ids) in enumerate(zip(simulated, oracle, strict=True)):
        ours, theirs = set(sim_ids), set(oracle_ids)
        mine, real = counted(ours), counted(theirs)
        equal += mine == real
        for rule in mine | real:
            row = per_rule.setdefault(rule, [0, 0, 0])
            row[0 if rule in mine and rule in real else 1 if rule in mine else 2] += 1
        tp += len(mine & real)
        fp += len(mine - real)
        fn += len(real - mine)
        ours_total = score(ours, scores) if simulated_totals is None else simulated_totals[n]
        theirs_total = score(theirs, theirs_scores) if oracle_totals is None else oracle_totals[n]
        for k, limit in enumerate(limits):
            a, b = ours_total >= limit, theirs_total >= limit
            both[k] += a and b
            sim_only[k] += a and not b
            oracle_only[k] += b and not a
    return Agreement(
        requests=len(oracle),
        true_positives=tp,
        false_positives=fp,
        false_negatives=fn,
        equal_sets=equal,
        decisions=tuple(
            Decisions(limit, len(oracle), both[k], sim_only[k], oracle_only[k])
            for k, limit in enumerate(limits)
        ),
        rules=tuple(RuleCounts(rule, *per_rule[rule]) for rule in sorted(per_rule)),
        label=label,
    )


_ID = re.compile(r"\bid:'?(\d+)")
_ADDS = re.compile(r"tx\.(?:inbound_)?anomaly_score_pl\d=\+%\{tx\.(\w+?)_anomaly_score\}")
_LEVEL = re.compile(r"tag:'paranoia-level/(\d)'")
_NAMED = {"critical": 5, "error": 4, "warning": 3, "notice": 2}


def _directives(text: str) -> list[str]:
    """The directives of a rule file, continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\r?\n", " ", text)
    return [
        ln.strip() for ln in joined.splitlines() if ln.strip() and not ln.lstrip().startswith("#")
    ]


def _rule_files(rules_dir: Path) -> list[Path]:
    return sorted(rules_dir.glob("REQUEST-9*.conf"))


def rule_scores(rules_dir: Path = CRS_RULES) -> dict[int, int]:
    """Rule id -> the anomaly score it adds when it matches, read from the request rule files
    (``setvar:'tx.anomaly_score_plN=+%{tx.critical_anomaly_score}'``, in the rule or its chain).
    Rules that add nothing are absent."""
    out: dict[int, int] = {}
    for path in _rule_files(rules_dir):
        current: int | None = None
        for line in _directives(path.read_text(encoding="utf-8")):
            if m := _ID.search(line):
                current = int(m.group(1))
            for add in _ADDS.finditer(line):
                if current is not None and add.group(1) in _NAMED:
                    out[current] = out.get(current, 0) + _NAMED[add.group(1)]
    return out


def rule_levels(rules_dir: Path = CRS_RULES) -> dict[int, int]:
    """Rule id -> its paranoia level (its ``paranoia-level/N`` tag), for the tagged request rules."""
    out: dict[int, int] = {}
    for path in _rule_files(rules_dir):
        for line in _directives(path.read_text(encoding="utf-8")):
            rule, level = _ID.search(line), _LEVEL.search(line)
            if rule and level:
                out[int(rule.group(1))] = int(level.group(1))
    return out
