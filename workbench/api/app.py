"""The ASGI application: the v4 API of one Workbench under ``/client/v4``.

>>> from workbench import Workbench
>>> app = create_app(Workbench(seed=0))
>>> app.openapi_url
'/client/v4/openapi.json'
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request

from ..core.errors import WorkbenchError
from .envelope import METHOD_NOT_ALLOWED, NO_ROUTE, Envelope, error_response, failure
from .routes_firewall import router as firewall_router
from .routes_zones import router as zones_router

PREFIX = "/client/v4"
log = logging.getLogger("workbench.api")


def create_app(wb: Any) -> FastAPI:
    """A FastAPI app serving ``wb``; every answer is a v4 envelope."""
    wb.firewall  # build the backend now, not from two requests at once  # noqa: B018
    app = FastAPI(
        title="workbench v4 API (filters, firewall rules, page rules, zones)",
        version="4",
        openapi_url=f"{PREFIX}/openapi.json",
        docs_url=None,  # the description is the JSON; no UI pulling scripts from a CDN
        redoc_url=None,
        default_response_class=Envelope,
    )
    app.state.wb = wb
    app.include_router(zones_router, prefix=PREFIX)
    app.include_router(firewall_router, prefix=PREFIX)

    @app.exception_handler(WorkbenchError)
    async def core_error(request: Request, exc: WorkbenchError) -> Envelope:
        return error_response(exc)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Envelope:
        if exc.status_code == 405:
            error = {
                "code": METHOD_NOT_ALLOWED,
                "message": f"Method {request.method} not allowed for this route",
            }
            return Envelope(failure([error]), status_code=405)
        if exc.status_code == 404:
            return Envelope(
                failure([{"code": NO_ROUTE, "message": "No route for that URI"}]), status_code=400
            )
        return Envelope(
            failure([{"code": 10000 + exc.status_code, "message": str(exc.detail)}]),
            status_code=exc.status_code,
        )

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Envelope:
        return Envelope(
            failure([{"code": 10014, "message": "the request is malformed"}]), status_code=400
        )

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Envelope:
        # A bug, not an answer: log it here, never put a traceback in a body.
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return Envelope(failure([{"code": 10500, "message": "internal error"}]), status_code=500)

    return app
