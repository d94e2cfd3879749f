"""The terminal face: ``workbench <command>`` (or ``python -m workbench <command>``).

    $ python -m workbench lab --dry-run
    jupyter lab '--ServerApp.tornado_settings={"websocket_max_message_size": 209715200}' notebooks/00-start-here.ipynb

Adding a command is one function plus one entry in :data:`COMMANDS`: the
function takes the parsed arguments and returns an exit code, and an optional
``configure`` function adds its own options to the subcommand's parser.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .lab import LAB_SERVER_OPTIONS

START_NOTEBOOK = Path("notebooks") / "00-start-here.ipynb"


def repo_root() -> Path | None:
    """The source checkout this package runs from, or ``None`` when installed elsewhere."""
    root = Path(__file__).resolve().parent.parent
    return root if (root / "pyproject.toml").is_file() else None


# -- lab -------------------------------------------------------------------
def configure_lab(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dry-run", action="store_true", help="print the command instead of running it"
    )


def cmd_lab(args: argparse.Namespace) -> int:
    """Start JupyterLab on the start notebook (from the repo root when there is one), with
    uploads up to :data:`workbench.lab.UPLOAD_LIMIT_MB`."""
    root = repo_root()
    command = ["jupyter", "lab", *LAB_SERVER_OPTIONS]
    if os.name == "posix" and os.geteuid() == 0:
        command.append("--allow-root")  # JupyterLab refuses to start as root otherwise
    if root is not None and (root / START_NOTEBOOK).is_file():
        command.append(START_NOTEBOOK.as_posix())
    if args.dry_run:
        print(shlex.join(command))
        return 0
    try:
        return subprocess.call(command, cwd=root)
    except FileNotFoundError:
        print("workbench: `jupyter` not found; install with `pip install -e .`", file=sys.stderr)
        return 127
    except KeyboardInterrupt:
        return 130


# -- serve -----------------------------------------------------------------
def parse_now(text: str) -> datetime:
    """``--now``: an ISO time; one without an offset is UTC."""
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--now takes an ISO time like 2022-05-03T00:00:00Z, got {text!r}"
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def configure_serve(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on; beyond loopback the key and token are random "
        "(unless --seeded-credentials)",
    )
    parser.add_argument("--port", type=int, default=8787, help="port (0 picks a free one)")
    parser.add_argument(
        "--now",
        type=parse_now,
        help="start the virtual clock at this ISO time (for example 2022-05-03T00:00:00Z); "
        "default: the real time. Move it with PUT /client/v4/workbench/clock",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of ids and credentials")
    parser.add_argument("--email", help="account email (X-Auth-Email)")
    parser.add_argument("--key", help="global API key, 37 characters (X-Auth-Key)")
    parser.add_argument("--token", help="API token, 40 characters (Authorization: Bearer)")
    parser.add_argument(
        "--seeded-credentials",
        action="store_true",
        help="on an address other than loopback, use the key and token derived from --seed "
        "(anyone who knows the seed can use them) instead of random ones",
    )


def credentials_note(args: argparse.Namespace, loopback: bool) -> tuple[bool, str]:
    """Whether ``serve`` draws random credentials, and the banner line that says so.

    Seeded credentials are the same on every run, so they stay on loopback
    (and where asked for); an address other machines reach gets random ones.
    """
    drawn = [
        name for name, given in (("X-Auth-Key", args.key), ("API token", args.token)) if not given
    ]
    if loopback:
        return False, f"seeded from --seed {args.seed}, the same on every run (loopback only)"
    if args.seeded_credentials:
        return False, (
            f"seeded from --seed {args.seed} (--seeded-credentials): anyone who knows "
            f"the seed can use them on {args.host}"
        )
    if not drawn:
        return True, f"as given on the command line (listening on {args.host})"
    return True, (
        f"{' and '.join(drawn)} random for this run, since {args.host} is not a loopback "
        "address (--seeded-credentials for the seeded ones)"
    )


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the v4 API of a demo Workbench (one zone per plan) until Ctrl-C; 2 on bad credentials."""
    from .api.server import demo_workbench, is_loopback, run  # fastapi/uvicorn load only here

    randomized, note = credentials_note(args, is_loopback(args.host))
    try:
        wb = demo_workbench(
            args.seed,
            args.email,
            args.key,
            args.token,
            random_credentials=randomized,
            start=args.now or datetime.now(UTC).replace(microsecond=0),
        )
    except ValueError as exc:
        print(f"workbench serve: {exc}", file=sys.stderr)
        return 2
    try:
        run(wb, args.host, args.port, note=note)
    except OSError as exc:
        print(f"workbench serve: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


# -- terraform -------------------------------------------------------------
def configure_terraform(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--base-url",
        required=True,
        help="the v4 API, e.g. http://127.0.0.1:8787/client/v4 or https://api.cloudflare.com/client/v4",
    )
    parser.add_argument("--zone", required=True, metavar="ZONE_ID", help="the zone's id")
    auth = parser.add_mutually_exclusive_group(required=True)
    auth.add_argument("--token", help="API token (Authorization: Bearer)")
    auth.add_argument("--email", help="account email (X-Auth-Email), with --key")
    parser.add_argument("--key", help="global API key (X-Auth-Key), with --email")
    parser.add_argument(
        "--provider", type=int, choices=(4, 5), default=5, help="provider major version (5)"
    )
    parser.add_argument(
        "--modern-import-block",
        action="store_true",
        help="end the HCL with an import block instead of a `terraform import` command",
    )
    parser.add_argument(
        "--state-file", help="Terraform state (.tfstate, or `terraform show -json` output)"
    )
    parser.add_argument(
        "--tf", action="append", default=[], metavar="PATH", help=".tf file or folder (repeatable)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def cmd_terraform(args: argparse.Namespace) -> int:
    """Terraform for a zone's managed-WAF entry point, read from a v4 API; 1 when it cannot be read."""
    from .terraform import EntrypointError, fetch_entrypoint, generate, read_state

    if (args.email is None) != (args.key is None):
        print("workbench terraform: --email and --key go together", file=sys.stderr)
        return 2
    try:
        state = read_state(args.state_file) if args.state_file else None
        entrypoint = fetch_entrypoint(
            args.base_url, args.zone, token=args.token, email=args.email, key=args.key
        )
        result = generate(
            entrypoint,
            args.zone,
            provider=args.provider,
            modern_import_block=args.modern_import_block,
            state=state,
            tf_sources=[Path(p) for p in args.tf],  # paths, never HCL text
        )
    except EntrypointError as exc:
        hint = " (no entry point yet: has the zone migrated?)" if exc.status == 404 else ""
        print(f"workbench terraform: {exc}{hint}", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"workbench terraform: {exc}", file=sys.stderr)
        return 1
    print(result.to_json() if args.json else result.to_text().rstrip("\n"))
    return 0


# -- import ----------------------------------------------------------------
IMPORT_FILES = """\
files (GET responses saved with curl: the v4 envelope or only its result;
every file but zone.json is optional, any list may be saved as pages
<name>-1.json, <name>-2.json ...):
  zone.json                  /zones/{id}
  filters.json               /zones/{id}/filters
  firewall_rules.json        /zones/{id}/firewall/rules
  pagerules.json             /zones/{id}/pagerules
  waf_packages.json          /zones/{id}/firewall/waf/packages
  waf_groups_<package>.json  .../waf/packages/{package}/groups (or all in waf_groups.json)
  waf_rules_<package>.json   .../waf/packages/{package}/rules (or all in waf_rules.json)
  waf_overrides.json         /zones/{id}/firewall/waf/overrides
  settings_waf.json          /zones/{id}/settings/waf
"""


def configure_import(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = IMPORT_FILES
    parser.add_argument("folder", help="folder of saved API responses (file names below)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the new ids (0)")
    parser.add_argument("--json", action="store_true", help="print the summary as one JSON object")


def cmd_import(args: argparse.Namespace) -> int:
    """Import a zone into a fresh Workbench and print a summary; 1 (error on stderr) when it cannot."""
    import json

    from .core.platform import Workbench
    from .zone_import import ZoneImportError, import_zone

    try:
        done = import_zone(Workbench(seed=args.seed), args.folder)
    except ZoneImportError as exc:
        print(f"workbench import: {exc}", file=sys.stderr)
        return 1
    for warning in done.warnings:
        print(f"workbench import: warning: {warning}", file=sys.stderr)
    print(json.dumps(done.summary(), indent=2) if args.json else "\n".join(done.lines()))
    return 0


# -- replay ----------------------------------------------------------------
def configure_replay(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log", help="folder of a partitioned Parquet request log (zone=/hour=)")
    parser.add_argument(
        "--zone", required=True, help="the zone's name, as in the log's zone= folders"
    )
    parser.add_argument("--engine", choices=("duckdb", "spark"), default="duckdb", help="duckdb")
    parser.add_argument("--master", help="Spark master URL (default: local mode on --cores)")
    parser.add_argument(
        "--cores", type=int, default=2, help="local Spark cores / DuckDB threads (2)"
    )
    parser.add_argument("--out", default="replay-events", help="folder for events.parquet")
    parser.add_argument(
        "--config",
        help="folder of saved API responses for the zone (as `workbench import`); default: an "
        "Enterprise zone with the old WAF on and both managed rulesets deployed",
    )
    parser.add_argument(
        "--systems", default="auto", choices=("auto", "old", "new", "both", "none"), help="auto"
    )
    parser.add_argument("--memory-limit", default="1GB", help="DuckDB memory before spilling (1GB)")


def cmd_replay(args: argparse.Namespace) -> int:
    """Replay a zone's requests of a Parquet log on DuckDB or Spark; events to OUT/events.parquet.

    The what-if of the tuning package takes the same ``--engine`` (``whatif --engine``).
    """
    from .replay import EngineError
    from .replay.run import replay_log

    if args.cores < 1:
        print(f"workbench replay: --cores must be >= 1, got {args.cores}", file=sys.stderr)
        return 2
    try:
        done = replay_log(
            args.log,
            args.zone,
            engine=args.engine,
            out=Path(args.out) / "events.parquet",
            config=args.config,
            systems=args.systems,
            master=args.master,
            cores=args.cores,
            memory_limit=args.memory_limit,
        )
    except EngineError as exc:
        print(f"workbench replay: {exc}", file=sys.stderr)
        return 1
    print("\n".join(done.lines()))
    return 0


# -- whatif ----------------------------------------------------------------
def configure_whatif(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "log",
        help="request log: HTTP request log lines (NDJSON), combined or a HAR; with --engine also a "
        "partitioned Parquet log folder (zone=/hour=)",
    )
    parser.add_argument("--zone", required=True, help="zone name, created in a fresh Workbench")
    parser.add_argument("--plan", default="pro", help="the zone's plan (pro)")
    parser.add_argument("--out", default="whatif.parquet", help="comparison file (whatif.parquet)")
    parser.add_argument("--label", default="", help="label given to every imported request")
    parser.add_argument("--seed", type=int, default=0, help="seed of the Workbench (0)")
    parser.add_argument(
        "--engine",
        choices=("duckdb", "spark"),
        help="compute it on a replay engine over the log as Parquet (default: in process)",
    )
    parser.add_argument("--master", help="Spark master URL (default: local mode on --cores)")
    parser.add_argument(
        "--cores", type=int, default=2, help="local Spark cores / DuckDB threads (2)"
    )
    parser.add_argument("--memory-limit", default="1GB", help="DuckDB memory before spilling (1GB)")


def cmd_whatif(args: argparse.Namespace) -> int:
    """Print the what-if summary of a log on a fresh zone and write the comparison; 1 on errors.

    With ``--engine`` the same comparison comes from DuckDB or Spark
    (:func:`workbench.tuning.whatif_engine.whatif_log`).
    """
    if args.engine is not None:
        return _whatif_on_engine(args)
    from .core.platform import Workbench
    from .traffic.importers import read_log

    try:
        wb = Workbench(seed=args.seed)
        zone = wb.create_zone(args.zone, plan=args.plan)
        reqs = read_log(args.log, host=zone.name, label=args.label)
        whatif = wb.tuning.whatif(zone.id, list(reqs), progress=False)
        whatif.to_parquet(args.out)
    except (OSError, ValueError) as exc:
        print(f"workbench whatif: {exc}", file=sys.stderr)
        return 1
    _print_whatif(len(whatif.requests), zone.name, zone.plan, whatif.summary(), args.out)
    return 0


def _whatif_on_engine(args: argparse.Namespace) -> int:
    from .replay import EngineError
    from .tuning.whatif_engine import whatif_log

    try:
        done = whatif_log(
            args.log,
            args.zone,
            out=args.out,
            engine=args.engine,
            plan=args.plan,
            label=args.label,
            seed=args.seed,
            master=args.master,
            cores=args.cores,
            memory_limit=args.memory_limit,
        )
    except (EngineError, OSError, ValueError) as exc:
        print(f"workbench whatif: {exc}", file=sys.stderr)
        return 1
    _print_whatif(done.requests, done.zone_name, done.zone_plan, done.summary(), args.out)
    return 0


def _print_whatif(requests: int, zone: str, plan: str, summary: Any, out: str) -> None:
    print(f"{requests} requests on {zone} ({plan}): now vs the new WAF")
    print(summary.to_string())
    print(f"per-request comparison written to {out}")


# -- agreement -------------------------------------------------------------
def configure_agreement(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "log",
        help="request log: a HAR, http_requests NDJSON (its Security fields are the recorded "
        "decisions) or a combined log, told apart by content",
    )
    parser.add_argument(
        "--config",
        help="folder of saved API responses for the zone (as `workbench import`); default: an "
        "Enterprise zone named as the log's host, with the old WAF on and both managed "
        "rulesets deployed",
    )
    parser.add_argument(
        "--events",
        help="Logpush firewall_events NDJSON or a GraphQL firewallEventsAdaptive export: the "
        "recorded decisions, joined by ray id (else by time, path and query)",
    )
    parser.add_argument("--host", default="", help="host of a combined log's requests")
    parser.add_argument("--seed", type=int, default=0, help="seed of the Workbench (0)")
    parser.add_argument(
        "--json", action="store_true", help="end with the report as one JSON object (last line)"
    )


def cmd_agreement(args: argparse.Namespace) -> int:
    """Replay a log through the zone and compare with its recorded decisions; 1 when unreadable."""
    import json

    from .traffic.agreement_files import AgreementInputError, agreement_of_files

    try:
        done = agreement_of_files(
            args.log, config=args.config, events=args.events, host=args.host, seed=args.seed
        )
    except AgreementInputError as exc:
        print(f"workbench agreement: {exc}", file=sys.stderr)
        return 1
    print(done.text())
    if args.json:
        print(json.dumps(done.to_json(), default=str))
    return 0


# -- registry --------------------------------------------------------------
@dataclass(frozen=True)
class Command:
    """One subcommand: what it does, how it runs, and its own options."""

    help: str
    run: Callable[[argparse.Namespace], int]
    configure: Callable[[argparse.ArgumentParser], None] | None = None


COMMANDS: dict[str, Command] = {
    "lab": Command("start JupyterLab on notebooks/00-start-here.ipynb", cmd_lab, configure_lab),
    "serve": Command("serve the HTTP v4 API of a demo account", cmd_serve, configure_serve),
    "terraform": Command(
        "Terraform for a zone's managed-WAF entry point (cloudflare_ruleset, import, clean-up)",
        cmd_terraform,
        configure_terraform,
    ),
    "import": Command(
        "import a zone from saved API responses (zone.json, filters.json, ...) and summarise it",
        cmd_import,
        configure_import,
    ),
    "replay": Command(
        "replay a zone's requests of a Parquet log on DuckDB or Spark into events.parquet",
        cmd_replay,
        configure_replay,
    ),
    "whatif": Command(
        "replay a request log through a zone now and through its new WAF, side by side",
        cmd_whatif,
        configure_whatif,
    ),
    "agreement": Command(
        "replay a log through the zone and compare with the decisions the platform recorded",
        cmd_agreement,
        configure_agreement,
    ),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="workbench",
        description="A Jupyter workbench that simulates an edge-security platform.",
    )
    sub = parser.add_subparsers(dest="command", metavar="command")
    for name, command in COMMANDS.items():
        p = sub.add_parser(name, help=command.help, description=command.help)
        if command.configure is not None:
            command.configure(p)
        p.set_defaults(run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default: ``sys.argv[1:]``), run the command, return its exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "run", None) is None:
        parser.print_help()
        return 2
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
