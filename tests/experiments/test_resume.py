"""A run folder is data, never code; one process per run; resume replays the record exactly."""

import functools
import importlib.util
import math
import pickle
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import cheap
import pytest

from clamber.cli import main
from clamber.exceptions import ConfigError, FileFormatError
from clamber.experiments.codesign import CMA_LOG_DIR, CodesignSettings, run_codesign
from clamber.experiments.fitness import FitnessSettings
from clamber.storage.runs import CandidateTrial, RunStore, TrialState, canonical

CONFIG = CodesignSettings(generations=4, popsize=5, sigma0=0.8, seed=7,
                        fitness=FitnessSettings(failure_speed=-0.05))
warm = cheap.warm_fitness


def _trials(result):
    """Everything recorded about every trial except timings (NaN speeds as None)."""
    return [(t.generation, t.index, t.params, t.state, t.fitness,
             None if math.isnan(t.speed_mps) else t.speed_mps, t.status, t.guess,
             t.trajectory, t.lengths, t.masses) for t in result.trials]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The uninterrupted run, warm starts mattering."""
    return run_codesign(CONFIG, tmp_path_factory.mktemp("ref") / "run", fitness_fn=warm)


# --- no code from run folders -----------------------------------------------------------

class _Payload:
    """Unpickling this creates a file: what a hostile snapshot could do."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def _craft_snapshot_run(run_dir: Path, config: CodesignSettings, marker: Path) -> None:
    """A run folder laid out as stores with pickled optimizer snapshots were (version 1),
    whose snapshot runs code when unpickled."""
    run_dir.mkdir()
    with sqlite3.connect(run_dir / "run.sqlite") as db:
        db.executescript("""
            CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE trials (generation INTEGER NOT NULL, idx INTEGER NOT NULL,
                state TEXT NOT NULL, record TEXT NOT NULL, finished_at REAL NOT NULL,
                PRIMARY KEY (generation, idx));
            CREATE TABLE optimizer_state (generation INTEGER PRIMARY KEY, state BLOB NOT NULL,
                summary TEXT NOT NULL, saved_at REAL NOT NULL);""")
        db.executemany("INSERT INTO meta VALUES (?, ?)", [
            ("format_version", "1"), ("kind", "codesign"),
            ("config", canonical(config.to_dict())), ("created_at", "0")])
        db.execute("INSERT INTO optimizer_state VALUES (0, ?, '{}', 0)",
                   (pickle.dumps(_Payload(marker)),))


def test_crafted_snapshot_never_runs(tmp_path, capsys):
    """`codesign --resume` of a folder whose stored optimizer snapshot would run code on
    unpickling does not run it: the old store format is refused with a clear error."""
    marker = tmp_path / "pwned"
    run_dir = tmp_path / "shared_run"
    _craft_snapshot_run(run_dir, CodesignSettings(generations=2, popsize=3), marker)
    try:
        rc = main(["jumper", "codesign", "--resume", str(run_dir), "--workers", "0",
                   "--no-figures", "--no-progress"])
    except Exception:  # noqa: BLE001 - a crash after the payload ran is also a failure
        rc = None
    assert not marker.exists(), "resuming ran code stored in the run folder"
    assert rc == 2
    assert "format version '1'" in capsys.readouterr().err


def test_package_never_unpickles():
    """No module of clamber imports a deserializer that can run code, or lets NumPy
    unpickle (the tasks Dask ships between processes are its own business)."""
    root = Path(__file__).parents[2] / "clamber"
    banned = ("import pickle", "from pickle", "import marshal", "import shelve", "import dill",
              "allow_pickle=True", "joblib.load", "cloudpickle.load")
    offenders = [(p.relative_to(root).as_posix(), b) for p in root.rglob("*.py")
                 for b in banned if b in p.read_text()]
    assert offenders == []


# --- paths in records ---------------------------------------------------------------------

def _record_json(trajectory: str) -> str:
    return CandidateTrial(generation=0, index=0, state=TrialState.COMPLETE, params=(0.0,),
                       lengths=(0.1,) * 4, masses=(0.01,) * 5, fitness=0.5, speed_mps=0.5,
                       status="converged", solve_time_s=0.1, wall_time_s=0.1, attempts=1,
                       trajectory=trajectory).to_json()


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.npz",
                                  "trajectories/../../outside.npz", "C:\\Windows\\x.npz",
                                  "..\\outside.npz", "\\\\server\\share\\x.npz"])
