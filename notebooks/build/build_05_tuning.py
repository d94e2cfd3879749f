"""Write notebooks/05-tuning-false-positives.ipynb from the cells below (sources only, no outputs).

The notebook is committed *with* outputs so nbval compares them, and
tests/test_notebooks_sync.py checks that its cells match this script. After
editing this script, rebuild and re-execute every notebook from the repo root:

    make notebooks

or this one only:

    python notebooks/build/build_05_tuning.py
    jupyter nbconvert --to notebook --execute --inplace notebooks/05-tuning-false-positives.ipynb
    python -m pytest --nbval --nbval-current-env notebooks/05-tuning-false-positives.ipynb

The log it reads (notebooks/data/pro-zone-access.log and its labels) is
written by notebooks/build/write_pro_zone_log.py. Cell ids are fixed
(``tuning-01``...), so a rebuild does not churn them. What-ifs pass
``progress=False``, so no progress bar reaches the saved outputs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbbuild

PATH = Path(__file__).resolve().parent.parent / "05-tuning-false-positives.ipynb"
PREFIX = "tuning"

CELLS: list[tuple[str, str]] = [
    (
        "md",
        """\
# Tuning false positives before the switch

Only Enterprise zones get **validation mode**. A Pro or Business zone finds out what
the new WAF blocks *after* the switch, and the switch cannot be undone. `wb.tuning`
answers the question before it:

1. import a Pro zone's access log (nginx combined format) and the team's triage labels;
2. **what-if**: replay it through the zone as it runs now and through the configuration
   the migration would deploy, side by side, without touching the zone;
