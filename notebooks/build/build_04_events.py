"""Write notebooks/04-security-events-with-duckdb.ipynb from the cells below (sources only, no outputs).

The notebook is committed *with* outputs so nbval compares them, and
tests/test_notebooks_sync.py checks that its cells match this script. After
editing this script, rebuild and re-execute every notebook from the repo root:

    make notebooks

or this one only:

    python notebooks/build/build_04_events.py
    jupyter nbconvert --to notebook --execute --inplace notebooks/04-security-events-with-duckdb.ipynb
    python -m pytest --nbval --nbval-current-env notebooks/04-security-events-with-duckdb.ipynb

Cell ids are fixed (``events-01``...), so a rebuild does not churn them.
Replays pass ``progress=False``, so no progress bar reaches the saved outputs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbbuild

PATH = Path(__file__).resolve().parent.parent / "04-security-events-with-duckdb.ipynb"
PREFIX = "events"

CELLS: list[tuple[str, str]] = [
    (
        "md",
        """\
# Security events with DuckDB

Every request that meets a security rule leaves a **security event**: which system
acted (`source`), what it did (`action`), which rule (`rule_id`, `ruleset_id`) and
what the request was (host, path, query, client IP, country...). During a WAF
migration the question is always the same: *what would the new WAF do differently
from the old one?* The events answer it, and at the size of a real zone's traffic
they are best asked in SQL. This notebook

1. puts an Enterprise zone in **validation mode** (old and new WAF both on);
2. replays **generated** traffic (labelled: benign, API, bots and attacks) and
   **imported** traffic (a few nginx/Apache combined-log and HTTP request log lines);
3. answers questions with the canned queries of `workbench.logs`, then with hand-written
   DuckDB SQL;
