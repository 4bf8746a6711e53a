"""The command line's conventions, one test each: a fast --help, --version, documented exit
statuses, -q that prints only warnings, one resume behaviour for every study, Ctrl-C that
exits 130 with a resume hint, finished runs without a lock, and no command writing into a
folder of someone else's files."""

import argparse
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from clamber import __version__
from clamber.cli import build_parser, main
from clamber.cli.options import FOLDER_MARK, claim_output_folder, pays_for_a_cluster
from clamber.exceptions import ConfigError
from clamber.jumper.seed import SEED_PATH
from clamber.parallel.factory import LazyEvaluator, make_evaluator
from clamber.storage.lock import LOCK_NAME

SEED = str(SEED_PATH)
#: Modules that take seconds to import; `clamber --help` must need none of them.
HEAVY = ("cma", "scipy", "casadi", "mujoco", "dask", "distributed", "matplotlib", "numba",
         "pinocchio", "tqdm")


def _leaf_parsers(parser: argparse.ArgumentParser):
    """Every command that runs (a parser without subcommands)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield parser
    for sub in subs:
        for child in dict.fromkeys(sub.choices.values()):
            yield from _leaf_parsers(child)


LEAVES = list(_leaf_parsers(build_parser()))


def test_help_imports_no_heavy_module():
    """`clamber --help` and the jumper's and demo's --help load none of the heavy libraries
    (what makes them answer in well under a second), checked in a fresh interpreter."""
    code = ("import sys\nfrom clamber.cli import main\n"
            "for argv in (['--help'], ['jumper', 'optimize', '--help'], "
            "['jumper', 'codesign', '--help'], ['demo', '--help']):\n"
            "    assert main(argv) == 0\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip().splitlines()[-1]
    assert out == "[]"


def test_version(capsys):
    """`clamber --version` prints the package's version and exits 0."""
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"clamber {__version__}"


@pytest.mark.parametrize("leaf", LEAVES, ids=[p.prog for p in LEAVES])
def test_every_command_documents_its_exit_statuses(leaf):
    """Every command's help ends with its exit statuses: 0, 2 and 130 always; resumable
    studies name --resume there; only optimize and demo use status 1."""
    text = leaf.format_help()
    block = text[text.index("exit status:"):]
    for code in ("0 ", "2 ", "130 "):
        assert f"  {code}" in block
    assert ("  1 " in block) == (leaf.prog in ("clamber jumper optimize", "clamber demo"))
    resumable = any(a.dest == "resume" for a in leaf._actions)
    assert ("--resume" in block) == resumable


@pytest.mark.parametrize("leaf", [p for p in LEAVES
                                  if any(a.dest == "out" for a in p._actions)],
                         ids=lambda p: p.prog)
def test_every_writing_command_refuses_a_folder_of_other_files(leaf, tmp_path, capsys):
    """A command given a non-empty folder that clamber did not write exits 2 with one line
    and leaves the user's file as it was."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "README.md").write_text("my notes")
    words = leaf.prog.split()[1:]
    positionals = [SEED for a in leaf._actions
                   if not a.option_strings and a.nargs in (None, "?")
                   and not isinstance(a, argparse._SubParsersAction)]
    rc = main([*words, *positionals, "--out", str(folder)])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "did not write" in err and len(err.strip().splitlines()) == 1
    assert (folder / "README.md").read_text() == "my notes"
    assert not (folder / FOLDER_MARK).exists()


def test_a_folder_clamber_wrote_is_written_again(tmp_path):
    """A folder holding clamber's mark, or an empty one, may be written (a rerun)."""
    claim_output_folder(tmp_path / "a")
    (tmp_path / "a" / "figure.png").write_bytes(b"x")
    claim_output_folder(tmp_path / "a")
    (tmp_path / "b").mkdir()
    claim_output_folder(tmp_path / "b")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "x").write_text("")
    with pytest.raises(ConfigError, match="did not write"):
        claim_output_folder(tmp_path / "c")


