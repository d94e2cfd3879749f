"""Traffic: requests, their fields, importers and the replay pipeline.

    >>> from workbench import Workbench
    >>> wb = Workbench(seed=0)
    >>> zone = wb.create_zone("example.com", plan="enterprise")
    >>> _ = wb.firewall.create_rules(zone.id, [
    ...     {"filter": {"expression": 'http.request.uri.path contains "/wp-login"'}, "action": "block"}])
    >>> run = Pipeline(wb, zone.id, systems="none").replay(generate(200, seed=1), progress=False)
    >>> run.requests, sorted(set(run.events.source))
    (200, ['firewallRules'])

Modules: ``request`` (:class:`Request` and its fields), ``importers`` (HTTP
request logs and combined logs), ``firewall_plan`` and ``zone_plan`` (the
systems as one SystemPlan), ``pipeline`` (replays), ``evaluate`` (its two
paths), ``table`` and ``guards`` (the whole-table path), ``events`` (event
rows), ``progress`` (the progress bar), ``generators`` (labelled traffic),
``placements`` (a payload in a query, a form and a JSON body).
"""

from .firewall_plan import FirewallPlan, firewall_plan
from .generators import LABELS, RawRequest, generate
from .importers import Imported, LogLineError, read_combined_log, read_http_requests, read_log
from .pipeline import Pipeline, Replay, RequestResult, replay
from .request import FIELD_NAMES, Request
from .zone_plan import ZonePlan, resolve_systems, zone_plan

__all__ = [
    "FIELD_NAMES",
    "LABELS",
    "FirewallPlan",
    "Imported",
    "LogLineError",
    "Pipeline",
    "RawRequest",
    "Replay",
    "Request",
    "RequestResult",
    "ZonePlan",
    "firewall_plan",
    "generate",
    "read_combined_log",
    "read_http_requests",
    "read_log",
    "replay",
    "resolve_systems",
    "zone_plan",
]
