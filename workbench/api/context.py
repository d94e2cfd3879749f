"""What every route needs: the Workbench, the caller and the zone it may use.

>>> from workbench import Workbench
>>> from workbench.api.app import create_app
>>> app = create_app(Workbench(seed=0))
>>> app.state.wb.seed
0
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from ..core.errors import NotFound
from .auth import Caller, authenticate, authentication_error


def workbench(request: Request) -> Any:
    """The Workbench the app serves."""
    return request.app.state.wb


def backend(request: Request) -> Any:
    """The firewall backend of the served Workbench."""
    return request.app.state.wb.firewall


def caller(request: Request) -> Caller:
    """The authenticated caller (raises the auth errors of the facts)."""
    return authenticate(request.app.state.wb, request.headers)


def zone_id_for(request: Request, zone_id: str) -> str:
    """Check that the caller may use ``zone_id`` and that it names a zone."""
    who = caller(request)
    if not who.may_use(zone_id):
        raise authentication_error()
    zone = request.app.state.wb.zone(zone_id)
    if zone.id != zone_id:  # the core also finds zones by name; the API only by id
        raise NotFound(
            7003,
            f"Could not route to /zones/{zone_id}, perhaps your object identifier is invalid?",
        )
    return zone.id