def test_record_paths_must_stay_inside_the_run(path):
    """A trial record whose trajectory is absolute or climbs out with '..' is malformed."""
    with pytest.raises(FileFormatError, match="inside the run directory"):
        CandidateTrial.from_json(_record_json(path))
    assert CandidateTrial.from_json(_record_json("trajectories/g000_c00.npz")).trajectory


def test_escaping_path_in_a_stored_run_is_refused(reference, tmp_path):
    """Resuming a run whose record points outside it is a FileFormatError, and so is a
    trajectory folder that is a link out of the run."""
    run_dir = tmp_path / "run"
    shutil.copytree(reference.run_dir, run_dir)
    best = max((t for t in reference.trials if t.trajectory), key=lambda t: t.fitness)
    with sqlite3.connect(run_dir / "run.sqlite") as db:
        record = db.execute("SELECT record FROM trials WHERE generation = ? AND idx = ?",
                            (best.generation, best.index)).fetchone()[0]
        db.execute("UPDATE trials SET record = ? WHERE generation = ? AND idx = ?",
                   (record.replace(best.trajectory, str(tmp_path / "elsewhere.npz")),
                    best.generation, best.index))
    with pytest.raises(FileFormatError, match="inside the run directory"):
        run_codesign(CONFIG, run_dir, resume=True, fitness_fn=warm)

    linked = tmp_path / "linked"
    shutil.copytree(reference.run_dir, linked)
    outside = tmp_path / "outside"
    (linked / "trajectories").rename(outside)
    (linked / "trajectories").symlink_to(outside)
    with pytest.raises(FileFormatError, match="out of the run directory"):
        run_codesign(CONFIG, linked, resume=True, fitness_fn=warm)


# --- one process per run ------------------------------------------------------------------

HOLD = """
import sys
from clamber.storage.runs import RunStore
store = RunStore.open(sys.argv[1], "codesign", __import__("json").loads(sys.argv[2]))
print("holding", flush=True)
sys.stdin.read()
"""


def test_second_open_of_a_run_is_refused(tmp_path):
    """While a store is open, opening the same run again (here, in the same process) is
    refused; closing releases it."""
    first = RunStore.create(tmp_path / "r", "codesign", CONFIG.to_dict())
    with pytest.raises(ConfigError, match="in use by another clamber process"):
        RunStore.open(tmp_path / "r", "codesign", CONFIG.to_dict())
    first.close()
    RunStore.open(tmp_path / "r", "codesign", CONFIG.to_dict()).close()


def test_concurrent_resume_is_refused_and_a_killed_holder_leaves_no_lock(reference, tmp_path,
                                                                          capsys):
    """A resume while another process has the run open fails at start (API: ConfigError
    naming the holder's pid; CLI: exit 2); once that process is killed with SIGKILL the run
    resumes at once."""
    run_dir = tmp_path / "run"
    shutil.copytree(reference.run_dir, run_dir)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(run_dir),
                               canonical(CONFIG.to_dict())],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        with pytest.raises(ConfigError, match=f"pid {holder.pid}"):
            run_codesign(CONFIG, run_dir, resume=True, fitness_fn=warm)
        argv = ["jumper", "codesign", "--resume", str(run_dir), "--workers", "0",
                "--no-figures", "--no-progress"]
        assert main(argv) == 2
        assert "in use by another clamber process" in capsys.readouterr().err
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    resumed = run_codesign(CONFIG, run_dir, resume=True, fitness_fn=warm)
    assert _trials(resumed) == _trials(reference)


# --- exact resume -------------------------------------------------------------------------

#: Where the session ends: after this many evaluations (popsize 5: 5, 10, 15 end a
#: generation's evaluations but come before its tell and summary).
STOPS = [1, 2, 3, 4, 5, 6, 8, 9, 10, 12, 14, 15, 17, 19]