3. sweep the OWASP ruleset's paranoia levels and thresholds, from one score breakdown;
4. find the **false positives**, and explain each one's score;
5. propose exceptions from the narrowest, pick one by its **blast radius**;
6. apply it (kept as the zone's tuning draft), replay, verify; then **migrate** with it.""",
    ),
    (
        "code",
        """\
import csv

import altair as alt

from workbench import Workbench
from workbench.traffic.importers import read_combined_log

alt.renderers.enable("mimetype")  # saved charts are Vega-Lite JSON alone (see docs/panels.md)

wb = Workbench(seed=0)
zone = wb.create_zone("blog.example", plan="pro")

log = read_combined_log("data/pro-zone-access.log", host="blog.example")
with open("data/pro-zone-labels.csv") as f:
    for req, row in zip(log.requests, csv.DictReader(f), strict=True):
        req.label = row["label"]  # the combined format does not say what traffic is
reqs = log.requests
print(len(reqs), "requests,", log.skipped, "lines skipped")
print(reqs[0].method, reqs[0].url[:70], reqs[0].timestamp.isoformat())""",
    ),
    (
        "md",
        """\
## What-if, before migrating

The old side is the zone as it runs now (its old WAF); the new side is what the migration
would configure (the Cloudflare Managed Ruleset and the OWASP ruleset at paranoia level 2,
score threshold 40). Both are real replays of the same requests, with the same ray ids.""",
    ),
    (
        "code",
        """\
w = wb.tuning.whatif(zone.id, reqs, progress=False)
print("new side:", w.config.source, w.config.owasp_settings())
print("migration state is still:", wb.migration.status(zone.id).to_dict()["migration_state"])
w.summary()""",
    ),
    (
        "md",
        """\
## The OWASP ruleset at each paranoia level and threshold

From the one score breakdown of the what-if (no replay per setting): how much legitimate
traffic and how many attacks the OWASP ruleset alone would block. Any whole-number
threshold may be asked for (33 here, besides 25, 40 and 60).""",
    ),
    (
        "code",
        """\
from workbench.widgets.tuning_charts import sweep_chart

sweep = wb.tuning.sweep(w, levels=[1, 2, 3, 4], thresholds=[25, 33, 40, 60])
grouped = sweep.groupby(["paranoia_level", "threshold", "attack"])[["blocked", "total"]].sum()
print(grouped.unstack("attack").loc[(slice(None), [25, 40]), :].to_string())
sweep_chart(sweep, level=2, threshold=40)""",
    ),
    (
        "md",
        """\
## The false positives

Benign requests the new side would block or challenge: three previews of the blog's
editor, articles that quote SQL and HTML. The old WAF blocks them already, so the
summary counts them as *unchanged*; the switch is the moment to fix them.""",
    ),
    (
        "code",
        """\
from workbench.tuning.whatif import stops

r = w.requests
fp = r[(r.label == "benign") & r.new_action.map(stops)]
fp.assign(query=fp["query"].str.slice(0, 48))[
    ["ray_id", "path", "query", "old_action", "new_action"]]""",
    ),
    (
        "md",
        """\
Why is the first preview of the SQL article blocked? `explain` lists the OWASP rules that
matched, each with its score and paranoia level (`+` where it counts at this setting),
the total against the threshold, and the overrides that would flip the OWASP outcome.
CRS finds the quoted SQL and HTML and scores the preview far over 40, and a Cloudflare
Managed rule ends the request even before: the events of the new side name it.""",
    ),
    (
        "code",
        """\
article = fp[fp["query"].str.contains("Bound")]
marked = list(article.ray_id)
print(wb.tuning.explain(w, marked[0]))
ev = w.new.events
ev[(ev.ray_id == marked[0])][["source", "action", "rule_id", "description"]]""",
    ),
    (
        "md",
        """\
## The narrowest exception, chosen by its blast radius

Both previews of that article are marked as wrongly blocked. `propose` returns candidates
from the narrowest kind (one rule) to the widest (the threshold), each decided again over
the whole log: which *other* requests it would stop blocking or stop inspecting.""",
    ),
    (
        "code",
        """\
import pandas as pd

cands = wb.tuning.propose(w, marked)
pd.DataFrame([
    {"kind": c.kind, "remedy": c.title[:64], "others affected": c.radius,
     "lets an attack through": c.lets_attack_through}
    for c in cands])""",
    ),
    (
        "md",
        """\
The narrowest, that Cloudflare Managed rule set to `log` and the six OWASP rules that carry
the preview over the threshold turned off, would also let real SQL injections through; its
blast radius lists them first:""",
    ),
    (
        "code",
        """\
cands[0].blast.head(6)""",
    ),
    (
        "md",
        """\
Applying it is refused unless the risk is accepted in so many words:""",
    ),
    (
        "code",
        """\
from workbench.tuning import RiskNotAccepted

try:
    wb.tuning.apply(zone.id, cands[0], w)
except RiskNotAccepted as exc:
    print("refused:", exc)""",
    ),
    (
        "md",
        """\
So the choice is the narrowest candidate that lets no attack through: a skip rule limited
to what the two previews share (host, path, method, parameter names), skipping the managed
rules after it, since both rulesets stop the previews. It also clears the third preview, an
article on XSS by the same editor. Its entry point PUT body and its Terraform:""",
    ),
    (
        "code",
        """\
chosen = next(c for c in cands if not c.lets_attack_through)
print(chosen.kind, "-", chosen.title)
print(chosen.blast.to_string())
print(chosen.to_json()[:600])""",
    ),
    (
        "code",
        """\
print(chosen.hcl(provider=5))""",
    ),
    (
        "md",
        """\
## Apply and verify

The zone has not migrated, so the candidate is checked by a dry-run PUT and kept as the
zone's tuning draft; the same requests are replayed through it:""",
    ),
    (
        "code",
        """\
applied = wb.tuning.apply(zone.id, chosen, w)
print("stored as:", applied.stored, "| as predicted:", applied.as_predicted)
changed = applied.comparison[applied.comparison.changed]
print(changed[["ray_id", "label", "before", "after"]].to_string())
applied.summary()""",
    ),
    (
        "md",
        """\
## Migrate with the tuned configuration

`wb.tuning.config(zone)` is the tuned entry point body; the migration deploys it. A Pro
zone has no validation mode to stay in: the status reads `validation` while the new WAF is
being deployed, and `done` once two minutes of (virtual) clock time have passed.""",
    ),
    (
        "code",
        """\
status = wb.migration.deploy(zone.id, wb.tuning.config(zone.id))
print(status.to_dict()["migration_state"])
wb.advance(minutes=3)
print(wb.migration.status(zone.id).to_dict()["migration_state"])
print([rule["action"] for rule in wb.tuning.config(zone.id)["rules"]])""",
    ),
    (
        "md",
        """\
After the switch the zone runs the new WAF: a what-if now compares it with itself, and
the previews pass while every attack the old configuration stopped is still stopped.""",
    ),
    (
        "code",
        """\
after = wb.tuning.whatif(zone.id, reqs, progress=False)
a = after.requests
print("new side:", after.config.source)
print("previews:", a[a.ray_id.isin(marked)].new_action.tolist())
attacks = r.label.isin(["sqli", "xss", "cmdi", "traversal", "scanner", "cms"])
print("attacks stopped before:", int(r[attacks].new_action.map(stops).sum()),
      "after:", int(a[attacks.to_numpy()].new_action.map(stops).sum()))""",
    ),
    (
        "md",
        """\
## The tuning panel

`TuningPanel(wb, zone, requests)` puts all of this in one place: the sweep chart with a
paranoia level and threshold picker, the blocked requests to mark (with why each was
blocked), the candidates with their blast radius, JSON and Terraform, and Apply, which
asks for an explicit confirmation when a candidate lets an attack through and then shows
before and after side by side. Here it opens fresh on the migrated zone's what-if:""",
    ),
    (
        "code",
        """\
from workbench.widgets import TuningPanel

panel = TuningPanel(wb, zone.id, whatif=after)
panel""",
    ),
]


if __name__ == "__main__":
    sys.exit(nbbuild.write(CELLS, PREFIX, PATH))
