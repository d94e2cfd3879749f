"""The what-if on a replay engine: the same comparison, computed by DuckDB or Spark over a Parquet log.

:func:`run_whatif` replays requests held in Python twice (the zone now, and
the new configuration); :func:`whatif_on_engine` gives the same per-request
comparison (``ray_id, label, method, host, path, query, old_action,
new_action, change``, in the log's order) and the same :meth:`summary` from a
partitioned Parquet request log (:func:`workbench.replay.write_log`) on
either engine. Both sides run in one pass of the engine: each request's key
covers the checks of both plans (a check they share runs once), and Python
decides both sides once per distinct key (the log backend's
:meth:`~workbench.replay.LogBackend.outcomes`).
The comparison goes to a Parquet file; only counts by change and label come back.

:func:`whatif_log` is the ``workbench whatif --engine`` command's one call: a
fresh zone, the log (a request log file, written as a Parquet log with the
ray ids and times the in-process what-if draws, or a Parquet log folder as it
is), then :func:`whatif_on_engine`.

    >>> import tempfile, pathlib
    >>> from workbench.traffic import Request, generate
    >>> from workbench.traffic.importers import write_lines
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> log = folder / "requests.ndjson"
    >>> _ = log.write_text("\\n".join(write_lines(Request.from_raw(r) for r in generate(20, seed=1))), encoding="utf-8")
    >>> done = whatif_log(log, "example.com", out=folder / "cmp.parquet")
    >>> done.requests, int(done.summary().loc["total", "total"])
    (20, 20)
    >>> list(done.comparison().columns) == list(COMPARISON_COLUMNS)
    True
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd  # type: ignore[import-untyped]  # no pandas-stubs in the dev dependencies

from ..core.security import Verdict
from ..replay import EngineError, LogSource, check_log, open_engine, write_log
from .config import NewConfig
from .whatif import change_of, default_seed, side_plans

if TYPE_CHECKING:
    from ..core.platform import Workbench

#: The request columns of the comparison, taken from the log as they are.
REQUEST_COLUMNS = ("ray_id", "label", "method", "host", "path", "query")
#: The comparison's columns, as :attr:`WhatIf.requests <workbench.tuning.whatif.WhatIf.requests>`.
COMPARISON_COLUMNS = (*REQUEST_COLUMNS, "old_action", "new_action", "change")


@dataclass
class EngineWhatIf:
    """A what-if computed by an engine: the comparison is in :attr:`out`, counts are here."""

    zone_id: str
    zone_name: str
    zone_plan: str
    engine: str
    requests: int
    #: Requests by ``change`` and ``label`` (columns ``change, label, requests``).
    counts: Any
    out: Path
    seconds: float
    stats: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> Any:
        """Requests by change (rows) and label (columns), with totals, as
        :meth:`WhatIf.summary <workbench.tuning.whatif.WhatIf.summary>` gives them."""
        changes = sorted(set(self.counts.change))
        labels = sorted(set(self.counts.label))
        table = pd.DataFrame(
            0,
            index=pd.Index(changes, name="change"),
            columns=pd.Index(labels, name="label"),
            dtype="int64",
        )
        for change, label, n in zip(
            self.counts.change, self.counts.label, self.counts.requests, strict=True
        ):
            table.loc[change, label] = int(n)
        table["total"] = table.sum(axis=1)
        table.loc["total"] = table.sum(axis=0)
        return table

    def comparison(self) -> Any:
        """The comparison file as a DataFrame (one row per request; the whole file in memory)."""
        import duckdb

        con = duckdb.connect()
        try:
            return con.execute("SELECT * FROM read_parquet(?)", [str(self.out)]).df()
        finally:
            con.close()


def _sides(verdicts: list[Verdict]) -> tuple[str, str, str]:
    old, new = verdicts[0].action, verdicts[1].action
    return old or "pass", new or "pass", change_of(old, new)


def whatif_on_engine(
    wb: Workbench,
    zone_id: str,
    log: str | Path,
    out: str | Path,
    *,
    engine: str = "duckdb",
    config: NewConfig | None = None,
    log_zone: str | None = None,
    master: str | None = None,
    cores: int = 2,
    memory_limit: str = "1GB",
    spark: Any = None,
) -> EngineWhatIf:
    """The zone's what-if over the Parquet log ``log`` (its ``log_zone`` partition, default the
    zone's name) on ``engine``; the comparison goes to ``out``. ``config`` is the new side
    (default: ``wb.tuning.new_config(zone_id)``, as ``wb.tuning.whatif`` runs).
    Raises :class:`~workbench.replay.EngineError`.
    """
    zone = wb.zone(zone_id)
    folder = check_log(log, log_zone or zone.name)
    config = config or wb.tuning.new_config(zone.id)
    plans = side_plans(wb, zone.id, config)
    target = Path(out)
    with open_engine(
        engine,
        folder,
        log_zone or zone.name,
        zone.plan,
        master=master,
        cores=cores,
        memory_limit=memory_limit,
        spark=spark,
    ) as (backend, rows):
        done = backend.outcomes(
            plans,
            _sides,
            ("old_action", "new_action", "change"),
            # The log's rows, read as the zone's (a request settled per request sees its name).
            LogSource(rows.table, zone.name, zone.plan),
            target,
            keep=REQUEST_COLUMNS,
            memory_limit=memory_limit,
            threads=cores,
        )
    import duckdb

    con = duckdb.connect()
    try:
        counts = con.execute(
            "SELECT change, label, count(*) AS requests FROM read_parquet(?) GROUP BY ALL",
            [str(target)],
        ).df()
    finally:
        con.close()
    return EngineWhatIf(
        zone.id,
        zone.name,
        zone.plan,
        engine,
        done.requests,
        counts,
        target,
        done.seconds,
        done.stats,
    )


def whatif_log(
    log: str | Path,
    zone: str,
    *,
    out: str | Path,
    engine: str = "duckdb",
    plan: str = "pro",
    label: str = "",
    seed: int = 0,
    master: str | None = None,
    cores: int = 2,
    memory_limit: str = "1GB",
    spark: Any = None,
) -> EngineWhatIf:
    """``workbench whatif LOG --zone Z --engine E``: a fresh Workbench (``seed``) with zone ``zone``
    on ``plan``, and its what-if over ``log`` on ``engine``.

    ``log`` is a request log file (NDJSON or combined, as :func:`~workbench.traffic.read_log`
    reads it, every request labelled ``label``), written as a Parquet log with the ray ids
    and times the in-process what-if gives its requests, so both give the same comparison;
    or a Parquet log folder, whose ``zone`` partition is read as it is (its own ray ids).
    Raises :class:`~workbench.replay.EngineError`, OSError or ValueError.
    """
    from ..core.platform import Workbench
    from ..traffic.importers import read_log

    if cores < 1:
        raise EngineError(f"--cores must be >= 1, got {cores}")
    wb = Workbench(seed=seed)
    created = wb.create_zone(zone, plan=plan)
    options: dict[str, Any] = {
        "engine": engine,
        "master": master,
        "cores": cores,
        "memory_limit": memory_limit,
        "spark": spark,
    }
    if Path(log).is_dir():
        return whatif_on_engine(wb, created.id, log, out, log_zone=zone, **options)
    requests = read_log(log, host=created.name, label=label)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="workbench-whatif-log-") as folder:
        written = write_log(
            requests,
            folder,
            zone=created.name,
            seed=default_seed(created.id),
            start_ms=wb.clock.now_ms(),
        )
        if written == 0:
            raise EngineError(f"LOG: {log} holds no requests")
        converted = time.perf_counter() - started
        done = whatif_on_engine(wb, created.id, folder, out, **options)
    done.stats["seconds"] = {"convert": round(converted, 2), **done.stats.get("seconds", {})}
    return done
