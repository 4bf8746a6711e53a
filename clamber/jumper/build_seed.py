"""Rebuild the packaged seed trajectory (run after changing the formulation):
``python -m clamber.jumper.build_seed``."""

from __future__ import annotations

from pathlib import Path

from clamber.exceptions import ClamberError
from clamber.jumper.seed import REFERENCE, SEED_PATH
from clamber.jumper.solution import TrajectorySolution
from clamber.jumper.solve import solve


def build_seed(path: Path = SEED_PATH) -> TrajectorySolution:
    """Solve the reference design from the designed guess and store its coarse optimum."""
    sol = solve(REFERENCE, resolution="coarse", guess="deterministic")
    if not sol.status.success:
        raise ClamberError(f"seed solve failed: {sol.return_status}")
    sol.save(path)
    return sol


if __name__ == "__main__":
    s = build_seed()
    print(f"seed written: {s.speed:.3f} m/s, {s.iterations} iterations")