def test_small_studies_run_in_this_process():
    """A cluster is started only where the serial work pays for its start-up: not for a
    single task, nor for a few cheap trials; an unknown cost pays."""
    assert not pays_for_a_cluster(1, 1e6)
    assert not pays_for_a_cluster(4, 0.05)
    assert pays_for_a_cluster(1000, 0.05)
    assert pays_for_a_cluster(4, None)


def test_a_local_cluster_starts_on_the_first_task():
    """The local evaluator starts no processes until a task arrives: an empty map (a
    finished run resumed) leaves it unstarted."""
    ev = make_evaluator(2)
    assert isinstance(ev, LazyEvaluator)
    assert list(ev.imap_unordered(abs, [])) == []
    assert ev.describe()["workers"] == 0 and not ev.started
    ev.close()


def test_quiet_mode_prints_nothing_but_warnings(tmp_path, capsys):
    """`clamber -q` prints no progress bar nor message on stderr for a study that works;
    stdout holds only the JSON summary."""
    assert main(["-q", "jumper", "robustness", SEED, "--trials", "2", "--out",
                 str(tmp_path / "r"), "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    json.loads(out)


def test_robustness_resumes_without_options_and_refuses_others_before_workers(
        tmp_path, capsys, monkeypatch):
    """A finished study resumed with nothing but --resume gives the same summary, starts
    no cluster (even with --workers 2) and keeps no run.lock; an option that contradicts
    the run is refused before any worker would start."""
    run = tmp_path / "r"
    assert main(["-q", "jumper", "robustness", SEED, "--trials", "3", "--seed", "4",
                 "--jumps", "2", "--out", str(run), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert not (run / LOCK_NAME).exists()
    rows = (run / "trials.csv").read_text().splitlines()
    assert first["trials_csv"] == str(run / "trials.csv") and len(rows) == 1 + 3
    for key, value in first.items():  # docs/json_keys.md: <what>_interval brackets <what>_rate
        if key.endswith("_interval"):
            low, high = value
            assert low <= first[key.replace("_interval", "_rate")] <= high

    def no_cluster(*a, **k):
        raise AssertionError("a cluster was started")
    monkeypatch.setattr("clamber.parallel.dask.DaskEvaluator.__init__", no_cluster)
    assert main(["-q", "jumper", "robustness", "--resume", str(run), "--workers", "2",
                 "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    for key in ("trials", "jumps", "catch_rate", "landing_rate", "failures"):
        assert again[key] == first[key]
    rc = main(["jumper", "robustness", "--resume", str(run), "--trials", "5", "--workers", "2"])
    err = capsys.readouterr().err
    assert rc == 2 and "--trials 5" in err and "the run has 3" in err


def test_quadruped_climb_resumes_without_repeating_its_options(tmp_path, capsys):
    """`quadruped climb --resume DIR` alone continues a run started with non-default options
    (they come from the run's record), and a contradicting option names both values."""
    run = tmp_path / "c"
    assert main(["-q", "quadruped", "climb", "--incline", "70", "--controller", "vmc",
                 "--trials", "1", "--seed", "3", "--no-figures", "--workers", "0",
                 "--out", str(run), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(["-q", "quadruped", "climb", "--resume", str(run), "--no-figures",
                 "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert (again["incline_deg"], again["controller"]) == (70.0, "vmc")
    assert again["successes"] == first["successes"]
    assert not (run / LOCK_NAME).exists()
    assert main(["quadruped", "climb", "--resume", str(run), "--incline", "90"]) == 2
    assert "--incline 90.0 (the run has 70.0)" in capsys.readouterr().err


def test_ctrl_c_exits_130_with_a_resume_hint(tmp_path):
    """SIGINT during a study ends the command with status 130 and one line naming the
    --resume to continue, no traceback; the record is resumable."""
    run = tmp_path / "r"
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "clamber", "jumper", "robustness", SEED, "--trials", "100000",
         "--workers", "0", "--no-progress", "--out", str(run)],
        stderr=subprocess.PIPE, text=True, env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as in a terminal
    for _ in range(1800):  # until the study has started recording (3 min under load)
        if (run / "run.sqlite").exists():
            break
        time.sleep(0.1)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    err = proc.communicate(timeout=60)[1]
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == f"clamber: interrupted; resume with --resume {run}"
    assert "Traceback" not in err and "KeyboardInterrupt" not in err


def test_ctrl_c_inside_a_compiled_call_is_still_an_interrupt(tmp_path, capsys, monkeypatch):
    """An interrupt that lands in a C extension's conversion surfaces as that call's
    SystemError caused by the KeyboardInterrupt: the command still ends with status 130 and
    the one-line hint, and an unrelated SystemError stays a crash."""
    import clamber.experiments.robustness as robustness_module

    def interrupted(*args, **kwargs):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as e:
            raise SystemError("DM.__array__ returned a result with an exception set") from e

    monkeypatch.setattr(robustness_module, "robustness", interrupted)
    argv = ["jumper", "robustness", SEED, "--trials", "2", "--workers", "0", "--no-progress"]
    assert main([*argv, "--out", str(tmp_path / "a")]) == 130
    assert capsys.readouterr().err.strip().startswith("clamber: interrupted")

    def broken(*args, **kwargs):
        raise SystemError("a real fault")

    monkeypatch.setattr(robustness_module, "robustness", broken)
    with pytest.raises(SystemError, match="a real fault"):
        main([*argv, "--out", str(tmp_path / "b")])


def test_dashboard_without_bokeh_is_one_clear_line(tmp_path, capsys):
    """--dashboard on a local cluster without bokeh installed exits 2 naming the extra
    that provides it (instead of serving a page that asks for bokeh)."""
    import importlib.util

    if importlib.util.find_spec("bokeh") is not None:
        pytest.skip("bokeh is installed")
    rc = main(["jumper", "robustness", SEED, "--trials", "2", "--dashboard",
               "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert rc == 2 and "clamber[dashboard]" in err and len(err.strip().splitlines()) == 1


def test_a_solve_that_does_not_converge_says_so_once_under_quiet(tmp_path, capsys):
    """`clamber -q jumper optimize` whose solver stops at its iteration limit exits 1 and
    prints exactly one line on stderr, a warning naming how the solve ended."""
    settings = tmp_path / "settings.toml"
    settings.write_text("max_iterations = 1\n")
    rc = main(["-q", "jumper", "optimize", "--resolution", "coarse", "--settings",
               str(settings), "--no-figures", "--out", str(tmp_path / "o"), "--json"])
    out, err = capsys.readouterr()
    assert rc == 1
    assert json.loads(out)["status"] not in ("converged", "acceptable")
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning:") and "not converged" in lines[0]


def test_verbose_adds_debug_messages(tmp_path, capsys):
    """`clamber -v` adds debug lines to the default messages: here where the study ran
    and why (in this process: two cheap trials do not pay for a cluster)."""
    assert main(["-v", "jumper", "robustness", SEED, "--trials", "2", "--out",
                 str(tmp_path / "r"), "--json"]) == 0
    assert "in this process: 2 task(s)" in capsys.readouterr().err
    assert main(["jumper", "robustness", SEED, "--trials", "2", "--out",
                 str(tmp_path / "s"), "--json"]) == 0
    assert "in this process:" not in capsys.readouterr().err


def test_a_long_step_says_it_is_still_running():
    """A step wrapped in Heartbeat logs a line naming it at every period while it runs, and
    none after it ended."""
    import logging

    from clamber.cli.options import Heartbeat

    lines: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())
    log = logging.getLogger("clamber")
    level = log.level
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        with Heartbeat("building", period_s=0.05):
            time.sleep(0.3)
        beats = len([m for m in lines if m.startswith("building: still running")])
        time.sleep(0.15)
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
    assert beats >= 3
    assert len([m for m in lines if "still running" in m]) == beats
