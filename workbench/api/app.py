"""The ASGI application: the v4 API of one Workbench under ``/client/v4``.

>>> from workbench import Workbench
>>> app = create_app(Workbench(seed=0))
>>> app.openapi_url
'/client/v4/openapi.json'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request

from ..core.errors import ValidationError, WorkbenchError
from ._routes_firewall import router as firewall_router
from ._routes_migration import router as migration_router
from ._routes_rulesets import router as rulesets_router
from ._routes_traffic import router as traffic_router
from ._routes_waf import router as waf_router
from ._routes_workbench import router as workbench_router
from ._routes_zones import router as zones_router
from .envelope import Envelope, error_response
from .errors import HttpStatusError, MethodNotAllowed, NoRoute
from .guard import Guard

if TYPE_CHECKING:
    from ..core.platform import Workbench

PREFIX = "/client/v4"


def create_app(wb: Workbench) -> FastAPI:
    """A FastAPI app serving ``wb``; every answer is a v4 envelope."""
    wb.firewall  # build the service now, not from two requests at once  # noqa: B018
    app = FastAPI(
        title="workbench v4 API (filters, firewall rules, page rules, zones)",
        version="4",
        openapi_url=f"{PREFIX}/openapi.json",
        docs_url=None,  # the description is the JSON; no UI pulling scripts from a CDN
        redoc_url=None,
        default_response_class=Envelope,
        # "/zones/" is no route: a 307 with an empty body is not a v4 answer.
        redirect_slashes=False,
    )
    app.state.wb = wb
    # Odd paths and queries, and unexpected errors (answered, logged, never re-raised).
    app.add_middleware(Guard)
    app.include_router(zones_router, prefix=PREFIX)
    app.include_router(firewall_router, prefix=PREFIX)
    app.include_router(rulesets_router, prefix=PREFIX)
    app.include_router(waf_router, prefix=PREFIX)
    app.include_router(migration_router, prefix=PREFIX)
    app.include_router(workbench_router, prefix=PREFIX)
    app.include_router(traffic_router, prefix=PREFIX)

    @app.exception_handler(WorkbenchError)
    async def core_error(request: Request, exc: WorkbenchError) -> Envelope:
        return error_response(exc)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Envelope:
        if exc.status_code == 405:
            return error_response(MethodNotAllowed(request.method))
        if exc.status_code == 404:
            return error_response(NoRoute())
        return error_response(HttpStatusError(exc.status_code, str(exc.detail)))

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Envelope:
        return error_response(ValidationError("the request is malformed"))

    return app
