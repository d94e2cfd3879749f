"""The workbench's own routes: the virtual clock (``GET``/``PUT /workbench/clock``).

Not a platform API: the simulator's clock, which dated behaviour (the WAF
migration's 2022-05-04 and 2022-09-19) reads. Any valid credentials may
read and move it (it is the account's, not a zone's); it never goes back.

    >>> [(sorted(r.methods), r.path) for r in router.routes]
    [(['GET'], '/workbench/clock'), (['PUT'], '/workbench/clock')]
"""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request

from ..core.clock import iso
from ..migration.clock import move_clock
from . import _openapi as oa
from ._context import caller, workbench
from .envelope import Envelope, ok
from .request import read_json

router = APIRouter(responses=oa.RESPONSES)

CLOCK_BODY = {
    "type": "object",
    "properties": {
        "now": {"type": "string", "format": "date-time"},
        "advance_seconds": {"type": "number", "minimum": 0},
    },
    "description": 'one of {"now": "<ISO time>"} or {"advance_seconds": N}; never backwards',
}


@router.get("/workbench/clock", summary="Read the workbench's virtual clock")
async def get_clock(request: Request) -> Envelope:
    caller(request)
    return Envelope(ok({"now": iso(workbench(request).now())}))


@router.put(
    "/workbench/clock",
    summary="Move the workbench's virtual clock forward",
    openapi_extra=oa.body(CLOCK_BODY),
)
async def put_clock(request: Request) -> Envelope:
    caller(request)
    when = move_clock(workbench(request), await read_json(request))
    return Envelope(ok({"now": iso(when)}))
