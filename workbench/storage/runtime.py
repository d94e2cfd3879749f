"""The Durable Object runtime: namespaces, ids, stubs, input and output gates, alarms.

    >>> from workbench.storage import Runtime, DurableObject
    >>> class Counter(DurableObject):
    ...     async def fetch(self, request):
    ...         n = (await self.ctx.storage.get("n")) or 0
    ...         await self.ctx.storage.put("n", n + 1)
    ...         return n + 1
    >>> rt = Runtime()
    >>> ns = rt.namespace(Counter, storage="sqlite")
    >>> stub = ns.get(ns.id_from_name("alice"))
    >>> rt.run(stub.fetch("a")), rt.run(stub.fetch("b"))
    (1, 2)

Each object lives in its own SQLite database (a file under ``path`` when
given). One :class:`ObjectHost` per object keeps the database, the current
instance and the input gate; the instance is rebuilt after ``ctx.abort()`` or
a failed write. ``ctx`` and ``ctx.storage`` see their host only as a
:class:`~workbench.storage.StorageHost`.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import re
import threading
from collections.abc import Awaitable, Coroutine
from pathlib import Path
from typing import Any

from workbench.core.clock import VirtualClock
from workbench.core.text import utf8_problem

from ._ids import ObjectId
from ._objects import AlarmInvocationInfo, DurableObjectState
from .billing import BillingLog, BillSink
from .ctx_storage import DurableObjectStorage
from .database import ObjectDatabase
from .errors import (
    BookmarkError,
    DurableObjectReset,
    ObjectAborted,
    StorageError,
    StorageWriteFailed,
    TextEncodingError,
)
from .history import History

MAX_ALARM_RETRIES = 6
FIRST_RETRY_MS = 2_000
DEFAULT_COMPATIBILITY_DATE = "2026-01-01"
DELETE_ALL_DELETES_ALARM_FROM = "2026-02-24"
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def retry_delay_ms(retry_count: int) -> int:
    """Backoff before retry ``retry_count`` (1, 2, ...): 2 s, 4 s, 8 s, ..."""
    return FIRST_RETRY_MS * 2 ** (retry_count - 1)


class ObjectHost:
    """Everything the runtime keeps for one object id across instances (a ``StorageHost``)."""

    def __init__(self, namespace: Namespace, object_id: ObjectId, order: int) -> None:
        self.namespace, self.id, self.order = namespace, object_id, order
        self.id_str = str(object_id)
        self.runtime = namespace.runtime
        self.sql_backend = namespace.storage == "sqlite"
        path = namespace.folder / f"{object_id}.sqlite" if namespace.folder else None
        self.db = ObjectDatabase(path, sql=self.sql_backend, clock=self.runtime.clock)
        self.db.on_failure = self.reset
        # one call per SQL statement: the record goes straight onto the log's pending list
        self._bill = self.runtime.billing.sink(
            self.namespace.name, self.id_str, self.runtime.clock.now_ms
        )
        self.db.on_alarm_change = self._alarm_changed
        self.generation = 0
        self.instance: Any = None
        self.ctx: DurableObjectState | None = None
        self.reset_error: BaseException | None = None
        self._gate = 0
        self._waiters: list[asyncio.Future[None]] = []
        self.in_flight = 0
        self.alarm_running = False
        self.alarm_log: list[dict[str, Any]] = []
        if self.db.history is not None:  # a reopened file: its own clock starts no earlier
            self.runtime._seen_time(self.db.history.newest_time())
        self._alarm_changed(self.db.get_alarm())

    # -- what ctx and ctx.storage ask of the runtime ----------------------------------
    def now(self) -> int:
        return self.runtime.now()

    @property
    def delete_all_deletes_alarm(self) -> bool:
        return self.runtime.delete_all_deletes_alarm

    @property
    def billing_sink(self) -> BillSink:
        """Where this object's SQL statements are billed."""
        return self._bill

    def background(self, awaitable: Awaitable[Any]) -> None:
        self.runtime._background(asyncio.ensure_future(awaitable))

    # -- gates ----------------------------------------------------------------------
    def gate_close(self) -> None:
        self._gate += 1

    def gate_open(self) -> None:
        self._gate = max(self._gate - 1, 0)
        if not self._gate:
            waiters, self._waiters = self._waiters, []
            for fut in waiters:
                if not fut.done():
                    fut.set_result(None)

    async def _wait_gate(self) -> None:
        while self._gate:
            fut = asyncio.get_running_loop().create_future()
            self._waiters.append(fut)
            await fut

    # -- lifecycle -------------------------------------------------------------------
    def _ensure_instance(self) -> Any:
        if self.instance is None:
            history = self.db.history
            pending = history.pending() if history else None
            if history is not None and pending:
                self._restore(history, pending)
            self.ctx = DurableObjectState(self)
            self.instance = self.namespace.cls(self.ctx, self.namespace.env)
        return self.instance

    def _restore(self, history: History, pending: str) -> None:
        """Apply the restore asked for by ``onNextSessionRestoreBookmark``, checked again now."""
        try:
            seq = history.resolve(pending, self.now())
        except BookmarkError as exc:
            # Virtual time moved on while the restore waited, and its point left the window
            # (or the history): restoring it now would bring back data from outside the
            # window. The restore is dropped, so the object is not stuck, and the event that
            # would have seen it is told.
            self.db.begin()
            history.set_pending(None)
            self.flush()
            raise BookmarkError(
                f"the restore asked for by onNextSessionRestoreBookmark() was cancelled: {exc}"
            ) from None
        self.db.restore(seq)

    def reset(self, error: BaseException | None = None) -> None:
        """Drop the instance (uncommitted writes are lost); the next event builds a new one."""
        self.generation += 1
        self.instance = self.ctx = None
        self.reset_error = error
        self.db.abort_batch()
        self.db.close_cursors()
        self._gate = 1
        self.gate_open()

    def flush(self) -> None:
        """Commit pending writes now; a failure resets the object and re-raises."""
        try:
            self.db.flush()
        except StorageWriteFailed as exc:
            self.reset(exc)
            raise

    def storage(self) -> DurableObjectStorage:
        """The object's storage for tools outside its events (the inspector); flush after use."""
        if self.ctx is not None:
            return self.ctx.storage
        return DurableObjectStorage(self)

    def restart(self) -> None:
        """Rebuild the instance now (what ``ctx.abort()`` leads to), applying a pending restore."""
        self.flush()
        self.reset(None)
        self._ensure_instance()

    def pending_restore(self) -> str | None:
        """The bookmark the next restart restores to, if one is pending (else None)."""
        history = self.db.history
        return history.pending() if history else None

    def restore_now(self, bookmark: str) -> str:
        """Restore the object to ``bookmark`` and restart it at once (what the dashboard's
        restore does); returns the bookmark that undoes it."""
        storage = self.storage()
        undo: str = storage.onNextSessionRestoreBookmark(bookmark).result()
        self.restart()
        return undo

    def has_alarm_handler(self) -> bool:
        return callable(getattr(self.namespace.cls, "alarm", None))

    async def deliver(self, method: str, *args: Any) -> Any:
        """Deliver one event through the input gate and its result through the output gate."""
        if self._gate:  # (tested first: the gate is usually open, and awaiting costs)
            await self._wait_gate()
        if self.instance is None:
            self._ensure_instance()
            await self._wait_gate()
        instance = self._ensure_instance()
        generation = self.generation
        handler = getattr(instance, method, None)
        if handler is None:
            raise StorageError(f"{type(instance).__name__} has no {method}() handler")
        self.in_flight += 1
        try:
            try:
                result = await handler(*args)
            except ObjectAborted:
                raise
            except BaseException:
                if generation == self.generation:
                    self.flush()  # writes made before the error still count
                raise
            if generation != self.generation:
                raise self.reset_error or DurableObjectReset("the Durable Object was reset")
            if self.db.needs_confirm:  # the output gate: hold the result until durable
                self.flush()
            return result
        finally:
            self.in_flight -= 1
            if not self.in_flight and self.db.cursors:  # like a garbage collection at the
                self.db.close_cursors()  # end of the request

    # -- alarms ------------------------------------------------------------------------
    def _alarm_changed(self, t_ms: int | None) -> None:
        self.runtime._alarm_changed(self, t_ms)

    async def run_alarm(self) -> None:
        retry = self.db.alarm_retry_count()
        scheduled = self.db.get_alarm()
        self.alarm_running = True
        try:
            await self._wait_gate()
            try:
                self._ensure_instance()
            except BookmarkError as exc:  # a cancelled restore: the handler runs on the state as is
                cancelled: str | None = str(exc)
            else:
                cancelled = None
            self.db.set_alarm(None)
            self.flush()
            ops = self.db.alarm_ops  # the handler's own setAlarm/deleteAlarm stands
            info = AlarmInvocationInfo(retryCount=retry, isRetry=retry > 0)
            entry: dict[str, Any] = {
                "t_ms": self.runtime.now(),
                "scheduled_ms": scheduled,
                "retryCount": retry,
            }
            if cancelled:
                entry["restore"] = cancelled
            self.alarm_log.append(entry)
            try:
                await self.deliver("alarm", info)
            except Exception as exc:  # noqa: BLE001 - a failed handler is retried
                entry["result"] = f"failed: {type(exc).__name__}: {exc}"
                if self.db.alarm_ops == ops and retry < MAX_ALARM_RETRIES:
                    t = self.runtime.now() + retry_delay_ms(retry + 1)
                    self.db.set_alarm(t, retry=retry + 1)
                    self.flush()
                    entry["retry_at_ms"] = t
            else:
                entry["result"] = "ok"
        finally:
            self.alarm_running = False


