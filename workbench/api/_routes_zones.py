"""Routes for zones (list, get, create) and page rules (P1, P2).

>>> sorted({r.path for r in router.routes})[:2]
['/zones', '/zones/{zone_id}']
"""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request

from . import _openapi as oa
from ._context import caller, firewall, workbench, zone_id_for
from .auth import authentication_error
from .envelope import Envelope, ok, shown, shown_all, shown_page
from .errors import InvalidZoneBody
from .request import query_args, read_json

router = APIRouter(responses=oa.RESPONSES)

_PAGE_RULE_QUERY = ("order", "direction", "match", "status")
_PAGE_RULES = "/zones/{zone_id}/pagerules"
_PAGE_RULE = _PAGE_RULES + "/{rule_id}"


@router.get(
    "/zones", summary="List zones", openapi_extra=oa.query("name", "page", "zones_per_page")
)
async def list_zones(request: Request) -> Envelope:
    who = caller(request)
    query = query_args(request, ("name", "page", "per_page"))
    return shown_page(workbench(request).list_zones(visible=who.may_use, **query))


@router.post(
    "/zones",
    summary='Create a zone: {"name": ..., "plan": {"legacy_id": "pro"}}',
    openapi_extra=oa.body(oa.NEW_ZONE),
)
async def create_zone(request: Request) -> Envelope:
    who = caller(request)
    if not who.all_zones:
        raise authentication_error()
    data = await read_json(request)
    if not isinstance(data, dict) or "name" not in data:
        raise InvalidZoneBody('the body must be {"name": ..., "plan": {"legacy_id": ...}}')
    plan = data.get("plan", {"legacy_id": "free"})
    if not isinstance(plan, dict):
        raise InvalidZoneBody('plan must be an object like {"legacy_id": "pro"}')
    legacy = str(plan.get("legacy_id", plan.get("id", "free")))
    return shown(workbench(request).create_zone(data["name"], plan=legacy))


@router.get("/zones/{zone_id}", summary="Get a zone")
async def get_zone(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(workbench(request).zone(zone))


# -- page rules -----------------------------------------------------------------
@router.get(
    _PAGE_RULES,
    summary="P1 List page rules (plain array)",
    openapi_extra=oa.query(*_PAGE_RULE_QUERY),
)
async def list_page_rules(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    query = query_args(request, _PAGE_RULE_QUERY)
    return shown_all(firewall(request).page_rules.list(zone, **query))


@router.post(_PAGE_RULES, summary="P2 Create a page rule", openapi_extra=oa.body(oa.NEW_PAGE_RULE))
async def create_page_rule(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(firewall(request).page_rules.create(zone, await read_json(request)))


@router.get(_PAGE_RULE, summary="P2 Get a page rule")
async def get_page_rule(zone_id: str, rule_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(firewall(request).page_rules.get(zone, rule_id))


@router.put(
    _PAGE_RULE,
    summary="P2 Replace a page rule (targets and actions required)",
    openapi_extra=oa.body(oa.NEW_PAGE_RULE),
)
async def replace_page_rule(zone_id: str, rule_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    data = await read_json(request)
    return shown(firewall(request).page_rules.update(zone, rule_id, data, full=True))


@router.patch(_PAGE_RULE, summary="P2 Edit a page rule", openapi_extra=oa.body(oa.PAGE_RULE))
async def edit_page_rule(zone_id: str, rule_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    data = await read_json(request, required=False)
    data = {} if data is None else data
    return shown(firewall(request).page_rules.update(zone, rule_id, data, full=False))


@router.delete(_PAGE_RULE, summary="P2 Delete a page rule")
async def delete_page_rule(zone_id: str, rule_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    await read_json(request, required=False)
    return Envelope(ok({"id": firewall(request).page_rules.delete(zone, rule_id)}))
