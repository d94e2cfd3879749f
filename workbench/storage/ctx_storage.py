"""``ctx.storage``: the asynchronous storage API of one Durable Object.

Each method does its work when called and returns an awaitable (a
:class:`~workbench.storage.txn.Done`); writes made with no await between them
land in one batch that commits atomically:

    >>> from workbench.storage import Runtime, DurableObject
    >>> class Box(DurableObject):
    ...     async def fetch(self, request):
    ...         s = self.ctx.storage
    ...         s.put("a", 1)                      # no await: same batch as the next put
    ...         await s.put({"b": [2], "c": {"d"}})
    ...         return await s.list({"start": "b"})
    >>> rt = Runtime()
    >>> ns = rt.namespace(Box, storage="kv")
    >>> rt.run(ns.get(ns.id_from_name("x")).fetch(None))
    {'b': [2], 'c': {'d'}}

Keys are stored as their UTF-8 bytes, and a key holding a lone surrogate as its
WTF-8 bytes (``"\\ud800"`` as ``ED A0 80``), as the platform stores it: ``get``
and ``delete`` with the same key find it, keys sort by those bytes, and
``list()`` (and a ``get`` of several keys) read the bytes back leniently, each
byte that is not UTF-8 as U+FFFD, so ``"\\ud800"`` is listed as three of them,
a key ``get()`` does not find, as on the platform (see :func:`key_text`).
Strings inside values are kept as they are: see :mod:`workbench.storage.value_codec`.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from ._host import StorageHost
from .database import ObjectDatabase, prefix_end
from .errors import (
    BookmarkError,
    DurableObjectReset,
    PitrNotSupported,
    SqlNotEnabled,
    StorageError,
    StorageLimitError,
    TransactionError,
)
from .history import WINDOW_MS, History
from .sql_storage import SqlStorage
from .txn import Done, SyncKV, Transaction, run_sync_transaction, start_now
from .value_codec import decode, decode_pairs, encode

MAX_KEY_BYTES = 2048
MAX_VALUE_BYTES = 131_072
MAX_KEYS_PER_CALL = 128
MAX_ALARM_MS = 6_942_960_000_000  # the start of 2190: "dates after 2189" are refused
_MISSING = object()
_NO_OPTIONS: dict[str, Any] = {}
_DONE = Done(None)  # a finished write's result holds nothing, so one serves every call
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ALIASES = {
    "allow_concurrency": "allowConcurrency",
    "allow_unconfirmed": "allowUnconfirmed",
    "no_cache": "noCache",
    "start_after": "startAfter",
}
_OPTION_TYPES = {
    "allowConcurrency": bool,
    "allowUnconfirmed": bool,
    "noCache": bool,
    "reverse": bool,
    "start": str,
    "startAfter": str,
    "end": str,
    "prefix": str,
    "limit": int,
}


def wtf8(text: str) -> bytes:
    """``text`` as the platform stores a key: UTF-8, a lone surrogate as its three WTF-8
    bytes (a high and low surrogate side by side are one character, as in a JS string).

    >>> wtf8("a\\ud800"), wtf8("\\ud83d\\ude00") == "\\U0001f600".encode()
    (b'a\\xed\\xa0\\x80', True)
    """
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        units = text.encode("utf-16-le", "surrogatepass")  # pairs are joined when read back
        return units.decode("utf-16-le", "surrogatepass").encode("utf-8", "surrogatepass")


def key_text(data: bytes) -> str:
    """A stored key as ``list()`` returns it: UTF-8 read leniently, each byte of a sequence
    that is not UTF-8 (a lone surrogate's WTF-8) as U+FFFD, as the platform's decoder does.

    >>> key_text(b"a\\xed\\xa0\\x80")
    'a\\ufffd\\ufffd\\ufffd'
    """
    return data.decode("utf-8", "replace")


def key_bytes(key: Any, field: str = "key") -> bytes:
    """The stored (UTF-8, or WTF-8) form of a key, checked against the limit."""
    if type(key) is not str:
        raise TypeError(f"{field} must be a str, not {type(key).__name__}")
    try:
        data = key.encode("utf-8")  # inline: this is on the path of every KV call
    except UnicodeEncodeError:
        data = wtf8(key)
    if len(data) > MAX_KEY_BYTES:
        raise StorageLimitError(field, MAX_KEY_BYTES, len(data), "bytes (UTF-8)")
    return data


def value_bytes(key: str, value: Any) -> bytes:
    data = encode(value)
    if len(data) > MAX_VALUE_BYTES:
        raise StorageLimitError(
            f"value of key {key[:40]!r}", MAX_VALUE_BYTES, len(data), "bytes (stored form)"
        )
    return data


def options(opts: Any, kw: dict[str, Any], kind: str) -> dict[str, Any]:
    """Merge an options dict and keyword options; check the known ones' types."""
    if opts is None:
        if not kw:
            return _NO_OPTIONS  # the usual call: nothing to merge (callers only read it)
        opts = {}
    elif not isinstance(opts, dict):
        raise TypeError(f"options must be a dict of {kind} options, not {type(opts).__name__}")
    merged = {_ALIASES.get(k, k): v for k, v in {**opts, **kw}.items()}
    for name, value in merged.items():
        want = _OPTION_TYPES.get(name)
        if want is None:
            continue  # unknown option names are ignored, as on the platform
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            raise TypeError(f"option {name} must be {want.__name__}, not {type(value).__name__}")
    return merged


def _count_limit(n: int, what: str) -> None:
    if n > MAX_KEYS_PER_CALL:
        raise StorageLimitError(what, MAX_KEYS_PER_CALL, n)


def epoch_ms(value: Any, field: str) -> int:
    """Integer epoch milliseconds from an int, a float (truncated) or a datetime (naive = UTC)."""
    if isinstance(value, bool) or not isinstance(value, int | float | datetime):
        raise TypeError(
            f"{field} must be epoch milliseconds (int) or a datetime, not {type(value).__name__}"
        )
    if isinstance(value, datetime):
        if value.tzinfo is None:  # the virtual clock runs in UTC
            value = value.replace(tzinfo=UTC)
        return (value - _EPOCH) // timedelta(milliseconds=1)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{field} {value} is not a valid time")
        return math.trunc(value)
    return value


def alarm_time(value: Any) -> int:
    """The alarm time in integer epoch milliseconds, checked like the platform does."""
    value = epoch_ms(value, "scheduledTime")
    if value <= 0:
        raise ValueError("setAlarm() cannot be called with an alarm time <= 0")
    if value > MAX_ALARM_MS:
        raise ValueError("This API doesn't support dates after 2189.")
    return value


class DurableObjectStorage:
    """The storage of one object, as seen from its instance (``self.ctx.storage``)."""

    def __init__(self, host: StorageHost) -> None:
        self._host = host
        self._generation = host.generation
        self._db: ObjectDatabase = host.db
        self._sql_backend = host.sql_backend
        self._sql: SqlStorage | None = None
        self.kv = SyncKV(self)

    # -- plumbing -----------------------------------------------------------------
    def _check(self) -> None:
        if self._generation != self._host.generation:
            raise DurableObjectReset(
                "This Durable Object was reset; the old instance can no longer use its storage."
            )

    def _check_sql(self) -> None:
        if self._generation != self._host.generation:  # (inlined _check: runs per statement)
            self._check()
        if not self._sql_backend:
            raise SqlNotEnabled(
                "SQL is not enabled for this Durable Object class. To enable it, create the "
                "namespace with storage='sqlite' (new_sqlite_classes on the platform)."
            )

    @property
    def sql(self) -> SqlStorage:
        """``ctx.storage.sql`` (SQLite backend only; any use on the KV backend raises)."""
        if self._sql is None:
            self._sql = SqlStorage(self._db, self._check_sql, self._host.billing_sink)
        return self._sql

    # -- key-value ------------------------------------------------------------------
    def get(self, key: str | list[str], opts: dict | None = None, **kw: Any) -> Done:
        """The value (None if missing), or for a list of keys a dict sorted by key bytes."""
        self._check()
        o = options(opts, kw, "get")
        if type(key) is not str and isinstance(key, list | tuple):
            _count_limit(len(key), "keys per get")
            found = {}
            for k in sorted({key_bytes(k, "keys[]") for k in key}):
                data = self._db.kv_get(k)
                if data is not None:
                    found[key_text(k)] = decode(data)
            return Done(found, yield_=o.get("allowConcurrency", False))
        data = self._db.kv_get(key_bytes(key))
        return Done(None if data is None else decode(data), yield_=o.get("allowConcurrency", False))

    def put(
        self, key: str | dict[str, Any], value: Any = _MISSING, opts: dict | None = None, **kw: Any
    ) -> Done:
        """Store one value, or every pair of a dict (at most 128); all or nothing."""
        self._check()
        if type(key) is not str and isinstance(key, dict):
            if value is not _MISSING and value is not None and not isinstance(value, dict):
                raise TypeError(
                    "put() takes put(key, value, options) or put(entries, options); "
                    f"got a dict of entries and a {type(value).__name__}"
                )
            o = options(None if value is _MISSING else value, kw, "put")
            _count_limit(len(key), "pairs per put")
            pairs = [(key_bytes(k, "entries key"), value_bytes(k, v)) for k, v in key.items()]
        else:
            if value is _MISSING:
                raise TypeError("put() called without a value")
            if opts is None and not kw:  # the usual call (this path runs for every put)
                self._db.kv_put([(key_bytes(key), value_bytes(key, value))])
                return _DONE
            o = options(opts, kw, "put")
            pairs = [(key_bytes(key), value_bytes(key, value))]
        if pairs:
            self._db.kv_put(pairs, confirm=not o.get("allowUnconfirmed", False))
        return _DONE

    def delete(self, key: str | list[str], opts: dict | None = None, **kw: Any) -> Done:
        """True/False for one key; for a list, how many of the keys existed."""
        self._check()
        o = options(opts, kw, "delete")
        confirm = not o.get("allowUnconfirmed", False)
        if type(key) is not str and isinstance(key, list | tuple):
            _count_limit(len(key), "keys per delete")
            keys = [key_bytes(k, "keys[]") for k in key]
            return Done(self._db.kv_delete(keys, confirm) if keys else 0)
        return Done(self._db.kv_delete([key_bytes(key)], confirm) == 1)

    def list(self, opts: dict | None = None, **kw: Any) -> Done:
        """A dict of the pairs in key order, narrowed by start/startAfter/end/prefix/reverse/limit."""
        self._check()
        o = options(opts, kw, "list")
        if "start" in o and "startAfter" in o:
            raise TypeError("list() cannot be called with both start and startAfter values.")
        limit = o.get("limit")
        if limit is not None and limit <= 0:
            raise ValueError(f"list() limit must be positive, got {limit}")
        lo, lo_incl = None, True
        if "start" in o:
            lo = wtf8(o["start"])
        elif "startAfter" in o:
            lo, lo_incl = wtf8(o["startAfter"]), False
        hi = wtf8(o["end"]) if "end" in o else None
        if "prefix" in o:
            p = wtf8(o["prefix"])
            if lo is None or p > lo:
                lo, lo_incl = p, True
            pe = prefix_end(p)
            if pe is not None and (hi is None or pe < hi):
                hi = pe
        rows = self._db.kv_list(lo, lo_incl, hi, o.get("reverse", False), limit)
        # the same decoding as get(): every listed key is one get() finds
        out = decode_pairs(rows)
        return Done(out, yield_=o.get("allowConcurrency", False))

    def deleteAll(self, opts: dict | None = None, **kw: Any) -> Done:  # noqa: N802
        """Remove every key, table and value (the alarm too, from compatibility date 2026-02-24)."""
        self._check()
        options(opts, kw, "deleteAll")
        if self._db.txn_depth:
            return Done(exc=TransactionError("Cannot call deleteAll() within a transaction"))
        self._db.delete_all(self._host.delete_all_deletes_alarm)
        return Done(None)

    # -- transactions -----------------------------------------------------------------
    def transaction(self, closure: Callable[[Transaction], Any]) -> Any:
        """Run ``closure(txn)`` atomically; it starts now and is undone if it raises."""
        self._check()
        return start_now(self._transaction(closure))

    async def _transaction(self, closure: Callable[[Transaction], Any]) -> Any:
        db = self._db
        name = db.savepoint()
        db.txn_depth += 1
        txn = Transaction(self, name)
        self._host.gate_close()
        try:
            result = closure(txn)
            if inspect.isawaitable(result):  # an async closure, as on the platform
                result = await result
        except BaseException:
            txn.state = "rolled back"
            db.txn_depth -= 1
            if not txn.released:  # (a rollback() already undid it and ended it)
                db.rollback_to(name)
            raise
        finally:
            self._host.gate_open()
            if txn.state == "open":
                txn.state = "committed"
        db.txn_depth -= 1
        if not txn.released:
            db.release(name)
        db.schedule_flush()
        return result

    def transactionSync(self, fn: Callable[[], Any]) -> Any:  # noqa: N802
        """Run ``fn()`` atomically and return its value; undone if it raises."""
        self._check()
        return run_sync_transaction(self, fn)

    def sync(self) -> Done:
        """Resolves once every pending write (allowUnconfirmed ones too) is on disk."""
        self._check()
        self._host.flush()
        return Done(None)

    # -- alarms ---------------------------------------------------------------------
    def getAlarm(self, opts: dict | None = None, **kw: Any) -> Done:  # noqa: N802
        """The alarm's time in epoch milliseconds, or None."""
        self._check()
        o = options(opts, kw, "getAlarm")
        return Done(self._db.get_alarm(), yield_=o.get("allowConcurrency", False))

    def setAlarm(self, scheduled_time: int | datetime, opts: dict | None = None, **kw: Any) -> Done:  # noqa: N802
        """Set the one alarm (a time in the past means now)."""
        self._check()
        o = options(opts, kw, "setAlarm")
        t = alarm_time(scheduled_time)
        if not self._host.has_alarm_handler():
            raise StorageError(
                "Your Durable Object class must have an alarm() handler in order to call setAlarm()"
            )
        t = max(t, self._host.now())
        self._db.set_alarm(t, confirm=not o.get("allowUnconfirmed", False))
        return Done(None)

    def deleteAlarm(self, opts: dict | None = None, **kw: Any) -> Done:  # noqa: N802
        """Delete the alarm if there is one."""
        self._check()
        o = options(opts, kw, "deleteAlarm")
        if self._db.get_alarm() is not None:
            self._db.set_alarm(None, confirm=not o.get("allowUnconfirmed", False))
        else:  # nothing to write, but inside a failing alarm handler it still stops the retry
            self._db.alarm_ops += 1
        return Done(None)

    # -- point-in-time recovery -------------------------------------------------------
    def _history(self, method: str) -> History:
        self._check()
        if self._db.history is None:
            raise PitrNotSupported(
                f"{method}() is not supported: point-in-time recovery needs the SQLite backend "
                "(create the namespace with storage='sqlite')"
            )
        return self._db.history

    def getCurrentBookmark(self) -> Done:  # noqa: N802
        """A bookmark for now (pending writes are committed first)."""
        history = self._history("getCurrentBookmark")
        self._host.flush()
        return Done(history.bookmark(history.last_seq, self._host.now()))

    def getBookmarkForTime(self, timestamp: int | datetime) -> Done:  # noqa: N802
        """A bookmark for the state at ``timestamp`` (within the last 30 days)."""
        history = self._history("getBookmarkForTime")
        t = epoch_ms(timestamp, "timestamp")
        now = self._host.now()
        if t > now:
            raise BookmarkError(f"timestamp {t} is in the future (now is {now})")
        if t < now - WINDOW_MS:
            raise BookmarkError(
                f"timestamp {t} is more than 30 days ago (the window starts at {now - WINDOW_MS})"
            )
        self._host.flush()
        return Done(history.bookmark(history.seq_at(t), t))

    def onNextSessionRestoreBookmark(self, bookmark: str) -> Done:  # noqa: N802
        """Restore to ``bookmark`` when the object next restarts; returns the undo bookmark."""
        history = self._history("onNextSessionRestoreBookmark")
        now = self._host.now()
        History.parse(bookmark)  # a malformed bookmark is refused before anything commits
        self._host.flush()
        history.resolve(bookmark, now)
        undo = history.bookmark(history.last_seq, now)
        self._db.begin()
        history.set_pending(bookmark)
        self._host.flush()
        return Done(undo)

    # -- snake_case aliases -----------------------------------------------------------
    delete_all = deleteAll
    transaction_sync = transactionSync
    get_alarm = getAlarm
    set_alarm = setAlarm
    delete_alarm = deleteAlarm
    get_current_bookmark = getCurrentBookmark
    get_bookmark_for_time = getBookmarkForTime
    on_next_session_restore_bookmark = onNextSessionRestoreBookmark
