"""Write notebooks/03-durable-object-storage.ipynb from the cells below (sources only, no outputs).

The notebook is committed *with* outputs so nbval compares them, and
tests/test_notebooks_sync.py checks that its cells match this script. After
editing this script, rebuild and re-execute every notebook from the repo root:

    make notebooks

or this one only:

    python notebooks/build/build_03_storage.py
    jupyter nbconvert --to notebook --execute --inplace notebooks/03-durable-object-storage.ipynb
    python -m pytest --nbval --nbval-current-env notebooks/03-durable-object-storage.ipynb

Cell ids are fixed (``storage-01``...), so a rebuild does not churn them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbbuild

PATH = Path(__file__).resolve().parent.parent / "03-durable-object-storage.ipynb"
PREFIX = "storage"

CELLS: list[tuple[str, str]] = [
    (
        "md",
        """\
# Durable Object storage

A *Durable Object* is a small stateful server: one instance per id, single-threaded,
with private transactional storage reached through `ctx.storage`. This notebook runs
your own Python objects against the workbench's runtime and shows, step by step,

1. the key-value API and what a value may be;
2. what is atomic and what can interleave at an `await` (write coalescing, the input gate);
3. explicit transactions;
4. alarms, including retries;
5. the SQL API with its `rowsRead` / `rowsWritten` billing counters;
6. point-in-time recovery: a restore, and then undoing it.

