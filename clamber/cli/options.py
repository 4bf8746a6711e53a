"""Options every command shares, declared once: output, JSON, execution, progress, resume,
output folders and exit statuses.

``--workers`` has one meaning everywhere: the most worker processes a study uses at once
(``0``: everything in this process, no multiprocessing). Without ``--workers`` a study runs
in this process when a local cluster would not pay for itself (:func:`pays_for_a_cluster`),
else on one worker per core, never more workers than it has trials.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from clamber._json import strict_json

FMT = argparse.RawDescriptionHelpFormatter
__all__ = ["strict_json"]
log = logging.getLogger("clamber")


# --- the parser ---------------------------------------------------------------------------------
class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr (exit status 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


class LazyChoices(Sequence[str]):
    """The choices of an option, read from ``module.attribute`` (its keys) when first
    needed, i.e. when the option is parsed or its command's help is shown: `clamber --help`
    then loads none of the robot libraries that define them. ``extra`` choices follow."""

    def __init__(self, module: str, attribute: str, extra: tuple[str, ...] = ()) -> None:
        self.module, self.attribute, self.extra = module, attribute, extra
        self._names: tuple[str, ...] | None = None

    def names(self) -> tuple[str, ...]:
        """The choices (the attribute's keys or items, then ``extra``)."""
        if self._names is None:
            import importlib

            self._names = (*getattr(importlib.import_module(self.module), self.attribute),
                           *self.extra)
        return self._names

    def __getitem__(self, i):  # type: ignore[override]
        return self.names()[i]

    def __len__(self) -> int:
        return len(self.names())

    def __contains__(self, value: object) -> bool:
        return value in self.names()


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


def quantity_type(kind: Callable[[str], Any], quantity: str) -> Callable[[str], Any]:
    """An argparse type for a physical quantity: its range and unit are the ones
    ``clamber._validate.RANGES[quantity]`` states for every command and file (looked up
    when an option is parsed, so the table's module is not imported for ``--help``)."""

    def parse(text: str) -> Any:
        from clamber._validate import RANGES

        r = RANGES[quantity]
        value = number_type(kind, r.low, r.high, low_open=r.low_open,
                            unit=f" {r.unit}" if r.unit else "")(text)
        if r.high_open and value >= r.high:
            raise argparse.ArgumentTypeError(f"must be below {r.high:g}, got {text}")
        return value
    parse.__name__ = "integer" if kind is int else "number"
    return parse


#: Help of the quadruped climbs' ``--reseat-every``.
RESEAT_HELP = ("re-seat each gripper in place (unload, open, close, reload) after it has held "
               "through N body moves, so its sole's wind-up does not break it off (default: "
               "1 on rock and for plane-wall climbs of more than one cycle, where a rock "
               "gripper re-seats only when the three other holds carry the body; 0, never, "
               "the paper's gait, for one cycle on a plane wall)")


#: Battery voltage of the motor modules [V]: small brushed DC motors on 1-12 cell packs.
supply_voltage = quantity_type(float, "supply_voltage")


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
                   help=f"worker processes ({WORKERS_RULE})")
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


#: Serial work [s] below which a study runs in this process when ``--workers`` is not
#: given. A local cluster costs its start-up (2.5 s for two workers on an idle 2-core
#: machine, up to 30 s under load) plus each worker's first import of the robot libraries
#: and first build of its solvers, paid again by every worker; below about half a minute
#: of work two workers cannot win that back. ``--workers`` always overrides the rule.
IN_PROCESS_WORK_S = 30.0
#: The rule as the help texts state it.
WORKERS_RULE = (f"default: in this process when the study's estimated serial work is under "
                f"{IN_PROCESS_WORK_S:g} s or it has one trial, else one per core; "
                "0 = in this process")


