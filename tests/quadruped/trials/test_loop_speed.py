"""The climbing loop's lean paths give the numbers of reading MuJoCo directly: the simulator's
readings through views, the servos' command against its formula, and the scenes' physics
without MuJoCo's island search."""

import numpy as np
import pytest

from clamber.quadruped.model.robot import LEG_NAMES


def test_simulator_reads_through_cached_views_equal_fresh_reads(wall_sim, hold_still):
    """After physics steps and after a state restore, the simulator's readings (body pose,
    encoders, IMU truth, joint-4 torques) are exactly what reading MjData's arrays afresh
    gives."""
    import mujoco

    from clamber.quadruped.model.robot import GRAVITY_VECTOR

    sim, layout, _ = wall_sim
    for leg in LEG_NAMES:
        sim.grippers.attach(leg, layout.holds[leg][0])
    saved = np.empty(mujoco.mj_stateSize(sim.model, mujoco.mjtState.mjSTATE_INTEGRATION))
    for k in range(30):
        v0, q0 = sim.data.qvel[:3].copy(), sim.data.qpos[3:7].copy()
        sim.step(hold_still(sim))
        if k == 10:
            mujoco.mj_getState(sim.model, sim.data, saved, mujoco.mjtState.mjSTATE_INTEGRATION)
        if k == 20:
            mujoco.mj_setState(sim.model, sim.data, saved, mujoco.mjtState.mjSTATE_INTEGRATION)
            mujoco.mj_forward(sim.model, sim.data)
        d = sim.data
        R = d.xmat[sim.body_id].reshape(3, 3)
        p, Rb = sim.body_pose()
        assert np.array_equal(p, d.qpos[:3]) and np.array_equal(Rb, R)
        q, dq = sim.joints()
        assert np.array_equal(q, d.qpos[sim.qadr]) and np.array_equal(dq, d.qvel[sim.vadr])
        f, w = sim.imu_truth()
        assert np.array_equal(f, R.T @ ((d.qvel[:3] - v0) / sim.dt - GRAVITY_VECTOR))
        rate = np.empty(3)
        mujoco.mju_subQuat(rate, d.qpos[3:7], q0)
        assert np.array_equal(w, rate / sim.dt)
        assert np.array_equal(sim.joint4_torques(), d.actuator_force[3::5])


def test_servo_command_checks_and_numbers_equal_the_plain_apply(wall_sim):
    """The servos' one-buffer command path writes exactly the plain goals and force ranges,
    and a non-finite or misshapen vector raises the error naming that vector."""
    from clamber.exceptions import ConfigError
    from clamber.quadruped.control.controllers import JointCommand

    sim = wall_sim[0]
    servos, m, d = sim.servos, sim.model, sim.data
    rng = np.random.default_rng(7)
    for _ in range(50):
        cmd = JointCommand(rng.uniform(-1, 1, 20), rng.uniform(-2, 2, 20),
                           rng.uniform(-0.5, 3, 20))
        servos.apply(m, d, cmd)
        lim = np.minimum(np.maximum(cmd.current_limit, 0.0) / servos.current_per_torque,
                         servos.tau_max)
        assert np.array_equal(d.ctrl, cmd.position + cmd.torque / servos.kp)
        assert np.array_equal(m.actuator_forcerange[:, 0], -lim)
        assert np.array_equal(m.actuator_forcerange[:, 1], lim)
    for k, name in enumerate(("position", "torque", "current_limit")):
        vectors = [np.zeros(20), np.zeros(20), np.ones(20)]
        vectors[k] = vectors[k].copy()
        vectors[k][3] = np.nan
        with pytest.raises(ConfigError, match=f"command {name} must"):
            servos.apply(m, d, JointCommand(*vectors))
        vectors[k] = np.zeros(19)
        with pytest.raises(ConfigError, match=f"command {name} must"):
            servos.apply(m, d, JointCommand(*vectors))


def _climb_state(settings, islands: bool):
    """Final MuJoCo state, result and gripper events of a short climb, with MuJoCo's island
    search switched on or (the scenes' setting) off."""
    import mujoco

    from clamber.quadruped.trials.climb import ClimbTrial

    trial = ClimbTrial(settings, 0)
    opt = trial.sim.model.opt
    flag = int(mujoco.mjtDisableBit.mjDSBL_ISLAND)
    assert opt.disableflags & flag, "the climbing scene searches for islands"
    if islands:
        opt.disableflags &= ~flag
    result, _ = trial.run()
    m, d = trial.sim.model, trial.sim.data
    state = np.empty(mujoco.mj_stateSize(m, mujoco.mjtState.mjSTATE_FULLPHYSICS))
    mujoco.mj_getState(m, d, state, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    fields = {k: v for k, v in result.to_dict().items() if "wall" not in k and "setup" not in k}
    return state, fields, repr(trial.sim.grippers.events), trial.samples.array()


@pytest.mark.parametrize("scenario, rigid", [("push90", False), ("wall90", True)])
def test_no_island_search_gives_the_island_solvers_numbers(scenario, rigid):
    """A climb with MuJoCo's island search off (one robot: one island) ends in exactly the
    state, result, gripper events and metric samples of the same climb with it on: through
    a release, the push and reloading (compliant soles), and through a gripper breaking off
    and its rerun period (rigid soles)."""
    from dataclasses import replace

    from clamber.experiments.quadruped_scenarios import scenario_settings

    settings = replace(scenario_settings(scenario, controller="qwbc"), time_limit=7.0)
    if rigid:
        settings = replace(settings, sole=None)
    off, on = _climb_state(settings, False), _climb_state(settings, True)
    assert np.array_equal(off[0], on[0])
    assert off[1] == on[1] and off[2] == on[2]
    assert np.array_equal(off[3], on[3], equal_nan=True)
    if rigid:
        assert off[1]["failure"] == "gripper_broke"


def test_every_quadruped_scene_skips_the_island_search(wall_sim):
    """The climbing and ground scenes, and the robot spec the rock scene starts from, all
    switch MuJoCo's island search off."""
    import mujoco

    from clamber.quadruped.model.robot import Marcbot
    from clamber.quadruped.sim.scene import ground_scene, robot_spec
    from clamber.quadruped.sim.servos import ServoBank
    from clamber.quadruped.sim.world import ground_terrain

    flag = int(mujoco.mjtDisableBit.mjDSBL_ISLAND)
    robot = Marcbot()
    ground = ground_scene(robot, ground_terrain("flat"), ServoBank(robot))
    spec = robot_spec(robot, ServoBank(robot)).compile()
    for model in (wall_sim[0].model, ground, spec):
        assert model.opt.disableflags & flag
