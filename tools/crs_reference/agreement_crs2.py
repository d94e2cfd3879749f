"""How far the old OWASP package (CRS 2.2.9, interpreted) agrees with libmodsecurity, per sensitivity.

:func:`compare_crs2` takes, for the same requests in the same order, the
package rules the interpreter fired with the program's ``tx.anomaly_score``,
and libmodsecurity's results with the threshold of one sensitivity
(:class:`.oracle_crs2.Crs2Result`), and gives :class:`Crs2Figures`:

* recall and precision over (request, rule) pairs and the share of requests
  with equal fired sets, counting the package's rules only (its ``scores``);
* decision agreement with the oracle's blocking rule 981176 at the threshold,
  twice: as the old WAF's engine decides (``package``: each fired rule's score
  once, as Cloudflare documents "each matching rule adds to a request score"),
  and as the program's own total decides (``program``: a rule adds its score
  once per matched variable and per matching multiMatch stage, as
  libmodsecurity counts);
* per rule, pairs fired by both, by the interpreter only, by the oracle only.

    >>> from .oracle_crs2 import Crs2Result
    >>> oracle = [Crs2Result(frozenset({950901, 981318}), True, 30), Crs2Result(frozenset(), False)]
    >>> f = compare_crs2([{950901, 981318}, {960015}], [30, 2], oracle, {950901: 5, 981318: 5, 960015: 2},
    ...                  "high", 25)
    >>> f.true_positives, f.false_positives, f.equal_sets, f.package.agree, f.program.agree
    (2, 1, 1, 1, 2)

Pure Python: nothing here needs libmodsecurity.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .agreement import Decisions, Pairs, RuleCounts
from .oracle_crs2 import Crs2Result


@dataclass(frozen=True)
class Crs2Figures(Pairs):
    """The agreement at one sensitivity; :meth:`line` and :func:`table` render it."""

    sensitivity: str
    threshold: int
    requests: int
    true_positives: int
    false_positives: int
    false_negatives: int
    equal_sets: int
    #: The old WAF engine's decision (each fired rule once) against 981176.
    package: Decisions
    #: The program's tx.anomaly_score against 981176.
    program: Decisions
    rules: tuple[RuleCounts, ...]

    @property
    def equal_share(self) -> float:
        return self.equal_sets / self.requests if self.requests else 1.0

    def line(self) -> str:
        """One row of :func:`table`."""
        return (
            f"  {self.sensitivity:6s} {self.threshold:3d}  recall {self.recall:7.2%}  "
            f"precision {self.precision:7.2%}  same set {self.equal_share:7.2%}  "
            f"decisions: package {self.package.share:7.2%} "
            f"(only ours {self.package.simulation_only:,}, only oracle {self.package.oracle_only:,})"
            f"  program {self.program.share:7.2%}"
        )

    def worst_rules(self, n: int = 10) -> list[RuleCounts]:
        """The ``n`` rules with the most disagreements (then by id), those with any."""
        ranked = sorted(self.rules, key=lambda r: (-r.errors, r.rule_id))
        return [r for r in ranked if r.errors][:n]


def _decisions(threshold: int, ours: Sequence[bool], theirs: Sequence[bool]) -> Decisions:
    pairs = list(zip(ours, theirs, strict=True))
    return Decisions(
        threshold,
        len(pairs),
        sum(a and b for a, b in pairs),
        sum(a and not b for a, b in pairs),
        sum(b and not a for a, b in pairs),
    )


def compare_crs2(
    simulated: Sequence[Iterable[int]],
    simulated_totals: Sequence[int],
    oracle: Sequence[Crs2Result],
    scores: Mapping[int, int],
    sensitivity: str,
    threshold: int,
) -> Crs2Figures:
    """The figures of the interpreter's runs against the oracle's at ``threshold``."""
    if not len(simulated) == len(simulated_totals) == len(oracle):
        raise ValueError("simulated, simulated_totals and oracle must be as long as each other")
    tp = fp = fn = equal = 0
    per_rule: dict[int, list[int]] = {}
    package: list[bool] = []
    for ids, result in zip(simulated, oracle, strict=True):
        mine = {i for i in ids if i in scores}
        real = {i for i in result.rule_ids if i in scores}
        equal += mine == real
        tp, fp, fn = tp + len(mine & real), fp + len(mine - real), fn + len(real - mine)
        for rule in mine | real:
            row = per_rule.setdefault(rule, [0, 0, 0])
            row[0 if rule in mine and rule in real else 1 if rule in mine else 2] += 1
        package.append(sum(scores[i] for i in mine) >= threshold)
    blocked = [r.blocked for r in oracle]
    return Crs2Figures(
        sensitivity=sensitivity,
        threshold=threshold,
        requests=len(oracle),
        true_positives=tp,
        false_positives=fp,
        false_negatives=fn,
        equal_sets=equal,
        package=_decisions(threshold, package, blocked),
        program=_decisions(threshold, [t >= threshold for t in simulated_totals], blocked),
        rules=tuple(RuleCounts(rule, *per_rule[rule]) for rule in sorted(per_rule)),
    )


def table(figures: Sequence[Crs2Figures], worst: int = 10) -> str:
    """The figures of each sensitivity, then the worst rules of the first."""
    if not figures:
        return "no figures"
    lines = [
        f"old OWASP package (CRS 2.2.9) against libmodsecurity, {figures[0].requests:,} requests"
    ]
    lines += [f.line() for f in figures]
    bad = figures[0].worst_rules(worst)
    if bad:
        lines.append("  worst rules:   rule    both  ours only  oracle only")
        lines += [
            f"               {r.rule_id:6d}  {r.true_positives:6,d}  {r.false_positives:9,d}  "
            f"{r.false_negatives:11,d}"
            for r in bad
        ]
    return "\n".join(lines)
