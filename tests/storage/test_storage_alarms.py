"""Alarms: every row of the seed's alarm state table, retries, times and transactions."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
from storage_helpers import Probe, call

from workbench.storage import DurableObject, Runtime, StorageError


@pytest.fixture(params=["sqlite", "kv"])
def alarmed(request):
    """A runtime and a stub whose alarm handler is whatever the test puts in ``env.on_alarm``."""
    rt = Runtime()
    env = SimpleNamespace(on_alarm=None, runs=[])

    async def default(ctx, info):
        env.runs.append((rt.now(), info.retryCount, info.isRetry, await ctx.storage.getAlarm()))

    env.on_alarm = default
    ns = rt.namespace(Probe, storage=request.param, env=env)
    return rt, ns.get(ns.id_from_name("a")), env


def test_no_alarm_is_none_and_set_returns_none(alarmed):
    rt, stub, _ = alarmed

    async def body(ctx):
        before = await ctx.storage.getAlarm()
        result = await ctx.storage.setAlarm(rt.now() + 5000)
        return before, result, await ctx.storage.getAlarm()

    assert call(rt, stub, body) == (None, None, rt.now() + 5000)


def test_future_alarm_runs_at_its_time_once_and_clears(alarmed):
    rt, stub, env = alarmed
    t = rt.now() + 1500
    call(rt, stub, lambda ctx: ctx.storage.setAlarm(t))
    rt.run(rt.advance(1499))
    assert env.runs == []
    rt.run(rt.advance(1))
    assert env.runs == [(t, 0, False, None)]  # getAlarm() is None inside the handler
    assert call(rt, stub, lambda ctx: ctx.storage.getAlarm()) is None
    rt.run(rt.advance(60_000))
    assert len(env.runs) == 1


def test_past_alarm_is_stored_as_now_and_runs_at_once(alarmed):
    rt, stub, env = alarmed
    now = rt.now()

    async def body(ctx):
        await ctx.storage.setAlarm(now - 10_000)
        return await ctx.storage.getAlarm()

    assert call(rt, stub, body) == now
    assert env.runs == [(now, 0, False, None)]  # ran without the clock moving
    call(rt, stub, lambda ctx: ctx.storage.setAlarm(1))
    assert len(env.runs) == 2 and rt.now() == now


def test_setting_again_replaces_earlier_or_later(alarmed):
    rt, stub, env = alarmed
    now = rt.now()

    async def body(ctx):
        await ctx.storage.setAlarm(now + 10_000)
        await ctx.storage.setAlarm(now + 3_000)
        first = await ctx.storage.getAlarm()
        await ctx.storage.setAlarm(now + 7_000)
        return first, await ctx.storage.getAlarm()

    assert call(rt, stub, body) == (now + 3_000, now + 7_000)
    rt.run(rt.advance(20_000))
    assert [r[0] for r in env.runs] == [now + 7_000]


def test_delete_alarm_before_it_fires_and_is_idempotent(alarmed):
    rt, stub, env = alarmed

    async def body(ctx):
        await ctx.storage.setAlarm(rt.now() + 1000)
        await ctx.storage.deleteAlarm()
        await ctx.storage.deleteAlarm()
        return await ctx.storage.getAlarm()

    assert call(rt, stub, body) is None
    rt.run(rt.advance(5000))
    assert env.runs == []


def test_millisecond_granularity_and_datetimes(alarmed):
    rt, stub, env = alarmed
    when = datetime.fromtimestamp((rt.now() + 1) / 1000, tz=UTC) + timedelta(microseconds=999)
    assert call(rt, stub, lambda ctx: ctx.storage.setAlarm(when)) is None
    assert call(rt, stub, lambda ctx: ctx.storage.getAlarm()) == rt.now() + 1
    rt.run(rt.advance(1))
    assert len(env.runs) == 1


@pytest.mark.parametrize(
    "value, error, text",
    [
        (0, ValueError, "alarm time <= 0"),
        (-5, ValueError, "alarm time <= 0"),
        (True, TypeError, "not bool"),
        ("1700000000000", TypeError, "not str"),
        (None, TypeError, "not NoneType"),
        (0.5, ValueError, "alarm time <= 0"),
        (float("nan"), ValueError, "not a valid time"),
        (float("inf"), ValueError, "not a valid time"),
        (10**16, ValueError, "after 2189"),
    ],
)
def test_invalid_alarm_times(alarmed, value, error, text):
    rt, stub, _ = alarmed
    with pytest.raises(error, match=text):
        call(rt, stub, lambda ctx: ctx.storage.setAlarm(value))


def test_set_alarm_needs_an_alarm_handler():
    class NoHandler(DurableObject):
        async def fetch(self, request):
            return await self.ctx.storage.setAlarm(10**12 * 2)

    rt = Runtime()
    ns = rt.namespace(NoHandler)
    with pytest.raises(StorageError, match="must have an alarm"):
        rt.run(ns.get(ns.id_from_name("n")).fetch(None))


def test_running_handler_is_not_cancelled_by_set_past_alarm_or_delete(alarmed):
    rt, stub, env = alarmed
    log = []

    async def handler(ctx, info):
        log.append(("start", info.retryCount, rt.now()))
        if len(log) == 1:
            await ctx.storage.setAlarm(0 + 1)  # past: scheduled for after this handler
            await asyncio.sleep(0)
            log.append(("still running", await ctx.storage.getAlarm() == rt.now()))
        log.append(("end",))

    env.on_alarm = handler
    call(rt, stub, lambda ctx: ctx.storage.setAlarm(rt.now() + 100))
    rt.run(rt.advance(100))
    assert log == [
        ("start", 0, log[0][2]),
        ("still running", True),
        ("end",),
        ("start", 0, log[0][2]),
        ("end",),
    ]

    deleted = []

    async def deleting(ctx, info):
        await ctx.storage.setAlarm(rt.now() + 50)
        await ctx.storage.deleteAlarm()
        deleted.append(await ctx.storage.getAlarm())
        await asyncio.sleep(0)
        deleted.append("finished")

    env.on_alarm = deleting
    call(rt, stub, lambda ctx: ctx.storage.setAlarm(rt.now() + 10))
    rt.run(rt.advance(1000))
    assert deleted == [None, "finished"]


def test_reschedule_inside_handler_stays_visible(alarmed):
    rt, stub, env = alarmed

    async def handler(ctx, info):
        env.runs.append(rt.now())
        if len(env.runs) < 3:
            await ctx.storage.setAlarm(rt.now() + 1000)

    env.on_alarm = handler
    start = rt.now()
    call(rt, stub, lambda ctx: ctx.storage.setAlarm(start + 1000))
    rt.run(rt.advance(1000))
    assert call(rt, stub, lambda ctx: ctx.storage.getAlarm()) == start + 2000
    rt.run(rt.advance(10_000))
    assert env.runs == [start + 1000, start + 2000, start + 3000]


def test_failed_handler_is_retried_with_backoff_and_reported_as_set(alarmed):
    rt, stub, env = alarmed
    attempts = []

    async def flaky(ctx, info):
        seen = await ctx.storage.get("attempts") or 0
        await ctx.storage.put("attempts", seen + 1)  # writes of a failed attempt persist
        attempts.append((rt.now(), info.retryCount, info.isRetry, seen))
        if len(attempts) < 3:
            raise RuntimeError("try again")

    env.on_alarm = flaky
    start = rt.now()
    call(rt, stub, lambda ctx: ctx.storage.setAlarm(start + 1000))
    rt.run(rt.advance(1000))
    # failed, retry not begun: still reported as set (at the retry's time)
    assert call(rt, stub, lambda ctx: ctx.storage.getAlarm()) == start + 3000
    rt.run(rt.advance(10_000))
    assert attempts == [
        (start + 1000, 0, False, 0),
        (start + 3000, 1, True, 1),
        (start + 7000, 2, True, 2),
    ]
    assert call(rt, stub, lambda ctx: ctx.storage.getAlarm()) is None


def test_retries_stop_after_six(alarmed):
    rt, stub, env = alarmed
    attempts = []

    async def always_fails(ctx, info):
        attempts.append(info.retryCount)
        raise RuntimeError("no")

    env.on_alarm = always_fails
    call(rt, stub, lambda ctx: ctx.storage.setAlarm(rt.now() + 1))
    rt.run(rt.advance(24 * 3600 * 1000))
    assert attempts == [0, 1, 2, 3, 4, 5, 6]
    assert call(rt, stub, lambda ctx: ctx.storage.getAlarm()) is None
    host = stub._host
    assert (
        host.alarm_log[0]["result"].startswith("failed: RuntimeError")
        and "retry_at_ms" in host.alarm_log[0]
    )


def test_alarm_operations_follow_transactions(alarmed):
    rt, stub, _ = alarmed
    t1, t2 = rt.now() + 1000, rt.now() + 9000

    async def body(ctx):
        await ctx.storage.setAlarm(t1)

        async def delete_then_rollback(txn):
            await txn.deleteAlarm()
            txn.rollback()

        await ctx.storage.transaction(delete_then_rollback)
        after_rollback = await ctx.storage.getAlarm()

        async def set_then_throw(txn):
            await txn.setAlarm(t2)
            raise ValueError("undo")

        with pytest.raises(ValueError):
            await ctx.storage.transaction(set_then_throw)
        return after_rollback, await ctx.storage.getAlarm()

    assert call(rt, stub, body) == (t1, t1)


def test_alarms_fire_with_the_workbench_clock():
    from workbench import Workbench

    wb = Workbench(seed=1)
    rt = Runtime(clock=wb.clock)
    runs = []
    env = SimpleNamespace(on_alarm=lambda ctx, info: runs.append(rt.now()))
    ns = rt.namespace(Probe, env=env)
    stub = ns.get(ns.id_from_name("w"))
    t = wb.clock.now_ms() + 60_000
    call(rt, stub, lambda ctx: ctx.storage.setAlarm(t))
    rt.run(rt.advance(60_000))
    assert runs == [t] and wb.clock.now_ms() == t


def test_moving_the_workbench_clock_directly_runs_due_alarms():
    from workbench import Workbench

    wb = Workbench(seed=2)
    rt = Runtime(clock=wb.clock)
    runs = []
    env = SimpleNamespace(on_alarm=lambda ctx, info: runs.append(rt.now()))
    ns = rt.namespace(Probe, env=env)
    stub = ns.get(ns.id_from_name("w"))

    async def scenario():
        t = rt.now() + 5_000
        await stub.fetch(lambda ctx: ctx.storage.setAlarm(t))
        wb.advance(seconds=5)  # synchronous: the runtime schedules the alarm on the loop
        await rt.settle()
        return t

    t = asyncio.run(scenario())
    assert runs == [t]


def test_a_fractional_float_time_is_a_number_truncated_to_whole_ms(alarmed):
    """[alarm_fractional_time]: ``now + 3600000.5`` is read back as ``now + 3600000``. A Python
    float is a JS number, so the same rule applies (no TypeError), and the alarm runs then."""
    rt, stub, env = alarmed
    now = rt.now()

    async def body(ctx):
        await ctx.storage.setAlarm(now + 3_600_000.5)
        direct = await ctx.storage.getAlarm()
        await ctx.storage.transaction(lambda txn: txn.setAlarm(now + 60_000.999))
        return direct, await ctx.storage.getAlarm()

    direct, in_txn = call(rt, stub, body)
    assert (direct, in_txn) == (now + 3_600_000, now + 60_000)
    assert type(direct) is int and type(in_txn) is int
    rt.run(rt.advance(60_000))
    assert len(env.runs) == 1 and rt.now() == now + 60_000


def test_fractional_times_truncate_and_naive_datetimes_are_utc(alarmed):
    rt, stub, _ = alarmed
    now = rt.now()

    async def body(ctx):
        await ctx.storage.setAlarm(now + 3_600_000.9)
        fractional = await ctx.storage.getAlarm()
        naive = datetime.fromtimestamp((now + 5000) / 1000, tz=UTC).replace(tzinfo=None)
        await ctx.storage.setAlarm(naive)
        return fractional, await ctx.storage.getAlarm()

    assert call(rt, stub, body) == (now + 3_600_000, now + 5000)
