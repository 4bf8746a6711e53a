"""The `clamber` command: optimize, check and show climbing robots."""

from __future__ import annotations

import argparse
import json
import sys

from clamber.cli import codesign, demo, gripper, optimize, quadruped, sim
from clamber.exceptions import ClamberError

EXAMPLES_MAIN = """examples:
  clamber jumper optimize                       # nominal robot, coarse then fine
  clamber jumper optimize --resolution coarse --json
  clamber demo --out out                        # what `make demo` runs
"""


def _print_summary(summary: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(summary, default=str))
        return
    width = max(len(k) for k in summary)
    for k, v in summary.items():
        if isinstance(v, float):
            v = f"{v:.4g}"
        elif isinstance(v, dict | list):
            v = json.dumps(v, default=str)
        print(f"{k:<{width}}  {v}")


def build_parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="clamber", description="Design, optimize and control climbing robots.",
        epilog=EXAMPLES_MAIN, formatter_class=fmt)
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


def main(argv: list[str] | None = None) -> int:
    _headless_figures()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse printed the usage error (2) or the help (0)
        return int(e.code or 0)
    try:
        summary = args.func(args)
    except ClamberError as e:
        print(f"clamber: error: {e}", file=sys.stderr)
        return 2
    _print_summary(summary, args.json)
    return 0 if summary.get("status") in ("converged", "acceptable", None) else 1


if __name__ == "__main__":
    raise SystemExit(main())
