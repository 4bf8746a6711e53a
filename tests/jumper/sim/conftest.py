"""One coarse solve of the nominal robot shared by the simulation tests."""

import pytest

from clamber.jumper.morphology import Morphology
from clamber.jumper.solve import solve


@pytest.fixture(scope="session")
def coarse_solution():
    sol = solve(Morphology.nominal(), resolution="coarse")
    assert sol.status.success, sol.return_status
    return sol
