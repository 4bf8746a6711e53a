"""The packaged seed trajectory: a solved jump of a reference robot, used as an initial guess.

The paper seeded every morphology of its Sobol sweep with one trajectory; clamber does the
same by default. The seed is the coarse optimum of a *reference* design that is neither the
nominal robot nor any design a test or benchmark solves, so a seeded solve is a real solve
from a neighbouring motion. Rebuild it after changing the formulation with
``python -m clamber.jumper.build_seed``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from clamber.exceptions import ClamberError
from clamber.jumper.morphology import Morphology
from clamber.jumper.solution import TrajectorySolution

SEED_PATH = Path(__file__).parent / "data" / "seed_coarse.npz"
#: The reference design the seed was solved for: longer inner links, heavier spine.
REFERENCE = Morphology(lengths=(0.07, 0.09, 0.09, 0.07), masses=(0.01, 0.07, 0.11, 0.07, 0.01))


@lru_cache(maxsize=1)
def seed_solution() -> TrajectorySolution:
    """The packaged seed (loaded once per process)."""
    if not SEED_PATH.exists():
        raise ClamberError(f"packaged seed trajectory {SEED_PATH.name} is missing; "
                           "rebuild it with `python -m clamber.jumper.build_seed`")
    return TrajectorySolution.load(SEED_PATH)
