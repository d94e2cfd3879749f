"""What the TuningPanel draws: HTML for the what-if, a score breakdown, candidates and before/after.

Pure functions of the core's objects (``WhatIf``, ``Explanation``,
``Candidate``, ``Applied``) to HTML strings; the panel puts them in its HTML
widgets. Tables go through :func:`parts.scroll_table`, each with a stable
``wb-tuning-<part>`` class. Attacks a candidate would let through are listed
first and flagged with ``ATTACK_MARK``.

    >>> import pandas as pd
    >>> from workbench.tuning import Explanation
    >>> rules = pd.DataFrame({"rule_id": ["r1"], "description": ["SQL tautology"],
    ...                       "score": [5], "paranoia_level": [2], "counted": [True]})
    >>> e = Explanation("abc", "benign", rules, 5, 40, 2, False, True, [])
    >>> "score 5 of threshold 40" in explain_html(e, None)
    True
"""

from __future__ import annotations

import html
from typing import Any

from ..traffic.generators import ATTACK_LABELS
from . import parts

__all__ = [
    "ATTACK_MARK",
    "before_after_html",
    "blast_html",
    "candidate_label",
    "candidates_html",
    "explain_html",
    "request_label",
    "summary_html",
]

ATTACK_MARK = "⚠"
#: Most rows the blast radius and the changed requests show (the counts cover all).
MAX_ROWS = 50
_NOTE = "<div style='color:#5f6368;font-size:12px;margin:2px 0'>{}</div>"
_HEAD = "<div style='font-weight:600;margin-top:6px'>{}</div>"


def _short(text: str, n: int = 70) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def is_attack(label: str) -> bool:
    """Whether a label names an attack class of the generators."""
    return label in ATTACK_LABELS


def request_label(row: Any) -> str:
    """One request as the list of blocked requests shows it."""
    target = row.path + (f"?{row.query}" if row.query else "")
    label = row.label or "no label"
    return f"{row.ray_id} · {label} · {row.new_action} · {row.method} {_short(target, 90)}"


def summary_html(whatif: Any) -> str:
    """The what-if in one table: newly blocked, newly allowed, unchanged, by label."""
    summary = whatif.summary()
    columns = ["change", *[str(c) for c in summary.columns]]
    rows = [
        [idx, *[int(v) for v in row]]
        for idx, row in zip(summary.index, summary.values, strict=True)
    ]
    n, source = len(whatif.requests), whatif.config.source
    note = (
        f"{parts.plural(n, 'request')} replayed through the zone as it runs now (old) and through "
        f"the new configuration ({source}), side by side; nothing was written to the zone."
    )
    return _NOTE.format(html.escape(note)) + parts.scroll_table(
        columns, rows, cls="wb-tuning-summary-table"
    )


def explain_html(expl: Any, ended_by: tuple[str, str, str] | None) -> str:
    """Why one request scored what it did: its OWASP rules, the total, what would flip it."""
    verdict = "reaches" if expl.blocked else "stays under"
    head = (
        f"{expl.ray_id} ({expl.label or 'no label'}): OWASP score {expl.total} of threshold "
        f"{expl.threshold} at paranoia level {expl.paranoia_level}, {verdict} the threshold"
    )
    if ended_by is not None:
        source, rule, description = ended_by
        head += f"; ended by {source} rule {rule[:12]} ({description})"
    rows = [
        [
            "+" if r.counted else "",
            r.score,
            f"PL{r.paranoia_level}",
            r.rule_id,
            r.description,
            getattr(r, "matched", ""),  # the variable and value that made the rule match
        ]
        for r in expl.rules.itertuples()
    ]
    table = parts.scroll_table(
        ["counted", "score", "level", "rule", "description", "matched"],
        rows,
        cls="wb-tuning-explain-rules",
    )
    flips = "".join(f"<li>{html.escape(c['change'])}</li>" for c in expl.changes)
    notes = [] if expl.reached else [
        "the OWASP ruleset does not run for it: an earlier rule ended or skipped it"
    ]  # fmt: skip
    return (
        f"<div class='wb-tuning-explain-one' style='margin-bottom:8px'>"
        f"<b>{html.escape(head)}</b>{''.join(_NOTE.format(html.escape(n)) for n in notes)}{table}"
        + (f"<div>would change the OWASP outcome:</div><ul style='margin:2px 0'>{flips}</ul>"
           if flips else "")
        + "</div>"
    )  # fmt: skip


