"""Traffic: requests, their fields, generators, importers, the zone's plan and event rows.

    >>> req = Request("POST", "https://example.com/login?next=%2F", body="a=1")
    >>> req.fields(["http.request.method", "http.request.uri.query"])
    {'http.request.method': 'POST', 'http.request.uri.query': 'next=%2F'}
    >>> [r.label for r in generate(4, seed=1)]
    ['bot', 'benign', 'api', 'benign']

Modules: ``request`` (:class:`Request` and its fields), ``importers`` (HTTP
request logs with their Security fields, and combined logs), ``importers_har``
(HAR files), ``importers_events`` (firewall events, Logpush and GraphQL),
``log_reading`` (what the readers share), ``decisions`` (recorded decisions in
one spelling), ``recorded_logs`` (the same formats written), ``agreement``
(recorded against simulated decisions; ``agreement_files`` for the terminal),
``sample_logs`` (notebooks/data's sample logs), ``firewall_plan`` and ``zone_plan`` (the
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
from .importers_events import FirewallEvents, attach_events, read_firewall_events
from .importers_har import read_har
from .request import FIELD_NAMES, Request
from .zone_plan import ZonePlan, resolve_systems, zone_plan

__all__ = [
    "FIELD_NAMES",
    "LABELS",
    "FirewallEvents",
    "FirewallPlan",
    "Imported",
    "LogLineError",
    "RawRequest",
    "Request",
    "ZonePlan",
    "firewall_plan",
    "attach_events",
    "generate",
    "read_combined_log",
    "read_firewall_events",
    "read_har",
    "read_http_requests",
    "read_log",
    "resolve_systems",
    "zone_plan",
]
