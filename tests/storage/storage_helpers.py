"""Helpers for the storage tests: a probe object that runs the test's code inside it."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from workbench.storage import DurableObject, Runtime

#: ``sqlite_master.sql`` of the KV table on the platform: workerd's CREATE statement as SQLite
#: keeps it (from the table's name on, its line breaks and indentation included)
KV_SQL = "CREATE TABLE _cf_KV (\n        key TEXT PRIMARY KEY,\n        value BLOB\n      ) WITHOUT ROWID"


class Probe(DurableObject):
    """Runs ``fn(ctx)`` (sync or async) inside the object and returns its result."""

    constructed = 0

    def __init__(self, ctx: Any, env: Any = None) -> None:
        super().__init__(ctx, env)
        type(self).constructed += 1

    async def fetch(self, fn: Any) -> Any:
        result = fn(self.ctx)
        if inspect.isawaitable(result):
            result = await result
        return result

    async def alarm(self, info: Any = None) -> None:
        hook = getattr(self.env, "on_alarm", None) if self.env else None
        if hook:
            result = hook(self.ctx, info)
            if inspect.isawaitable(result):
                await result


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def call(rt: Runtime, stub: Any, fn: Any) -> Any:
    """Deliver ``fn`` to the probe and wait for background work."""
    return rt.run(stub.fetch(fn))
