"""The fuzz suite's harness: call `clamber` in-process and check what a user would see.

Every fuzz test draws ``examples(n)`` cases: ``n`` scaled by ``$CLAMBER_FUZZ_SCALE``
(default 0.25, which keeps the default run to tens of seconds; ``CLAMBER_FUZZ_SCALE=4``
for a thorough run before a release).
"""

import contextlib
import io
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from clamber.cli import main  # noqa: E402
from clamber.jumper.seed import SEED_PATH  # noqa: E402


def examples(n: int) -> int:
    """How many cases a test with a nominal ``n`` draws (module docstring)."""
    return max(5, round(n * float(os.environ.get("CLAMBER_FUZZ_SCALE", "0.25"))))


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """``clamber argv`` in this process: (exit status, stdout, stderr). A traceback is a
    failure of the test, never an answer."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


def assert_refused(argv: list[str]) -> str:
    """The command exits 2 with exactly one line on stderr and nothing on stdout."""
    rc, out, err = run_cli(argv)
    assert "Traceback" not in err, err
    assert rc == 2, (argv, rc, out[-500:], err[-500:])
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("clamber"), (argv, err)
    assert out == "", out
    return lines[0]


def assert_strict_json_if_accepted(argv: list[str]) -> None:
    """Either refused (rc 2, one line) or accepted with strict JSON (no NaN) on stdout."""
    rc, out, err = run_cli(argv)
    assert "Traceback" not in err, err
    if rc == 2:
        assert len(err.strip().splitlines()) == 1, err
        return
    assert rc in (0, 1), (rc, err)
    json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in JSON output"))


@pytest.fixture(scope="session")
def seed_file(tmp_path_factory) -> Path:
    """A copy of the packaged seed solution (a valid solution file) in a scratch folder."""
    d = tmp_path_factory.mktemp("seed")
    shutil.copy(SEED_PATH, d / "sol.npz")
    shutil.copy(SEED_PATH.with_suffix(".json"), d / "sol.json")
    return d / "sol.npz"


@pytest.fixture(scope="session")
def telemetry_log(tmp_path_factory) -> Path:
    """A valid 167 Hz telemetry log of one simulated jump of the seed solution."""
    from clamber.jumper.seed import seed_solution
    from clamber.jumper.sim.simulate import simulate
    from clamber.jumper.sim.telemetry import write_log

    path = tmp_path_factory.mktemp("telemetry") / "log.csv"
    write_log(simulate(seed_solution(), jumps=1), path)
    return path


@pytest.fixture(scope="session")
def robustness_run(tmp_path_factory) -> Path:
    """A finished one-trial robustness study of the seed solution (a valid run folder)."""
    run = tmp_path_factory.mktemp("run") / "study"
    rc, _, err = run_cli(["jumper", "robustness", SEED_PATH, "--trials", "1", "--workers",
                          "0", "--no-progress", "--out", run, "--json"])
    assert rc == 0, err
    return run
