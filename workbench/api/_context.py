"""What every route needs: the Workbench, the caller and the zone it may use.

>>> from workbench import Workbench
>>> from workbench.api.app import create_app
>>> app = create_app(Workbench(seed=0))
>>> app.state.wb.seed
0
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.requests import Request

from .auth import Caller, authenticate, authentication_error

if TYPE_CHECKING:
    from ..core.platform import Workbench
    from ..firewall.service import FirewallService


def workbench(request: Request) -> Workbench:
    """The Workbench the app serves."""
    wb: Workbench = request.app.state.wb
    return wb


def firewall(request: Request) -> FirewallService:
    """The firewall service of the served Workbench."""
    return workbench(request).firewall


def caller(request: Request) -> Caller:
    """The authenticated caller (raises the auth errors of the facts)."""
    return authenticate(workbench(request), request.headers)


def zone_id_for(request: Request, zone_id: str) -> str:
    """Check that the caller may use ``zone_id`` and that it names a zone."""
    who = caller(request)
    if not who.may_use(zone_id):
        raise authentication_error()
    return workbench(request).zone_by_id(zone_id).id
