"""docs/cluster.md's one-machine recipe runs as written: a TLS scheduler and worker on
loopback, a study joining them through the scheduler file, then shutdown."""

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clamber.jumper.seed import seed_solution

ROOT = Path(__file__).resolve().parents[2]
HEADING = "## Trying it on one machine"


def recipe() -> list[str]:
    """The commands of the recipe's code block, one per line."""
    text = (ROOT / "docs" / "cluster.md").read_text(encoding="utf-8")
    block = text.split(HEADING, 1)[1].split("```\n", 2)[1]
    return [line for line in block.splitlines() if line.strip()]


def _argv(words: list[str]) -> list[str]:
    """A documented command as this interpreter runs it (the checkout's clamber)."""
    if words[0] == "dask":
        return [sys.executable, "-m", "dask", *words[1:]]
    if words[0] == "clamber":
        return [sys.executable, "-m", "clamber", *words[1:]]
    return words


def _wait_for(path: Path, procs: list[subprocess.Popen], timeout: float = 60) -> None:
    """Wait until the scheduler has written its whole file: it exists before its JSON is in
    it, which a loaded machine shows."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            json.loads(path.read_text())
            return
        except (FileNotFoundError, json.JSONDecodeError):
            pass
        assert all(p.poll() is None for p in procs), "a cluster process exited early"
        assert time.monotonic() < deadline, f"{path.name} was not written"
        time.sleep(0.1)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="the recipe makes its "
                    "certificate with openssl")
def test_documented_local_cluster_recipe_runs(tmp_path):
    """Every line of the recipe runs: the scheduler listens on 127.0.0.1 over TLS, the study
    records all its trials through it (the evaluator names that scheduler), and `kill`
    stops both cluster processes (the scheduler then removes its file)."""
    seed_solution().save(tmp_path / "solution")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    background: list[subprocess.Popen] = []
    summary = address = None
    try:
        for line in recipe():
            words = shlex.split(line)
            if words[0] == "export":
                key, value = words[1].split("=", 1)
                env[key] = value
            elif words[0] == "kill":
                jobs = [background[int(w.lstrip("%")) - 1] for w in words[1:]]
                for p in jobs:
                    p.terminate()
                for p in jobs:
                    assert p.wait(timeout=30) is not None
            elif words[-1] == "&":
                if background:  # a worker needs the scheduler's file
                    _wait_for(tmp_path / "scheduler.json", background)
                background.append(subprocess.Popen(
                    _argv(words[:-1]), cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL))
            else:
                if words[0] == "clamber":
                    _wait_for(tmp_path / "scheduler.json", background)
                    scheduler = json.loads((tmp_path / "scheduler.json").read_text())
                    address = scheduler["address"]
                done = subprocess.run(_argv(words), cwd=tmp_path, env=env, capture_output=True,
                                      text=True, timeout=240)
                assert done.returncode == 0, done.stderr[-2000:]
                if words[0] == "clamber":
                    summary = json.loads(done.stdout)
    finally:
        for p in background:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert address is not None and address.startswith("tls://127.0.0.1:")
    assert summary is not None and summary["trials"] == 2
    assert summary["evaluator"]["scheduler"] == address and summary["evaluator"]["tls"]
    assert all(p.returncode is not None for p in background) and len(background) == 2
    assert not (tmp_path / "scheduler.json").exists()