def check_dashboard() -> None:
    """The local dashboard is served with bokeh, an optional dependency (the ``dashboard``
    extra): without it Dask would serve a page that says so; here it is a clear error."""
    import importlib.util

    from clamber.exceptions import ConfigError

    if importlib.util.find_spec("bokeh") is None:
        raise ConfigError("--dashboard needs bokeh: pip install 'clamber[dashboard]' "
                          "(docs/cluster.md)")


def pays_for_a_cluster(tasks: int | None, trial_cost_s: float | None) -> bool:
    """Whether a default run (no ``--workers``) should start a local cluster: yes unless
    the study has a single task or its estimated serial work ``tasks * trial_cost_s``
    [s] is under :data:`IN_PROCESS_WORK_S` (an unknown cost pays)."""
    if tasks is None:
        return True
    if tasks <= 1:
        return False
    return trial_cost_s is None or tasks * trial_cost_s >= IN_PROCESS_WORK_S


def evaluator_for(args: argparse.Namespace, tasks: int | None = None,
                  trial_cost_s: float | None = None):
    """The evaluator ``--workers``/``--cluster``/``--scheduler-file`` ask for, never wider
    than ``tasks``. Without ``--workers``, a study of ``tasks`` trials of about
    ``trial_cost_s`` seconds each runs in this process unless a cluster pays
    (:func:`pays_for_a_cluster`). A cluster starts on the first task (a finished run
    resumed starts none); with ``--dashboard`` its link goes to stderr then."""
    from clamber.parallel.dask import available_cores
    from clamber.parallel.factory import make_evaluator

    scheduler_file = getattr(args, "scheduler_file", None)
    dashboard = getattr(args, "dashboard", False)
    remote = args.cluster is not None or scheduler_file is not None
    if dashboard and not remote:
        check_dashboard()
    if args.workers is not None:
        workers = args.workers
    elif remote or dashboard or pays_for_a_cluster(tasks, trial_cost_s):
        workers = available_cores()
    else:
        workers = 0
        log.debug("in this process: %s task(s) of about %s s each do not pay for a "
                  "cluster's start-up", tasks, trial_cost_s)
    if tasks is not None and not remote:
        workers = 0 if tasks <= 1 and not dashboard else min(workers, tasks)

    def started(evaluator) -> None:
        log.debug("evaluator: %s", evaluator.describe())
        if dashboard:
            print(f"Dask dashboard: {evaluator.dashboard_link}", file=sys.stderr)

    return make_evaluator(workers, args.cluster, args.max_retries, dashboard=dashboard,
                          scheduler_file=scheduler_file, on_start=started)


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
    """A tqdm bar on stderr for a study: trials done, rate and time left. It is redrawn
    every second, so its clock runs while the first trials wait for workers to start or
    for a first run to compile the simulation's kernels (said after 10 s without one)."""

    def __init__(self, total: int, label: str, enabled: bool) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=total, desc=label, file=sys.stderr, disable=not enabled,
                        unit="trial", dynamic_ncols=True)
        self.t0 = time.perf_counter()
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick, daemon=True)
        self._waiting_note = False
        if enabled:
            self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            if self.bar.n == 0 and time.perf_counter() - self.t0 > 10.0:
                self.bar.set_postfix_str("first trials: starting workers, compiling kernels "
                                         "on a first run", refresh=False)
                self._waiting_note = True
            self.bar.refresh()

    def __call__(self, done: int, total: int) -> None:
        self.bar.total = total
        self.bar.n = done
        if done and self._waiting_note:
            self.bar.set_postfix_str("", refresh=False)
            self._waiting_note = False
        self.bar.refresh()

    def close(self) -> None:
        self._stop.set()
        if self._ticker.is_alive():
            self._ticker.join()
        self.bar.close()

    def __enter__(self) -> TrialProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress_enabled(args: argparse.Namespace | None = None) -> bool:
    """Progress goes to stderr, also with ``--json`` (stdout stays one JSON object); none
    with ``--no-progress`` or ``-q`` (only warnings and errors)."""
    return (not getattr(args, "no_progress", False)
            and logging.getLogger("clamber").isEnabledFor(logging.INFO))


