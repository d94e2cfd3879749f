"""The TuningPanel's sweep chart: what the OWASP ruleset blocks at each paranoia level and threshold.

:func:`sweep_points` folds a sweep (``wb.tuning.sweep``: one row per paranoia
level, threshold and label) into two groups, legitimate traffic (every label
that is not an attack, unlabelled requests included) and attacks, with the
share of each that is blocked. :func:`sweep_chart` draws one line per group
and threshold across the paranoia levels; the picked threshold is drawn
solid and the picked setting is ringed. Rows come out in a fixed order, so
the same sweep gives the same chart.

    >>> import pandas as pd
    >>> sweep = pd.DataFrame({
    ...     "paranoia_level": [1, 1, 2, 2], "threshold": [40] * 4,
    ...     "label": ["benign", "sqli"] * 2, "attack": [False, True] * 2,
    ...     "blocked": [0, 3, 1, 4], "total": [10, 4, 10, 4]})
    >>> [(p["level"], p["group"], p["blocked"], p["share"]) for p in sweep_points(sweep)]
    [(1, 'legitimate', 0, 0.0), (1, 'attacks', 3, 0.75), (2, 'legitimate', 1, 0.1), (2, 'attacks', 4, 1.0)]
    >>> sorted(sweep_chart(sweep, level=2, threshold=40).to_dict()["layer"][0]["encoding"])
    ['color', 'opacity', 'strokeDash', 'tooltip', 'x', 'y']
"""

from __future__ import annotations

from typing import Any

import altair as alt

__all__ = ["GROUPS", "sweep_chart", "sweep_points"]

#: The two groups the chart compares, and their colours.
GROUPS = {"legitimate": "#1f77b4", "attacks": "#d62728"}


def sweep_points(sweep: Any) -> list[dict[str, Any]]:
    """Blocked and total per paranoia level, threshold and group, in that order."""
    frame = sweep.assign(group=sweep.attack.map({True: "attacks", False: "legitimate"}))
    summed = frame.groupby(["paranoia_level", "threshold", "group"], sort=False)[
        ["blocked", "total"]
    ].sum()
    out = []
    for level in sorted(set(frame.paranoia_level)):
        for threshold in sorted(set(frame.threshold)):
            for group in GROUPS:
                key = (level, threshold, group)
                if key not in summed.index:
                    continue
                blocked, total = (int(v) for v in summed.loc[key])
                out.append(
                    {
                        "level": int(level),
                        "threshold": int(threshold),
                        "group": group,
                        "blocked": blocked,
                        "total": total,
                        "share": round(blocked / total, 4) if total else 0.0,
                    }
                )
    return out


def sweep_chart(sweep: Any, level: int, threshold: int) -> alt.LayerChart:
    """Share blocked across paranoia levels, one line per group and threshold."""
    data = [
        {**p, "picked": p["threshold"] == threshold, "setting": f"threshold {p['threshold']}"}
        for p in sweep_points(sweep)
    ]
    thresholds = sorted({p["threshold"] for p in data})
    colour = alt.Color(
        "group:N",
        scale=alt.Scale(domain=list(GROUPS), range=list(GROUPS.values())),
        legend=alt.Legend(orient="top", title=None),
    )
    base = alt.Chart(alt.Data(values=data)).encode(
        x=alt.X("level:O", title="paranoia level", axis=alt.Axis(labelAngle=0)),
        # From zero to a little above the data: shares of a few percent stay readable.
        y=alt.Y("share:Q", title="share blocked", axis=alt.Axis(format="%"),
                scale=alt.Scale(domainMin=0, nice=True)),
        color=colour,
    )  # fmt: skip
    lines = base.mark_line(point=True).encode(
        strokeDash=alt.StrokeDash(
            "setting:N",
            sort=[f"threshold {t}" for t in thresholds],
            legend=alt.Legend(orient="top", title=None),
        ),
        opacity=alt.condition("datum.picked", alt.value(1.0), alt.value(0.35)),
        tooltip=["group:N", "level:O", "threshold:Q", "blocked:Q", "total:Q",
                 alt.Tooltip("share:Q", format=".1%")],
    )  # fmt: skip
    here = [p for p in data if p["picked"] and p["level"] == level]
    ring = (
        alt.Chart(alt.Data(values=here))
        .mark_point(size=220, strokeWidth=2, filled=False)
        .encode(x="level:O", y="share:Q", color=colour)
    )
    return (
        alt.layer(lines, ring)
        .properties(
            width=420,
            height=200,
            title=f"share blocked by the OWASP ruleset (picked: PL{level}, threshold {threshold})",
        )
        .configure_title(fontSize=12, anchor="start")
    )
