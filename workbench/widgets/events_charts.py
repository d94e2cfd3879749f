"""Altair charts of the security event log, for the EventsExplorer (one SVG each in the panel).

:func:`actions_chart` stacks events per time bucket by action, :func:`rules_chart`
splits the busiest rules' bars by action, :func:`systems_chart` puts the old
WAF's actions beside the new one's. Data is built in a fixed order (the
queries sort fully), so the same log gives the same chart; colours are fixed
per action.

    >>> from workbench.logs import EventLog, add_synthetic_events
    >>> log = EventLog(); _ = add_synthetic_events(log, 30, seed=1)
    >>> rules_chart(log, 3).to_dict()["data"]["values"][0]
    {'rule': 'firewall · a8709295023b · synthetic rule 76', 'action': 'log', 'events': 2}
    >>> [(d["action"], d["low"], d["high"]) for d in actions_chart(log).to_dict()["data"]["values"]]
    [('block', 0, 4), ('log', 4, 30)]
    >>> actions_chart(EventLog()) is None
    True
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import altair as alt

from ..logs import EventLog, actions_over_time
from ..logs.explore import rule_actions, span_seconds
from . import parts

__all__ = ["ACTION_COLOURS", "SYSTEMS", "actions_chart", "rules_chart", "systems_chart"]

OLD, NEW = "waf", "firewallManaged"
SYSTEMS = {OLD: "old WAF (waf)", NEW: "new WAF (firewallManaged)"}
#: Event sources as chart labels name them.
SHORT = {OLD: "old WAF", NEW: "new WAF", "firewallRules": "firewall", "firewallCustom": "custom"}
#: One colour per action, everywhere (unknown actions are grey).
ACTION_COLOURS = {
    "block": "#d62728",
    "challenge": "#ff7f0e",
    "managed_challenge": "#e7a33e",
    "js_challenge": "#bcbd22",
    "log": "#1f77b4",
    "skip": "#7f7f7f",
    "allow": "#2ca02c",
    "bypass": "#9467bd",
}
_BUCKETS = (1, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400)


def _order(actions: list[str]) -> list[str]:
    """The distinct ``actions``: known ones in the colour table's order, then the rest by name."""
    return [a for a in ACTION_COLOURS if a in actions] + sorted(set(actions) - set(ACTION_COLOURS))


def _colours(actions: list[str]) -> alt.Scale:
    order = _order(actions)
    return alt.Scale(domain=order, range=[ACTION_COLOURS.get(a, "#c7c7c7") for a in order])


def _iso(stamp: Any) -> str:
    return stamp.isoformat(timespec="milliseconds") + "Z"


def actions_chart(log: EventLog) -> alt.Chart | None:
    """Events per time bucket, stacked by action; buckets fit the log's span (None: no events)."""
    span = span_seconds(log)
    if span is None:
        return None
    bucket = next((b for b in _BUCKETS if span / b <= 60), _BUCKETS[-1])
    frame = actions_over_time(log, bucket)
    order = _order(frame.action.tolist())
    frame = frame.assign(rank=frame.action.map(order.index)).sort_values(["bucket", "rank"])
    # Stacked by hand: a bar spans its bucket (x to x2), and Vega-Lite stacks only unranged bars.
    data, below, current = [], 0, None
    for r in frame.itertuples():
        below = 0 if r.bucket != current else below
        current = r.bucket
        data.append(
            {
                "start": _iso(r.bucket),
                "end": _iso(r.bucket + timedelta(seconds=bucket)),
                "action": r.action,
                "events": int(r.events),
                "low": below,
                "high": below + int(r.events),
            }
        )
        below += int(r.events)
    fmt = "%H:%M:%S" if span < 86_400 else "%m-%d %H:%M"
    return (
        alt.Chart(alt.Data(values=data))
        .mark_rect(stroke="white", strokeWidth=0.5)
        .encode(
            x=alt.X(
                "start:T",
                title=f"time (UTC), {parts.plural(bucket, 'second')} per bar",
                scale=alt.Scale(type="utc"),
                axis=alt.Axis(format=fmt, labelAngle=0, tickCount=6),
            ),
            x2="end:T",
            y=alt.Y("low:Q", title="events"),
            y2="high:Q",
            color=alt.Color("action:N", scale=_colours(order), legend=alt.Legend(orient="top")),
            tooltip=["start:T", "action:N", "events:Q"],
        )
        .properties(width=520, height=200, title="actions over time")
        .configure_title(fontSize=12, anchor="start")
    )


def rules_chart(log: EventLog, n: int = 10) -> alt.Chart | None:
    """The ``n`` rules with most events, each bar split by action (None: no events)."""
    data = [
        {
            "rule": f"{SHORT.get(r.source, r.source)} · {_text(r.rule_id)[:12]} · "
            f"{_text(r.description)[:40]}",
            "action": r.action,
            "events": int(r.events),
        }
        for r in rule_actions(log, n).itertuples()
    ]
    if not data:
        return None
    order = list(dict.fromkeys(d["rule"] for d in data))
    return (
        alt.Chart(alt.Data(values=data))
        .mark_bar()
        .encode(
            y=alt.Y("rule:N", sort=order, title=None, axis=alt.Axis(labelLimit=420)),
            x=alt.X("events:Q", stack=True),
            color=alt.Color(
                "action:N",
                scale=_colours([d["action"] for d in data]),
                legend=alt.Legend(orient="top"),
            ),
            order=alt.Order("action:N"),
        )
        .properties(width=320, height=len(order) * 20, title=f"top {n} rules, by action")
        .configure_title(fontSize=12, anchor="start")
    )


def systems_chart(data: list[dict[str, Any]]) -> alt.Chart:
    """Grouped bars: events per action, the old WAF's beside the new one's."""
    names = list(SYSTEMS.values())
    return (
        alt.Chart(alt.Data(values=data))
        .mark_bar()
        .encode(
            x=alt.X("action:N", title=None, axis=alt.Axis(labelAngle=0)),
            xOffset=alt.XOffset("system:N", sort=names),
            y=alt.Y("events:Q"),
            color=alt.Color(
                "system:N",
                scale=alt.Scale(domain=names, range=["#7b8794", "#f38020"]),
                legend=alt.Legend(orient="top", title=None),
            ),
        )
        .properties(width=420, height=180, title="events by action, old and new")
        .configure_title(fontSize=12, anchor="start")
    )


def _text(value: Any) -> str:
    return "" if value is None or value != value else str(value)  # NaN is no text
