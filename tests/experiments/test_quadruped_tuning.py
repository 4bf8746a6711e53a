"""The gain-tuning procedure treats every controller identically."""

import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.experiments.quadruped_tuning import (
    TuningSettings,
    candidate_gains,
    cost,
    search_points,
    tune,
)
from clamber.quadruped.control.variants import GAINS, gain_values


def test_every_controller_gets_the_same_budget_seeds_scenarios_and_points():
    """Tuning each controller with a recording evaluator: the same number of candidates, the
    same training seeds and scenarios in the same order, and the same unit search points
    (multipliers ``spread ** u``), whatever the controller."""
    spec = TuningSettings(budget=5, seeds=(1000, 1001), scenarios=("wall70", "wall90"))
    calls = {}

    def evaluate(controller, gains, scenario, seeds):
        calls.setdefault(controller, []).append((scenario, tuple(seeds),
                                                 tuple(np.log([g for _, g in gains])
                                                       / np.log(spec.spread))))
        return [(True, 1.0)] * len(seeds)

    results = {c: tune(c, spec, evaluate) for c in GAINS}
    first = calls["qwbc"]
    assert len(first) == spec.budget * len(spec.scenarios)
    for c in GAINS:
        assert [(s, seeds) for s, seeds, _ in calls[c]] == [(s, seeds) for s, seeds, _ in first]
        np.testing.assert_allclose([u for *_, u in calls[c]], [u for *_, u in first])
        assert len(results[c].candidates) == spec.budget
    assert not set(spec.seeds) & set(range(100))


def test_defaults_are_a_candidate_and_the_cheapest_wins():
    """Candidate 0 is every class default (multiplier 1); the lowest cost is chosen; cost
    ranks failures before tracking error."""
    spec = TuningSettings(budget=4)
    assert np.all(search_points(spec)[0] == 0)
    assert all(m == 1.0 for _, m in candidate_gains("vmc", spec)[0])
    assert gain_values("qwbc", candidate_gains("qwbc", spec)[0]) == GAINS["qwbc"]
    scores = iter([0.5, 0.1, 0.9, 0.3])

    def evaluate(controller, gains, scenario, seeds):
        return [(True, next(scores) * 100)]

    result = tune("clik", TuningSettings(budget=4, seeds=(1000,)), evaluate)
    assert result.best is result.candidates[1]
    assert cost(1, 2, 0.0) > cost(2, 2, 49.0)


def test_bad_tuning_input():
    """A zero budget, a spread <= 1 and an untuned controller are ConfigErrors."""
    with pytest.raises(ConfigError):
        TuningSettings(budget=0)
    with pytest.raises(ConfigError):
        TuningSettings(spread=1.0)
    with pytest.raises(ConfigError):
        candidate_gains("qwbc-noramp", TuningSettings())