class Namespace:
    """A Durable Object class bound to a backend: ``id_from_name``, ``new_unique_id``, ``get``."""

    def __init__(self, runtime: Runtime, cls: type, storage: str, name: str, env: Any) -> None:
        if storage not in ("sqlite", "kv"):
            raise ValueError(f"storage must be 'sqlite' or 'kv', not {storage!r}")
        self.runtime, self.cls, self.storage, self.name, self.env = runtime, cls, storage, name, env
        self.folder = runtime.path / name if runtime.path else None
        if self.folder:
            self.folder.mkdir(parents=True, exist_ok=True)
        self.hosts: dict[ObjectId, ObjectHost] = {}
        if self.folder:  # objects already on disk: their alarms must still fire
            for file in sorted(self.folder.glob("*.sqlite")):
                if re.fullmatch(r"[0-9a-f]{64}", file.stem):
                    self.host(ObjectId(file.stem))

    def id_from_name(self, name: str) -> ObjectId:
        """The same name always gives the same id (within this namespace)."""
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        problem = None if name.isascii() else utf8_problem(name)
        if problem is not None:  # the name is hashed as UTF-8, like every text entering storage
            raise TextEncodingError(f"id_from_name(): the name {problem}, so it was refused")
        digest = hashlib.sha256(f"{self.name}\x00{name}".encode()).hexdigest()
        return ObjectId(digest, name)

    def new_unique_id(self) -> ObjectId:
        """A fresh id from the runtime's seeded generator."""
        return ObjectId(f"{self.runtime._rng.getrandbits(256):064x}")

    def id_from_string(self, hex_id: str) -> ObjectId:
        return ObjectId(hex_id)

    idFromName, newUniqueId, idFromString = id_from_name, new_unique_id, id_from_string  # noqa: N815

    def host(self, object_id: ObjectId) -> ObjectHost:
        known = self.hosts.get(object_id)
        if known is None:
            known = self.hosts[object_id] = ObjectHost(self, object_id, self.runtime._next_order())
        elif object_id.name and not known.id.name:
            known.id = object_id  # an object found on disk, now known by name
        return known

    def get(self, object_id: ObjectId) -> Stub:
        """A stub that delivers events to the one instance of ``object_id``."""
        if not isinstance(object_id, ObjectId):
            raise TypeError(f"get() takes an ObjectId, not {type(object_id).__name__}")
        return Stub(self.host(object_id))

    def object_ids(self) -> list[ObjectId]:
        return [h.id for h in sorted(self.hosts.values(), key=lambda h: h.order)]


