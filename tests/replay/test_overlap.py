"""The whole-table replay runs DuckDB's checks of one chunk beside Python's work on the others.

What a user sees must not depend on it: the same ray ids, times, actions and
events whatever the chunk size; a failure in DuckDB's step reaches the caller
and leaves no chunk table behind; at most one chunk is staged ahead.
"""

from __future__ import annotations

import pytest
from traffic_helpers import workbench_with_zone

from workbench.logs import EventLog
from workbench.replay import Pipeline
from workbench.replay import _evaluate as evaluate


def _replay(requests, **options):
    wb, zone_id = workbench_with_zone()
    log = EventLog()
    run = Pipeline(wb, zone_id).replay(requests, progress=False, seed=7, log=log, **options)
    return run, log


def test_chunked_overlapped_replay_gives_what_one_chunk_gives(traffic):
    whole, whole_log = _replay(traffic)
    chunked, chunked_log = _replay(traffic, chunk_size=300)
    assert chunked.ray_ids == whole.ray_ids and chunked.times_ms == whole.times_ms
    assert chunked.actions == whole.actions
    assert chunked.events.equals(whole.events)
    assert whole_log.frame().equals(chunked_log.frame())
    assert len(whole.events) > 100  # the traffic did trigger rules


def test_time_by_step_names_each_thread_step(traffic):
    run, _ = _replay(traffic[:500], chunk_size=200)
    seconds = run.stats["seconds"]
    assert list(seconds) == [
        "requests",
        "table",
        "load",
        "sql",
        "fallback",
        "decide",
        "events",
        "wait",
    ]
    assert all(v >= 0 for v in seconds.values())
    # The steps of the main thread (everything but DuckDB's checks) fit in the wall time.
    main = sum(v for k, v in seconds.items() if k != "sql")
    assert main <= run.seconds + 0.05


def test_a_failure_in_duckdbs_step_reaches_the_caller_and_drops_every_chunk_table(
    traffic, monkeypatch
):
    seen = []
    select = evaluate.Evaluator._select

    def failing(self, con, table, columns, lo, hi):
        seen.append(self)
        if len(seen) == 2:
            raise RuntimeError("DuckDB failed on chunk 2")
        return select(self, con, table, columns, lo, hi)

    monkeypatch.setattr(evaluate.Evaluator, "_select", failing)
    with pytest.raises(RuntimeError, match="chunk 2"):
        _replay(traffic, chunk_size=400)
    tables = seen[0].con.execute("SELECT table_name FROM duckdb_tables()").fetchall()
    assert tables == []


def test_at_most_one_chunk_is_staged_ahead(traffic, monkeypatch):
    live, most = [0], [0]
    stage, finish = evaluate.Evaluator.stage, evaluate.Evaluator.finish

    def counted_stage(self, requests, ctx, parts=None):
        live[0] += 1
        most[0] = max(most[0], live[0])
        return stage(self, requests, ctx, parts)

    def counted_finish(self, staged):
        live[0] -= 1
        return finish(self, staged)

    monkeypatch.setattr(evaluate.Evaluator, "stage", counted_stage)
    monkeypatch.setattr(evaluate.Evaluator, "finish", counted_finish)
    run, _ = _replay(traffic, chunk_size=250)
    assert run.requests == len(traffic) and live[0] == 0
    assert most[0] == 2


def test_chunks_checked_in_row_ranges_queued_across_chunks_give_the_same_events(
    traffic, monkeypatch
):
    whole, whole_log = _replay(traffic)
    monkeypatch.setattr(evaluate, "SPLIT_FROM", 40)
    ranges = []
    check_range = evaluate.Evaluator.check_range

    def counted(self, staged, k):
        ranges.append((id(staged), k))
        return check_range(self, staged, k)

    monkeypatch.setattr(evaluate.Evaluator, "check_range", counted)
    monkeypatch.setattr(evaluate.Evaluator, "threads", lambda self: 3)
    split, split_log = _replay(traffic, chunk_size=300)
    rest = len(traffic) - 75  # the first chunk is a quarter
    sizes = [75] + [min(300, rest - k) for k in range(0, rest, 300)]
    assert len({chunk for chunk, _ in ranges}) == len(sizes)
    assert len(ranges) == sum(max(1, min(3, n // 40)) for n in sizes)
    assert split.actions == whole.actions and split.events.equals(whole.events)
    assert whole_log.frame().equals(split_log.frame())
    assert split.stats["seconds"]["sql"] > 0


def test_the_first_chunk_is_a_quarter_so_duckdb_starts_sooner(traffic, monkeypatch):
    sizes = []
    stage = evaluate.Evaluator.stage

    def counting(self, requests, ctx, parts=None):
        sizes.append(len(requests))
        return stage(self, requests, ctx, parts)

    monkeypatch.setattr(evaluate.Evaluator, "stage", counting)
    run, _ = _replay(traffic[:1000], chunk_size=400)
    assert sizes == [100, 400, 400, 100]
    whole, _ = _replay(traffic[:1000])
    assert run.ray_ids == whole.ray_ids and run.actions == whole.actions
    assert run.events.equals(whole.events)
