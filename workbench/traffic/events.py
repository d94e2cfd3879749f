"""Security-event rows: each request's verdict joined with the request's own fields.

Both replay paths end here, with the same inputs (each request's verdict
index and the verdicts), so they give the same rows by construction. The join
is vectorised: a verdict's events become rows once (a *template*), and each
request repeats the rows of its verdict.

    >>> from workbench.core.security import SecurityEvent, Verdict
    >>> import numpy as np
    >>> verdicts = [Verdict([]), Verdict([SecurityEvent("waf", "log", "1", None, "a"),
    ...                                   SecurityEvent("waf", "block", "2", None, "b")], "block")]
    >>> cols = request_columns([Request(url="/x"), Request(url="/y")], ["r0", "r1"], [0, 1000])
    >>> frame = event_frame("z", cols, np.array([1, 0]), Templates(verdicts))
    >>> frame[["ray_id", "rule_id", "match_index", "path"]].values.tolist()
    [['r0', '1', 1, '/x'], ['r0', '2', 0, '/x']]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped]  # no pandas-stubs in the dev dependencies

from ..core.security import SecurityEvent, Verdict
from ..logs.schema import COLUMNS, INT_COLUMNS
from ..rulesets.crs.explain import explained, is_owasp_event
from .parts import Parts, first_values, hosts, paths, queries
from .request import Request
from .textvalues import field_text

_TEMPLATE = (
    "action",
    "source",
    "rule_id",
    "ruleset_id",
    "description",
    "score",
    "paranoia_level",
    "metadata",
)


#: An event's metadata as a log holds it: ``json.dumps(..., sort_keys=True, default=str)``
#: with its encoder made once, not per call.
event_metadata = json.JSONEncoder(sort_keys=True, default=str).encode
_metadata = event_metadata


def log_text(text: str) -> str:
    """Text a log can hold (UTF-8): bytes that are not UTF-8 shown as ``\\xNN``."""
    if text.isascii():
        return text
    value = field_text(text)
    return value.decode("utf-8", "backslashreplace") if isinstance(value, bytes) else value


def _row(event: SecurityEvent) -> tuple[Any, ...]:
    return (
        event.action,
        event.source,
        str(event.rule_id),
        event.ruleset_id,
        log_text(event.description or ""),
        event.score,
        event.paranoia_level,
        _metadata(event.metadata),
    )


class Templates:
    """Each verdict's events as rows, made once per verdict and kept as it grows."""

    def __init__(self, verdicts: list[Verdict]) -> None:
        self.verdicts = verdicts
        self.rows: list[tuple[Any, ...]] = []
        self.first: list[int] = []  # first template row of each verdict
        self.count: list[int] = []
        self.action: list[str | None] = []
        #: Template rows of OWASP events: their source and metadata, for :func:`explain_rows`.
        self.owasp: dict[int, tuple[str, dict[str, Any]]] = {}
        self._made = 0
        self._table = np.empty((0, len(_TEMPLATE)), dtype=object)

    def refresh(self) -> None:
        """Add the templates of verdicts decided since the last call."""
        for verdict in self.verdicts[self._made :]:
            self.first.append(len(self.rows))
            self.count.append(len(verdict.events))
            self.action.append(verdict.action)
            for e in verdict.events:
                if is_owasp_event(e.source, e.metadata):
                    self.owasp[len(self.rows)] = (e.source, e.metadata)
                self.rows.append(_row(e))
        self._made = len(self.verdicts)

    @property
    def table(self) -> np.ndarray:
        """The template rows as a 2-D object array (rebuilt only when rows were added)."""
        if len(self._table) != len(self.rows):
            table = np.empty((len(self.rows), len(_TEMPLATE)), dtype=object)
            table[:] = self.rows if self.rows else table
            self._table = table
        return self._table


