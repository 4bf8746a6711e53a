"""Shared pieces of the search tests: the cheap fitness, shipped to Dask workers by value."""

import sys
from pathlib import Path

import cloudpickle
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import cheap  # noqa: E402

# Dask workers do not have this test folder on their path: send the module's code along.
cloudpickle.register_pickle_by_value(cheap)


@pytest.fixture(scope="module")
def dask_two():
    """A local Dask cluster of two single-threaded workers on loopback, for one module."""
    from clamber.parallel.dask import DaskEvaluator

    with DaskEvaluator(n_workers=2) as ev:
        yield ev
