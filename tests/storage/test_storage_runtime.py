"""The runtime: ids, instances, write coalescing, input and output gates, abort, clocks."""

from __future__ import annotations

import asyncio

import pytest
from storage_helpers import Probe, call

from workbench import Workbench
from workbench.storage import (
    DurableObject,
    DurableObjectReset,
    ObjectAborted,
    Runtime,
    StorageWriteFailed,
)


def test_ids_from_names_are_stable_and_named(rt):
    ns = rt.namespace(Probe)
    a, b = ns.id_from_name("alice"), ns.id_from_name("alice")
    assert a == b and a.equals(b) and a.name == "alice"
    assert len(a.toString()) == 64 and int(a.to_string(), 16) >= 0
    assert ns.id_from_name("bob") != a
    assert rt.namespace(Probe, name="Other").id_from_name("alice") != a


def test_unique_ids_are_seeded():
    one = Runtime(seed=3).namespace(Probe).new_unique_id()
    two = Runtime(seed=3).namespace(Probe).new_unique_id()
    assert one == two and one.name is None and len(str(one)) == 64
    assert Runtime(seed=4).namespace(Probe).new_unique_id() != one


def test_one_instance_per_id_and_stubs_share_it(rt):
    ns = rt.namespace(Probe)
    before = Probe.constructed
    s1, s2 = ns.get(ns.id_from_name("x")), ns.get(ns.id_from_name("x"))
    call(rt, s1, lambda ctx: ctx.storage.put("k", 1))
    assert call(rt, s2, lambda ctx: ctx.storage.get("k")) == 1
    assert Probe.constructed - before == 1
    assert call(rt, s1, lambda ctx: ctx.id.name) == "x"


def test_runtime_takes_the_workbench_clock():
    wb = Workbench(seed=0)
    rt = Runtime(clock=wb.clock)
    assert rt.now() == wb.clock.now_ms()
    assert rt.run(rt.advance(1500)) == wb.clock.now_ms()
    wb.advance(seconds=1)
    assert rt.now() == wb.clock.now_ms()


def test_default_clock_is_virtual_and_integer(rt):
    start = rt.now()
    assert isinstance(start, int)
    assert rt.run(rt.advance(250)) == start + 250
    with pytest.raises(ValueError, match="non-negative int"):
        rt.run(rt.advance(-1))


def test_storage_methods_take_effect_when_called(rt, stub):
    async def body(ctx):
        s = ctx.storage
        p1 = s.put("k", 1)
        g1 = s.get("k")
        p2 = s.put("k", 2)
        g2 = s.get("k")
        d = s.delete("k")
        g3 = s.get("k")
        return [await x for x in (p1, g1, p2, g2, d, g3)]

    assert call(rt, stub, body) == [None, 1, None, 2, True, None]


def _batches(stub):
    return stub._host.db.history.last_seq


def test_writes_without_await_commit_as_one_batch(rt, sqlite_stub):
    async def coalesced(ctx):
        ctx.storage.put("a", 1)
        ctx.storage.put("b", 2)
        ctx.storage.delete("a")

    async def split(ctx):
        ctx.storage.put("c", 3)
        await asyncio.sleep(0)  # a real await: the batch commits here
        ctx.storage.put("d", 4)

    before = _batches(sqlite_stub)
    call(rt, sqlite_stub, coalesced)
    assert _batches(sqlite_stub) == before + 1
    call(rt, sqlite_stub, split)
    assert _batches(sqlite_stub) == before + 3


def test_a_failed_batch_loses_every_write_in_it_and_resets_the_object(rt, stub):
    call(rt, stub, lambda ctx: ctx.storage.put("kept", 0))
    built = Probe.constructed

    async def body(ctx):
        ctx.storage.put("a", 1)
        ctx.storage.put("b", 2)
        return "result"

    rt.inject_write_failure(stub)
    with pytest.raises(StorageWriteFailed, match="internal error; reference = "):
        call(rt, stub, body)
    assert call(rt, stub, lambda ctx: ctx.storage.list()) == {"kept": 0}
    assert Probe.constructed == built + 1  # a new instance


def test_output_gate_holds_result_until_durable_unless_allow_unconfirmed(rt, stub):
    async def unconfirmed(ctx):
        await ctx.storage.put("u", 1, {"allowUnconfirmed": True})
        return "sent before the write was confirmed"

    rt.inject_write_failure(stub)
    assert call(rt, stub, unconfirmed) == "sent before the write was confirmed"
    # the write failed after the result left: the object was reset and the write lost
    assert call(rt, stub, lambda ctx: ctx.storage.get("u")) is None


def test_sync_waits_for_unconfirmed_writes(rt, sqlite_stub):
    async def body(ctx):
        ctx.storage.put("a", 1, allowUnconfirmed=True)
        before = ctx.storage._db.in_batch
        await ctx.storage.sync()
        return before, ctx.storage._db.in_batch

    assert call(rt, sqlite_stub, body) == (True, False)


def test_input_gate_makes_read_modify_write_atomic(rt, stub):
    async def incr(ctx):
        n = (await ctx.storage.get("n")) or 0
        await ctx.storage.put("n", n + 1)

    async def both():
        await asyncio.gather(stub.fetch(incr), stub.fetch(incr), stub.fetch(incr))
        return await stub.fetch(lambda ctx: ctx.storage.get("n"))

    assert rt.run(both()) == 3


