"""What user code sees: ``DurableObject``, its ``ctx`` and alarm info (ids: :mod:`._ids`).

>>> from workbench.storage import Runtime, DurableObject
>>> class Hello(DurableObject):
...     async def fetch(self, request):
...         return f"{self.ctx.id.name} has id {self.ctx.id.toString()[:8]}"
>>> rt = Runtime()
>>> ns = rt.namespace(Hello)
>>> rt.run(ns.get(ns.id_from_name("ada")).fetch(None))
'ada has id d9400c4a'
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

from ._host import StorageHost
from .ctx_storage import DurableObjectStorage
from .errors import ObjectAborted
from .txn import start_now


@dataclass(frozen=True)
class AlarmInvocationInfo:
    """What ``alarm(info)`` receives."""

    retryCount: int  # noqa: N815 - the documented name
    isRetry: bool  # noqa: N815

    @property
    def retry_count(self) -> int:
        return self.retryCount

    @property
    def is_retry(self) -> bool:
        return self.isRetry


class DurableObject:
    """Base class of user objects: ``self.ctx`` and ``self.env`` are set by the constructor."""

    def __init__(self, ctx: DurableObjectState, env: Any = None) -> None:
        self.ctx, self.env = ctx, env


class DurableObjectState:
    """``ctx``: the object's id, its storage, gates and lifetime controls."""

    def __init__(self, host: StorageHost) -> None:
        self._host = host
        self.id = host.id
        self.storage = DurableObjectStorage(host)

    def blockConcurrencyWhile(self, fn: Any) -> Awaitable[Any]:  # noqa: N802
        """Run ``await fn()`` with the input gate closed: no other event is delivered meanwhile."""
        host, generation = self._host, self._host.generation
        host.gate_close()

        async def run() -> Any:
            try:
                return await fn()
            except BaseException as exc:
                host.reset(exc)
                raise
            finally:
                if host.generation == generation:
                    host.gate_open()

        return start_now(run())

    def waitUntil(self, awaitable: Awaitable[Any]) -> None:  # noqa: N802
        """Keep ``awaitable`` running after the event returns (``rt.settle()`` waits for it)."""
        self._host.background(awaitable)

    def abort(self, reason: str = "Durable Object aborted") -> None:
        """Reset the object: the request in flight fails with ``reason``; the next event rebuilds it."""
        error = ObjectAborted(str(reason))
        self._host.flush()
        self._host.reset(error)
        raise error

    block_concurrency_while = blockConcurrencyWhile
    wait_until = waitUntil
