"""The terminal face: ``workbench <command>`` (or ``python -m workbench <command>``).

    $ python -m workbench lab --dry-run
    jupyter lab notebooks/00-start-here.ipynb

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
from pathlib import Path

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
    """Start JupyterLab on the start notebook (from the repo root when there is one)."""
    root = repo_root()
    command = ["jupyter", "lab"]
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
def configure_serve(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8787, help="port (0 picks a free one)")
    parser.add_argument("--seed", type=int, default=0, help="seed of ids and credentials")
    parser.add_argument("--email", help="account email (X-Auth-Email)")
    parser.add_argument("--key", help="global API key, 37 characters (X-Auth-Key)")
    parser.add_argument("--token", help="API token, 40 characters (Authorization: Bearer)")


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the v4 API of a demo Workbench (one zone per plan) until Ctrl-C; 2 on bad credentials."""
    from .api.server import demo_workbench, run  # fastapi/uvicorn load only for this command

    try:
        wb = demo_workbench(args.seed, args.email, args.key, args.token)
    except ValueError as exc:
        print(f"workbench serve: {exc}", file=sys.stderr)
        return 2
    try:
        run(wb, args.host, args.port)
    except OSError as exc:
        print(f"workbench serve: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
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