def test_resume_reproduces_the_run_wherever_it_stopped(reference, tmp_path):
    """Interrupted after any number of evaluations, inside a generation or at its end, and
    resumed, the run records exactly the uninterrupted trials, warm starts included, and
    the same generation summaries. At least one stop lands after a trial of the unfinished
    generation has beaten all earlier ones (the case where warm starts could differ)."""
    risky = []
    for n in STOPS:
        run_dir = tmp_path / f"stop{n}"
        part = run_codesign(CONFIG, run_dir, fitness_fn=warm, stop_after=n)
        assert len(part.trials) == n
        g = n // CONFIG.popsize
        earlier = [t.fitness for t in part.trials if t.generation < g and t.trajectory]
        current = [t.fitness for t in part.trials if t.generation == g and t.trajectory]
        if earlier and current and max(current) > max(earlier):
            risky.append(n)
        resumed = run_codesign(CONFIG, run_dir, resume=True, fitness_fn=warm)
        assert _trials(resumed) == _trials(reference), f"stopped after {n} evaluations"
        assert resumed.generation_summaries == reference.generation_summaries
    assert risky, "no stop exercised a new best inside the unfinished generation"


class _Crash(Exception):
    pass


def _crash_after(n: int):
    """A fitness that raises on its (n+1)-th call: a crash in the middle of a session."""
    calls = [0]

    def fitness(task):
        calls[0] += 1
        if calls[0] > n:
            raise _Crash
        return warm(task)
    return fitness


def test_resume_after_crashes_between_and_inside_generations(reference, tmp_path):
    """A crash right after a generation's summary is written, a crash inside a generation,
    and a chain of short sessions each resume to the uninterrupted run."""
    def crash_after_generation(result):
        if len(result.generation_summaries) == 2:
            raise _Crash

    between = tmp_path / "between"
    with pytest.raises(_Crash):
        run_codesign(CONFIG, between, fitness_fn=warm, on_generation=crash_after_generation)
    assert _trials(run_codesign(CONFIG, between, resume=True, fitness_fn=warm)) \
        == _trials(reference)

    inside = tmp_path / "inside"
    with pytest.raises(_Crash):
        run_codesign(CONFIG, inside, fitness_fn=_crash_after(7))
    with pytest.raises(_Crash):
        run_codesign(CONFIG, inside, resume=True, fitness_fn=_crash_after(4))
    assert _trials(run_codesign(CONFIG, inside, resume=True, fitness_fn=warm)) \
        == _trials(reference)

    chain = tmp_path / "chain"
    result = run_codesign(CONFIG, chain, fitness_fn=warm, stop_after=3)
    sessions = 1
    while len(result.trials) < CONFIG.generations * CONFIG.popsize:
        result = run_codesign(CONFIG, chain, resume=True, fitness_fn=warm, stop_after=3)
        sessions += 1
    assert sessions == 7
    assert _trials(run_codesign(CONFIG, chain, resume=True, fitness_fn=warm)) \
        == _trials(reference)


def test_replay_checks_the_record(reference, tmp_path):
    """A finished generation whose recorded fitness was altered no longer replays to the
    recorded optimizer state: a FileFormatError, not a silently different run."""
    run_dir = tmp_path / "run"
    shutil.copytree(reference.run_dir, run_dir)
    t = reference.trials[0]
    with sqlite3.connect(run_dir / "run.sqlite") as db:
        record = db.execute("SELECT record FROM trials WHERE generation = 0 AND idx = 0"
                            ).fetchone()[0]
        db.execute("UPDATE trials SET record = ? WHERE generation = 0 AND idx = 0",
                   (record.replace(repr(t.fitness), repr(t.fitness + 1.0)),))
    with pytest.raises(FileFormatError, match="does not reproduce"):
        run_codesign(CONFIG, run_dir, resume=True, fitness_fn=warm)


# --- pycma: logs and stopping criteria ----------------------------------------------------

def test_cma_log_is_in_the_run_and_survives_resume(reference, tmp_path):
    """pycma's data log lies in RUN/cma/, one line per generation, readable by cma.plot;
    a resumed run rewrites it to the same means and step sizes."""
    import cma
    import matplotlib.pyplot as plt
    import numpy as np

    def log(run_dir, name):
        return np.loadtxt(run_dir / CMA_LOG_DIR / name, comments="%", ndmin=2)

    xmean = log(reference.run_dir, "xmean.dat")
    assert xmean[:, 0].tolist() == list(range(1, CONFIG.generations + 1))
    run_dir = tmp_path / "run"
    run_codesign(CONFIG, run_dir, fitness_fn=warm, stop_after=12)
    run_codesign(CONFIG, run_dir, resume=True, fitness_fn=warm)
    np.testing.assert_array_equal(log(run_dir, "xmean.dat"), xmean)
    np.testing.assert_array_equal(log(run_dir, "fit.dat")[:, :3],
                                  log(reference.run_dir, "fit.dat")[:, :3])
    cma.plot(str(reference.run_dir / CMA_LOG_DIR) + "/")
    plt.close("all")


