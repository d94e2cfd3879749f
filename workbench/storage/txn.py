"""Awaitable results, eager coroutines, the transaction object and the synchronous KV API.

A storage method does its work when it is called and returns a :class:`Done`,
an awaitable that already holds the result (or the error):

    >>> import asyncio
    >>> async def main():
    ...     op = Done(41)          # the work is already done
    ...     return await op + 1    # awaiting only hands over the result
    >>> asyncio.run(main())
    42
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Generator, Iterator
from typing import TYPE_CHECKING, Any

from .errors import StorageError, TransactionError

if TYPE_CHECKING:
    from .ctx_storage import DurableObjectStorage


class Done:
    """An awaitable holding a finished storage operation's result or error."""

    __slots__ = ("_value", "_exc", "_yield")

    def __init__(
        self, value: Any = None, exc: BaseException | None = None, yield_: bool = False
    ) -> None:
        self._value, self._exc, self._yield = value, exc, yield_

    def __await__(self) -> Generator[None, None, Any]:
        if self._yield:  # allowConcurrency: let other events in while "reading"
            yield
        if self._exc is not None:
            raise self._exc
        return self._value

    def result(self) -> Any:
        """The value without awaiting (raises the operation's error)."""
        if self._exc is not None:
            raise self._exc
        return self._value

    def __repr__(self) -> str:
        return f"Done({self._exc!r})" if self._exc else f"Done({self._value!r})"


class _Resume:
    """Drive the rest of a coroutine that was started eagerly and then suspended."""

    def __init__(self, coro: Any, first: Any) -> None:
        self.coro, self.first = coro, first

    def __await__(self) -> Generator[Any, Any, Any]:
        pending = self.first
        while True:
            try:
                sent = yield pending
            except BaseException as exc:  # noqa: BLE001 - forwarded into the coroutine
                try:
                    pending = self.coro.throw(exc)
                except StopIteration as stop:
                    return stop.value
                continue
            try:
                pending = self.coro.send(sent)
            except StopIteration as stop:
                return stop.value


async def _drive(resume: _Resume) -> Any:
    return await resume


def start_now(coro: Any) -> Awaitable[Any]:
    """Run ``coro`` up to its first real suspension now; the rest runs as a task."""
    try:
        first = coro.send(None)
    except StopIteration as stop:
        return Done(stop.value)
    except BaseException as exc:  # noqa: BLE001 - handed to whoever awaits
        return Done(exc=exc)
    return asyncio.ensure_future(_drive(_Resume(coro, first)))


_COMMITTED = (
    "Cannot call {m}() on transaction that has already committed: did you move `txn` "
    "outside of the closure?"
)


class Transaction:
    """``txn`` in ``storage.transaction(closure)``: get, put, delete, list, alarms, rollback."""

    def __init__(self, storage: DurableObjectStorage, savepoint: str) -> None:
        self._storage, self._savepoint = storage, savepoint
        self.state = "open"  # open, committed, rolled back
        self.released = False  # the savepoint is gone (rollback() ended it early)

    def _gate(self, method: str) -> TransactionError | None:
        if self.state == "rolled back":
            return TransactionError(f"Cannot {method}() on rolled back transaction")
        if self.state == "committed":
            return TransactionError(_COMMITTED.format(m=method))
        return None

    def _call(self, method: str, *args: Any, **kw: Any) -> Done:
        err = self._gate(method)
        if err:
            return Done(exc=err)
        return getattr(self._storage, method)(*args, **kw)

    def get(self, *args: Any, **kw: Any) -> Done:
        return self._call("get", *args, **kw)

    def put(self, *args: Any, **kw: Any) -> Done:
        return self._call("put", *args, **kw)

    def list(self, *args: Any, **kw: Any) -> Done:
        return self._call("list", *args, **kw)

    def getAlarm(self, *args: Any, **kw: Any) -> Done:  # noqa: N802
        return self._call("getAlarm", *args, **kw)

    def setAlarm(self, *args: Any, **kw: Any) -> Done:  # noqa: N802
        return self._call("setAlarm", *args, **kw)

    def deleteAlarm(self, *args: Any, **kw: Any) -> Done:  # noqa: N802
        return self._call("deleteAlarm", *args, **kw)

    get_alarm, set_alarm, delete_alarm = getAlarm, setAlarm, deleteAlarm

    def delete(self, *args: Any, **kw: Any) -> Done:
        err = self._gate("delete")
        if err:  # the platform throws here instead of rejecting
            raise err
        return self._storage.delete(*args, **kw)

    def deleteAll(self, *args: Any, **kw: Any) -> Done:  # noqa: N802
        raise TransactionError("Cannot call deleteAll() within a transaction")

    delete_all = deleteAll

    def rollback(self) -> None:
        """Discard the transaction's changes now; later use of ``txn`` fails.

        As in workerd (``ROLLBACK TO`` then ``RELEASE`` of the closure's savepoint), the
        transaction is over at once: writes the closure still makes through ``ctx.storage``
        or SQL belong to whatever encloses it (the event's batch, or an outer transaction)
        and stay."""
        if self.state == "committed":
            raise TransactionError(_COMMITTED.format(m="rollback"))
        if self.state == "rolled back":
            return
        db = self._storage._db
        if db.savepoint_depth(self._savepoint) < db.savepoints:
            raise TransactionError(
                "Cannot roll back an outer transaction while a nested transaction is still running."
            )
        db.rollback_to(self._savepoint)
        self.state = "rolled back"
        self.released = True

    def transaction(self, *args: Any) -> None:
        raise TypeError("txn.transaction is not a function (use ctx.storage.transaction)")


class SyncKV:
    """``ctx.storage.kv``: the synchronous KV API of a SQLite-backed object."""

    def __init__(self, storage: DurableObjectStorage) -> None:
        self._storage = storage

    def _check(self) -> None:
        self._storage._check()
        if not self._storage._sql_backend:
            raise StorageError(
                "The storage.kv (synchronous KV) API is only available for SQLite-backed "
                "Durable Objects (create the namespace with storage='sqlite')"
            )

    def get(self, key: str) -> Any:
        """The value, or None when the key does not exist."""
        self._check()
        return self._storage.get(key).result()

    def put(self, key: str, value: Any) -> None:
        self._check()
        self._storage.put(key, value).result()

    def delete(self, key: str) -> bool:
        self._check()
        return self._storage.delete(key).result()

    def list(self, options: dict | None = None, **kw: Any) -> Iterator[tuple[str, Any]]:
        """``(key, value)`` pairs, with the options of the async ``list``."""
        self._check()
        return iter(self._storage.list(options, **kw).result().items())


def run_sync_transaction(storage: DurableObjectStorage, fn: Callable[[], Any]) -> Any:
    """``transactionSync``: ``fn()`` inside a savepoint, undone if it raises."""
    db = storage._db
    name = db.savepoint()
    db.txn_depth += 1
    try:
        result = fn()
    except BaseException:
        db.txn_depth -= 1
        db.rollback_to(name)
        db.schedule_flush()
        raise
    db.txn_depth -= 1
    db.release(name)
    db.schedule_flush()
    return result
