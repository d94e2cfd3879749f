"""The storage SQL billing log next to the security events, with its cost estimate: live in a
Workbench's log (``wb.storage`` bills into ``wb.logs``), or loaded from a standalone runtime."""

from __future__ import annotations

import threading

import pytest

from workbench import Workbench
from workbench.logs import EventLog, add_synthetic_events, load_billing
from workbench.storage import DurableObject, Runtime, estimate_cost
from workbench.traffic import generate


class Writer(DurableObject):
    async def fetch(self, request):
        sql = self.ctx.storage.sql
        sql.exec("CREATE TABLE IF NOT EXISTS t(x INTEGER)")
        for i in range(request):
            sql.exec("INSERT INTO t VALUES (?)", i)
        return sql.exec("SELECT count(*) AS n FROM t").one()["n"]


def test_billing_records_and_costs_are_queryable_with_the_events():
    rt = Runtime()
    ns = rt.namespace(Writer, storage="sqlite")
    rt.run(ns.get(ns.id_from_name("a")).fetch(5))
    rt.run(ns.get(ns.id_from_name("b")).fetch(2))
    log = EventLog()
    add_synthetic_events(log, 10)
    costs = load_billing(log, rt.billing)
    assert len(costs) == 2
    for row in costs.to_dict("records"):
        expected = rt.billing.cost(row["object_id"])
        assert {k: row[k] for k in expected} == expected  # the storage package's own estimate
    records = log.query(
        "SELECT object_id, count(*) AS n, sum(rows_written) AS w FROM sql_billing GROUP BY 1 ORDER BY n"
    )
    assert records.n.tolist() == [4, 7]
    table = log.query("SELECT * FROM sql_billing_costs ORDER BY statements")
    assert table.statements.tolist() == [4, 7]
    assert table.total_usd.tolist() == [0.0, 0.0]  # far under the included amounts
    totals = rt.billing.totals()
    assert int(table.rows_written.sum()) == totals["rows_written"]
    # Usage past the included amounts costs something (the storage package's prices).
    assert estimate_cost(30e9, 60e6)["total_usd"] == 15.0
    # Events and billing share the connection: one query can read both.
    both = log.query(
        "SELECT (SELECT count(*) FROM security_events) AS e, (SELECT count(*) FROM sql_billing) AS b"
    )
    assert both.values.tolist() == [[10, 11]]


def test_loading_again_replaces_the_tables():
    rt = Runtime()
    log = EventLog()
    assert load_billing(log, rt.billing).empty
    ns = rt.namespace(Writer, storage="sqlite")
    rt.run(ns.get(ns.id_from_name("a")).fetch(1))
    assert load_billing(log, rt.billing).statements.tolist() == [3]
    assert load_billing(log, rt.billing, months=2).statements.tolist() == [3]
    assert int(log.query("SELECT count(*) AS n FROM sql_billing").n[0]) == 3


# -- a Workbench's runtime bills straight into its event log ---------------------------------


def _writes(wb: Workbench, name: str, n: int) -> int:
    ns = wb.storage.namespace(Writer, storage="sqlite")
    return wb.storage.run(ns.get(ns.id_from_name(name)).fetch(n))


def test_wb_storage_bills_into_wb_logs_without_a_load():
    wb = Workbench(seed=0)
    _writes(wb, "a", 5)
    _writes(wb, "b", 2)
    add_synthetic_events(wb.logs, 10)
    records = wb.logs.query(
        "SELECT object_id, count(*) AS n, sum(rows_written) AS w FROM sql_billing GROUP BY 1 ORDER BY n"
    )
    assert records.n.tolist() == [4, 7]
    # The log and the runtime's billing read one table.
    assert wb.storage.billing.records()["seq"].tolist() == list(range(1, 12))
    both = wb.logs.query(
        "SELECT (SELECT count(*) FROM security_events) AS e, (SELECT count(*) FROM sql_billing) AS b"
    )
    assert both.values.tolist() == [[10, 11]]
    # Records billed since the last read show at the next one, through any reader.
    _writes(wb, "a", 1)
    assert wb.logs.con.execute("SELECT count(*) FROM sql_billing").fetchall() == [(14,)]
    assert wb.traffic.log is wb.logs  # the replays' events land beside them


