"""The OWASP score breakdown of a replay: the sweep over paranoia levels and thresholds, and why.

For every request, which scoring rules of the OWASP ruleset matched, at
*any* paranoia level and whatever the configuration turns off, with each
rule's score and level. The matches come from the what-if's one whole-table
pass, so the sweep decides every setting by arithmetic (a matrix product per
level on the distinct rows of matches) rather than by replaying.

The sweep measures the OWASP ruleset on its own: a request counts as
``blocked`` at a setting when the rules on at that paranoia level add up to
the threshold or more (the ruleset's deciding rule 949110 then applies its
action), exactly as an entry point with only that execute rule decides it.

    >>> import numpy as np
    >>> b = Breakdown.from_arrays(
    ...     rule_ids=["a", "b"], scores=[5, 3], levels=[1, 2],
    ...     rows=np.array([[True, False], [True, True]]), codes=np.array([0, 1, 1]),
    ...     labels=["benign", "sqli", "sqli"])
    >>> b.sweep(levels=(1, 2), thresholds=(5, 8))[["paranoia_level", "threshold", "label", "blocked"]].values.tolist()
    [[1, 5, 'benign', 1], [1, 5, 'sqli', 2], [1, 8, 'benign', 0], [1, 8, 'sqli', 0], [2, 5, 'benign', 1], [2, 5, 'sqli', 2], [2, 8, 'benign', 0], [2, 8, 'sqli', 2]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped]

from ..rulesets import OWASP_ID
from ..rulesets.crs.explain import crs_id_of
from ..rulesets.crs.runtime import result_of
from ..rulesets.overrides import PARANOIA_LEVELS, effective, paranoia_categories
from ..traffic.generators import ATTACK_LABELS

if TYPE_CHECKING:
    from .whatif import WhatIf

LEVELS = PARANOIA_LEVELS
THRESHOLDS = (25, 40, 60)


def check_levels(levels: Any) -> list[int]:
    """Paranoia levels as ints 1-4, or a ValueError naming the field."""
    out = (
        [int(x) for x in levels]
        if isinstance(levels, Sequence) and not isinstance(levels, str)
        else None
    )
    if not out or any(x not in LEVELS or isinstance(x, bool) for x in out):
        raise ValueError(f"levels must be a list of paranoia levels 1 to 4, got {levels!r}")
    return out


#: The highest anomaly-score threshold a sweep takes (the lowest is 1).
MAX_THRESHOLD = 10_000


def check_thresholds(thresholds: Any) -> list[int]:
    """Score thresholds as ints from 1 to MAX_THRESHOLD, or a ValueError naming the field."""
    ok = (
        isinstance(thresholds, Sequence) and not isinstance(thresholds, str) and len(thresholds) > 0
    )
    if not ok or any(
        not isinstance(t, int | np.integer) or isinstance(t, bool) or not 1 <= t <= MAX_THRESHOLD
        for t in thresholds
    ):
        raise ValueError(
            f"thresholds must be a list of whole numbers from 1 to {MAX_THRESHOLD}, "
            f"got {thresholds!r}"
        )
    return [int(t) for t in thresholds]


@dataclass
class Explanation:
    """Why one request scored what it did, and which overrides would change the outcome."""

    ray_id: str
    label: str
    rules: Any  # DataFrame: rule_id, description, score, paranoia_level, counted, matched
    total: int
    threshold: int
    paranoia_level: int
    blocked: bool
    reached: bool
    changes: list[dict[str, Any]] = field(default_factory=list)

    def __str__(self) -> str:
        verdict = "reaches" if self.blocked else "stays under"
        lines = [
            f"request {self.ray_id} ({self.label or 'no label'}): score {self.total} {verdict} "
            f"threshold {self.threshold} at paranoia level {self.paranoia_level}"
        ]
        if not self.reached:
            lines.append(
                "  (the OWASP ruleset does not run for it: an earlier rule ended or skipped it)"
            )
        for r in self.rules.itertuples():
            mark = "+" if r.counted else " "
            lines.append(f"  {mark}{r.score:>3}  PL{r.paranoia_level}  {r.description}")
            if getattr(r, "matched", ""):
                lines.append(f"             {r.matched}")
        lines += [f"  would change it: {c['change']}" for c in self.changes]
        return "\n".join(lines)


@dataclass
class Breakdown:
    """Scoring rules (columns), distinct rows of matches, and each request's row and label."""

    rules: Any  # DataFrame: rule_id, description, score, paranoia_level, categories
    rows: np.ndarray  # distinct rows x rules, bool
    codes: np.ndarray  # per request
    label_names: list[str]
    label_codes: np.ndarray  # per request
    ray_ids: list[str] = field(default_factory=list, repr=False)
    whatif: Any = field(default=None, repr=False)

    @classmethod
    def from_arrays(
        cls,
        rule_ids: Sequence[str],
        scores: Sequence[int],
        levels: Sequence[int],
        rows: np.ndarray,
        codes: np.ndarray,
        labels: Sequence[str],
    ) -> Breakdown:
        """A breakdown from plain arrays (tests, benchmarks)."""
        names, label_codes = np.unique(
            np.asarray(labels, dtype=object).astype(str), return_inverse=True
        )
        rules = pd.DataFrame(
            {
                "rule_id": list(rule_ids),
                "description": list(rule_ids),
                "score": list(scores),
                "paranoia_level": list(levels),
                "categories": [()] * len(rule_ids),
            }
        )
        return cls(
            rules,
            np.asarray(rows, dtype=bool),
            np.asarray(codes, dtype=np.int64),
            [str(n) for n in names],
            label_codes.ravel().astype(np.int64),
        )

    @classmethod
    def of(cls, whatif: WhatIf) -> Breakdown:
        """The breakdown of a what-if's requests."""
        owasp = whatif.config.catalog[OWASP_ID]
        scoring = [r for r in owasp.rules if r.score is not None and r.score_threshold is None]
        rules = pd.DataFrame(
            {
                "rule_id": [r.id for r in scoring],
                "description": [r.description for r in scoring],
                "score": [int(r.score or 0) for r in scoring],
                "paranoia_level": [int(r.paranoia_level or 0) for r in scoring],
                "categories": [r.categories for r in scoring],
            }
        )
        m = whatif.matches
        cols = [m.col[r.expression] for r in scoring]
        labels = whatif.requests["label"].astype(str).to_numpy()
        names, label_codes = (
            np.unique(labels, return_inverse=True)
            if len(labels)
            else (np.array([]), np.array([], dtype=np.int64))
        )
        return cls(
            rules,
            m.rows[:, cols],
            m.codes,
            [str(n) for n in names],
            np.asarray(label_codes, dtype=np.int64).ravel(),
            list(whatif.requests.ray_id),
            whatif,
        )

    # -- the sweep ---------------------------------------------------------------------
    def sweep(self, levels: Sequence[int] = LEVELS, thresholds: Sequence[int] = THRESHOLDS) -> Any:
        """Requests per label the OWASP ruleset would block at each level and threshold.

        Columns: ``paranoia_level, threshold, label, attack, blocked, total, share``.
        """
        levels, thresholds = check_levels(levels), check_thresholds(thresholds)
        n_labels = len(self.label_names)
        totals = np.bincount(self.label_codes, minlength=n_labels)
        pl = self.rules["paranoia_level"].to_numpy()
        score = self.rules["score"].to_numpy(dtype=np.float32)
        on = np.stack([pl <= level for level in levels], axis=1).astype(np.float32)
        # One product for every level: rows x rules times rules x levels.
        rows = self.rows.astype(np.float32)
        totals_at, hits_at = rows @ (on * score[:, None]), rows @ on
        out = []
        for k, level in enumerate(levels):
            for t in thresholds:
                mask = (totals_at[:, k] >= t) & (hits_at[:, k] > 0)
                blocked = np.bincount(self.label_codes[mask[self.codes]], minlength=n_labels)
                for j, name in enumerate(self.label_names):
                    out.append(
                        (level, t, name, name in ATTACK_LABELS, int(blocked[j]), int(totals[j]))
                    )
        columns = ["paranoia_level", "threshold", "label", "attack", "blocked", "total"]
        frame = pd.DataFrame(out, columns=columns)
        frame["share"] = frame.blocked / frame.total.where(frame.total > 0, 1)
        return frame

    # -- one request -------------------------------------------------------------------
    def index_of(self, request: Any) -> int:
        """A request's position from its ray id or its index."""
        if isinstance(request, int | np.integer) and not isinstance(request, bool):
            if not 0 <= request < len(self.codes):
                raise ValueError(
                    f"request index must be from 0 to {len(self.codes) - 1}, got {request}"
                )
            return int(request)
        try:
            return self.ray_ids.index(str(request))
        except ValueError:
            raise ValueError(f"request: no replayed request has ray id {request!r}") from None

    def matched(self, request: Any) -> np.ndarray:
        """Boolean mask of the scoring rules that matched one request."""
        return np.asarray(self.rows[self.codes[self.index_of(request)]], dtype=bool)

    def explain(self, request: Any, overrides: dict[str, Any] | None = None) -> Explanation:
        """The matched rules with score and level, the total against the threshold, and the
        overrides of the OWASP execute rule that would flip the outcome."""
        i = self.index_of(request)
        if self.whatif is None:
            raise ValueError("explain needs a breakdown made from a what-if (Breakdown.of)")
        config = self.whatif.config
        ov = config.owasp_overrides() if overrides is None else overrides
        settings = config.owasp_settings(ov)
        owasp = config.catalog[OWASP_ID]
        by_id = {r.id: r for r in owasp.rules}
        counted = np.array(
            [effective(by_id[r], ov).enabled for r in self.rules.rule_id], dtype=bool
        )
        hit = self.matched(i)
        rules = self.rules[hit].drop(columns=["categories"]).assign(counted=counted[hit])
        rules = rules.sort_values(
            ["score", "paranoia_level"], ascending=[False, True], ignore_index=True
        )
        total = int(rules.score[rules.counted].sum())
        # What made each rule match, as CRS's logdata says it: the variable and its value.
        found = result_of(self.whatif.reqs[i]).hits
        rules = rules.assign(
            matched=[
                found[n].text() if (n := crs_id_of(d)) in found else "" for d in rules.description
            ]
        )
        threshold, level = int(settings["threshold"]), int(settings["paranoia_level"])
        blocked = bool(rules.counted.any()) and total >= threshold
        reached = bool(self.whatif.at_managed[i]) and config.owasp_rule_index is not None
        return Explanation(
            self.ray_ids[i],
            self.label_names[self.label_codes[i]],
            rules,
            total,
            threshold,
            level,
            blocked,
            reached,
            _changes(rules, total, threshold, level, blocked, counted, hit, self.rules),
        )


