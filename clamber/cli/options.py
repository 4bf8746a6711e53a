"""Options every command shares, declared once: output, JSON, execution, progress.

``--workers`` has one meaning everywhere: the most worker processes a study uses at once
(default: one per core; ``0``: everything in this process, no multiprocessing). A study
never starts more workers than it has trials, and with a single trial it runs in-process.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from clamber._json import strict_json

FMT = argparse.RawDescriptionHelpFormatter
__all__ = ["strict_json"]


# --- the parser ---------------------------------------------------------------------------------
class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr (exit status 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


# --- argument types ---------------------------------------------------------------------------
def number_type(kind: Callable[[str], Any], low: float | None = None,
                high: float | None = None, *, low_open: bool = False,
                unit: str = "") -> Callable[[str], Any]:
    """An argparse type: a finite ``kind`` (int or float) within ``[low, high]``
    (``low_open``: excluding ``low``); ``unit`` is named in the message."""
    what = "an integer" if kind is int else "a number"
    if low is None and high is None:
        allowed = ""
    elif high is None:
        allowed = f" {'>' if low_open else '>='} {low:g}{unit}"
    elif low is None:
        allowed = f" <= {high:g}{unit}"
    else:
        allowed = f" in {'(' if low_open else '['}{low:g}, {high:g}]{unit}"

    def parse(text: str) -> Any:
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if (not math.isfinite(v) or (low is not None and (v <= low if low_open else v < low))
                or (high is not None and v > high)):
            raise argparse.ArgumentTypeError(f"must be finite{allowed}, got {text}")
        return v
    parse.__name__ = "integer" if kind is int else "number"
    return parse


positive_int = number_type(int, 0, low_open=True)
non_negative_int = number_type(int, 0)
positive_float = number_type(float, 0, low_open=True)
non_negative_float = number_type(float, 0)
#: Seeds of NumPy's generators are integers in [0, 2**32).
seed_int = number_type(int, 0, 2**32 - 1)
#: Battery voltage of the motor modules [V]: small brushed DC motors on 1-12 cell packs.
supply_voltage = number_type(float, 0, 48.0, low_open=True, unit=" V")


def output_folder(text: str) -> Path:
    """An argparse type: a folder to write into (created later); an existing file is refused."""
    path = Path(text)
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path is not a folder")
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a file, expected a folder")
    for parent in path.parents:
        if parent.exists() and not parent.is_dir():
            raise argparse.ArgumentTypeError(f"{parent} is a file, expected a folder")
    return path


def input_file(text: str) -> Path:
    """An argparse type: an existing file to read (not a folder)."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder, expected a file")
    return path


def output_file(text: str) -> Path:
    """An argparse type: a file to write (its folder is created later); a folder is refused."""
    path = Path(text)
    if path.is_dir() or text.endswith(("/", "\\")):
        raise argparse.ArgumentTypeError(f"{text} is a folder, expected a file name")
    output_folder(str(path.parent))
    return path


def existing_folder(text: str) -> Path:
    """An argparse type: a folder that exists (a run to resume)."""
    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is not a folder: no run record to resume")
    return path


class OutGiven(argparse.Action):
    """Stores ``--out`` and remembers that it was given (``--resume`` refuses it)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        setattr(namespace, self.dest, values)
        namespace.out_given = True


def check_resume_out(args: argparse.Namespace) -> None:
    """``--resume RUN_DIR`` writes into RUN_DIR: an explicit ``--out`` as well is an error."""
    from clamber.exceptions import ConfigError

    if getattr(args, "resume", None) and getattr(args, "out_given", False):
        raise ConfigError(f"--resume {args.resume} writes into the run it continues; "
                          f"drop --out {args.out}")


# --- option groups ----------------------------------------------------------------------------
def add_output_options(p: argparse.ArgumentParser, default_out: str | None,
                       figures: bool = True) -> None:
    """``--out`` (a folder), ``--json`` and, where a command draws, ``--no-figures``."""
    if default_out is not None:
        p.add_argument("--out", type=output_folder, default=default_out, action=OutGiven,
                       help=f"output folder (default: {default_out})")
    p.add_argument("--json", action="store_true", help="print one JSON summary on stdout")
    if figures:
        p.add_argument("--no-figures", action="store_true", help="skip figures and animations")


def add_execution_options(p: argparse.ArgumentParser, resumable: bool = True) -> None:
    """Where a multi-trial study runs (``--workers``, ``--cluster``, ``--scheduler-file``,
    ``--dashboard``), how it survives lost workers, its progress bar and, for recorded
    studies, ``--resume``."""
    p.add_argument("--workers", type=non_negative_int,
                   help="worker processes (default: one per core; 0 = in this process)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--cluster", metavar="ADDRESS",
                       help="Dask scheduler to use instead of a local cluster (tcp://host:port)")
    where.add_argument("--scheduler-file", metavar="PATH",
                       help="join the Dask cluster whose scheduler wrote PATH (dask-jobqueue, "
                       "dask scheduler --scheduler-file); see docs/cluster.md")
    p.add_argument("--dashboard", action="store_true",
                   help="serve the Dask dashboard (on 127.0.0.1) and print its link")
    p.add_argument("--max-retries", type=non_negative_int, default=2,
                   help="resubmissions of a trial whose worker died (default 2)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    if resumable:
        p.add_argument("--resume", metavar="RUN_DIR", type=existing_folder,
                       help="continue the run recorded in RUN_DIR (finished trials are kept; "
                       "its results are written there, so not with --out)")


def evaluator_for(args: argparse.Namespace, tasks: int | None = None):
    """The evaluator ``--workers``/``--cluster``/``--scheduler-file`` ask for, never wider
    than ``tasks``; with ``--dashboard`` its link goes to stderr."""
    from clamber.parallel.dask import available_cores
    from clamber.parallel.factory import make_evaluator

    scheduler_file = getattr(args, "scheduler_file", None)
    dashboard = getattr(args, "dashboard", False)
    workers = available_cores() if args.workers is None else args.workers
    if tasks is not None and args.cluster is None and scheduler_file is None:
        workers = 0 if tasks <= 1 and not dashboard else min(workers, tasks)
    evaluator = make_evaluator(workers, args.cluster, args.max_retries, dashboard=dashboard,
                               scheduler_file=scheduler_file)
    if dashboard:
        print(f"Dask dashboard: {evaluator.dashboard_link}", file=sys.stderr)
    return evaluator


def run_folder(args: argparse.Namespace) -> Path:
    """The folder a recorded study writes: ``--resume`` wins, then ``--out``; a new run
    refuses a folder that already holds one."""
    from clamber.exceptions import ConfigError
    from clamber.storage.runs import RunStore

    check_resume_out(args)
    if args.resume:
        return Path(args.resume)
    out = Path(args.out)
    if RunStore.exists(out):
        raise ConfigError(f"{out} already holds a run; use --resume {out} to continue it "
                          "or --out for a new one")
    return out


# --- progress ---------------------------------------------------------------------------------
class TrialProgress:
    """A tqdm bar on stderr for a study: trials done, rate and time left."""

    def __init__(self, total: int, label: str, enabled: bool) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=total, desc=label, file=sys.stderr, disable=not enabled,
                        unit="trial", dynamic_ncols=True)
        self.t0 = time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        self.bar.total = total
        self.bar.n = done
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()

    def __enter__(self) -> TrialProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress_enabled(args: argparse.Namespace) -> bool:
    """Progress goes to stderr, also with ``--json`` (stdout stays one JSON object)."""
    return not getattr(args, "no_progress", False)