Time is virtual (the Workbench's clock), so every output below is the same on every run.""",
    ),
    (
        "code",
        """\
from workbench import Workbench
from workbench.storage import DurableObject

wb = Workbench(seed=0)
rt = wb.storage                        # the Workbench's runtime: on its clock, billing into its log


class Counter(DurableObject):
    async def fetch(self, request):
        n = (await self.ctx.storage.get("n")) or 0
        await self.ctx.storage.put("n", n + 1)
        return n + 1


counters = rt.namespace(Counter, storage="sqlite")
alice = counters.get(counters.id_from_name("alice"))
[await alice.fetch("hit") for _ in range(3)]""",
    ),
    (
        "md",
        """\
## 1. Key-value storage

Keys are strings (at most 2,048 UTF-8 bytes) ordered by their UTF-8 bytes; values
are copied in and out (at most 131,072 bytes stored). `list()` takes `start`,
`startAfter`, `end`, `prefix`, `reverse` and `limit`.""",
    ),
    (
        "code",
        """\
from datetime import datetime, timezone


class Notebook(DurableObject):
    async def fetch(self, job):
        return await job(self.ctx.storage)


notes = rt.namespace(Notebook, storage="sqlite")
box = notes.get(notes.id_from_name("demo"))


async def fill(storage):
    await storage.put({
        "user:ada": {"langs": {"python", "sql"}, "since": datetime(2024, 5, 1, tzinfo=timezone.utc)},
        "user:bob": ["a", "list", 3],
        "user:émile": b"bytes too",
        "config": {"retries": 3},
    })
    return {
        "one": await storage.get("config"),
        "many": await storage.get(["user:bob", "missing", "config"]),
        "prefix, reverse, limit": list(await storage.list({"prefix": "user:", "reverse": True, "limit": 2})),
        "deleted": await storage.delete(["config", "nope"]),
    }

await box.fetch(fill)""",
    ),
    (
        "code",
        """\
from workbench.storage import DataCloneError, StorageLimitError


async def bad_inputs(storage):
    errors = []
    for attempt in (lambda: storage.put("k" * 2049, 1),
                    lambda: storage.put("f", lambda: 1),
                    lambda: storage.put({f"k{i}": i for i in range(129)}),
                    lambda: storage.put(42, "not a str key")):
        try:
            attempt()
        except (StorageLimitError, DataCloneError, TypeError) as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
    return errors

for line in await box.fetch(bad_inputs):
    print(line[:110])""",
    ),
    (
        "md",
        """\
## 2. Atomicity and interleaving

Three requests arrive at once and each does *read, then write*. While a storage read
is in progress no other event is delivered (the **input gate**), so no update is lost.
With `allowConcurrency=True` the reads let the other requests in, and two of the
three increments are lost.""",
    ),
    (
        "code",
        """\
import asyncio


class Tally(DurableObject):
    async def fetch(self, allow_concurrency):
        n = (await self.ctx.storage.get("n", {"allowConcurrency": allow_concurrency})) or 0
        await self.ctx.storage.put("n", n + 1)
        return n + 1


tallies = rt.namespace(Tally)
for allow in (False, True):
    stub = tallies.get(tallies.id_from_name(f"allowConcurrency={allow}"))
    results = await asyncio.gather(*(stub.fetch(allow) for _ in range(3)))
    print(f"allowConcurrency={allow}: responses {results}")""",
    ),
    (
        "md",
        """\
Writes issued with no `await` between them commit as **one atomic batch** (write
coalescing), and a response only leaves the object once its writes are on disk (the
**output gate**). Here the disk refuses the next write: the whole batch is lost, the
object is reset, and the caller gets an error instead of a response that would lie.""",
    ),
    (
        "code",
        """\
from workbench.storage import StorageWriteFailed


async def transfer(storage):
    storage.put("checking", 50)      # no await in between:
    storage.put("savings", 150)      # one atomic batch
    return "moved 50"

await box.fetch(lambda s: s.put({"checking": 100, "savings": 100}))
rt.inject_write_failure(box)
try:
    await box.fetch(transfer)
except StorageWriteFailed as exc:
    print("caller sees:", exc)
await box.fetch(lambda s: s.get(["checking", "savings"]))""",
    ),
    (
        "md",
        """\
## 3. Transactions

`transaction(closure)` runs the closure atomically: an exception undoes every write,
and `txn.rollback()` discards them while the call still returns normally.""",
    ),
    (
        "code",
        """\
async def pay(storage, amount):
    async def closure(txn):
        balance = await txn.get("checking")
        await txn.put("checking", balance - amount)
        if balance - amount < 0:
            txn.rollback()
            return f"refused: balance would be {balance - amount}"
        return f"paid {amount}, balance {balance - amount}"
    return await storage.transaction(closure)

print(await box.fetch(lambda s: pay(s, 30)))
print(await box.fetch(lambda s: pay(s, 500)))
await box.fetch(lambda s: s.get("checking"))""",
    ),
    (
        "md",
        """\
## 4. Alarms

One alarm per object, in epoch milliseconds. `await rt.advance(ms)` moves virtual time
and runs what falls due. A handler that raises is retried with backoff (2 s, 4 s, …),
and until the retry starts the alarm still counts as set.""",
    ),
    (
        "code",
        """\
class Reminder(DurableObject):
    attempts = []

    async def fetch(self, delay_ms):
        await self.ctx.storage.setAlarm(rt.now() + delay_ms)
        return await self.ctx.storage.getAlarm()

    async def next_alarm(self):             # called as `await stub.next_alarm()`
        return await self.ctx.storage.getAlarm()

    async def alarm(self, info):
        Reminder.attempts.append((rt.now() - start, info.retryCount, info.isRetry))
        if len(Reminder.attempts) < 3:
            raise RuntimeError("mail server down")


reminders = rt.namespace(Reminder)
reminder = reminders.get(reminders.id_from_name("weekly"))
start = rt.now()
print("alarm set for", await reminder.fetch(1_000) - start, "ms from now")
await rt.advance(1_000)
print("first attempt failed; the retry is set for", await reminder.next_alarm() - start, "ms")
await rt.advance(10_000)
for offset, retry_count, is_retry in Reminder.attempts:
    print(f"ran at +{offset:>5} ms  retryCount={retry_count} isRetry={is_retry}")""",
    ),
    (
        "md",
        """\
## 5. SQL, its counters and its bill

On the SQLite backend `ctx.storage.sql.exec()` runs statements eagerly and returns a
cursor. `rowsRead` and `rowsWritten` count rows the way the platform bills them, and
every statement adds a record to the Workbench's event log (`wb.logs`, table `sql_billing`),
which you can query with DuckDB next to the security events.""",
    ),
    (
        "code",
        """\
class Shop(DurableObject):
    async def fetch(self, query):
        cursor = self.ctx.storage.sql.exec(*query)
        rows = cursor.toArray()
        return rows, cursor.rowsRead, cursor.rowsWritten


shops = rt.namespace(Shop)
shop = shops.get(shops.id_from_name("shop"))
statements = [
    ("CREATE TABLE orders(id INTEGER PRIMARY KEY, customer TEXT, total REAL)",),
    ("INSERT INTO orders(customer, total) VALUES ('ada', 12.5), ('bob', 3), ('ada', 7), ('cy', 40)",),
    ("CREATE INDEX by_customer ON orders(customer)",),
    ("SELECT * FROM orders WHERE id = ?", 2),
    ("SELECT customer, sum(total) AS spent FROM orders GROUP BY customer ORDER BY spent DESC",),
    ("SELECT * FROM orders WHERE customer = ?", "ada"),
    ("UPDATE orders SET total = total * 2 WHERE customer = 'ada'",),
]
for query in statements:
    rows, read, written = await shop.fetch(query)
    print(f"{query[0][:58]:<58} rows={len(rows)} rowsRead={read:>2} rowsWritten={written}")""",
    ),
    (
        "code",
        """\
from workbench.storage import estimate_cost

print(wb.logs.query(
    "SELECT namespace, count(*) AS statements, sum(rows_read)::BIGINT AS rows_read, "
    "sum(rows_written)::BIGINT AS rows_written FROM sql_billing GROUP BY namespace ORDER BY namespace"
).to_string(index=False))
print()
print("a month of 30 billion reads and 80 million writes:", estimate_cost(30e9, 80e6))""",
    ),
    (
        "md",
        """\
## 6. Point-in-time recovery

Every committed batch is kept in a change log with checkpoints, so the object can go
back to any point of the last 30 days. Take a bookmark, make a mistake, ask for a
restore (it returns the bookmark that undoes it), restart the object, and look.""",
    ),
    (
        "code",
        """\
import inspect

from workbench.storage import ObjectAborted


class Ledger(DurableObject):
    async def fetch(self, job):                       # runs job(ctx); awaits it if needed
        result = job(self.ctx)
        return await result if inspect.isawaitable(result) else result


async def restart(stub):
    try:
        await stub.fetch(lambda ctx: ctx.abort("restart to apply the restore"))
    except ObjectAborted:
        pass


async def orders_count(ctx):
    return ctx.storage.sql.exec("SELECT count(*) AS n FROM orders").one()["n"], await ctx.storage.get("owner")


ledgers = rt.namespace(Ledger)
ledger = ledgers.get(ledgers.id_from_name("books"))


async def setup(ctx):
    ctx.storage.sql.exec("CREATE TABLE orders(id INTEGER PRIMARY KEY, total REAL)")
    for total in (10, 20, 30):
        ctx.storage.sql.exec("INSERT INTO orders(total) VALUES (?)", total)
    await ctx.storage.put("owner", "ada")
    return await ctx.storage.getCurrentBookmark()

good = await ledger.fetch(setup)
await rt.advance(3_600_000)                          # an hour later...
await ledger.fetch(lambda ctx: ctx.storage.sql.exec("DELETE FROM orders"))   # the mistake
await ledger.fetch(lambda ctx: ctx.storage.put("owner", "mallory"))
print("after the mistake:", await ledger.fetch(orders_count))

undo = await ledger.fetch(lambda ctx: ctx.storage.onNextSessionRestoreBookmark(good))
print("restore pending; undo bookmark", undo, "sorts after", good, ":", undo > good)
await restart(ledger)
print("after the restart:", await ledger.fetch(orders_count))""",
    ),
    (
        "code",
        """\
await ledger.fetch(lambda ctx: ctx.storage.onNextSessionRestoreBookmark(undo))
await restart(ledger)
print("restore undone:", await ledger.fetch(orders_count))
hour_ago = rt.now() - 3_600_000 + 1
print("bookmark for an hour ago:", await ledger.fetch(lambda ctx: ctx.storage.getBookmarkForTime(hour_ago)))""",
    ),
    (
        "md",
        """\
## The storage and bookmark inspector

`StorageInspector(wb)` browses the same runtime, `wb.storage`, in five tabs: **KV**
(values shown and edited as JSON; bytes, dates, sets and maps are tagged objects such
as `{"$bytes": "aGk="}`), **SQL** (rows and the `rowsRead` / `rowsWritten` counters),
**Alarm**, **Bookmarks** (every committed batch on a chart over virtual time, each
labelled with what it changed, then diff, restore and undo) and **Billing** (per
statement kind, with the cost estimate, read from `wb.logs`).

The next two cells drive a *separate* instance, `demo`, from Python and print what it
shows: an order added through the SQL console, the timeline labels, and the diff from
the moment before the mistake of section 6 (the `DELETE`) to now. Restores are marked
`restore to seq N` in the timeline, and the orders deleted by the mistake show as removed
and the two new ones as added, even where SQLite gave a new order a freed rowid: matching
rows by rowid alone would call that an update. The panel at the end
of the notebook is a fresh instance that nothing has clicked: after *Run All* it opens
on the ledger, on the KV tab, with empty inputs and no outcomes.""",
    ),
    (
        "code",
        """\
from workbench.widgets import StorageInspector

demo = StorageInspector(wb, namespace="Ledger", object_name="books")   # driven from Python below
demo.sql_text.value = "INSERT INTO orders(total) VALUES (99), (100) RETURNING id, total"
demo.sql_run_button.click()
print(demo.sql_status.text)
print(demo.sql_rows)
print()
for label, bookmark in demo.bookmark_a.options:      # the pickers' labels say what each batch did
    print(label)""",
    ),
    (
        "code",
        """\
labels = [label for label, _ in demo.bookmark_a.options]
mistake = next(i for i, label in enumerate(labels) if "orders -3 rows" in label)
demo.bookmark_a.value = demo.bookmark_a.options[mistake - 1][1]   # the moment before the mistake
demo.diff_button.click()                                          # ... to the newest bookmark
print(demo.diff_status.text)
for line in demo.diff_lines:
    print(line)
print()
for row in demo.billing_rows:
    print(row)""",
    ),
    (
        "md",
        """\
The timeline the Bookmarks tab draws, as an Altair chart (one row per batch, so batches
that share a virtual time stay apart; "from" marks the moment picked above):""",
    ),
    (
        "code",
        """\
import altair as alt

from workbench.widgets.storage_charts import timeline_chart

# The Vega-Lite JSON alone (no HTML with a random element id), so nbval compares it exactly.
alt.renderers.enable("mimetype")
timeline_chart(demo.entries, marks={demo.entries[mistake - 1]["seq"]: "from"})""",
    ),
    (
        "md",
        """\
And the panel itself, fresh (the demo above used its own instance). Open the
**Bookmarks** tab, pick a row as *from*, press **Diff**; try a typo in the KV tab's
JSON value to see how it is reported.""",
    ),
    (
        "code",
        """\
panel = StorageInspector(wb, namespace="Ledger", object_name="books")
panel""",
    ),
]

if __name__ == "__main__":
    sys.exit(nbbuild.write(CELLS, PREFIX, PATH))
