"""Routes E1-E4 (Rulesets API): zone entry points, the rulesets list, versions.

Each route authenticates, reads its input, makes one call to the ruleset
service and renders the result; errors are rendered by the app's handler.
The entry point PUT calls ``wb.migration`` instead, which passes other
phases to the ruleset service and drives the migration with ``waf_migration``
and ``phase_two`` on the managed one.

    >>> [r.path for r in router.routes][:2]
    ['/zones/{zone_id}/rulesets/phases/{phase}/entrypoint', '/zones/{zone_id}/rulesets/phases/{phase}/entrypoint']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import APIRouter
from starlette.requests import Request

from ..rulesets.models import PHASE_ACTIONS
from . import _openapi as oa
from ._context import workbench, zone_id_for
from .envelope import Envelope, ok, shown
from .request import parse_bool, read_json

if TYPE_CHECKING:
    from ..rulesets.service import RulesetsService

router = APIRouter(responses=oa.RESPONSES)

_STR = {"type": "string"}
_RULE = {
    "type": "object",
    "properties": {
        "id": _STR,
        "ref": _STR,
        "action": {
            "type": "string",
            "enum": sorted({a for v in PHASE_ACTIONS.values() for a in v}),
        },
        "expression": _STR,
        "description": _STR,
        "enabled": {"type": "boolean"},
        "action_parameters": {"type": "object"},
        "logging": {"type": "object", "properties": {"enabled": {"type": "boolean"}}},
    },
    "required": ["action", "expression"],
}
ENTRYPOINT_BODY = {
    "type": "object",
    "properties": {"rules": {"type": "array", "items": _RULE}, "name": _STR, "description": _STR},
    "required": ["rules"],
}
_QUERY = {"dry_run": {"type": "boolean"}, "waf_migration": _STR, "phase_two": _STR}


def rulesets(request: Request) -> RulesetsService:
    """The ruleset service of the served Workbench."""
    return workbench(request).rulesets


@router.get(
    "/zones/{zone_id}/rulesets/phases/{phase}/entrypoint",
    summary="E1 Get a zone entry point ruleset (404 10003 before the first PUT)",
)
async def get_entrypoint(zone_id: str, phase: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(rulesets(request).get_entrypoint(zone, phase))


@router.put(
    "/zones/{zone_id}/rulesets/phases/{phase}/entrypoint",
    summary="E2 Create or update a zone entry point ruleset (a new version each time)",
    openapi_extra=oa.merge(oa.body(ENTRYPOINT_BODY), oa.query(*_QUERY, schemas=_QUERY)),
)
async def put_entrypoint(zone_id: str, phase: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    dry_run = parse_bool(request.query_params.get("dry_run"), "dry_run") or False
    query = request.query_params
    # One core call: the migration service saves every phase, and drives the migration
    # (waf_migration, phase_two) on the managed one.
    made = workbench(request).migration.put_entrypoint(
        zone,
        phase,
        await read_json(request),
        waf_migration=query.get("waf_migration"),
        phase_two=query.get("phase_two"),
        dry_run=dry_run,
    )
    # A dry run answers with no result, as the API documents.
    return Envelope(ok(None if dry_run else made.to_dict()))


@router.get(
    "/zones/{zone_id}/rulesets",
    summary="E3 List the zone's entry points and the managed rulesets (without rules)",
)
async def list_rulesets(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return Envelope(ok([r.summary() for r in rulesets(request).list_rulesets(zone)]))


@router.get("/zones/{zone_id}/rulesets/{ruleset_id}", summary="E4 Get a ruleset")
async def get_ruleset(zone_id: str, ruleset_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(rulesets(request).get_ruleset(zone, ruleset_id))


@router.get(
    "/zones/{zone_id}/rulesets/{ruleset_id}/versions",
    summary="List the versions of a ruleset (without rules)",
)
async def list_versions(zone_id: str, ruleset_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return Envelope(ok([r.summary() for r in rulesets(request).list_versions(zone, ruleset_id)]))


@router.get(
    "/zones/{zone_id}/rulesets/{ruleset_id}/versions/{version}",
    summary="Get one version of a ruleset",
)
async def get_version(zone_id: str, ruleset_id: str, version: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(rulesets(request).get_version(zone, ruleset_id, version))
