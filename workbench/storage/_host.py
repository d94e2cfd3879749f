"""``StorageHost``: what ``ctx``, ``ctx.storage`` and the history views need from their object.

The runtime keeps one :class:`~workbench.storage.runtime.ObjectHost` per object
id: its database, input gate, generation (bumped on every reset) and the
runtime's clock and billing log. The modules below the runtime reach it only
through this protocol, so they do not depend on the runtime (which builds
them) and a test can hand them any object with these members.

    >>> from workbench.storage import DurableObject, Runtime
    >>> from workbench.storage import StorageHost
    >>> rt = Runtime()
    >>> ns = rt.namespace(DurableObject, storage="kv")
    >>> host: StorageHost = ns.host(ns.id_from_name("a"))
    >>> host.sql_backend, host.generation, host.now() == rt.now()
    (False, 0, True)
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Protocol

from ._ids import ObjectId
from .billing import BillSink
from .database import ObjectDatabase


class StorageHost(Protocol):
    """The object behind one ``ctx``: its id, database, gates, lifetime, clock and billing."""

    @property
    def id(self) -> ObjectId: ...

    @property
    def generation(self) -> int:
        """Bumped by every reset: storage made for an older generation refuses to work."""
        ...

    @property
    def db(self) -> ObjectDatabase: ...

    @property
    def sql_backend(self) -> bool:
        """True for a SQLite-backed object (SQL API, sync KV, point-in-time recovery)."""
        ...

    @property
    def delete_all_deletes_alarm(self) -> bool:
        """Whether ``deleteAll()`` removes the alarm too (a compatibility-date switch)."""
        ...

    def now(self) -> int:
        """Virtual time in integer epoch milliseconds."""
        ...

    def gate_close(self) -> None:
        """Hold back other events (the input gate); calls nest."""
        ...

    def gate_open(self) -> None:
        """Undo one ``gate_close()``; the last one lets waiting events in."""
        ...

    def flush(self) -> None:
        """Commit pending writes now; a failure resets the object and re-raises."""
        ...

    def reset(self, error: BaseException | None = None) -> None:
        """Drop the instance; requests in flight fail with ``error``."""
        ...

    def has_alarm_handler(self) -> bool: ...

    @property
    def billing_sink(self) -> BillSink:
        """Where this object's SQL statements are billed (one call per statement)."""
        ...

    def background(self, awaitable: Awaitable[Any]) -> None:
        """Keep ``awaitable`` running after the event (``waitUntil``)."""
        ...
