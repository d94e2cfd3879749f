"""The HTTP v4 face: the platform's API paths, envelopes and errors over uvicorn.

>>> from workbench import Workbench
>>> from workbench.api import create_app
>>> app = create_app(Workbench(seed=0))   # an ASGI app; or serve(wb) for a live server
>>> app.openapi()["info"]["version"]
'4'
"""

from __future__ import annotations

from .app import PREFIX, create_app
from .client import ApiClient, CreationOutcome, Exchange
from .server import BackgroundServer, demo_workbench, run, serve, stop

__all__ = [
    "PREFIX",
    "ApiClient",
    "BackgroundServer",
    "CreationOutcome",
    "Exchange",
    "create_app",
    "demo_workbench",
    "run",
    "serve",
    "stop",
]
