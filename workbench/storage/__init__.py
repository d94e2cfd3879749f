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

Modules: ``runtime`` (namespaces, gates, alarms), ``ctx_storage``
(``ctx.storage``), ``txn`` (transactions, sync KV), ``sql_storage`` (SQL API),
``database`` (SQLite batches), ``history`` (point-in-time recovery), ``views``
(history for tools), ``value_codec`` and ``json_form`` (stored and shown values),
``billing`` (DuckDB log), ``names`` and ``errors``. The private ones implement
them: ``_host`` (what they need from an object's host), ``_objects`` and ``_ids``
(``ctx``, ids), ``_sql_statements``, ``_sql_cursor`` and ``_counters*`` (statement
text analysis, cursors and billing counters), ``_value_codec_tagged`` (the first
stored form of values).
"""

from ._host import StorageHost
from ._ids import ObjectId
from ._objects import AlarmInvocationInfo, DurableObject, DurableObjectState
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
