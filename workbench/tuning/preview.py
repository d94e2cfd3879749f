"""The migration's preview: what the reviewed configuration would change, before any deploy.

The platform has no preview: on Pro and Business zones *Deploy* finishes the
migration at once, and only Enterprise zones get validation mode. The
simulator can try first. :func:`preview` replays the same labelled requests
through the zone as it runs now and through the reviewed configuration (the
tuning package's what-if, :func:`~workbench.tuning.whatif.run_whatif`: the
zone, its rulesets and its migration state are never written), puts both
sides' events in one fresh event log under the same ray ids, and asks the
migration's two questions of it, as the validation-mode comparison does
(:func:`workbench.traffic.comparison.compare`). The wizard renders the
result before *Deploy* on every plan.

    >>> from workbench import Workbench
    >>> wb = Workbench(seed=0)
    >>> zone = wb.create_zone("shop.example", plan="pro")
    >>> found = preview(wb, zone.id, 200, seed=1)
    >>> found.summary()
    'previewed 200 requests (seed 1) through the zone as it is and as the reviewed configuration would make it'
    >>> found.preview, found.systems
    (True, ['old', 'new'])
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..logs import EventLog, legit_blocked_by_new, new_allows_old_blocked
from ..traffic.comparison import ALLOWED_COLUMNS, LEGIT_COLUMNS, MAX_REQUESTS, Comparison, records
from ..traffic.generators import generate
from .config import NewConfig, body_rule
from .whatif import run_whatif

if TYPE_CHECKING:
    from ..core.platform import Workbench


def preview(
    wb: Workbench,
    zone_id: str,
    n: int | None = None,
    *,
    seed: int = 1,
    requests: Iterable[Any] | None = None,
    rules: list[dict[str, Any]] | None = None,
    config: NewConfig | None = None,
) -> Comparison:
    """Replay ``n`` generated requests (``seed``, sent to the zone's hosts), or ``requests``,
    through the zone now and through the reviewed configuration: ``config`` (default
    :meth:`NewConfig.of_zone`: the tuned draft or what the migration would set), with its
    managed rules replaced by ``rules`` when given (as the review adjusted them)."""
    zone = wb.zone(zone_id)
    if requests is None:
        if n is None or isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_REQUESTS:
            raise ValueError(f"n: a whole number of requests from 1 to {MAX_REQUESTS}, got {n!r}")
        traffic: list[Any] = generate(n, seed=seed, domain=zone.name)
    else:
        traffic = list(requests)
    config = config or NewConfig.of_zone(wb, zone.id)
    if rules is not None:
        config = config.with_rules([body_rule(r) for r in rules])
    w = run_whatif(wb, zone.id, traffic, config=config, progress=False)
    log = EventLog()
    with log.appending():
        # Both sides under the same ray ids: the old WAF's events and the new WAF's are read
        # together, as validation mode writes them for one request.
        log.append(w.old.events, normalised=True)
        log.append(w.new.events, normalised=True)
    actions = Counter(a or "pass" for a in w.new.actions)
    return Comparison(
        requests=len(traffic),
        seed=seed,
        systems=["old", "new"],
        actions=dict(sorted(actions.items())),
        allowed=records(new_allows_old_blocked(log), ALLOWED_COLUMNS),
        legit=records(legit_blocked_by_new(log), LEGIT_COLUMNS),
        log=log,
        preview=True,
    )