def test_allow_concurrency_lets_events_interleave_during_a_read(rt, stub):
    async def incr(ctx):
        n = (await ctx.storage.get("n", {"allowConcurrency": True})) or 0
        await ctx.storage.put("n", n + 1)

    async def both():
        await asyncio.gather(stub.fetch(incr), stub.fetch(incr))
        return await stub.fetch(lambda ctx: ctx.storage.get("n"))

    assert rt.run(both()) == 1  # a lost update: both read 0


def test_other_io_opens_the_gate_but_block_concurrency_while_keeps_it_shut(rt, stub):
    order = []

    async def slow(ctx, tag, block):
        async def work():
            order.append(f"{tag} start")
            for _ in range(3):
                await asyncio.sleep(0)
            order.append(f"{tag} end")

        if block:
            await ctx.blockConcurrencyWhile(work)
        else:
            await work()

    async def scenario(block):
        order.clear()
        await asyncio.gather(
            stub.fetch(lambda ctx: slow(ctx, "A", block)),
            stub.fetch(lambda ctx: slow(ctx, "B", block)),
        )
        return list(order)

    assert rt.run(scenario(False)) == ["A start", "B start", "A end", "B end"]
    assert rt.run(scenario(True)) == ["A start", "A end", "B start", "B end"]


def test_constructor_block_concurrency_while_runs_before_the_first_event(rt):
    class Loader(DurableObject):
        def __init__(self, ctx, env=None):
            super().__init__(ctx, env)
            self.ready = False
            ctx.blockConcurrencyWhile(self.load)

        async def load(self):
            await asyncio.sleep(0)
            self.value = (await self.ctx.storage.get("v")) or "default"
            self.ready = True

        async def fetch(self, request):
            return self.ready, self.value

    ns = rt.namespace(Loader)
    assert rt.run(ns.get(ns.id_from_name("l")).fetch(None)) == (True, "default")


def test_abort_fails_the_request_and_rebuilds_the_instance(rt, stub):
    async def body(ctx):
        await ctx.storage.put("committed", 1)
        ctx.abort("reset for test")

    call(rt, stub, lambda ctx: None)
    built = Probe.constructed
    with pytest.raises(ObjectAborted, match="reset for test"):
        call(rt, stub, body)
    assert call(rt, stub, lambda ctx: ctx.storage.get("committed")) == 1
    assert Probe.constructed == built + 1


def test_old_instance_cannot_use_storage_after_reset(rt, stub):
    saved = {}

    def keep(ctx):
        saved["ctx"] = ctx

    call(rt, stub, keep)
    with pytest.raises(ObjectAborted):
        call(rt, stub, lambda ctx: ctx.abort("x"))
    with pytest.raises(DurableObjectReset):
        saved["ctx"].storage.get("a")


def test_handler_error_keeps_earlier_writes(rt, stub):
    async def body(ctx):
        await ctx.storage.put("before", 1)
        raise KeyError("boom")

    with pytest.raises(KeyError):
        call(rt, stub, body)
    assert call(rt, stub, lambda ctx: ctx.storage.get("before")) == 1


def test_wait_until_runs_after_the_response(rt, stub):
    async def later(ctx):
        await asyncio.sleep(0)
        await ctx.storage.put("later", True)

    def body(ctx):
        ctx.waitUntil(later(ctx))
        return "response"

    assert call(rt, stub, body) == "response"
    assert call(rt, stub, lambda ctx: ctx.storage.get("later")) is True


def test_rpc_style_method_calls(rt):
    class Greeter(DurableObject):
        async def greet(self, name):
            await self.ctx.storage.put("last", name)
            return f"hello {name}"

    ns = rt.namespace(Greeter)
    stub = ns.get(ns.id_from_name("g"))
    assert rt.run(stub.greet("ada")) == "hello ada"
    with pytest.raises(Exception, match="no fetch"):
        rt.run(stub.fetch(None))


def test_unknown_backend_is_refused(rt):
    with pytest.raises(ValueError, match="storage must be 'sqlite' or 'kv'"):
        rt.namespace(Probe, storage="postgres", name="bad")


def test_other_requests_in_flight_fail_when_the_object_resets(rt, stub):
    async def slow(ctx):
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        return "too late"

    async def aborts(ctx):
        ctx.abort("reset while another request waits")

    async def scenario():
        return await asyncio.gather(stub.fetch(slow), stub.fetch(aborts), return_exceptions=True)

    slow_result, abort_result = rt.run(scenario())
    assert isinstance(abort_result, ObjectAborted)
    assert isinstance(slow_result, ObjectAborted) and "another request waits" in str(slow_result)


def test_a_failed_background_commit_fails_the_requests_in_flight(rt, stub):
    async def writer(ctx):
        ctx.storage.put("x", 1)
        await asyncio.sleep(0)  # the batch commits here, and the disk refuses it
        return "unreachable"

    rt.inject_write_failure(stub)
    with pytest.raises(StorageWriteFailed):
        call(rt, stub, writer)
    assert call(rt, stub, lambda ctx: ctx.storage.get("x")) is None


def test_a_namespace_name_is_bound_once():
    import pytest as _pytest

    from workbench.storage import DurableObject, Runtime

    class Thing(DurableObject):
        async def fetch(self, request):
            return "ok"

    rt = Runtime()
    kv = rt.namespace(Thing, storage="kv")
    assert rt.namespace(Thing, storage="kv") is kv
    with _pytest.raises(ValueError, match="already bound to Thing with storage='kv'"):
        rt.namespace(Thing, storage="sqlite")
    assert rt.namespace(Thing, storage="sqlite", name="ThingSql").storage == "sqlite"