class Heartbeat:
    """A line on stderr every ``period_s`` while a long step runs, so that a silent wait
    (a first build of compiled code, a long solve) is never mistaken for a hang:
    ``"<what>: still running after 20 s"`` (INFO, so ``-q`` hides it)."""

    def __init__(self, what: str, period_s: float = 10.0) -> None:
        self.what, self.period_s = what, period_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True)
        self.t0 = time.perf_counter()

    def _beat(self) -> None:
        while not self._stop.wait(self.period_s):
            log.info("%s: still running after %.0f s", self.what,
                     time.perf_counter() - self.t0)

    def __enter__(self) -> Heartbeat:
        self.t0 = time.perf_counter()
        if log.isEnabledFor(logging.INFO):
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()


# --- output folders, resume and finished runs -------------------------------------------------
#: The file clamber leaves in every folder it writes: only a folder holding it (or an empty
#: one) is written into again, so a user's own files are never overwritten.
FOLDER_MARK = ".clamber"


def claim_output_folder(path: str | Path, command: str = "clamber") -> Path:
    """Make ``path`` a folder this command may write: a new or empty folder, or one clamber
    wrote before (it holds :data:`FOLDER_MARK`); any other non-empty folder is refused."""
    from clamber.exceptions import ConfigError

    root = Path(path)
    if root.is_dir() and not (root / FOLDER_MARK).exists() and any(root.iterdir()):
        raise ConfigError(f"{root} holds files clamber did not write; give a new or empty "
                          "folder with --out")
    root.mkdir(parents=True, exist_ok=True)
    from clamber.storage.runs import refuse_links

    refuse_links(root, root=False)  # a link planted inside would be written through
    (root / FOLDER_MARK).write_text(f"written by `{command}`; clamber writes into a folder "
                                    "only if it is empty or holds this file\n",
                                    encoding="utf-8")
    return root


#: Options that say where and how a study runs or what it prints, never what it computes:
#: they may change between a run and its resume.
EXECUTION_OPTIONS = frozenset({
    "verbose", "quiet", "func", "command", "jumper_command", "quadruped_command", "out",
    "out_given", "json", "no_figures", "no_animation", "workers", "cluster", "scheduler_file",
    "dashboard", "max_retries", "no_progress", "resume", "given_options", "solution"})
#: The file of a run folder that records the options its study was started with.
OPTIONS_FILE = "options.json"


def _as_json(value: Any) -> Any:
    return json.loads(strict_json(value))


def _shown(value: Any) -> str:
    """An option's value as it is typed (a list as its items)."""
    return " ".join(map(str, value)) if isinstance(value, list) else str(value)


