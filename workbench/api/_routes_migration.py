"""Routes M1-M3 (WAF migration): the compatibility check, the generated configuration, the status;
and the workbench's two extensions for the dashboard's steps.

The entry point PUT with ``waf_migration`` (M4) is the Rulesets route's, which
hands these parameters to the migration service. Each route authenticates,
makes one call to ``wb.migration`` and renders the result; errors are
rendered by the app's handler. The configuration's envelope carries in
``messages`` what was not migrated.

The platform has no path for the dashboard's steps, so these two live under
``/zones/{zone_id}/workbench/`` like the other extensions: ``GET
.../workbench/waf_migration/steps`` (the stage, the steps open now, why the
others are closed, a refusal and its remedies: :class:`~workbench.migration.steps.Steps`)
and ``POST .../workbench/waf_migration/ready_to_update`` (the dashboard's Ready
to update, which Turn off previous version needs).

    >>> [r.path.split("/", 3)[-1] for r in router.routes]
    ['waf_migration/check', 'waf_migration/config', 'waf_migration/status', 'workbench/waf_migration/steps', 'workbench/waf_migration/ready_to_update']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import APIRouter
from starlette.requests import Request

from . import _openapi as oa
from ._context import workbench, zone_id_for
from .envelope import Envelope, ok, shown

if TYPE_CHECKING:
    from ..migration.service import MigrationService

router = APIRouter(responses=oa.RESPONSES)

_PHASE_TWO: dict[str, Any] = {
    "parameters": [
        {
            "name": "phase_two",
            "in": "query",
            "required": False,
            "schema": {"type": "string", "enum": ["1", "0", "true", "false"]},
            "description": "1: the phase-2 eligibility rule (from 2022-09-19)",
        }
    ]
}


def migration(request: Request) -> MigrationService:
    """The migration service of the served Workbench."""
    return workbench(request).migration


@router.get(
    "/zones/{zone_id}/waf_migration/check",
    summary="M1 Check WAF update compatibility",
    openapi_extra=_PHASE_TWO,
)
async def check(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(migration(request).check(zone, phase_two=request.query_params.get("phase_two")))


@router.get(
    "/zones/{zone_id}/waf_migration/config",
    summary="M2 Get the new WAF configuration equivalent to the old one",
    openapi_extra=_PHASE_TWO,
)
async def config(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    made = migration(request).config(zone, phase_two=request.query_params.get("phase_two"))
    body = ok(made.result())
    body["messages"] = list(made.messages)
    return Envelope(body)


@router.get("/zones/{zone_id}/waf_migration/status", summary="M3 Get WAF status")
async def status(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(migration(request).status(zone))


# -- the workbench's extensions: the dashboard's steps ----------------------------------------
@router.get(
    "/zones/{zone_id}/workbench/waf_migration/steps",
    summary="Where the zone's migration stands: the steps open now, why the others are closed",
    description="Not a platform path. The stage (not_eligible, start, validation, finishing, "
    "done), the API's migration_state, each dashboard step (review, deploy, compare, "
    "ready_to_update, turn_off_previous) open or closed with its reason, and the refusal a "
    "migrating save would get now with its remedies. Eligibility is checked as with phase_two=1.",
)
async def steps(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(migration(request).steps(zone))


@router.post(
    "/zones/{zone_id}/workbench/waf_migration/ready_to_update",
    summary="The dashboard's Ready to update (Enterprise, in validation mode)",
    description="Not a platform path. Unlocks Turn off previous version (a PUT of the managed "
    "entry point with waf_migration=pending); refused with code 10709 outside validation "
    "mode or when selected already. Answers the status.",
)
async def ready_to_update(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(migration(request).ready_to_update(zone))