def test_the_live_tables_have_load_billings_columns_and_costs():
    wb = Workbench(seed=0)
    _writes(wb, "a", 5)
    _writes(wb, "b", 2)
    rt = Runtime()
    ns = rt.namespace(Writer, storage="sqlite")
    rt.run(ns.get(ns.id_from_name("a")).fetch(5))
    rt.run(ns.get(ns.id_from_name("b")).fetch(2))
    loaded = EventLog()
    load_billing(loaded, rt.billing)
    for table in ("sql_billing", "sql_billing_costs"):
        shape = f"SELECT column_name, column_type FROM (DESCRIBE {table})"
        assert wb.logs.query(shape).equals(loaded.query(shape)), table
    live = wb.logs.query("SELECT * FROM sql_billing_costs")
    copied = loaded.query("SELECT * FROM sql_billing_costs ORDER BY namespace, object_id")
    assert live.drop(columns="object_id").equals(copied.drop(columns="object_id"))
    for row in live.to_dict("records"):
        expected = wb.storage.billing.cost(row["object_id"])
        assert {k: row[k] for k in expected} == expected


def test_the_costs_view_prices_usage_past_the_included_amounts():
    wb = Workbench(seed=0)
    bill = wb.storage.billing.sink("Big", "x" * 64, wb.clock.now_ms)
    bill.final("SELECT * FROM t", 20_000_000_000, 40_000_000)
    bill.final("UPDATE t SET x = 1", 10_000_000_000, 20_000_000)
    row = wb.logs.query("SELECT * FROM sql_billing_costs").to_dict("records")[0]
    expected = estimate_cost(30e9, 60e6)
    assert {k: row[k] for k in expected} == expected and row["total_usd"] == 15.0


def test_load_billing_refuses_a_log_a_runtime_bills_into():
    wb = Workbench(seed=0)
    _writes(wb, "a", 1)
    with pytest.raises(ValueError, match="live"):
        load_billing(wb.logs, Runtime().billing)
    assert int(wb.logs.query("SELECT count(*) AS n FROM sql_billing").n[0]) == 3


def test_storage_bills_from_a_thread_while_a_replay_writes_the_log():
    # The replay appends to the log's connection (and DuckDB checks chunks on worker
    # threads) while another thread runs SQL statements and reads the billing back:
    # DuckDB refuses one connection used by two threads at once, so billing must go
    # through its own cursor, under the log's lock.
    wb = Workbench(seed=3)
    zone = wb.create_zone("example.com")  # free: firewall rules only, a quick replay
    wb.firewall.create_rules(
        zone.id, [{"filter": {"expression": 'http.request.method eq "GET"'}, "action": "block"}]
    )
    wb.storage  # noqa: B018 - made before the threads start: made once either way
    started, done = threading.Event(), threading.Event()
    seen: list[int] = []
    errors: list[BaseException] = []

    def storage_work() -> None:
        try:
            while not done.is_set() or len(seen) < 3:
                _writes(wb, "t", 5)
                seen.append(int(wb.logs.query("SELECT count(*) AS n FROM sql_billing").n[0]))
                seen.append(wb.storage.billing.totals()["statements"])
                started.set()
        except BaseException as exc:  # noqa: BLE001 - re-raised by the test below
            errors.append(exc)
            started.set()

    worker = threading.Thread(target=storage_work)
    worker.start()
    started.wait(30)
    try:
        run = wb.traffic.replay(zone.id, generate(1500, seed=1), chunk_size=100, progress=False)
    finally:
        done.set()
        worker.join(60)
    assert errors == []
    rounds = len(seen) // 2
    # Each reader saw every statement billed before it: 7 per round.
    assert seen == [7 * (i // 2 + 1) for i in range(2 * rounds)]
    assert int(wb.logs.query("SELECT count(*) AS n FROM sql_billing").n[0]) == 7 * rounds
    assert wb.logs.count() == len(run.events) > 0
