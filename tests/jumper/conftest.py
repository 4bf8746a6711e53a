"""Shared fixtures: one coarse solve of the nominal robot for the whole session."""

import pytest

from clamber.jumper.morphology import Morphology
from clamber.jumper.solve import solve
from clamber.jumper.verify import attach_accuracy


@pytest.fixture(scope="session")
def nominal_coarse():
    sol = solve(Morphology.nominal(), resolution="coarse", guess="deterministic")
    assert sol.status.success, sol.return_status
    return attach_accuracy(sol)
