"""Traffic: requests, their fields, generators, importers, the zone's plan and event rows.

    >>> req = Request("POST", "https://example.com/login?next=%2F", body="a=1")
    >>> req.fields(["http.request.method", "http.request.uri.query"])
    {'http.request.method': 'POST', 'http.request.uri.query': 'next=%2F'}
    >>> [r.label for r in generate(4, seed=1)]
    ['bot', 'benign', 'api', 'benign']

Modules: ``request`` (:class:`Request` and its fields), ``importers`` (HTTP
request logs and combined logs), ``firewall_plan`` and ``zone_plan`` (the
systems as one SystemPlan), ``events`` (event rows), ``parts`` (many requests'
parts at once), ``progress`` (the progress bar), ``generators`` (labelled
traffic), ``placements`` (a payload in a query, a form and a JSON body),
``service`` (submitted traffic and its events) and ``comparison`` (the
migration wizard's replay). Replays themselves (the pipeline, and every way the
checks run) are :mod:`workbench.replay`, which reads this package's requests.
"""

from .firewall_plan import FirewallPlan, firewall_plan
from .generators import LABELS, RawRequest, generate
from .importers import Imported, LogLineError, read_combined_log, read_http_requests, read_log
from .request import FIELD_NAMES, Request
from .zone_plan import ZonePlan, resolve_systems, zone_plan

__all__ = [
    "FIELD_NAMES",
    "LABELS",
    "FirewallPlan",
    "Imported",
    "LogLineError",
    "RawRequest",
    "Request",
    "ZonePlan",
    "firewall_plan",
    "generate",
    "read_combined_log",
    "read_http_requests",
    "read_log",
    "resolve_systems",
    "zone_plan",
]
