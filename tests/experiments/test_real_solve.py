"""One small co-design on real trajectory optimizations, serial and on two Dask workers."""

import numpy as np

from clamber.experiments.codesign import CodesignSettings, run_codesign
from clamber.experiments.fitness import FitnessSettings
from clamber.jumper.settings import OptimizationSettings
from clamber.jumper.solution import TrajectorySolution
from clamber.report.html import write_codesign_outputs
from clamber.storage.runs import TrialState

#: Tiny grids keep each IPOPT solve well under a second; the structure is the real one.
TINY = FitnessSettings(settings=OptimizationSettings(max_iterations=400),
                     resolution=(6, 3, 5, 3, 4), refine=(7, 4, 6, 4, 5))
CONFIG = CodesignSettings(generations=2, popsize=2, sigma0=0.3, seed=2, fitness=TINY)


def test_real_codesign_serial_equals_dask_and_warm_starts(tmp_path, dask_two):
    """Real solves give identical trials in-process and on two worker processes; the
    second generation warm-starts from the first's best trajectory, which is stored; the
    report embeds every figure."""
    serial = run_codesign(CONFIG, tmp_path / "s")
    dask = run_codesign(CONFIG, tmp_path / "d", dask_two)
    key = [(t.params, t.state, t.fitness, t.status, t.guess) for t in serial.trials]
    assert key == [(t.params, t.state, t.fitness, t.status, t.guess) for t in dask.trials]
    assert sum(t.state is TrialState.COMPLETE for t in serial.trials) >= 3
    first = [t for t in serial.trials if t.generation == 0]
    second = [t for t in serial.trials if t.generation == 1]
    assert all(t.guess == "seed" for t in first)
    assert any(t.guess == "warm" for t in second)
    best = TrajectorySolution.load(serial.best_solution_path)
    assert best.status.success and np.isclose(best.speed, serial.best_speed)
    assert best.nodes == TINY.refine and best.morphology == serial.best_morphology
    summary = write_codesign_outputs(serial)
    html = (tmp_path / "s" / "report.html").read_text()
    assert html.count("data:image/png;base64,") == len(summary["figures"]) == 3
    assert set(summary["findings"]) == {"spine_mass_concentrated", "short_distal_links",
                                        "front_longer_than_rear"}


def test_local_cluster_binds_loopback_only(dask_two):
    """Scheduler and workers of the default local cluster listen on 127.0.0.1, over TLS,
    and so does every listening socket of this process and its worker processes."""
    import psutil

    info = dask_two.client.scheduler_info()
    assert dask_two.address.startswith("tls://127.0.0.1:")
    assert info["workers"] and all(a.startswith("tls://127.0.0.1:") for a in info["workers"])
    me = psutil.Process()
    listening = [c.laddr for p in [me, *me.children(recursive=True)]
                 for c in p.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN]
    assert len(listening) >= 3  # scheduler, its HTTP server, one per worker at least
    assert all(a.ip in ("127.0.0.1", "::1") for a in listening), listening
