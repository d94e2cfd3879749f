"""The billing log's buffer read from another thread: no record lost, repeated or overwritten.

Under a Workbench the event log may be read (and the buffer flushed) on any thread
while the runtime bills statements on its own; ``settle`` rewrites a record in place
while a flush removes the ones it wrote.
"""

from __future__ import annotations

import sys
import threading
import time

import duckdb

from workbench.storage import BillingLog


class Cursor:
    """Counters read through properties that yield the GIL, as a real cursor's may: this
    widens the moment between settle finding its record and rewriting it."""

    def __init__(self, read: int, written: int) -> None:
        self._read, self._written = read, written

    @property
    def rows_read(self) -> int:
        time.sleep(0)
        return self._read

    @property
    def rows_written(self) -> int:
        return self._written


def test_flushes_on_another_thread_keep_every_record_once_and_right():
    log = BillingLog()
    bill = log.sink("Probe", "o" * 64, lambda: 0)
    n = 4000
    done = threading.Event()
    errors: list[BaseException] = []

    def statements() -> None:
        try:
            for i in range(n):
                if i % 3 == 0:
                    bill.final(f"s{i}", i, i % 7)
                else:
                    cursor = Cursor(i, i % 7)
                    bill.settle(bill.open(f"s{i}", cursor), cursor)
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            errors.append(exc)
        finally:
            done.set()

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        worker = threading.Thread(target=statements)
        worker.start()
        flushes = 0
        while not done.is_set():
            log.flush()
            flushes += 1
        worker.join()
    finally:
        sys.setswitchinterval(switch)
    assert errors == [] and flushes > 1
    records = log.records()
    assert records.statement.tolist() == [f"s{i}" for i in range(n)]
    assert records.seq.tolist() == list(range(1, n + 1))
    assert records.rows_read.tolist() == list(range(n))
    assert records.rows_written.tolist() == [i % 7 for i in range(n)]


def test_a_log_on_a_given_connection_keeps_its_table_there():
    con = duckdb.connect()
    log = BillingLog(con.cursor())
    log.sink("Probe", "o" * 64, lambda: 5).final("SELECT 1", 0, 0)
    assert log.totals() == {"statements": 1, "rows_read": 0, "rows_written": 0}
    assert con.execute("SELECT statement, t_ms FROM sql_billing").fetchall() == [("SELECT 1", 5)]
