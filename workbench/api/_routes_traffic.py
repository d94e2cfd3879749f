"""The workbench's HTTP extensions for traffic: submit requests to a zone, list its security events.

Not platform paths (they live under ``/zones/{zone_id}/workbench/``): the
simulator's way in for traffic and out for the events it made. Same
authentication as every route; a zone-scoped token reaches its zones only.

- ``POST .../workbench/requests``: a JSON array (at most 1,000) of
  ``{"method", "url", "headers", "client_ip", "country", "body"}``; each runs
  through the zone's systems and is logged; the result holds, per request,
  ``{"ray_id", "datetime", "action", "events"}`` (``action`` is ``"allow"``
  when nothing ended the request).
- ``GET .../workbench/events``: the zone's events, newest first, paged
  (``page``, ``per_page``), filtered by table names or analytics aliases
  (``source``, ``action``, ``rule``/``rule_id``/``ruleId``, ``ruleset``,
  ``ray``/``rayName``, ``since``/``until``/``datetime_geq``/``datetime_leq``...).

Each route authenticates, reads its input, makes one call to ``wb.traffic``
and renders the result; errors are rendered by the app's handler.

    >>> [(sorted(r.methods), r.path) for r in router.routes]
    [(['POST'], '/zones/{zone_id}/workbench/requests'), (['GET'], '/zones/{zone_id}/workbench/events')]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import APIRouter
from starlette.requests import Request

from . import _openapi as oa
from ._context import workbench, zone_id_for
from .envelope import Envelope, ok, shown_all
from .request import read_json

if TYPE_CHECKING:
    from ..traffic.service import TrafficService

router = APIRouter(responses=oa.RESPONSES)

SUBMITTED: dict[str, Any] = {
    "type": "array",
    "maxItems": 1000,
    "items": {
        "type": "object",
        "required": ["url"],
        "additionalProperties": False,
        "properties": {
            "method": {"type": "string", "default": "GET"},
            "url": {"type": "string", "description": "absolute http(s) URL or a path"},
            "headers": {
                "type": "object",
                "additionalProperties": {
                    "oneOf": [
                        {"type": "string"},
                        {"type": "array", "items": {"type": "string"}},
                    ]
                },
            },
            "client_ip": {"type": "string"},
            "country": {"type": "string", "description": "two letters (XX unknown, T1 Tor)"},
            "body": {"type": "string"},
            "asn": {"type": "integer", "minimum": 0},
            "label": {"type": "string", "description": "what the request really is"},
        },
    },
}
#: Query parameters the description lists (any events column, alias and suffix works too).
_FILTERS = (
    "page",
    "per_page",
    "order",
    "direction",
    "source",
    "action",
    "rule",
    "ruleId",
    "rule_id",
    "ruleset",
    "rulesetId",
    "ruleset_id",
    "ray",
    "rayName",
    "ray_id",
    "since",
    "until",
    "datetime_geq",
    "datetime_leq",
    "clientIP",
    "clientCountryName",
    "clientRequestHTTPHost",
    "clientRequestPath",
    "clientRequestHTTPMethodName",
)


def traffic(request: Request) -> TrafficService:
    """The traffic service of the served Workbench."""
    return workbench(request).traffic


@router.post(
    "/zones/{zone_id}/workbench/requests",
    summary="Workbench: run requests through the zone's security and log their events",
    openapi_extra=oa.body(SUBMITTED),
)
async def submit_requests(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown_all(traffic(request).submit(zone, await read_json(request)))


@router.get(
    "/zones/{zone_id}/workbench/events",
    summary="Workbench: the zone's security events, newest first (table names and API aliases)",
    openapi_extra=oa.query(*_FILTERS, schemas=dict.fromkeys(_FILTERS, {"type": "string"})),
)
async def list_events(zone_id: str, request: Request) -> Envelope:
    # Imported here: the traffic package brings pandas and DuckDB, which the server's
    # start need not wait for (wb.traffic defers them the same way).
    from ..traffic.service import query_filters

    zone = zone_id_for(request, zone_id)
    page = traffic(request).events(zone, **query_filters(request.query_params.multi_items()))
    return Envelope(ok(page.items, page.result_info))
