"""Routes F1-F8 (Filters API) and R1-R9 (Firewall Rules API).

Each route authenticates, reads its input, makes one call to the firewall
service and renders the result; errors are rendered by the app's handler.

    >>> [r.path for r in router.routes][:2]
    ['/zones/{zone_id}/filters', '/zones/{zone_id}/filters']
"""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request

from . import _openapi as oa
from ._context import caller, firewall, zone_id_for
from .envelope import Envelope, ok, shown, shown_all, shown_page
from .request import as_list, query_args, read_json

router = APIRouter(responses=oa.RESPONSES)

# Each list route's query parameters, named once: documented in the OpenAPI schema and
# read from the request by the same tuple.
_FILTER_QUERY = ("id", "description", "expression", "ref", "paused", "page", "per_page")
_RULE_QUERY = ("id", "action", "description", "paused", "page", "per_page")
_FILTERS = "/zones/{zone_id}/filters"
_FILTER = _FILTERS + "/{filter_id}"
_RULES = "/zones/{zone_id}/firewall/rules"
_RULE = _RULES + "/{rule_id}"


# -- filters ------------------------------------------------------------------
@router.get(_FILTERS, summary="F1 List filters", openapi_extra=oa.query(*_FILTER_QUERY))
async def list_filters(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    query = query_args(request, _FILTER_QUERY, booleans=("paused",))
    return shown_page(firewall(request).list_filters(zone, **query))


@router.post(
    _FILTERS,
    summary="F2 Create filters (one transaction)",
    openapi_extra=oa.body(oa.array(oa.NEW_FILTER)),
)
async def create_filters(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown_all(firewall(request).create_filters(zone, await read_json(request)))


@router.put(
    _FILTERS,
    summary="F3 Update filters (one transaction)",
    openapi_extra=oa.body(oa.array(oa.FILTER_UPDATE)),
)
async def update_filters(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown_all(firewall(request).update_filters(zone, as_list(await read_json(request))))


@router.delete(
    _FILTERS,
    summary="F4 Delete filters (?id=a&id=b); refused while a rule uses one",
    openapi_extra=oa.query("ids"),
)
async def delete_filters(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    await read_json(request, required=False)
    gone = firewall(request).delete_filters(zone, request.query_params.getlist("id"))
    return Envelope(ok([{"id": i} for i in gone]))


@router.get(_FILTER, summary="F5 Get a filter")
async def get_filter(zone_id: str, filter_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(firewall(request).get_filter(zone, filter_id))


@router.put(_FILTER, summary="F6 Update a filter", openapi_extra=oa.body(oa.FILTER))
async def update_filter(zone_id: str, filter_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(firewall(request).update_filter(zone, filter_id, await read_json(request)))


@router.delete(_FILTER, summary="F7 Delete a filter")
async def delete_filter(zone_id: str, filter_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    await read_json(request, required=False)
    return Envelope(ok({"id": firewall(request).delete_filter(zone, filter_id)}))


@router.get(
    "/filters/validate-expr",
    summary="F8 Validate an expression (?expression=)",
    openapi_extra=oa.query("expression", required=True),
)
async def validate_get(request: Request) -> Envelope:
    caller(request)
    firewall(request).validate_expression(request.query_params.get("expression"))
    return Envelope(ok(None))


@router.post(
    "/filters/validate-expr",
    summary="F8 Validate an expression",
    openapi_extra=oa.body(oa.VALIDATE),
)
async def validate_post(request: Request) -> Envelope:
    caller(request)
    firewall(request).validate_expression_body(await read_json(request))
    return Envelope(ok(None))


# -- firewall rules -------------------------------------------------------------
@router.get(_RULES, summary="R1 List firewall rules", openapi_extra=oa.query(*_RULE_QUERY))
async def list_rules(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    query = query_args(request, _RULE_QUERY, booleans=("paused",))
    return shown_page(firewall(request).list_rules(zone, **query))


@router.post(
    _RULES,
    summary="R2 Create firewall rules; filters by id or inline (the shortened call)",
    openapi_extra=oa.body(oa.array(oa.NEW_RULE)),
)
async def create_rules(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown_all(firewall(request).create_rules(zone, as_list(await read_json(request))))


@router.put(
    _RULES,
    summary="R3 Update firewall rules (one transaction; never edits a filter)",
    openapi_extra=oa.body(oa.array(oa.RULE_UPDATE)),
)
async def update_rules(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown_all(firewall(request).update_rules(zone, as_list(await read_json(request))))


@router.patch(
    _RULES,
    summary="R4 Update the priority of firewall rules",
    openapi_extra=oa.body(oa.array(oa.PRIORITY)),
)
async def set_priorities(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown_all(firewall(request).set_priorities(zone, as_list(await read_json(request))))


@router.delete(
    _RULES,
    summary="R5 Delete firewall rules (?id=a&id=b); their filters stay",
    openapi_extra=oa.query("ids"),
)
async def delete_rules(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    await read_json(request, required=False)
    gone = firewall(request).delete_rules(zone, request.query_params.getlist("id"))
    return Envelope(ok([{"id": i} for i in gone]))


@router.get(_RULE, summary="R6 Get a firewall rule")
async def get_rule(zone_id: str, rule_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(firewall(request).get_rule(zone, rule_id))


@router.put(
    _RULE,
    summary="R7 Update a firewall rule (re-points filter.id, never edits the filter)",
    openapi_extra=oa.body(oa.RULE_UPDATE | {"required": []}),
)
async def update_rule(zone_id: str, rule_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(firewall(request).update_rule(zone, rule_id, await read_json(request)))


@router.patch(
    _RULE,
    summary="R8 Update the priority of a firewall rule (returns an array)",
    openapi_extra=oa.body(oa.PRIORITY, required=False),
)
async def set_priority(zone_id: str, rule_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    done = firewall(request).set_priority(zone, rule_id, await read_json(request, required=False))
    return shown_all(done)


@router.delete(_RULE, summary="R9 Delete a firewall rule (its filter stays)")
async def delete_rule(zone_id: str, rule_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    await read_json(request, required=False)
    return shown(firewall(request).delete_rule(zone, rule_id))
