"""Durable Object storage: a runtime for Python objects and their ``ctx.storage``.

    >>> from workbench.storage import Runtime, DurableObject
    >>> class Counter(DurableObject):
    ...     async def fetch(self, request):
    ...         n = (await self.ctx.storage.get("n")) or 0
    ...         await self.ctx.storage.put("n", n + 1)
    ...         return n + 1
    >>> rt = Runtime()                                 # virtual clock, in memory
    >>> ns = rt.namespace(Counter, storage="sqlite")   # or storage="kv"
    >>> stub = ns.get(ns.id_from_name("alice"))
    >>> rt.run(stub.fetch("hi"))                       # in async code: await stub.fetch("hi")
    1

Under a Workbench, ``wb.storage`` is a runtime on ``wb.clock`` whose SQL
billing goes into ``wb.logs`` (``sql_billing``, beside the security events).

Modules: ``runtime`` (namespaces, gates, alarms), ``host`` (what the modules
below need from an object's host), ``objects`` and ``ids`` (``ctx``, ids),
``ctx_storage`` (``ctx.storage``), ``txn`` (transactions, sync KV), ``sql``,
``sql_statements`` and ``counters`` (SQL API, statement text analysis and
billing counters), ``database`` (SQLite batches), ``history`` (point-in-time
recovery), ``views`` (history for tools), ``values`` (structured clone),
``billing`` (DuckDB log).
"""

from .billing import BillingLog, estimate_cost
from .ctx_storage import DurableObjectStorage
from .errors import (
    BookmarkError,
    DataCloneError,
    DurableObjectReset,
    ObjectAborted,
    PitrNotSupported,
    SqlError,
    SqlNotEnabled,
    StorageError,
    StorageLimitError,
    StorageWriteFailed,
    TextEncodingError,
    TransactionError,
)
from .host import StorageHost
from .ids import ObjectId
from .objects import AlarmInvocationInfo, DurableObject, DurableObjectState
from .runtime import Namespace, ObjectHost, Runtime, Stub
from .sql_storage import SqlStorage, SqlStorageCursor

__all__ = [
    "AlarmInvocationInfo",
    "BillingLog",
    "BookmarkError",
    "DataCloneError",
    "DurableObject",
    "DurableObjectReset",
    "DurableObjectState",
    "DurableObjectStorage",
    "Namespace",
    "ObjectAborted",
    "ObjectHost",
    "ObjectId",
    "PitrNotSupported",
    "Runtime",
    "SqlError",
    "SqlNotEnabled",
    "SqlStorage",
    "SqlStorageCursor",
    "StorageError",
    "StorageHost",
    "StorageLimitError",
    "StorageWriteFailed",
    "Stub",
    "TextEncodingError",
    "TransactionError",
    "estimate_cost",
]
