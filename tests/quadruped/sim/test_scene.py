"""Smoke tests of the generated scenes: they load, step under noise and raise no warning."""

import mujoco
import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.quadruped.model.robot import Marcbot
from clamber.quadruped.sim.scene import ground_scene
from clamber.quadruped.sim.servos import ServoBank
from clamber.quadruped.sim.world import TERRAINS, ground_terrain, wall_layout, wall_rotation


def _step_under_noise(model: mujoco.MjModel, steps: int, seed: int) -> mujoco.MjData:
    rng = np.random.default_rng(seed)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    for _ in range(steps):
        data.ctrl[:] = rng.normal(0.0, 0.3, model.nu)
        mujoco.mj_step(model, data)
    assert not any(w.number for w in data.warning), [w.number for w in data.warning]
    assert np.all(np.isfinite(data.qpos))
    return data


def test_climb_scene_steps_under_noise(wall_sim):
    """The wall scene with every gripper welded survives 1 s of random servo goals."""
    sim, layout, _ = wall_sim
    for leg, holds in layout.holds.items():
        assert sim.grippers.attach(leg, holds[0])
    _step_under_noise(sim.model, 250, 0)


@pytest.mark.parametrize("terrain", TERRAINS)
@pytest.mark.parametrize("feet", ["gripper", "rubber"])
def test_ground_scenes_step_under_noise(terrain, feet):
    """Every ground terrain, with grippers or rubber feet, steps without warnings."""
    robot = Marcbot()
    model = ground_scene(robot, ground_terrain(terrain), ServoBank(robot), feet, 0.004)
    _step_under_noise(model, 100, 1)


def test_wall_frame_and_holds():
    """The wall frame is a rotation with its normal out of the surface; holds stand on the
    wall at the specified height with unit normals close to the wall's."""
    for incline in (70.0, 90.0):
        R = wall_rotation(incline)
        assert np.allclose(R.T @ R, np.eye(3)) and np.isclose(np.linalg.det(R), 1.0)
        layout = wall_layout(incline, {"LF": (0.2, 0.25), "LR": (-0.2, 0.25),
                                       "RF": (0.2, -0.25), "RR": (-0.2, -0.25)}, seed=5)
        for h in layout.all_holds():
            assert abs(R[:, 2] @ h.base) < 1e-12
            assert 0.06 <= R[:, 2] @ (h.top - h.base) <= 0.08
            assert R[:, 2] @ h.normal > np.cos(np.radians(6.5))
            assert np.all(h.capacity_factor >= 0.7) and np.all(h.capacity_factor <= 1.3)
            assert np.linalg.norm(h.vertices[:, :2], axis=1).max() <= 0.09 + 1e-12
    with pytest.raises(ConfigError):
        wall_rotation(180.0)
    with pytest.raises(ConfigError):
        ground_terrain("sand")
