"""``wb.tuning``: what-if, sweep, explain, propose and apply for the zones of one Workbench.

The service keeps one thing per zone: the *draft*, the tuned managed entry
point of a zone that has not migrated yet (:meth:`TuningService.apply` on
such a zone stores it here rather than on the zone, which the migration
would refuse; :meth:`TuningService.config` gives it to deploy). A zone that
has an entry point is tuned through the same call the API's entry point PUT
makes (``wb.migration.put_entrypoint``).

    >>> from workbench import Workbench
    >>> from workbench.traffic import generate
    >>> wb = Workbench(seed=0)
    >>> zone = wb.create_zone("example.com", plan="pro")
    >>> w = wb.tuning.whatif(zone.id, generate(40, seed=2), progress=False)
    >>> int(w.summary().loc["total", "total"])
    40
    >>> [r["action"] for r in wb.tuning.config(zone.id)["rules"]]
    ['execute', 'execute']
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped]

from ..rulesets import MANAGED_PHASE
from .breakdown import LEVELS, THRESHOLDS, Explanation
from .candidates import Candidate, Proposals, propose
from .config import NewConfig
from .preview import preview
from .whatif import WhatIf, run_whatif

if TYPE_CHECKING:
    from ..core.platform import Workbench
    from ..traffic.comparison import Comparison


class RiskNotAccepted(ValueError):
    """Applying a candidate that lets a labelled attack through, without ``accept_risk=True``."""


@dataclass
class Applied:
    """A candidate applied: the what-if before and after, side by side."""

    candidate: Candidate
    before: WhatIf
    after: WhatIf
    stored: str  # "entrypoint" (the zone's PUT) or "draft" (kept for the migration)

    @property
    def comparison(self) -> Any:
        """Per request: the new side's action before and after, and the one the blast radius predicted."""
        frame = pd.DataFrame(
            {
                "ray_id": self.before.requests.ray_id,
                "label": self.before.requests.label,
                "before": self.before.requests.new_action,
                "after": self.after.requests.new_action.to_numpy(),
                "predicted": self.candidate.actions,
            }
        )
        frame["changed"] = frame.before != frame.after
        return frame

    @property
    def as_predicted(self) -> bool:
        """Whether the replay after applying gave every request the predicted action."""
        return bool(
            np.array_equal(self.after.requests.new_action.to_numpy(), self.candidate.actions)
        )

    def summary(self) -> Any:
        """Requests by label: blocked before, blocked after."""
        c = self.comparison
        blocked = c.assign(before=c.before != "pass", after=c.after != "pass")
        return blocked.groupby("label")[["before", "after"]].sum()


class TuningService:
    """Tuning for every zone of ``wb`` (see the package docstring)."""

    def __init__(self, wb: Workbench) -> None:
        self.wb = wb
        self.lock = threading.RLock()
        self._drafts: dict[str, list[dict[str, Any]]] = {}

    def new_config(self, zone_id: str) -> NewConfig:
        """The managed configuration the new side runs for the zone."""
        zone = self.wb.zone(zone_id)
        with self.lock:
            draft = self._drafts.get(zone.id)
        return NewConfig.of_zone(self.wb, zone.id, draft)

    def config(self, zone_id: str) -> dict[str, Any]:
        """The entry point PUT body of :meth:`new_config` (give it to ``wb.migration.deploy``)."""
        return self.new_config(zone_id).body()

    def whatif(self, zone_id: str, requests: Iterable[Any], **options: Any) -> WhatIf:
        """Replay ``requests`` through the zone now and through :meth:`new_config`, side by side;
        options: ``seed``, ``progress``, ``step_ms``."""
        return run_whatif(self.wb, zone_id, requests, config=self.new_config(zone_id), **options)

    def preview(self, zone_id: str, n: int | None = None, **options: Any) -> Comparison:
        """The migration's preview before any deploy (:func:`~workbench.tuning.preview.preview`)
        through :meth:`new_config`; options: ``seed``, ``requests``, ``rules``.

        It is the migration's ``preview`` step: refused, with the step's reason, once the
        new version is on (compare both versions then) or when the zone cannot migrate.
        """
        self.wb.migration.steps(zone_id).require("preview")
        return preview(self.wb, zone_id, n, config=self.new_config(zone_id), **options)

    def sweep(self, whatif: WhatIf, levels: Any = LEVELS, thresholds: Any = THRESHOLDS) -> Any:
        """:meth:`Breakdown.sweep <workbench.tuning.breakdown.Breakdown.sweep>` of a what-if."""
        return whatif.breakdown.sweep(levels, thresholds)

    def explain(self, whatif: WhatIf, request: Any) -> Explanation:
        """:meth:`Breakdown.explain <workbench.tuning.breakdown.Breakdown.explain>` of one request."""
        return whatif.breakdown.explain(request)

    def propose(self, whatif: WhatIf, marked: Any) -> Proposals:
        """:func:`~workbench.tuning.candidates.propose`."""
        return propose(whatif, marked)

    def apply(
        self, zone_id: str, candidate: Candidate, whatif: WhatIf, *, accept_risk: bool = False
    ) -> Applied:
        """Apply ``candidate`` (made from ``whatif``), replay the same requests, return both.

        A candidate that lets a labelled attack through needs ``accept_risk=True``.
        """
        zone = self.wb.zone(zone_id)
        if candidate.zone_id != zone.id or whatif.zone_id != zone.id:
            raise ValueError(f"candidate: it was made for zone {candidate.zone_id}, not {zone.id}")
        if candidate.lets_attack_through and not accept_risk:
            raise RiskNotAccepted(
                "candidate lets a labelled attack through (see its blast radius); "
                "pass accept_risk=True to apply it anyway"
            )
        with self.lock:
            if self.wb.rulesets.find_entrypoint(zone.id, MANAGED_PHASE) is not None:
                self.wb.migration.put_entrypoint(zone.id, MANAGED_PHASE, candidate.body)
                stored = "entrypoint"
            else:
                # Checked as the PUT would check it, stored for the migration to deploy.
                self.wb.rulesets.put_entrypoint(
                    zone.id, MANAGED_PHASE, candidate.body, dry_run=True
                )
                self._drafts[zone.id] = candidate.body["rules"]
                stored = "draft"
        after = self.whatif(zone.id, whatif.reqs, progress=False)
        return Applied(candidate, whatif, after, stored)