def request_columns(
    requests: Sequence[Request] | Parts,
    ray_ids: Sequence[str],
    times_ms: Sequence[int],
    rows: Sequence[int] | np.ndarray | None = None,
) -> dict[str, Any]:
    """The per-request columns of the event rows, as arrays.

    ``requests`` may be the chunk's :class:`~workbench.traffic.parts.Parts` (what the
    request table listed is not listed again); ``rows`` picks some of the requests (all
    three sequences are then the whole chunk's).
    """
    parts = requests if isinstance(requests, Parts) else Parts(requests)
    picked = None if rows is None else np.asarray(rows, dtype=np.intp)

    def column(values: Sequence[Any]) -> np.ndarray:
        array = np.array(values, dtype=object)
        return array if picked is None else array[picked]

    def texts(values: list[str]) -> np.ndarray:
        # One pass in C when the column is all ASCII (the common case): no call per value.
        if all(map(str.isascii, values)):
            return column(values)
        return np.array([log_text(v) for v in column(values).tolist()], dtype=object)

    times = np.array(times_ms, dtype="datetime64[ms]").astype("datetime64[ns]")
    return {
        "ray_id": column(ray_ids),
        "datetime": times if picked is None else times[picked],
        "client_ip": texts(parts.attribute("client_ip")),
        "country": texts(parts.attribute("country")),
        "host": texts(hosts(parts)),
        "path": texts(paths(parts)),
        "query": texts(queries(parts)),
        "method": texts(parts.attribute("method")),
        "user_agent": texts(first_values(parts, "user-agent")),
        "label": texts(parts.attribute("label")),
    }


def event_frame(
    zone_id: str,
    columns: dict[str, Any],
    verdict_ids: np.ndarray,
    templates: Templates,
    requests: Sequence[Request] | None = None,
) -> Any:
    """One row per event of each request, in request order, then event order.

    With ``requests`` (one per verdict id), an OWASP event's metadata says what each
    contributing rule matched in its request (:func:`~workbench.rulesets.crs.explain.explained`).
    """
    templates.refresh()
    count = np.asarray(templates.count, dtype=np.int64)[verdict_ids]
    first = np.asarray(templates.first, dtype=np.int64)[verdict_ids]
    total = int(count.sum())
    rows = np.repeat(np.arange(len(verdict_ids)), count)
    # Position of each event within its request: 0, 1, ... restarting at every request.
    starts = np.repeat(np.cumsum(count) - count, count)
    within = np.arange(total) - starts
    template_rows = first[rows] + within
    data: dict[str, Any] = {name: values[rows] for name, values in columns.items()}
    data["zone_id"] = np.full(total, zone_id, dtype=object)
    data["kind"] = np.full(total, "firewall", dtype=object)
    data["match_index"] = count[rows] - 1 - within
    picked = templates.table[template_rows]
    for j, name in enumerate(_TEMPLATE):
        data[name] = picked[:, j]
    if requests is not None and templates.owasp:
        data["metadata"] = _explain_rows(data["metadata"], template_rows, rows, requests, templates)
    # Made in the table's dtypes (normalise would give the same frame, slower).
    return pd.DataFrame({c: _typed(c, data[c]) for c in COLUMNS})


def _explain_rows(
    metadata: np.ndarray,
    template_rows: np.ndarray,
    rows: np.ndarray,
    requests: Sequence[Request],
    templates: Templates,
) -> np.ndarray:
    """``metadata`` with each OWASP event's own request's matches (a row per such event only:
    they are few, and every other row keeps its template's text)."""
    owasp = templates.owasp
    out = metadata
    for k in np.flatnonzero(np.isin(template_rows, np.fromiter(owasp, dtype=np.int64))):
        source, meta = owasp[int(template_rows[k])]
        richer = explained(meta, source, requests[int(rows[k])])
        if richer is not meta:
            if out is metadata:
                out = metadata.copy()
            out[k] = _metadata(richer)
    return out


def _typed(column: str, values: np.ndarray) -> Any:
    """A column in the log's dtype: whole numbers as ``Int32``, text as object (None for
    NULL; pandas would otherwise infer its string dtype), times as they are."""
    if column in INT_COLUMNS:
        return _int32(values)
    if values.dtype == object:
        return pd.Series(values, dtype=object, copy=False)
    return values


def _int32(values: np.ndarray) -> Any:
    """Whole numbers (None for NULL) as the log's nullable Int32."""
    if values.dtype != object:
        return pd.arrays.IntegerArray(values.astype(np.int32), np.zeros(len(values), dtype=bool))
    return pd.array(values, dtype="Int32")


def final_actions(verdict_ids: np.ndarray, templates: Templates) -> np.ndarray:
    """Each request's final action (None when it reached the origin)."""
    templates.refresh()
    return np.asarray(templates.action, dtype=object)[verdict_ids]