def _changes(
    rules: Any,
    total: int,
    threshold: int,
    level: int,
    blocked: bool,
    counted: np.ndarray,
    hit: np.ndarray,
    all_rules: Any,
) -> list[dict[str, Any]]:
    """Overrides (as ``overrides`` fragments of the OWASP execute rule) that flip the outcome."""
    from ..rulesets import OWASP_THRESHOLD_RULE_ID

    out: list[dict[str, Any]] = []
    if blocked:
        for r in rules[rules.counted].itertuples():
            if total - r.score < threshold:
                out.append(
                    {
                        "change": f"disable rule {r.rule_id} ({r.description}, score {r.score})",
                        "overrides": {"rules": [{"id": r.rule_id, "enabled": False}]},
                    }
                )
        for lower in range(level - 1, 0, -1):
            below = int(rules.score[rules.counted & (rules.paranoia_level <= lower)].sum())
            if below < threshold:
                out.append(
                    {
                        "change": f"paranoia level {lower} (score {below})",
                        "overrides": {"categories": paranoia_categories(lower)},
                    }
                )
                break
        out.append(
            {
                "change": f"score threshold {total + 1}",
                "overrides": {
                    "rules": [{"id": OWASP_THRESHOLD_RULE_ID, "score_threshold": total + 1}]
                },
            }
        )
    else:
        for higher in range(level + 1, 5):
            above = int(rules.score[rules.paranoia_level <= higher].sum())
            if above >= threshold:
                out.append(
                    {
                        "change": f"paranoia level {higher} (score {above})",
                        "overrides": {"categories": paranoia_categories(higher)},
                    }
                )
                break
        if total > 0:
            out.append(
                {
                    "change": f"score threshold {total}",
                    "overrides": {
                        "rules": [{"id": OWASP_THRESHOLD_RULE_ID, "score_threshold": total}]
                    },
                }
            )
    return out
