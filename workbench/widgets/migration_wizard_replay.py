"""The migration wizard's comparison, rendered: its chart and its tables.

The replay and its two questions are the core's (:mod:`workbench.traffic.comparison`,
re-exported here for the wizard); this module only draws them. When the
traffic or logs packages are missing, :data:`REPLAY_MISSING` says what is
missing and the wizard shows it instead of a comparison.

    >>> table([{"ray_id": "a" * 70, "label": "benign"}], ("ray_id", "label"))[0][0][-3:]
    'aa…'
"""

from __future__ import annotations

from typing import Any

try:  # the traffic pipeline and the event log are another package's; say so if absent
    from ..traffic.comparison import (
        ALLOWED,
        ALLOWED_COLUMNS,
        LEGIT,
        LEGIT_COLUMNS,
        MAX_REQUESTS,
        Comparison,
        compare,
    )
    from ..traffic.generators import LABELS
except ImportError as exc:  # pragma: no cover - only without those packages
    REPLAY_MISSING: str | None = f"replay not available: {exc}"
    LABELS: tuple[str, ...] = ()  # type: ignore[no-redef]
else:
    REPLAY_MISSING = None

#: The order each table shows its columns: what answers the question first (for the
#: allowed requests, what each version did), the request after, its ray id last.
ALLOWED_FIRST = ("old_action", "old_rules", "new_events", "label", "path", "query")
LEGIT_FIRST = ("description", "requests", "benign", "api", "bot", "example_path")

__all__ = [
    "ALLOWED",
    "ALLOWED_COLUMNS",
    "ALLOWED_FIRST",
    "LEGIT",
    "LEGIT_COLUMNS",
    "LEGIT_FIRST",
    "MAX_REQUESTS",
    "REPLAY_MISSING",
    "Comparison",
    "chart",
    "compare",
    "ordered",
    "shorten",
    "table",
]


def chart(found: Comparison) -> Any:
    """A small Altair bar chart: each question's requests, coloured by traffic label."""
    import altair as alt

    data = alt.Data(values=found.by_label())
    return (
        alt.Chart(data, title=f"{found.requests} replayed requests")
        .mark_bar()
        .encode(
            y=alt.Y(
                "question:N",
                title=None,
                scale=alt.Scale(domain=[ALLOWED, LEGIT]),
                axis=alt.Axis(labelLimit=420),
            ),  # fmt: skip
            x=alt.X("sum(requests):Q", title="requests", axis=alt.Axis(tickMinStep=1)),
            color=alt.Color("label:N", title="traffic label", sort=list(LABELS)),
            tooltip=["question:N", "label:N", "sum(requests):Q"],
        )
        .properties(width=300, height=70)
    )


def shorten(value: Any, limit: int = 60) -> str:
    """A cell's text, cut to ``limit`` characters with an ellipsis."""
    text = "" if value is None else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def ordered(columns: tuple[str, ...], first: tuple[str, ...]) -> tuple[str, ...]:
    """``columns`` with those in ``first`` leading, in that order (the rest keep theirs).

    >>> ordered(("ray_id", "label", "old_action"), ("old_action", "missing"))
    ('old_action', 'ray_id', 'label')
    """
    lead = tuple(c for c in first if c in columns)
    return lead + tuple(c for c in columns if c not in lead)


def table(rows: list[dict[str, Any]], columns: tuple[str, ...], limit: int = 12) -> list[list[str]]:
    """The first ``limit`` rows, ``columns`` only, each cell shortened."""
    return [[shorten(r.get(c)) for c in columns] for r in rows[:limit]]
