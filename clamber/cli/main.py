"""The `clamber` command: optimize, check and show climbing robots."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from clamber import __version__
from clamber.cli import codesign, demo, gripper, optimize, quadruped, sim
from clamber.cli.options import (
    Parser,
    add_exit_statuses,
    claim_output_folder,
    given_options,
    strict_json,
)
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
    parser.add_argument("--version", action="version", version=f"clamber {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="more messages on stderr: debug messages and the solver's "
                        "iterations")
    parser.add_argument("-q", "--quiet", action="count", default=0,
                        help="fewer messages on stderr: -q only warnings and errors (no "
                        "progress bars), -qq only errors")
    sub = parser.add_subparsers(dest="command", required=True)

    demo.register(sub)

    jumper = sub.add_parser("jumper", help="the planar jump-climbing robot",
                            epilog=EXAMPLES_MAIN, formatter_class=fmt)
    jsub = jumper.add_subparsers(dest="jumper_command", required=True)
    for module in (optimize, codesign, sim, gripper):
        module.register(jsub)
    quadruped.register(sub)
    add_exit_statuses(parser)
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


#: Statuses of a finished solve that count as success (exit status 0).
SUCCESS = ("converged", "acceptable", None)


def _writes_folder(args: argparse.Namespace) -> Path | None:
    """The folder a new run of this command writes (``--out``), or None (a resumed run
    writes into its own record; some commands write no folder)."""
    out = getattr(args, "out", None)
    if out is None or getattr(args, "resume", None):
        return None
    return Path(out)


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns its exit status (documented in every command's help)."""
    _headless_figures()
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse printed the usage error (2) or the help (0)
        return int(e.code or 0)
    args.given_options = given_options(build_parser(), argv)
    _logging(args.verbose - args.quiet)
    try:
        folder = _writes_folder(args)
        if folder is not None:
            claim_output_folder(folder, parser.prog + " " + " ".join(
                getattr(args, k) for k in ("command", "jumper_command", "quadruped_command")
                if getattr(args, k, None)))
        summary = args.func(args)
    except BaseException as e:
        if _interrupted(e):
            print(f"clamber: interrupted{_resume_hint(args)}", file=sys.stderr)
            return 130
        if isinstance(e, (ClamberError, OSError)):  # OSError: the user's files (full disk)
            print(f"clamber: error: {_one_line(e)}", file=sys.stderr)
            return 2
        raise
    _print_summary(summary, args.json)
    status = summary.get("status")
    if status in SUCCESS:
        return 0
    log.warning("warning: the optimization ended %s, not converged (exit status 1)", status)
    return 1


def _interrupted(e: BaseException) -> bool:
    """Whether Ctrl-C caused ``e``: a KeyboardInterrupt that lands inside a C extension's
    conversion (CasADi's ``DM.__array__``, say) reaches Python as that call's SystemError
    with the interrupt as its cause."""
    seen: set[int] = set()
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, KeyboardInterrupt):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False


def _resume_hint(args: argparse.Namespace) -> str:
    """``"; resume with --resume DIR"`` for a recorded study that has started a record."""
    if not hasattr(args, "resume"):
        return ""
    from clamber.storage.runs import STORE_NAME

    run = Path(args.resume or args.out)
    if not (run / STORE_NAME).exists() and not any(run.glob(f"*/{STORE_NAME}")):
        return ""
    return f"; resume with --resume {run}"


if __name__ == "__main__":
    raise SystemExit(main())
