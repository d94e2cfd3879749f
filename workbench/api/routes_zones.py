"""Routes for zones (list, get, create) and page rules (P1, P2).

>>> sorted({r.path for r in router.routes})[:2]
['/zones', '/zones/{zone_id}']
"""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request

from . import openapi as oa
from .auth import authentication_error
from .context import backend, caller, workbench, zone_id_for
from .envelope import Envelope, ok
from .errors import InvalidZoneBody
from .request import read_json

router = APIRouter(responses=oa.RESPONSES)


@router.get(
    "/zones",
    summary="List zones",
    openapi_extra=oa.query("name", "page", "zones_per_page"),
)
async def list_zones(request: Request) -> Envelope:
    who = caller(request)
    q = request.query_params
    page = workbench(request).list_zones(
        name=q.get("name"), visible=who.may_use, page=q.get("page"), per_page=q.get("per_page")
    )
    return Envelope(ok([z.to_dict() for z in page.items], page.result_info))


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
    zone = workbench(request).create_zone(data["name"], plan=legacy)
    return Envelope(ok(zone.to_dict()))


@router.get("/zones/{zone_id}", summary="Get a zone")
async def get_zone(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return Envelope(ok(workbench(request).zone(zone).to_dict()))


# -- page rules -----------------------------------------------------------------
@router.get(
    "/zones/{zone_id}/pagerules",
    summary="P1 List page rules (plain array)",
    openapi_extra=oa.query("order", "direction", "match", "status"),
)
async def list_page_rules(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    q = request.query_params
    rules = backend(request).page_rules.list(
        zone,
        status=q.get("status"),
        order=q.get("order"),
        direction=q.get("direction"),
        match=q.get("match"),
    )
    return Envelope(ok([r.to_dict() for r in rules]))


@router.post(
    "/zones/{zone_id}/pagerules",
    summary="P2 Create a page rule",
    openapi_extra=oa.body(oa.NEW_PAGE_RULE),
)
async def create_page_rule(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    rule = backend(request).page_rules.create(zone, await read_json(request))
    return Envelope(ok(rule.to_dict()))


@router.get("/zones/{zone_id}/pagerules/{rule_id}", summary="P2 Get a page rule")
async def get_page_rule(zone_id: str, rule_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return Envelope(ok(backend(request).page_rules.get(zone, rule_id).to_dict()))


@router.put(
    "/zones/{zone_id}/pagerules/{rule_id}",
    summary="P2 Replace a page rule (targets and actions required)",
    openapi_extra=oa.body(oa.NEW_PAGE_RULE),
)
async def replace_page_rule(zone_id: str, rule_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    data = await read_json(request)
    rule = backend(request).page_rules.update(zone, rule_id, data, full=True)
    return Envelope(ok(rule.to_dict()))


@router.patch(
    "/zones/{zone_id}/pagerules/{rule_id}",
    summary="P2 Edit a page rule",
    openapi_extra=oa.body(oa.PAGE_RULE),
)
async def edit_page_rule(zone_id: str, rule_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    data = await read_json(request, required=False)
    rule = backend(request).page_rules.update(
        zone, rule_id, {} if data is None else data, full=False
    )
    return Envelope(ok(rule.to_dict()))


@router.delete("/zones/{zone_id}/pagerules/{rule_id}", summary="P2 Delete a page rule")
async def delete_page_rule(zone_id: str, rule_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    await read_json(request, required=False)
    return Envelope(ok({"id": backend(request).page_rules.delete(zone, rule_id)}))
