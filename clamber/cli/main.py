"""The `clamber` command: optimize, check and show climbing robots."""

from __future__ import annotations

import argparse
import logging
import sys

from clamber.cli import codesign, demo, gripper, optimize, quadruped, sim
from clamber.cli.options import Parser, strict_json
from clamber.exceptions import ClamberError

log = logging.getLogger("clamber")

EXAMPLES_MAIN = """examples:
  clamber jumper optimize                       # nominal robot, coarse then fine
  clamber jumper optimize --resolution coarse --json
  clamber demo --out out/demo                   # what `make demo` runs
  clamber -q jumper simulate sol.npz --json     # no progress messages on stderr
"""


def _print_summary(summary: dict, as_json: bool) -> None:
    if as_json:
        print(strict_json(summary))
        return
    width = max(len(k) for k in summary)
    for k, v in summary.items():
        if isinstance(v, float):
            v = f"{v:.4g}"
        elif isinstance(v, dict | list):
            v = strict_json(v)
        print(f"{k:<{width}}  {v}")


def build_parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    parser = Parser(
        prog="clamber", description="Design, optimize and control climbing robots.",
        epilog=EXAMPLES_MAIN, formatter_class=fmt)
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="more messages on stderr (debug)")
    parser.add_argument("-q", "--quiet", action="count", default=0,
                        help="fewer messages on stderr (-q: warnings only, -qq: errors only)")
    sub = parser.add_subparsers(dest="command", required=True)

    demo.register(sub)

    jumper = sub.add_parser("jumper", help="the planar jump-climbing robot",
                            epilog=EXAMPLES_MAIN, formatter_class=fmt)
    jsub = jumper.add_subparsers(dest="jumper_command", required=True)
    for module in (optimize, codesign, sim, gripper):
        module.register(jsub)
    quadruped.register(sub)
    return parser


def _headless_figures() -> None:
    """Figures are files: the command line draws without a display unless the user chose
    a backend (MPLBACKEND). Library code never switches backends."""
    import os

    if "MPLBACKEND" not in os.environ:
        os.environ["MPLBACKEND"] = "Agg"


def _logging(verbosity: int) -> None:
    """Messages on stderr through the logging module: INFO (progress) by default, also
    with --json; -v adds DEBUG, -q keeps warnings, -qq errors only."""
    level = {-2: logging.ERROR, -1: logging.WARNING, 0: logging.INFO}.get(
        max(-2, min(verbosity, 1)), logging.DEBUG)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log.handlers[:] = [handler]
    log.setLevel(level)
    log.propagate = False


def _one_line(e: Exception) -> str:
    return " ".join(str(e).split())


def main(argv: list[str] | None = None) -> int:
    _headless_figures()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse printed the usage error (2) or the help (0)
        return int(e.code or 0)
    _logging(args.verbose - args.quiet)
    try:
        summary = args.func(args)
    except (ClamberError, OSError) as e:  # OSError: the user's files (unwritable, full)
        print(f"clamber: error: {_one_line(e)}", file=sys.stderr)
        return 2
    _print_summary(summary, args.json)
    return 0 if summary.get("status") in ("converged", "acceptable", None) else 1


if __name__ == "__main__":
    raise SystemExit(main())