def candidate_label(i: int, cand: Any) -> str:
    """A candidate as the picker shows it, flagged when it lets an attack through."""
    risk = f" {ATTACK_MARK} lets attacks through" if cand.lets_attack_through else ""
    return f"{i + 1}. {cand.kind}: {_short(cand.title, 80)} ({cand.radius} others){risk}"


def _attacks_through(cand: Any) -> int:
    blast = cand.blast
    if blast is None or blast.empty:
        return 0
    return int(((blast.effect == "stops blocking") & blast.attack).sum())


def candidates_html(cands: list[Any]) -> str:
    """Every candidate, narrowest first: kind, remedy, blast radius, attacks let through."""
    rows = [
        [
            i + 1,
            c.kind,
            _short(c.title, 110),
            c.radius,
            f"{ATTACK_MARK} {_attacks_through(c)}" if c.lets_attack_through else "0",
        ]
        for i, c in enumerate(cands)
    ]
    return parts.scroll_table(
        ["#", "kind", "remedy", "other requests affected", "attacks let through"],
        rows,
        cls="wb-tuning-candidates-table",
    )


def blast_html(cand: Any) -> str:
    """A candidate's blast radius: counts by label and effect, then the requests, attacks first."""
    blast = cand.blast
    if blast is None or blast.empty:
        return _NOTE.format("no other request is affected: it clears only the marked requests")
    counts = cand.counts
    crows = [
        [lab, *[int(v) for v in row]] for lab, row in zip(counts.index, counts.values, strict=True)
    ]
    crows.sort(key=lambda r: (not is_attack(str(r[0])), str(r[0])))
    count_table = parts.scroll_table(
        ["label", *[str(c) for c in counts.columns]], crows, cls="wb-tuning-blast-counts"
    )
    shown = blast.head(MAX_ROWS)
    rows = [
        [f"{ATTACK_MARK} attack" if r.attack else "", r.ray_id, r.label, r.effect, r.before,
         r.after]
        for r in shown.itertuples()
    ]  # fmt: skip
    more = len(blast) - len(shown)
    warn = ""
    if cand.lets_attack_through:
        warn = (
            f"<div style='color:#b71c1c;font-weight:600'>{ATTACK_MARK} it lets "
            f"{parts.plural(_attacks_through(cand), 'labelled attack')} through: applying it needs "
            "an explicit confirmation</div>"
        )
    return (
        warn
        + count_table
        + parts.scroll_table(
            ["", "ray id", "label", "effect", "before", "after"], rows, cls="wb-tuning-blast-rows"
        )
        + (_NOTE.format(f"and {more} more (the counts above cover them all)") if more else "")
    )


def before_after_html(applied: Any) -> str:
    """The what-if before and after applying, side by side, then the requests that changed."""
    summary = applied.summary()
    sides = []
    for side in ("before", "after"):
        rows = [[lab, int(v)] for lab, v in zip(summary.index, summary[side], strict=True)]
        rows.append(["total", int(summary[side].sum())])
        sides.append(
            f"<div style='flex:1;min-width:200px'><b>{side}</b> (blocked or challenged by the new "
            f"side){parts.scroll_table(['label', 'blocked'], rows, cls=f'wb-tuning-{side}')}</div>"
        )
    comp = applied.comparison
    changed = comp[comp.changed]
    req = applied.before.requests
    rows = [
        [r.ray_id, r.label, _short(req.path.iloc[r.Index], 40), r.before, r.after, r.predicted]
        for r in changed.head(MAX_ROWS).itertuples()
    ]
    check = "as the blast radius predicted" if applied.as_predicted else "NOT as predicted"
    return (
        "<div style='display:flex;gap:16px;flex-wrap:wrap'>" + "".join(sides) + "</div>"
        + _HEAD.format(html.escape(f"{parts.plural(len(changed), 'request')} changed, {check}"))
        + parts.scroll_table(["ray id", "label", "path", "before", "after", "predicted"], rows,
                             cls="wb-tuning-changed")
    )  # fmt: skip
