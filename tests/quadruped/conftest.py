"""Shared fixtures of the quadruped tests: one robot model for the whole session."""

import numpy as np
import pinocchio as pin
import pytest

from clamber.quadruped.model import RobotModel, RobotState


@pytest.fixture(scope="session")
def rm() -> RobotModel:
    return RobotModel()


def _random_state(rm: RobotModel, rng: np.random.Generator, spread: float = 0.25) -> RobotState:
    """A state near the default stance, random body attitude, joints inside their limits."""
    s = rm.default_state()
    qj = np.clip(s.joint_positions + rng.uniform(-spread, spread, s.joint_positions.size),
                 rm.q_min, rm.q_max)
    R = pin.exp3(rng.normal(size=3) * 1.0)
    return RobotState(s.body_position + rng.normal(size=3) * 0.05, R, qj,
                      rng.normal(size=6) * 0.05, rng.normal(size=20) * 0.1)


@pytest.fixture(scope="session")
def random_state():
    """``random_state(rm, rng, spread)``: a random valid state near the default stance."""
    return _random_state
