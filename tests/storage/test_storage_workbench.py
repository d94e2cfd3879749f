"""``wb.storage``: the Durable Object runtime under a Workbench, on its clock and seed.

A standalone ``Runtime()`` keeps its own clock and billing log, as before.
"""

from __future__ import annotations

from typing import Any

from workbench import Workbench
from workbench.core.clock import VirtualClock
from workbench.storage import DurableObject, Runtime


class Notes(DurableObject):
    """Adds a note per request; ``("alarm", t_ms)`` sets the alarm instead."""

    rang: list[int] = []

    async def fetch(self, request: Any) -> Any:
        storage = self.ctx.storage
        if isinstance(request, tuple):
            await storage.setAlarm(request[1])
            return await storage.getAlarm()
        storage.sql.exec("CREATE TABLE IF NOT EXISTS notes(body TEXT)")
        storage.sql.exec("INSERT INTO notes VALUES (?)", request)
        return storage.sql.exec("SELECT count(*) AS n FROM notes").one()["n"]

    async def alarm(self, info: Any = None) -> None:
        type(self).rang.append(info.retryCount)


def _work(wb: Workbench) -> list[Any]:
    """Some storage work: two named objects and a unique one, with the clock moving."""
    ns = wb.storage.namespace(Notes)
    out = [wb.storage.run(ns.get(ns.id_from_name("a")).fetch("hi"))]
    wb.advance(minutes=5)
    unique = ns.new_unique_id()
    out.append(str(unique))
    out.append(wb.storage.run(ns.get(unique).fetch("there")))
    return out


def test_wb_storage_is_one_runtime_on_the_workbench_clock():
    wb = Workbench(seed=1)
    rt = wb.storage
    assert isinstance(rt, Runtime) and wb.storage is rt
    assert rt.clock is wb.clock and rt.now() == wb.clock.now_ms()
    wb.advance(seconds=90)
    assert rt.now() == wb.clock.now_ms()


def test_billing_times_follow_the_virtual_clock():
    wb = Workbench(seed=1)
    start = wb.clock.now_ms()
    _work(wb)
    times = wb.storage.billing.records()["t_ms"].tolist()
    assert times == [start] * 3 + [start + 300_000] * 3


def test_an_alarm_fires_as_the_workbench_clock_moves():
    Notes.rang = []
    wb = Workbench(seed=1)
    ns = wb.storage.namespace(Notes)
    stub = ns.get(ns.id_from_name("a"))
    due = wb.clock.now_ms() + 60_000
    assert wb.storage.run(stub.fetch(("alarm", due))) == due
    wb.storage.run(wb.storage.advance(59_999))
    assert Notes.rang == []
    assert wb.storage.run(wb.storage.advance(1)) == due == wb.clock.now_ms()
    assert Notes.rang == [0] and wb.storage.alarms() == {}


def test_same_seed_same_ids_records_and_platform_ids():
    one, two = Workbench(seed=5), Workbench(seed=5)
    assert _work(one) == _work(two)
    query = "SELECT * FROM sql_billing ORDER BY seq"
    assert one.logs.query(query).equals(two.logs.query(query))
    assert _work(Workbench(seed=6))[1] != _work(Workbench(seed=5))[1]  # another seed, other ids
    # Using storage draws nothing from the Workbench's ids.
    assert one.new_id() == Workbench(seed=5).new_id()


def test_a_standalone_runtime_keeps_its_own_clock_and_billing():
    wb = Workbench(seed=1)
    rt = Runtime()
    assert isinstance(rt.clock, VirtualClock) and rt.clock is not wb.clock
    ns = rt.namespace(Notes)
    assert rt.run(ns.get(ns.id_from_name("a")).fetch("hi")) == 1
    assert rt.billing.totals()["statements"] == 3
    assert rt.billing.con is not wb.logs.con
    # On the Workbench's clock but made by hand, a runtime still keeps its own billing.
    beside = Runtime(clock=wb.clock)
    ns = beside.namespace(Notes)
    beside.run(ns.get(ns.id_from_name("a")).fetch("hi"))
    assert beside.billing.totals()["statements"] == 3
    assert wb.logs.feed("sql_billing") is None  # wb.storage was never made
