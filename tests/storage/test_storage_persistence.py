"""Runtime(path=...): one SQLite file per object, restarts, and a SIGKILL in mid-burst."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from storage_helpers import Probe, call

from workbench.storage import ObjectAborted, Runtime

REPO = Path(__file__).resolve().parents[2]


def test_a_new_runtime_sees_every_acknowledged_write(tmp_path):
    rt = Runtime(path=tmp_path)
    ns = rt.namespace(Probe)
    stub = ns.get(ns.id_from_name("p"))

    async def write(ctx):
        ctx.storage.sql.exec("CREATE TABLE t(x)")
        ctx.storage.sql.exec("INSERT INTO t VALUES (42)")
        await ctx.storage.put({"a": 1, "b": [2, 3]})

    call(rt, stub, write)
    files = sorted(p.name for p in (tmp_path / "Probe").iterdir())
    assert files == [f"{stub.id}.history.sqlite", f"{stub.id}.sqlite"]
    rt.close()

    rt2 = Runtime(path=tmp_path)
    ns2 = rt2.namespace(Probe)
    stub2 = ns2.get(ns2.id_from_name("p"))
    got = call(
        rt2,
        stub2,
        lambda ctx: (ctx.storage.sql.exec("SELECT x FROM t").one(), ctx.storage.kv.get("b")),
    )
    assert got == ({"x": 42}, [2, 3])
    assert [str(i) for i in ns2.object_ids()] == [str(stub.id)]
    rt2.close()


def test_alarms_and_pending_restores_survive_a_restart(tmp_path):
    runs = []
    env = SimpleNamespace(on_alarm=lambda ctx, info: runs.append(info.retryCount))
    rt = Runtime(path=tmp_path)
    ns = rt.namespace(Probe, env=env)
    stub = ns.get(ns.id_from_name("p"))
    mark = call(rt, stub, lambda ctx: ctx.storage.getCurrentBookmark())
    call(rt, stub, lambda ctx: ctx.storage.put("k", "later"))
    call(rt, stub, lambda ctx: ctx.storage.setAlarm(rt.now() + 5000))
    call(rt, stub, lambda ctx: ctx.storage.onNextSessionRestoreBookmark(mark))
    rt.close()

    rt2 = Runtime(path=tmp_path, clock=rt.clock)
    ns2 = rt2.namespace(Probe, env=env)
    rt2.run(rt2.advance(5000))  # the alarm of an object not yet touched in this process
    assert runs == [0]
    stub2 = ns2.get(ns2.id_from_name("p"))
    assert call(rt2, stub2, lambda ctx: ctx.storage.get("k")) is None  # restored on start
    rt2.close()


def test_on_disk_objects_reopen_kv_backend(tmp_path):
    rt = Runtime(path=tmp_path)
    ns = rt.namespace(Probe, storage="kv")
    stub = ns.get(ns.id_from_name("k"))
    call(rt, stub, lambda ctx: ctx.storage.put("x", 1))
    with pytest.raises(ObjectAborted):
        call(rt, stub, lambda ctx: ctx.abort("bye"))
    rt.close()
    assert not list((tmp_path / "Probe").glob("*.history.sqlite"))
    rt2 = Runtime(path=tmp_path)
    ns2 = rt2.namespace(Probe, storage="kv")
    assert call(rt2, ns2.get(ns2.id_from_name("k")), lambda ctx: ctx.storage.get("x")) == 1
    rt2.close()


CHILD = textwrap.dedent(
    """
    import sys
    from workbench.storage import DurableObject, Runtime

    class Writer(DurableObject):
        async def fetch(self, i):
            s = self.ctx.storage
            s.put(f"k{i:06}", {"i": i, "pad": "x" * 2000})
            s.sql.exec("CREATE TABLE IF NOT EXISTS log(i INTEGER PRIMARY KEY, body)")
            s.sql.exec("INSERT INTO log VALUES (?, ?)", i, "y" * 1000)
            return i

    async def main():
        rt = Runtime(path=sys.argv[1])
        ns = rt.namespace(Writer)
        stub = ns.get(ns.id_from_name("burst"))
        i = 0
        while True:
            await stub.fetch(i)          # returns only once the write is durable
            print(i, flush=True)         # so every printed i is acknowledged
            i += 1

    import asyncio
    asyncio.run(main())
    """
)


def test_sigkill_mid_burst_loses_no_acknowledged_write(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    data = tmp_path / "data"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, str(script), str(data)], stdout=subprocess.PIPE, text=True, env=env
    )
    acked = -1
    deadline = time.monotonic() + 30
    try:
        while acked < 150 and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            acked = int(line)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert acked >= 150, "the child did not get going"

    files = sorted((data / "Writer").glob("*.sqlite"))
    for file in files:  # no corrupt file (a hot journal is rolled back on open)
        con = sqlite3.connect(file)
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        con.close()

    rt = Runtime(path=data)
    ns = rt.namespace(Probe, name="Writer")
    stub = ns.get(ns.id_from_name("burst"))

    def check(ctx):
        keys = ctx.storage.kv
        rows = ctx.storage.sql.exec("SELECT max(i) AS m, count(*) AS n FROM log").one()
        return [keys.get(f"k{i:06}") is not None for i in range(acked + 1)], rows

    present, rows = call(rt, stub, check)
    assert all(present)
    assert rows["m"] >= acked and rows["n"] == rows["m"] + 1
    # and point-in-time recovery still works on the recovered files
    mark = call(rt, stub, lambda ctx: ctx.storage.getBookmarkForTime(rt.now()))
    assert mark
    rt.close()


def test_a_runtime_with_its_own_clock_resumes_after_reopened_history(tmp_path):
    rt = Runtime(path=tmp_path)
    ns = rt.namespace(Probe)
    stub = ns.get(ns.id_from_name("p"))
    rt.run(rt.advance(86_400_000))

    async def write(ctx):
        await ctx.storage.put("k", 1)
        return await ctx.storage.getCurrentBookmark()

    mark = call(rt, stub, write)
    later = rt.now()
    rt.close()

    rt2 = Runtime(path=tmp_path)
    ns2 = rt2.namespace(Probe)
    assert rt2.now() == later  # not back at the default start
    stub2 = ns2.get(ns2.id_from_name("p"))
    assert call(rt2, stub2, lambda ctx: ctx.storage.getBookmarkForTime(later)) == mark
    rt2.close()