def test_stopping_criterion_ends_the_run_and_stays_ended(tmp_path):
    """A stopping criterion that holds after the first generation ends the run there, says
    which fired, and a resume evaluates nothing more."""
    cfg = CodesignSettings(generations=4, popsize=5, sigma0=0.8, seed=7,
                         fitness=CONFIG.fitness, cma_options={"tolfun": 1e9})
    result = run_codesign(cfg, tmp_path / "r", fitness_fn=warm)
    assert len(result.generation_summaries) == 1 and len(result.trials) == 5
    assert result.summary()["stopped_by"] == {"tolfun": 1e9}
    calls = []
    again = run_codesign(cfg, tmp_path / "r", resume=True,
                         fitness_fn=lambda task: calls.append(task) or warm(task))
    assert calls == [] and _trials(again) == _trials(result)


@pytest.mark.parametrize("options, match", [
    ({"popsize": 3}, "not a settable"), ({"seed": 1}, "not a settable"),
    ({"tolfun": -1.0}, "tolfun"), ({"tolx": float("nan")}, "tolx"),
    ({"tolfun": "1e-3"}, "tolfun"), ({"tolfun": True}, "tolfun"),
])
def test_bad_cma_options_are_config_errors(options, match):
    """Only stopping criteria with non-negative numbers are accepted."""
    with pytest.raises(ConfigError, match=match):
        CodesignSettings(cma_options=options)


# --- the command line -------------------------------------------------------------------

def test_cli_rewrites_the_report_every_generation(tmp_path, capsys, monkeypatch):
    """`codesign --workers 1 --dashboard --cma-option ...` prints the dashboard link (with
    the dashboard extra installed),
    rewrites report.html after each generation (reloading itself while running) and
    ends with a final report without reload."""
    from clamber.experiments import codesign
    from clamber.report import html as report

    monkeypatch.setattr(codesign, "run_codesign",
                        functools.partial(codesign.run_codesign, fitness_fn=cheap.cheap_fitness))
    pages = []
    original = report.write_codesign_outputs

    def spy(result, figures=True, live=False, validation=None):
        out = original(result, figures=figures, live=live, validation=validation)
        pages.append((live, (result.run_dir / "report.html").read_text()))
        return out
    monkeypatch.setattr(report, "write_codesign_outputs", spy)
    out = tmp_path / "cd"
    dashboard = importlib.util.find_spec("bokeh") is not None  # the dashboard extra
    assert main(["jumper", "codesign", "--generations", "3", "--popsize", "3", "--workers",
                 "1", *(["--dashboard"] if dashboard else []), "--cma-option",
                 "tolstagnation=inf", "--no-figures", "--out", str(out), "--json"]) == 0
    assert ("Dask dashboard: http://127.0.0.1:" in capsys.readouterr().err) == dashboard
    assert [live for live, _ in pages] == [True, True, True, False]
    for g, (_, page) in enumerate(pages[:3], start=1):
        assert f"Running: {g} of 3 generations finished" in page
        assert "http-equiv='refresh'" in page
    assert "http-equiv" not in pages[-1][1] and "Running" not in pages[-1][1]
    assert main(["jumper", "codesign", "--resume", str(out), "--cma-option", "tolfun",
                 "--workers", "0"]) == 2


def test_resuming_a_finished_run_evaluates_nothing(reference, tmp_path):
    """Resuming a finished run only replays its record (a fitness that raises is never
    called) and returns the same trials."""
    run_dir = tmp_path / "run"
    shutil.copytree(reference.run_dir, run_dir)
    again = run_codesign(CONFIG, run_dir, resume=True, fitness_fn=_crash_after(0))
    assert _trials(again) == _trials(reference)
