"""Errors raised by ``workbench.storage``.

Every class joins the core hierarchy (:class:`workbench.core.errors.WorkbenchError`)
and, where Python has a natural built-in meaning, that built-in too, so both
``except StorageLimitError`` and ``except ValueError`` work:

    >>> from workbench.storage.errors import StorageLimitError
    >>> err = StorageLimitError("key", 2048, 2049, unit="bytes")
    >>> str(err)
    'key is 2049 bytes; the limit is 2048 bytes'
    >>> isinstance(err, ValueError)
    True
"""

from __future__ import annotations

from typing import Any

from workbench.core.errors import FeatureUnavailable, ValidationError, WorkbenchError


class StorageError(WorkbenchError, code=10000):
    """Base class of every storage error (an ``Error`` on the platform)."""

    def __init__(self, message: str, **extra: Any) -> None:
        super().__init__(message, **extra)


class DataCloneError(StorageError, TypeError):
    """A value the structured-clone mapping cannot copy (a function, an open file...)."""


class TextEncodingError(StorageError, ValueError):
    """Text that cannot be encoded as UTF-8 (a key, a list option, SQL text or a binding).

    Keys and SQL text are stored as UTF-8, so a string holding a lone surrogate
    is refused where it enters and nothing of the call is written.
    """


class StorageLimitError(ValidationError, ValueError):
    """A documented size or count limit was exceeded; nothing was written."""

    def __init__(self, field: str, limit: int, found: int, unit: str = "") -> None:
        suffix = f" {unit}" if unit else ""
        message = f"{field} is {found}{suffix}; the limit is {limit}{suffix}"
        super().__init__(message)
        self.field, self.limit, self.found = field, limit, found


class SqlError(StorageError):
    """An error from the SQL API, worded as ``<message>: SQLITE_<CODE>`` like the platform."""

    def __init__(self, message: str, sqlite_code: str = "SQLITE_ERROR", **extra: Any) -> None:
        super().__init__(message, **extra)
        self.sqlite_code = sqlite_code


class SqlNotEnabled(StorageError):
    """The object's namespace uses the key-value backend, which has no SQL."""


class TransactionError(StorageError):
    """A transaction used after it committed or rolled back, or deleteAll() inside one."""


class PitrNotSupported(FeatureUnavailable):
    """Point-in-time recovery asked of an object on the key-value backend."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


class BookmarkError(ValidationError, ValueError):
    """A malformed bookmark, or a time outside the 30-day recovery window."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


class StorageWriteFailed(StorageError):
    """A write did not reach disk: the object was reset and its callers get this error."""


class DurableObjectReset(StorageError):
    """The instance was reset (abort, failed write) while this request was in flight."""


class ObjectAborted(StorageError):
    """Raised by ``ctx.abort(reason)``; the caller's request fails with ``reason``."""
