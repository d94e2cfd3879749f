"""Altair charts of Durable Object storage: the bookmark timeline and SQL billing per kind.

Both take the plain data of :mod:`workbench.storage.views` and return an
Altair chart: a notebook cell displays it as Vega-Lite, and the
:class:`~workbench.widgets.StorageInspector` draws it as SVG with
:func:`svg` (``parts.chart_svg``, remembered per spec so an unchanged chart
is not drawn twice).

The timeline has one row per committed batch, oldest at the top: its label
(sequence, virtual time, what the batch changed) on the left, a dot at its
virtual time on the right. Batches that share a time get rows of their own,
so they stay distinct; the dot's colour says what the batch touched.

    >>> entries = [
    ...     {"seq": 0, "t_ms": 0, "label": "seq 0 · 00:00:00.000 · empty start",
    ...      "category": "no change"},
    ...     {"seq": 1, "t_ms": 0, "label": "seq 1 · 00:00:00.000 · put cart",
    ...      "category": "KV"},
    ... ]
    >>> chart = timeline_chart(entries, marks={1: "from"})
    >>> [row["row"] for row in chart.to_dict()["data"]["values"]]
    ['seq 0 · 00:00:00.000 · empty start', 'seq 1 · 00:00:00.000 · put cart']
    >>> svg(chart).startswith("<div class='wb-chart'")
    True
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import altair as alt

from . import parts

__all__ = ["CATEGORY_COLOURS", "billing_chart", "svg", "timeline_chart"]

#: What a batch touched, and its colour (fixed, so the legend never changes meaning).
CATEGORY_COLOURS: dict[str, str] = {
    "KV": "#1f77b4",
    "SQL rows": "#2ca02c",
    "schema": "#9467bd",
    "alarm": "#ff7f0e",
    "several": "#d62728",
    "restore": "#17becf",
    "no change": "#9aa0a6",
}
#: The newest batches drawn in the timeline (the pickers list every one).
TIMELINE_ROWS = 40
_ROW_PX = 20
_CACHE: OrderedDict[str, str] = OrderedDict()


def svg(chart: alt.TopLevelMixin) -> str:
    """``parts.chart_svg(chart)``, remembered for the last few specs."""
    spec = json.dumps(chart.to_dict(validate=False), sort_keys=True)  # the key; drawing validates
    found = _CACHE.get(spec)
    if found is None:
        found = _CACHE[spec] = parts.chart_svg(chart)
        while len(_CACHE) > 32:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(spec)
    return found


def _iso(t_ms: int) -> str:
    return datetime.fromtimestamp(t_ms / 1000, tz=UTC).isoformat(timespec="milliseconds")


def timeline_chart(
    entries: Sequence[Mapping[str, Any]],
    marks: Mapping[int, str] | None = None,
    rows: int = TIMELINE_ROWS,
) -> alt.LayerChart:
    """The timeline of ``entries`` (from ``views.timeline``); ``marks`` tags rows by seq ("from", "to")."""
    marks = marks or {}
    shown = list(entries)[-rows:]
    data = [
        {
            "seq": e["seq"],
            "t": _iso(e["t_ms"]),
            "row": e["label"],
            "what": e["category"],
            "mark": marks.get(e["seq"], ""),
        }
        for e in shown
    ]
    order = [d["row"] for d in data]
    times = [e["t_ms"] for e in shown] or [0]
    span = max(times) - min(times)
    pad = max(span // 20, 200)
    # ticks as fine as the times they tell apart
    fmt = "%H:%M:%S.%L" if span < 10_000 else "%H:%M:%S" if span < 86_400_000 else "%m-%d %H:%M"
    domain = [_iso(min(times) - pad), _iso(max(times) + pad)]
    title = "one row per committed batch, oldest first"
    if len(entries) > len(shown):
        title += f" (the newest {len(shown)} of {len(entries)})"
    y = alt.Y(
        "row:N",
        sort=order,
        title=None,
        axis=alt.Axis(labelLimit=560, labelFontSize=11, labelPadding=6, ticks=False),
    )
    x = alt.X(
        "t:T",
        title="virtual time (UTC)",
        scale=alt.Scale(type="utc", domain=domain),
        axis=alt.Axis(format=fmt, labelAngle=0, tickCount=4, grid=True),
    )
    base = alt.Chart(alt.Data(values=data)).encode(x=x, y=y)
    path = base.mark_line(color="#c4c7c5", strokeWidth=1, interpolate="step-after").encode(
        order="seq:Q"
    )
    dots = base.mark_circle(size=70, opacity=1).encode(
        color=alt.Color(
            "what:N",
            title="changed",
            scale=alt.Scale(domain=list(CATEGORY_COLOURS), range=list(CATEGORY_COLOURS.values())),
            legend=alt.Legend(orient="top", direction="horizontal"),
        )
    )
    picked = base.transform_filter("datum.mark != ''")
    rings = picked.mark_point(size=260, color="#202124", strokeWidth=2, filled=False)
    tags = picked.mark_text(align="left", dx=12, fontWeight="bold", fontSize=11).encode(
        text="mark:N"
    )
    return (
        alt.layer(path, dots, rings, tags)
        .properties(width=300, height=max(len(data), 1) * _ROW_PX, title=title)
        .configure_view(strokeWidth=0)
        .configure_title(fontSize=12, anchor="start", color="#5f6368", fontWeight="normal")
    )


def billing_chart(kinds: Sequence[Mapping[str, Any]]) -> alt.LayerChart:
    """Grouped bars: rowsRead and rowsWritten per statement kind (from ``views.billing_by_kind``)."""
    data = [
        {"kind": k["kind"], "counter": counter, "rows": int(k[key])}
        for k in kinds
        for counter, key in (("rowsRead", "rows_read"), ("rowsWritten", "rows_written"))
    ]
    order = [k["kind"] for k in kinds]
    colours = alt.Scale(domain=["rowsRead", "rowsWritten"], range=["#1f77b4", "#ff7f0e"])
    base = alt.Chart(alt.Data(values=data)).encode(
        x=alt.X("kind:N", sort=order, title="statement kind", axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("counter:N", sort=["rowsRead", "rowsWritten"]),
        y=alt.Y("rows:Q", title="rows"),
    )
    bars = base.mark_bar().encode(
        color=alt.Color("counter:N", title=None, scale=colours, legend=alt.Legend(orient="top"))
    )
    labels = base.mark_text(dy=-6, fontSize=10).encode(text="rows:Q")
    return (
        alt.layer(bars, labels)
        .properties(width=max(len(order), 2) * 90, height=180, title="rows per statement kind")
        .configure_view(strokeWidth=0)
        .configure_title(fontSize=12, anchor="start", color="#5f6368", fontWeight="normal")
    )