class Stub:
    """Sends events to one object: ``await stub.fetch(request)`` or ``await stub.method(*args)``."""

    def __init__(self, host: ObjectHost) -> None:
        self._host = host
        self.id = host.id
        self.name = host.id.name

    async def fetch(self, request: Any = None) -> Any:
        return await self._host.deliver("fetch", request)

    def __getattr__(self, method: str) -> Any:
        if method.startswith("_"):
            raise AttributeError(method)

        async def call(*args: Any) -> Any:
            return await self._host.deliver(method, *args)

        return call


class Runtime:
    """Runs Durable Objects on a virtual clock (its own, or a Workbench's ``wb.clock``).

    Standalone, it keeps its own clock and :class:`BillingLog`. A Workbench makes
    one, ``wb.storage``, on ``wb.clock`` and billing into ``wb.logs``.
    """

    def __init__(
        self,
        *,
        clock: VirtualClock | None = None,
        path: str | Path | None = None,
        seed: int = 0,
        compatibility_date: str = DEFAULT_COMPATIBILITY_DATE,
        compatibility_flags: list[str] | tuple[str, ...] = (),
        billing: BillingLog | None = None,
    ) -> None:
        if not isinstance(compatibility_date, str) or not _DATE.match(compatibility_date):
            raise ValueError(
                f"compatibility_date must look like YYYY-MM-DD, got {compatibility_date!r}"
            )
        self.clock = clock or VirtualClock()
        self._owns_clock = clock is None
        self.path = Path(path) if path is not None else None
        self.compatibility_date = compatibility_date
        self.compatibility_flags = tuple(compatibility_flags)
        self.billing = billing or BillingLog()
        self.namespaces: dict[str, Namespace] = {}
        self._rng = random.Random(seed)
        self._alarms: dict[ObjectHost, int] = {}
        self._tasks: set[asyncio.Future[Any]] = set()
        self._draining = False
        self._order = 0
        self.clock.on_advance(lambda _ms: self._kick())

    @property
    def delete_all_deletes_alarm(self) -> bool:
        """True from compatibility date 2026-02-24 (flags can force either way)."""
        if "delete_all_preserves_alarm" in self.compatibility_flags:
            return False
        if "delete_all_deletes_alarm" in self.compatibility_flags:
            return True
        return self.compatibility_date >= DELETE_ALL_DELETES_ALARM_FROM

    def _seen_time(self, t_ms: int) -> None:
        """A runtime with its own clock never starts before history it reopens."""
        if self._owns_clock and t_ms > self.clock.now_ms():
            self.clock.set_ms(t_ms)

    def _next_order(self) -> int:
        self._order += 1
        return self._order

    def now(self) -> int:
        """Virtual time in integer epoch milliseconds."""
        return self.clock.now_ms()

    def namespace(
        self, cls: type, storage: str = "sqlite", name: str | None = None, env: Any = None
    ) -> Namespace:
        """Bind a DurableObject class to a backend (``"sqlite"`` or ``"kv"``)."""
        name = name or cls.__name__
        existing = self.namespaces.get(name)
        if existing is None:
            self.namespaces[name] = existing = Namespace(self, cls, storage, name, env)
        elif existing.cls is not cls or existing.storage != storage:
            # A namespace's class and backend are fixed, as a binding's are on the platform.
            raise ValueError(
                f"namespace {name!r} is already bound to {existing.cls.__name__} with "
                f"storage={existing.storage!r}; pass name= to bind another"
            )
        return existing

    # -- alarms ---------------------------------------------------------------------
    def _alarm_changed(self, host: ObjectHost, t_ms: int | None) -> None:
        if t_ms is None:
            self._alarms.pop(host, None)
        else:
            self._alarms[host] = t_ms
            if t_ms <= self.now():
                self._kick()

    def alarms(self) -> dict[ObjectId, int]:
        """The set alarms: object id to epoch milliseconds."""
        return {h.id: t for h, t in self._alarms.items()}

    def _next_due(self, until: int) -> ObjectHost | None:
        due = [
            (t, h.order, h) for h, t in self._alarms.items() if t <= until and not h.alarm_running
        ]
        return min(due)[2] if due else None

    def _background(self, task: asyncio.Future[Any]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _kick(self) -> None:
        if self._draining or self._next_due(self.now()) is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._background(loop.create_task(self._drain(self.now())))

    async def _drain(self, until: int) -> None:
        if self._draining:
            return
        self._draining = True
        try:
            for _ in range(100_000):
                host = self._next_due(until)
                if host is None:
                    return
                t = self._alarms[host]
                if t > self.now():
                    self.clock.set_ms(t)
                await host.run_alarm()
            raise RuntimeError("more than 100,000 alarms ran in one advance: an alarm loop?")
        finally:
            self._draining = False

    async def settle(self) -> None:
        """Wait for background work: alarms already due, ``waitUntil`` tasks."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        await self._drain(self.now())

    async def advance(self, ms: int) -> int:
        """Move virtual time forward by ``ms``, running every alarm that falls due; returns now."""
        if isinstance(ms, bool) or not isinstance(ms, int) or ms < 0:
            raise ValueError(f"advance(ms) takes a non-negative int, got {ms!r}")
        await self.settle()
        target = self.now() + ms
        await self._drain(target)
        self._draining = True
        try:
            self.clock.advance(milliseconds=target - self.now())
        finally:
            self._draining = False
        await self.settle()
        return self.now()

    def inject_write_failure(self, stub: Stub, reason: str = "injected disk failure") -> None:
        """Make the next commit of ``stub``'s object fail as if the disk refused it (for tests)."""
        stub._host.db.fail_next_commit = reason

    # -- running coroutines from synchronous code --------------------------------------
    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Run ``coro`` to completion from synchronous code (a thread is used inside a running loop)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self._with_settle(coro))
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["value"] = asyncio.run(self._with_settle(coro))
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                box["error"] = exc

        thread = threading.Thread(target=target)
        thread.start()
        thread.join()
        if "error" in box:
            raise box["error"]
        return box.get("value")

    async def _with_settle(self, coro: Coroutine[Any, Any, Any]) -> Any:
        result = await coro
        await self.settle()
        return result

    def close(self) -> None:
        """Close every object's database (the files stay on disk)."""
        for ns in self.namespaces.values():
            for host in ns.hosts.values():
                host.db.close()
