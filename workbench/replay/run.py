"""A replay over a log from the terminal's arguments: the Workbench and zone made, then the engine.

The zone comes from saved API responses (``config``, as ``workbench import``
reads them) or is a demo: an Enterprise zone named like the log's zone, with
the old WAF on (as a new paid zone has it) and both managed rulesets deployed
(validation mode). ``systems`` chooses what runs, as in the pipeline. This is
the one module of the package that makes a Workbench: the package's interface
(``workbench.replay``) does not import it, since the platform replays through
that interface (the traffic and tuning services).

    >>> wb, zone_id = demo_zone("a.example")
    >>> wb.zone(zone_id).name
    'a.example'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.platform import Workbench
from ._engines import EngineError, check_log, open_engine
from ._log_backend import replay_zone
from ._log_replay import LogReplay


def demo_zone(name: str, seed: int = 0) -> tuple[Workbench, str]:
    """A Workbench with one Enterprise zone ``name``: old WAF on, both managed rulesets executed."""
    from ..rulesets import CLOUDFLARE_MANAGED_ID, MANAGED_PHASE, OWASP_ID

    wb = Workbench(seed=seed)
    zone = wb.create_zone(name, plan="enterprise")
    wb.rulesets.put_entrypoint(
        zone.id,
        MANAGED_PHASE,
        {
            "rules": [
                {"action": "execute", "expression": "true", "action_parameters": {"id": i}}
                for i in (CLOUDFLARE_MANAGED_ID, OWASP_ID)
            ]
        },
    )
    return wb, zone.id


def replay_log(
    log: str | Path,
    zone: str,
    *,
    engine: str = "duckdb",
    out: str | Path,
    config: str | Path | None = None,
    systems: Any = "auto",
    master: str | None = None,
    cores: int = 2,
    memory_limit: str = "1GB",
    seed: int = 0,
) -> LogReplay:
    """Replay ``zone``'s requests of ``log`` on ``engine``; raises :class:`EngineError`."""
    folder = check_log(log, zone)
    if config is not None:
        from ..zone_import import ZoneImportError, import_zone

        wb = Workbench(seed=seed)
        try:
            zone_id = import_zone(wb, config).zone.id
        except ZoneImportError as exc:
            raise EngineError(f"--config: {exc}") from None
    else:
        wb, zone_id = demo_zone(zone, seed)
    with open_engine(
        engine, folder, zone, wb.zone(zone_id).plan, master=master, cores=cores,
        memory_limit=memory_limit, sliced=True,
    ) as (backend, rows):  # fmt: skip
        return replay_zone(backend, wb, wb.zone(zone_id), rows.table, out, systems)
