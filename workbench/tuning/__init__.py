"""Tuning before and after the switch: what-if, the OWASP score sweep, the narrowest exception.

Reached as ``wb.tuning`` (:class:`TuningService`). The API, stable for the
panel and the notebook:

* ``w = wb.tuning.whatif(zone_id, requests)`` -> :class:`WhatIf`: the
  requests (generated, or imported with :mod:`workbench.traffic.importers`)
  replayed through the zone as it runs now and through the proposed new
  configuration (what a migration would configure, or the tuned draft, or the
  zone's own entry point once it has one), on any plan, without writing the
  zone. ``w.requests`` (one row per request: ``ray_id, label, method, host,
  path, query, old_action, new_action, change``), ``w.summary()``,
  ``w.by_rule()``, ``w.to_parquet(path)``.
* ``w.breakdown`` -> :class:`Breakdown` (computed once): every OWASP scoring
  rule that matched each request at any paranoia level.
  ``wb.tuning.sweep(w, levels, thresholds)`` (or ``w.breakdown.sweep``) ->
  DataFrame ``paranoia_level, threshold, label, attack, blocked, total,
  share``; ``wb.tuning.explain(w, ray_id_or_index)`` -> :class:`Explanation`
  (rules with score and level, total against threshold, overrides that flip it).
* ``wb.tuning.propose(w, marked)`` -> list of :class:`Candidate` for requests
  marked as wrongly blocked, narrowest first (``rule``, ``tag``, ``skip``,
  ``threshold``): ``.body`` (the entry point PUT body), ``.to_json()``,
  ``.hcl(provider=4|5)``, ``.blast`` (other requests it stops blocking or
  inspecting, attacks first), ``.counts`` (by label), ``.lets_attack_through``.
  The list (:class:`Proposals`) has a ``reason`` when no one candidate clears every
  marked request: each candidate then clears one group of ``groups`` (by cause).
* ``wb.tuning.apply(zone_id, candidate, w, accept_risk=False)`` ->
  :class:`Applied`: stored through the entry point PUT (or as the draft of a
  zone not migrated yet), replayed again; ``.comparison``, ``.as_predicted``.

    >>> from workbench import Workbench
    >>> from workbench.traffic import generate
    >>> wb = Workbench(seed=0)
    >>> zone = wb.create_zone("example.com", plan="business")
    >>> w = wb.tuning.whatif(zone.id, generate(30, seed=3), progress=False)
    >>> sweep = wb.tuning.sweep(w, levels=[1, 4], thresholds=[25])
    >>> sorted(set(sweep.paranoia_level)), list(sweep.columns)[-3:]
    ([1, 4], ['blocked', 'total', 'share'])

Modules: ``_matches`` (private: which expression matched each request, decided again at
will), ``config`` (the new configuration), ``whatif``, ``breakdown`` (sweep,
explain), ``candidates`` (propose, blast radius), ``service``, and
``whatif_engine`` (the same comparison computed by DuckDB or Spark over a
Parquet log: ``python -m workbench whatif LOG --zone Z --engine duckdb``).
"""

from .breakdown import Breakdown, Explanation
from .candidates import KINDS, Candidate, Proposals, propose
from .config import NewConfig
from .service import Applied, RiskNotAccepted, TuningService
from .whatif import CHANGES, WhatIf, run_whatif

__all__ = [
    "CHANGES",
    "KINDS",
    "Applied",
    "Breakdown",
    "Candidate",
    "Proposals",
    "Explanation",
    "NewConfig",
    "RiskNotAccepted",
    "TuningService",
    "WhatIf",
    "propose",
    "run_whatif",
]
