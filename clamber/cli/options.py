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
from typing import Any

FMT = argparse.RawDescriptionHelpFormatter


# --- argument types ---------------------------------------------------------------------------
def _number(kind: Callable[[str], Any], low: float, strict: bool, what: str):
    def parse(text: str) -> Any:
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not math.isfinite(v) or (v <= low if strict else v < low):
            raise argparse.ArgumentTypeError(
                f"must be {'>' if strict else '>='} {low:g} and finite, got {text}")
        return v
    return parse


positive_int = _number(int, 0, True, "an integer")
non_negative_int = _number(int, 0, False, "an integer")
positive_float = _number(float, 0, True, "a number")
non_negative_float = _number(float, 0, False, "a number")


# --- option groups ----------------------------------------------------------------------------
def add_output_options(p: argparse.ArgumentParser, default_out: str | None,
                       figures: bool = True) -> None:
    """``--out`` (a folder), ``--json`` and, where a command draws, ``--no-figures``."""
    if default_out is not None:
        p.add_argument("--out", default=default_out,
                       help=f"output folder (default: {default_out})")
    p.add_argument("--json", action="store_true", help="print one JSON summary on stdout")
    if figures:
        p.add_argument("--no-figures", action="store_true", help="skip figures and animations")


def add_execution_options(p: argparse.ArgumentParser, resumable: bool = True) -> None:
    """Where a multi-trial study runs (``--workers``, ``--cluster``), how it survives
    lost workers, its progress bar and, for recorded studies, ``--resume``."""
    p.add_argument("--workers", type=non_negative_int,
                   help="worker processes (default: one per core; 0 = in this process)")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="Dask scheduler to use instead of a local cluster (tcp://host:port)")
    p.add_argument("--max-retries", type=non_negative_int, default=2,
                   help="resubmissions of a trial whose worker died (default 2)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    if resumable:
        p.add_argument("--resume", metavar="RUN_DIR",
                       help="continue the run recorded in RUN_DIR (finished trials are kept)")


def evaluator_for(args: argparse.Namespace, tasks: int | None = None):
    """The evaluator ``--workers``/``--cluster`` ask for, never wider than ``tasks``."""
    from clamber.parallel.dask import available_cores
    from clamber.parallel.factory import make_evaluator

    workers = available_cores() if args.workers is None else args.workers
    if tasks is not None and args.cluster is None:
        workers = 0 if tasks <= 1 else min(workers, tasks)
    return make_evaluator(workers, args.cluster, args.max_retries)


def run_folder(args: argparse.Namespace) -> Path:
    """The folder a recorded study writes: ``--resume`` wins, then ``--out``; a new run
    refuses a folder that already holds one."""
    from clamber.exceptions import ConfigError
    from clamber.storage.runs import RunStore

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
