"""Routes W1-W6 (old WAF packages, groups, rules), O1-O2 (URI-based overrides), the ``waf`` setting.

Each route authenticates, reads its input, makes one call to the old-WAF
service (``wb.waf_legacy``) and renders the result; errors are rendered by
the app's handler. After a zone migrated every one of them answers 400
``10607`` (the old WAF is retired).

    >>> sorted({r.path for r in router.routes})[:2]
    ['/zones/{zone_id}/firewall/waf/overrides', '/zones/{zone_id}/firewall/waf/overrides/{override_id}']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import APIRouter
from starlette.requests import Request

from ..waf_legacy.models import ACTION_MODES, OVERRIDE_ACTIONS, SENSITIVITIES
from . import _openapi as oa
from ._context import workbench, zone_id_for
from .envelope import Envelope, ok, shown, shown_page
from .request import query_args, read_json

if TYPE_CHECKING:
    from ..waf_legacy.service import WafLegacyService

router = APIRouter(responses=oa.RESPONSES)

_STR = {"type": "string"}
_ON_OFF = {"type": "string", "enum": ["on", "off"]}
_QUERY: dict[str, dict[str, Any]] = {
    "name": _STR,
    "mode": _STR,
    "group_id": _STR,
    "description": _STR,
    "priority": _STR,
    "rules_count": {"type": "integer", "minimum": 0},
    "order": _STR,
    "direction": {"type": "string", "enum": ["asc", "desc"]},
    "match": {"type": "string", "enum": ["any", "all"]},
    "page": {"type": "integer", "minimum": 1},
    "per_page": {"type": "integer", "minimum": 5, "maximum": 100},
}
_ACTION_MAP = {"type": "object", "additionalProperties": _STR}
OVERRIDE_BODY: dict[str, Any] = {
    "type": "object",
    "properties": {
        "urls": {"type": "array", "items": _STR, "minItems": 1},
        "rules": _ACTION_MAP,
        "groups": _ACTION_MAP,
        "rewrite_action": {
            "type": "object",
            "additionalProperties": {"type": "string", "enum": list(OVERRIDE_ACTIONS)},
        },
        "priority": {"type": "integer"},
        "description": _STR,
        "paused": {"type": "boolean"},
    },
    "required": ["urls"],
}
PACKAGE_BODY = {
    "type": "object",
    "properties": {
        "sensitivity": {"type": "string", "enum": list(SENSITIVITIES)},
        "action_mode": {"type": "string", "enum": list(ACTION_MODES)},
    },
}
MODE_BODY = {"type": "object", "properties": {"mode": _STR}, "required": ["mode"]}
SETTING_BODY = {"type": "object", "properties": {"value": _ON_OFF}, "required": ["value"]}


# Each list route's query parameters, named once: documented in the OpenAPI schema and
# read from the request by the same tuple.
_PACKAGE_QUERY = ("name", "order", "direction", "match", "page", "per_page")
_GROUP_QUERY = ("mode", "name", "rules_count", "order", "direction", "match", "page", "per_page")
_RULE_QUERY = ("mode", "group_id", "description", "priority", "order", "direction", "match",
               "page", "per_page")  # fmt: skip
_PAGE_QUERY = ("page", "per_page")


def _query(names: tuple[str, ...]) -> dict[str, Any]:
    """``openapi_extra`` declaring the query parameters ``names`` (schemas from ``_QUERY``)."""
    return oa.query(*names, schemas=_QUERY)


def waf(request: Request) -> WafLegacyService:
    """The old-WAF service of the served Workbench."""
    return workbench(request).waf_legacy


_PACKAGES = "/zones/{zone_id}/firewall/waf/packages"
_PACKAGE = _PACKAGES + "/{package_id}"
_OVERRIDES = "/zones/{zone_id}/firewall/waf/overrides"


# -- packages -------------------------------------------------------------------
@router.get(_PACKAGES, summary="W1 List WAF packages", openapi_extra=_query(_PACKAGE_QUERY))
async def list_packages(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown_page(waf(request).list_packages(zone, **query_args(request, _PACKAGE_QUERY)))


@router.get(_PACKAGE, summary="W2 Get a WAF package")
async def get_package(zone_id: str, package_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(waf(request).get_package(zone, package_id))


@router.patch(
    _PACKAGE,
    summary="W2 Edit an anomaly package's sensitivity and action_mode",
    openapi_extra=oa.body(PACKAGE_BODY),
)
async def edit_package(zone_id: str, package_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(waf(request).edit_package(zone, package_id, await read_json(request)))


# -- groups ---------------------------------------------------------------------
@router.get(
    _PACKAGE + "/groups", summary="W3 List a package's groups", openapi_extra=_query(_GROUP_QUERY)
)
async def list_groups(zone_id: str, package_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    query = query_args(request, _GROUP_QUERY)
    return shown_page(waf(request).list_groups(zone, package_id, **query))


@router.get(_PACKAGE + "/groups/{group_id}", summary="W4 Get a group")
async def get_group(zone_id: str, package_id: str, group_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(waf(request).get_group(zone, package_id, group_id))


@router.patch(
    _PACKAGE + "/groups/{group_id}",
    summary="W4 Turn a group on or off",
    openapi_extra=oa.body(MODE_BODY),
)
async def edit_group(zone_id: str, package_id: str, group_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(waf(request).edit_group(zone, package_id, group_id, await read_json(request)))


# -- rules ----------------------------------------------------------------------
@router.get(
    _PACKAGE + "/rules", summary="W5 List a package's rules", openapi_extra=_query(_RULE_QUERY)
)
async def list_rules(zone_id: str, package_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown_page(waf(request).list_rules(zone, package_id, **query_args(request, _RULE_QUERY)))


@router.get(_PACKAGE + "/rules/{rule_id}", summary="W6 Get a rule")
async def get_rule(zone_id: str, package_id: str, rule_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(waf(request).get_rule(zone, package_id, rule_id))


@router.patch(
    _PACKAGE + "/rules/{rule_id}",
    summary="W6 Change a rule's mode (one of its allowed_modes)",
    openapi_extra=oa.body(MODE_BODY),
)
async def edit_rule(zone_id: str, package_id: str, rule_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(waf(request).edit_rule(zone, package_id, rule_id, await read_json(request)))


# -- URI-based overrides --------------------------------------------------------
@router.get(
    _OVERRIDES, summary="O1 List URI-based WAF overrides", openapi_extra=_query(_PAGE_QUERY)
)
async def list_overrides(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown_page(waf(request).list_overrides(zone, **query_args(request, _PAGE_QUERY)))


@router.post(
    _OVERRIDES,
    summary="O1 Create a URI-based WAF override (rules or groups required)",
    openapi_extra=oa.body(OVERRIDE_BODY),
)
async def create_override(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(waf(request).create_override(zone, await read_json(request)))


@router.get(_OVERRIDES + "/{override_id}", summary="O2 Get a URI-based WAF override")
async def get_override(zone_id: str, override_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(waf(request).get_override(zone, override_id))


@router.put(
    _OVERRIDES + "/{override_id}",
    summary="O2 Replace a URI-based WAF override",
    openapi_extra=oa.body(OVERRIDE_BODY),
)
async def replace_override(zone_id: str, override_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(waf(request).replace_override(zone, override_id, await read_json(request)))


@router.delete(_OVERRIDES + "/{override_id}", summary="O2 Delete a URI-based WAF override")
async def delete_override(zone_id: str, override_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    await read_json(request, required=False)
    return Envelope(ok({"id": waf(request).delete_override(zone, override_id)}))


# -- the zone setting -----------------------------------------------------------
@router.get("/zones/{zone_id}/settings/waf", summary="Get the waf zone setting (old WAF switch)")
async def get_setting(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(waf(request).get_setting(zone))


@router.patch(
    "/zones/{zone_id}/settings/waf",
    summary="Turn the old WAF on or off for the zone",
    openapi_extra=oa.body(SETTING_BODY),
)
async def set_setting(zone_id: str, request: Request) -> Envelope:
    zone = zone_id_for(request, zone_id)
    return shown(waf(request).set_setting(zone, await read_json(request)))