4. draws the answers with Altair;
5. brings real traffic in: a zone's logs with the decisions the platform recorded, set
   against the workbench's, and why they differ; and ends with the events explorer panel.""",
    ),
    (
        "code",
        """\
from workbench import Workbench
from workbench.rulesets import MANAGED_PHASE

wb = Workbench(seed=0)
zone = wb.create_zone("shop.example", plan="enterprise")
wb.firewall.create_rules(zone.id, [
    {"filter": {"expression": 'ip.src.country in {"KP"}'}, "action": "block",
     "description": "countries we do not serve"},
])
# The new WAF's configuration, generated from the old one's, with two changes to try while
# both run: the XSS rules only log (watch them before enforcing), and a stricter OWASP
# ruleset (every paranoia level, anomaly threshold 25 instead of 40).
config = wb.migration.config(zone.id).result()
managed, owasp = config["rules"]
managed["action_parameters"]["overrides"] = {"categories": [{"category": "xss", "action": "log"}]}
owasp["action_parameters"]["overrides"]["categories"] = []
owasp["action_parameters"]["overrides"]["rules"][0]["score_threshold"] = 25
# Saved with waf_migration=validation: both WAFs on (the API's entry point PUT,
# .../rulesets/phases/http_request_firewall_managed/entrypoint?waf_migration=validation).
wb.migration.put_entrypoint(zone.id, MANAGED_PHASE, config,
                            waf_migration="validation", phase_two="1")
for rule in config["rules"]:
    print(rule["action_parameters"]["id"], rule["action_parameters"].get("overrides"))
print(wb.migration.status(zone.id).to_dict())""",
    ),
    (
        "md",
        """\
In validation mode each request meets the zone's firewall rules, then the **new** WAF,
then the **old** one, but only if the new one did not end it (block or a challenge).
The old WAF's events follow the new one's, under the same ray id.

## Generated traffic

`generate(n, seed, domain=...)` makes labelled requests in a seeded order, sent to the
zone's own hosts (`shop.example`, `www.shop.example`...). `wb.traffic.replay`
runs them through the zone (the whole-table path: each rule's expression compiled
once to SQL and run by DuckDB over all requests) and appends the events to the
Workbench's event log, `wb.traffic.log`.""",
    ),
    (
        "code",
        """\
from workbench.traffic import generate

traffic = generate(3000, seed=4, domain=zone.name)
run = wb.traffic.replay(zone.id, traffic, progress=False)
print(f"{run.requests} requests through {run.systems}: {len(run.events)} events")
run.summary()""",
    ),
    (
        "md",
        """\
## Imported traffic

Real logs come in two shapes the importers read: the platform's HTTP request logs
(one JSON object per line) and the combined log format nginx and Apache write. A
request keeps the time its log gives.""",
    ),
    (
        "code",
        """\
from workbench.traffic import read_combined_log, read_http_requests

combined = [
    '203.0.113.10 - - [01/Jan/2026:00:01:00 +0000] "GET /products/42 HTTP/1.1" 200 5120 '
    '"https://shop.example/" "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Firefox/124.0"',
    '198.51.100.23 - - [01/Jan/2026:00:01:02 +0000] "GET /search?q=1%27%20UNION%20SELECT%20'
    'card_number%20FROM%20cards-- HTTP/1.1" 200 311 "-" "sqlmap/1.7.2#stable (https://sqlmap.org)"',
    '198.51.100.23 - - [01/Jan/2026:00:01:03 +0000] "GET /static/../../../../etc/passwd HTTP/1.1" '
    '404 0 "-" "curl/8.5.0"',
    '192.0.2.77 - - [01/Jan/2026:00:01:05 +0000] "POST /wp-login.php HTTP/1.1" 200 1024 "-" '
    '"Mozilla/5.0 (X11; Linux x86_64)"',
]
ndjson = [
    '{"ClientIP": "203.0.113.50", "ClientRequestHost": "shop.example", "ClientRequestMethod": "GET",'
    ' "ClientRequestURI": "/cart?item=7", "ClientCountry": "fr", "EdgeStartTimestamp": '
    '"2026-01-01T00:01:10Z", "ClientRequestUserAgent": "Mozilla/5.0 (Macintosh) Safari/605.1.15"}',
    '{"ClientIP": "198.51.100.99", "ClientRequestHost": "shop.example", "ClientRequestMethod": "GET",'
    ' "ClientRequestURI": "/?q=<script>alert(document.cookie)</script>", "ClientCountry": "us",'
    ' "EdgeStartTimestamp": "2026-01-01T00:01:12Z", "ClientRequestUserAgent": "Mozilla/5.0"}',
    '{"ClientIP": "175.45.176.3", "ClientRequestHost": "shop.example", "ClientRequestMethod": "GET",'
    ' "ClientRequestURI": "/", "ClientCountry": "kp", "EdgeStartTimestamp": "2026-01-01T00:01:15Z"}',
]
imported = (read_combined_log(combined, host="shop.example", label="imported").requests
            + read_http_requests(ndjson, label="imported").requests)
# A few requests: the per-request path (one at a time) gives the same events as the whole table.
replayed = wb.traffic.replay(zone.id, imported, path="request", progress=False)
for request, ray, action in zip(imported, replayed.ray_ids, replayed.actions):
    print(ray, request.timestamp.isoformat(), f"{action or 'allow':<6}", request.method, request.uri)""",
    ),
    (
        "md",
        """\
The HTTP face has the same door: `POST /client/v4/zones/{zone_id}/workbench/requests`
with a JSON array of `{"method", "url", "headers", "client_ip", "country", "body"}`
runs them through the zone, and `GET .../workbench/events` pages the events (filters
by `source`, `action`, `rule`, `since`/`until`...). `wb.traffic.submit` is the call
behind the first; each event carries the events table's names *and* the analytics
API's (`rayName`, `ruleId`, `clientRequestPath`...):""",
    ),
    (
        "code",
        """\
import json

[answer] = wb.traffic.submit(zone.id, [{
    "method": "GET", "url": "https://shop.example/products?id=1%20OR%201=1",
    "headers": {"User-Agent": "Mozilla/5.0"}, "client_ip": "198.51.100.7", "country": "DE"}])
shown = answer.to_dict()
shown["events"] = [{k: e[k] for k in ("source", "action", "ruleId", "rulesetId", "matchIndex",
                                      "clientRequestPath", "clientRequestQuery")}
                   for e in shown["events"]]
print(json.dumps(shown, indent=1))""",
    ),
    (
        "md",
        """\
## The event log

One row per event in a DuckDB table, `security_events`; named views give each source
a table of its own (`old_waf_events`, `new_waf_events`, `firewall_rule_events`).
`log.query(sql)` runs any DuckDB SQL and returns a pandas DataFrame.""",
    ),
    (
        "code",
        """\
log = wb.traffic.log
print(log)
log.query(\"\"\"
    SELECT source, action, count(*) AS events, count(DISTINCT ray_id) AS requests
    FROM security_events GROUP BY ALL ORDER BY source, events DESC, action
\"\"\")""",
    ),
    (
        "md",
        """\
## Question 1: what does the new WAF let through that the old one stopped?

In validation mode the old WAF only sees what the new one let through, so every
row here is a request the new WAF would pass (perhaps logging it) and the old one
blocks or challenges today: the price of letting the XSS rules only log.""",
    ),
    (
        "code",
        """\
from workbench.logs import (
    actions_over_time, legacy_mapping, legit_blocked_by_new, new_allows_old_blocked,
    rule_comparison, top_rules,
)

allowed = new_allows_old_blocked(log)
print(len(allowed), "requests")
allowed[["ray_id", "label", "path", "query", "old_action", "old_rules", "new_events"]].head(10)""",
    ),
    (
        "md",
        """\
## Question 2: which legitimate requests does the new WAF stop, and by which rule?

The generated traffic is labelled, so "legitimate" is known: `benign`, `api` and
`bot` (good bots). A challenge stops a real user as surely as a block: here, the
price of the stricter OWASP ruleset.""",
    ),
    (
        "code",
        """\
legit_blocked_by_new(log)""",
    ),
    (
        "md",
        """\
## Question 3: which rules act most, and how does each old rule compare with its new one?

The old catalogue names, for most rules, the rule of the new one that replaces it
(`legacy_mapping`); `rule_comparison` counts each pair's events, and the requests
both acted on.""",
    ),
    (
        "code",
        """\
top_rules(log, 8)[["source", "rule_id", "description", "events"]]""",
    ),
    (
        "code",
        """\
pairs = rule_comparison(log, legacy_mapping(wb.waf_legacy.catalog))
columns = ["old_rule_id", "new_rule_id", "old_events", "new_events", "both", "old_only", "new_only"]
pairs[pairs.old_events + pairs.new_events > 0][columns].head(10)""",
    ),
    (
        "md",
        """\
## Question 4, in hand-written SQL: how much of each kind of traffic does the new WAF stop?

Requests the WAFs let through without a word leave no event, so the log alone cannot
say how many requests of each label there were. DuckDB queries pandas DataFrames by
name: register the replay's requests (ray id and label) and join them to the events.""",
    ),
    (
        "code",
        """\
import pandas as pd

requests = pd.DataFrame({"ray_id": run.ray_ids, "label": run.labels})
log.con.register("requests", requests)
by_label = log.query(\"\"\"
    WITH per_ray AS (
        SELECT ray_id,
            bool_or(source = 'firewallManaged') AS new_flagged,
            bool_or(source = 'firewallManaged'
                    AND action IN ('block', 'challenge', 'managed_challenge', 'js_challenge'))
                AS new_stopped,
            bool_or(source = 'waf') AS old_flagged
        FROM security_events GROUP BY ray_id
    )
    SELECT r.label,
        count(*) AS requests,
        count(*) FILTER (WHERE p.new_stopped) AS stopped,
        count(*) FILTER (WHERE p.new_flagged AND NOT p.new_stopped) AS logged_only,
        count(*) FILTER (WHERE p.ray_id IS NULL OR NOT p.new_flagged) AS not_flagged,
        round(100.0 * count(*) FILTER (WHERE p.new_stopped) / count(*), 1) AS pct_stopped
    FROM requests r LEFT JOIN per_ray p USING (ray_id)
    GROUP BY r.label ORDER BY pct_stopped DESC, r.label
\"\"\")
by_label""",
    ),
    (
        "md",
        """\
## Charts

Altair draws straight from the query results. The data is built in a fixed order
(the queries sort fully), so the charts, saved as Vega-Lite JSON, are the same on
every run. First, what the new WAF did to each kind of traffic:""",
    ),
    (
        "code",
        """\
import altair as alt

# The Vega-Lite JSON alone (no HTML with a random element id), so nbval compares it exactly.
alt.renderers.enable("mimetype")

outcomes = ["stopped", "logged_only", "not_flagged"]
data = [{"label": row.label, "outcome": outcome, "requests": int(getattr(row, outcome))}
        for row in by_label.itertuples() for outcome in outcomes]
alt.Chart(alt.Data(values=data)).mark_bar().encode(
    y=alt.Y("label:N", sort=by_label.label.tolist(), title=None),
    x=alt.X("requests:Q", stack="normalize", title="share of requests"),
    color=alt.Color("outcome:N", sort=outcomes,
                    scale=alt.Scale(domain=outcomes, range=["#d62728", "#1f77b4", "#c7c7c7"])),
    order=alt.Order("rank:Q"),
).transform_calculate(
    rank="indexof(['stopped', 'logged_only', 'not_flagged'], datum.outcome)"
).properties(width=420, title="what the new WAF did, by kind of traffic")""",
    ),
    (
        "md",
        """\
And the actions over time, in 5-second buckets (`actions_over_time`), every system
together:""",
    ),
    (
        "code",
        """\
from workbench.widgets.events_charts import ACTION_COLOURS

over = actions_over_time(log, "5 seconds")
data = [{"time": row.bucket.strftime("%H:%M:%S"), "action": row.action, "events": int(row.events)}
        for row in over.itertuples()]
actions = [a for a in ACTION_COLOURS if a in {d["action"] for d in data}]  # the panel's colours
alt.Chart(alt.Data(values=data)).mark_bar().encode(
    x=alt.X("time:O", title="bucket start (UTC)", axis=alt.Axis(labelAngle=-45)),
    y=alt.Y("events:Q"),
    color=alt.Color("action:N", scale=alt.Scale(
        domain=actions, range=[ACTION_COLOURS[a] for a in actions])),
).properties(width=480, height=200, title="events per 5 seconds, by action")""",
    ),
    (
        "md",
        """\
## Keeping the log

The log goes to Parquet in one call and comes back the same; DuckDB also reads the
file directly.""",
    ),
    (
        "code",
        """\
import tempfile
from pathlib import Path

from workbench.logs import EventLog

with tempfile.TemporaryDirectory() as folder:
    path = log.to_parquet(Path(folder) / "events.parquet")
    again = EventLog.from_parquet(path)
    direct = log.query("SELECT count(*) AS n FROM read_parquet(?)", [str(path)]).n[0]
    print(again.count() == log.count() == direct, again.count(), "events")""",
    ),
    (
        "md",
        """\
## Bring your own traffic

Everything above was generated. Real traffic comes with what the platform decided
for it, and the question turns round: *does the workbench decide as the real zone
did, and where not, why?* `notebooks/data` holds a morning of `shop.example` in the
platform's own formats:

- `shop-http_requests.ndjson`: the zone's HTTP request log (Logpush http_requests, one
  JSON object per line) with its Security fields, the decision recorded for each request;
- `shop-firewall_events.ndjson`: the firewall events of the same requests, one per rule
  that acted;
- `shop-session.har`: one visitor's browser session as the browser's devtools save it,
  with headers, cookies and bodies.

The comparison needs a zone set up as the real one. Here it is the zone
`python -m workbench agreement` uses (Enterprise, the previous WAF on, both managed
rulesets deployed), in a Workbench of its own, so the events above stay as they are.
`read_log` tells the three formats apart by their content.""",
    ),
    (
        "code",
        """\
from workbench.replay.run import demo_zone
from workbench.traffic import read_firewall_events, read_har, read_log

real_wb, real_zone = demo_zone("shop.example")
logged = read_log("data/shop-http_requests.ndjson")
decided = [d for d in logged.recorded if d is not None]
print(f"{len(logged)} requests ({logged.format}), {len(decided)} with a recorded decision")
agreement = real_wb.traffic.agreement(real_zone, logged)
print(agreement.headline())
agreement.by_action""",
    ),
    (
        "md",
        """\
Rows are what the platform recorded, columns what the workbench decided; the
diagonal agrees. Per rule of the systems the workbench simulates (custom and managed
rules, the previous WAF): the requests it acted on in the log, here, and in both.""",
    ),
    (
        "code",
        """\
agreement.by_rule[["description", "source", "recorded", "simulated", "both", "agreement"]]""",
    ),
    (
        "md",
        """\
### What disagrees, and why

Each request that disagrees comes with a reason, and the rules that acted on each side:""",
    ),
    (
        "code",
        """\
import textwrap

for row in agreement.disagreements.itertuples():
    print(f"line {row.line}: {row.method} {row.uri}")
    print(f"  recorded {row.recorded}, simulated {row.simulated}")
    print(textwrap.fill(row.reason, 92, initial_indent="  ", subsequent_indent="  "))""",
    ),
    (
        "md",
        """\
Four requests, four different stories, and only one of them is about the rules:

- **`POST /api/cart`**: the managed rules' SQL injection rule blocked it at the edge,
  and does not match here. The SQL was in the JSON body, and Logpush never logs
  bodies: no replay of this log can match a rule that reads the body. The browser's
  HAR has the body (below).
- **`POST /account/login`**: the sixth login in a minute from one address, blocked by
  **rate limiting**. A rate limit counts requests per address over time; the
  workbench does not simulate it, so here the request goes through. Not a fault of
  the rules: a product this comparison cannot cover.
- **`GET /products?page=14`**: the scraper, challenged by **Bot Management** from its
  bot score, made of signals (TLS fingerprint, behaviour) that no log carries. Not
  simulated either.
- **The office's post with a `<script>` tag**: the real zone has a custom rule that
  skips the managed rules for the office's address; the zone here has no such
  exception, so the XSS rule blocks it. This one *is* a difference of configuration:
  add the exception here, or import the real zone's configuration
  (`python -m workbench agreement LOG --config saved-zone/`).

What the log cannot tell is counted on this log:""",
    ),
    (
        "code",
        """\
for row in agreement.cannot_tell.itertuples():
    print(textwrap.fill(f"{row.requests} of {row.of} ({row.what}): {row.note}", 92,
                        subsequent_indent="  "))""",
    ),
    (
        "md",
        """\
### The session's HAR, with the firewall events

A HAR holds each request whole but records no decision; the firewall events do,
joined by ray id (the HAR response's `cf-ray` header). The cart's body is in it:""",
    ),
    (
        "code",
        """\
session = read_har("data/shop-session.har")
events = read_firewall_events("data/shop-firewall_events.ndjson")
print(f"{len(session)} requests in the HAR, {len(events)} firewall events")
with_har = real_wb.traffic.agreement(real_zone, session, events=events)
print(with_har.headline())
columns = ["line", "method", "uri", "recorded", "simulated", "verdict", "simulated_rule"]
with_har.frame[columns].fillna("")""",
    ),
    (
        "md",
        """\
With its body, the cart's `POST` meets the same SQL injection rule here as at the
edge: it agrees. The session's other three requests have no firewall event, hence
no recorded decision, and are not compared: firewall events are often filtered or
sampled, so a missing event does not prove that nothing acted.

The events explorer's **Your traffic** tab does all this from files you upload in
the browser: a log, and if you have them the firewall events, then **Compare**.
Driven here on the sample files, as the upload button holds them after a browser
sent them (the second file goes to the wrong button on purpose):""",
    ),
    (
        "code",
        """\
from datetime import UTC, datetime
from pathlib import Path

from workbench.widgets import EventsExplorer


def as_uploaded(path):
    \"\"\"What the upload button holds after a browser sent the file at ``path``.\"\"\"
    content = Path(path).read_bytes()
    return ({"name": Path(path).name, "type": "", "size": len(content),
             "content": memoryview(content), "last_modified": datetime(2026, 1, 1, tzinfo=UTC)},)


yours = EventsExplorer(real_wb, real_zone).your_traffic
yours.log_upload.value = as_uploaded("data/shop-http_requests.ndjson")
yours.run_button.click()
print(yours.status.kind, "-", yours.status.text)
yours.log_upload.value = as_uploaded("data/shop-firewall_events.ndjson")
yours.run_button.click()
print(yours.status.kind, "-", yours.status.text)
yours.clear_button.click()  # both files and the report forgotten""",
    ),
    (
        "md",
        """\
## The events explorer

`EventsExplorer(wb, zone)` puts all of this in a panel: pick a canned query or write
SQL, pick an event to see its request and every rule that matched it, and look at
the **Charts**, **Old vs new** and **Your traffic** tabs. A demo instance first (the
cells drive it as a person would):""",
    ),
    (
        "code",
        """\
from workbench.widgets import EventsExplorer

demo = EventsExplorer(wb, zone.id)
demo.query.value = "legit_blocked_by_new"
demo.run_query_button.click()
print(demo.status.kind, "-", demo.status.text)
demo.sql.value = "SELECT * FROM security_events WHERE source = 'waf' ORDER BY datetime LIMIT 5"
demo.run_sql_button.click()
print(demo.status.kind, "-", demo.status.text)
demo.pick.value = demo.pick.options[0][1]
print(demo.detail_status.text)
demo.sql.value = "DELETE FROM security_events"
demo.run_sql_button.click()
print(demo.status.kind, "-", demo.status.text)""",
    ),
    (
        "md",
        """\
And the panel for you, fresh (the demos above used their own instances). Its **Your
traffic** tab compares with this notebook's zone, whose XSS rules only log and whose
OWASP ruleset is stricter: upload the sample log there to see what that changes.""",
    ),
    (
        "code",
        """\
panel = EventsExplorer(wb, zone.id)
panel""",
    ),
]


if __name__ == "__main__":
    sys.exit(nbbuild.write(CELLS, PREFIX, PATH))