def study_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options of ``args`` that define what a study computes (all but
    :data:`EXECUTION_OPTIONS`), as JSON values."""
    return {k: _as_json(v) for k, v in sorted(vars(args).items())
            if k not in EXECUTION_OPTIONS}


def restore_options(args: argparse.Namespace, run_dir: Path,
                    file_name: str = OPTIONS_FILE) -> argparse.Namespace:
    """One resume behaviour for every study. A new run records :func:`study_options` in
    ``run_dir/file_name``; ``--resume`` sets every recorded option back, so no option need
    be repeated, and refuses one given again with another value, here, before any worker
    starts. A run recorded before options were kept resumes with the options given."""
    from clamber.exceptions import ConfigError

    path = Path(run_dir) / file_name
    if not args.resume:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(study_options(args), indent=1) + "\n", encoding="utf-8")
        return args
    if not path.exists():
        log.debug("%s records no options; resuming with the options given", run_dir)
        return args
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ConfigError(f"{path}: cannot read the run's options ({e})") from None
    if not isinstance(stored, dict):
        raise ConfigError(f"{path}: must hold a JSON object")
    given = getattr(args, "given_options", set())
    conflicts = [f"--{k.replace('_', '-')} {_shown(_as_json(getattr(args, k)))} (the run "
                 f"has {_shown(v)})"
                 for k, v in stored.items()
                 if k in given and hasattr(args, k) and _as_json(getattr(args, k)) != v]
    if conflicts:
        raise ConfigError(f"--resume {run_dir} continues the run with its own options; drop "
                          + ", ".join(conflicts))
    for k, v in stored.items():
        if k not in EXECUTION_OPTIONS and hasattr(args, k):
            setattr(args, k, v)
    return args


def release_run(run_dir: str | Path) -> None:
    """A finished run keeps no ``run.lock`` (nor do the sub-runs in its folders): the lock
    marks a run in progress. Each is taken first, so a run another process holds is never
    touched."""
    from clamber.storage.lock import LOCK_NAME, RunLock

    root = Path(run_dir)
    for path in [root / LOCK_NAME, *root.glob(f"*/{LOCK_NAME}")]:
        if not path.exists():
            continue
        lock = RunLock(path.parent).acquire()
        try:
            path.unlink(missing_ok=True)
        finally:
            lock.release()


def write_trials_csv(path: Path, trials: Sequence[Any]) -> Path:
    """``trials.csv`` of a study: one row per recorded trial (its condition's group, seed,
    success, failure reason, detail, then its metrics; the union of every trial's metric
    names as columns, empty where a trial has none)."""
    import csv

    rows = [{"group": t.group, "seed": t.seed, "success": t.success,
             "failure": t.outcome.failure.name.lower() if t.outcome.failure else "",
             "detail": t.outcome.detail, **t.metrics} for t in trials]
    names = list(dict.fromkeys(k for row in rows for k in row))
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=names, restval="")
        w.writeheader()
        w.writerows(rows)
    return Path(path)


# --- exit statuses ----------------------------------------------------------------------------
#: What exit status 1 means for the commands that use it (every other command: 0, 2, 130).
EXIT_ONE = {
    "clamber jumper optimize": "the optimization did not converge (one warning line says "
                               "how it ended; the solution is still written)",
    "clamber demo": "the nominal robot's optimization did not converge",
}


def exit_statuses(prog: str, resumable: bool) -> str:
    """The ``exit status:`` block of a command's help."""
    import textwrap

    rows = [("0", "finished")]
    if prog in EXIT_ONE:
        rows.append(("1", EXIT_ONE[prog]))
    rows.append(("2", "bad input: an option, a file or a folder (one line on stderr)"))
    rows.append(("130", "interrupted (Ctrl-C)" + ("; the run goes on with --resume RUN_DIR"
                                                  if resumable else "")))
    lines = ["exit status:"]
    for code, text in rows:
        lines += textwrap.wrap(text, 86, initial_indent=f"  {code:<5}",
                               subsequent_indent=" " * 7)
    return "\n".join(lines) + "\n"


def add_exit_statuses(parser: argparse.ArgumentParser) -> None:
    """Append :func:`exit_statuses` to the help of every command that runs (every parser
    without subcommands)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        resumable = any(a.dest == "resume" for a in parser._actions)
        epilog = (parser.epilog or "").rstrip("\n")
        parser.epilog = ((epilog + "\n\n" if epilog else "")
                         + exit_statuses(parser.prog, resumable))
        return
    for sub in subs:
        for child in dict.fromkeys(sub.choices.values()):
            add_exit_statuses(child)


def given_options(parser: argparse.ArgumentParser, argv: list[str]) -> set[str]:
    """The options the user typed in ``argv`` (not those left at their defaults): the same
    arguments parsed again by ``parser`` (a fresh one, changed here) with every default
    suppressed."""
    def suppress(p: argparse.ArgumentParser) -> None:
        p._defaults.clear()
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for child in dict.fromkeys(a.choices.values()):
                    suppress(child)
            elif not a.required:
                a.default = argparse.SUPPRESS
    suppress(parser)
    return set(vars(parser.parse_args(argv)))
