"""The storage SQL billing log, loaded next to the security events with its cost estimate."""

from __future__ import annotations

from workbench.logs import EventLog, add_synthetic_events, load_billing
from workbench.storage import DurableObject, Runtime, estimate_cost


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
