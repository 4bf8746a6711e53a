"""The co-design fitness's IPOPT options: what they are, same score, serial equals Dask."""

import pytest

from clamber.experiments.fitness import (
    FITNESS_TOLERANCE,
    CandidateTask,
    FitnessSettings,
    evaluate_candidate,
    fitness_settings,
)
from clamber.experiments.sweep import sobol_designs
from clamber.jumper.morphology import Morphology
from clamber.jumper.settings import OptimizationSettings
from clamber.jumper.solve import solve
from clamber.parallel.serial import SerialEvaluator


def test_fitness_scores_with_its_documented_options():
    """A candidate is scored at tolerance 1e-4 without MUMPS scaling and with fast steps,
    unless the run says otherwise; single solves keep IPOPT's defaults."""
    s = FitnessSettings().settings
    assert (s.tolerance, s.mumps_scaling, s.fast_step_computation) == (FITNESS_TOLERANCE, 0,
                                                                       True)
    assert s.to_dict() == fitness_settings().to_dict()
    assert FitnessSettings(refine=None).settings.fast_step_computation
    single = OptimizationSettings()
    assert (single.mumps_scaling, single.fast_step_computation) == (77, False)


@pytest.mark.parametrize("which", ["nominal", "sobol"])
def test_fitness_options_score_as_ipopt_defaults(which):
    """From the packaged seed, the fitness's options reach the coarse optimum of IPOPT's
    default options (MUMPS scaling 77, checked steps) at the fitness tolerance, on the
    nominal robot and on a Sobol morphology: the same speed (1e-6 relative) and the same
    active bounds."""
    m = Morphology.nominal() if which == "nominal" else sobol_designs(3, seed=5)[2]
    s = fitness_settings()
    a = solve(m, s, "coarse")
    b = solve(m, s.with_(mumps_scaling=77, fast_step_computation=False), "coarse")
    assert a.status.success and b.status.success
    assert a.speed == pytest.approx(b.speed, rel=1e-6)
    assert a.active_bounds == b.active_bounds


def test_fitness_options_serial_equals_dask(dask_two):
    """With the fitness's options, two workers score candidates exactly as the serial loop
    does (the same speeds and statuses, bit for bit), warm starts included."""
    fit = FitnessSettings(settings=fitness_settings().with_(max_iterations=400),
                          resolution=(6, 3, 5, 3, 4), refine=None)
    first = evaluate_candidate(CandidateTask(0, 0, (), Morphology.nominal(), fit))
    assert first.success
    tasks = [CandidateTask(1, i, (), m, fit, first.solution)
             for i, m in enumerate(sobol_designs(3, seed=4))]
    serial = [o.value for o in SerialEvaluator().map(evaluate_candidate, tasks)]
    dask = [o.value for o in dask_two.map(evaluate_candidate, tasks)]
    key = [(r.status, r.speed_mps, r.guess, r.info["iterations"]) for r in serial]
    assert key == [(r.status, r.speed_mps, r.guess, r.info["iterations"]) for r in dask]
    assert sum(r.success for r in serial) >= 2
