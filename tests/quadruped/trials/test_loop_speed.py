"""The climbing loop's lean code paths give the numbers of the plain code they replace, bit for
bit: LAPACK solves without NumPy's wrapping, the sole wrenches' moment shift, the failure
clock's skipped lower bounds, the QP's box bounds and the active-limit test."""

import numpy as np
import pinocchio as pin
import pytest

from clamber.attachment.wrench_set import WRENCH_SCALE
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.sim.failure import FailureClock, default_wrench_set
from clamber.quadruped.sim.grippers import _sole_wrenches


def test_sole_moment_shift_is_the_cross_product():
    """The moment about the sole, ``tau + r x f``, written with cyclic index shifts equals
    NumPy's cross product bit for bit; the rotated wrench matches ``R^T`` times it."""
    rng = np.random.default_rng(2)
    ext = rng.standard_normal((20, 6)) * 30
    r = rng.standard_normal((20, 3)) * 0.1
    Rs = np.array([pin.utils.rpyToMatrix(*rng.uniform(-3, 3, 3)) for _ in range(20)])
    w = _sole_wrenches(ext.copy(), r, Rs.reshape(20, 9))
    tau = ext[:, :3] + np.cross(r, ext[:, 3:])
    assert np.allclose(w[:, 3:], np.einsum("nji,nj->ni", Rs, tau), rtol=0, atol=1e-12)
    assert np.allclose(w[:, :3], np.einsum("nji,nj->ni", Rs, ext[:, 3:]), rtol=0, atol=1e-12)
    shifted = ext.copy()
    f = shifted[:, 3:]
    shifted[:, :3] += r[:, [1, 2, 0]] * f[:, [2, 0, 1]] - r[:, [2, 0, 1]] * f[:, [1, 2, 0]]
    assert np.array_equal(shifted[:, :3], tau)


def test_settle_skips_only_lower_bounds_that_raise_no_peak(monkeypatch):
    """Two failure clocks settle the same 300 control periods of five wrenches per gripper
    (loads rising, falling and rising past earlier peaks, all certified inside the set by
    the inner polytope), one skipping
    the lower bounds its sublinearity test rules out, one forming them at every step: their
    peaks, peak wrenches, gauges and slides are equal bit for bit, and the skip saves most
    lower bounds."""
    import clamber.quadruped.sim.failure as failure

    wset = default_wrench_set()
    rng = np.random.default_rng(9)
    base = rng.standard_normal((3, 6)) * WRENCH_SCALE
    base /= wset.upper(base)[:, None]  # on the inner polytope's boundary
    level = 0.3 + 0.5 * np.abs(np.sin(np.linspace(0, 7, 1500)))
    walk = base[None] * level[:, None, None] + np.cumsum(
        rng.standard_normal((1500, 3, 6)) * WRENCH_SCALE * 1e-4, axis=0)
    rows, factor = np.array([0, 1, 3]), np.ones((3, 6))
    calls = {"n": 0}
    lower = failure.WrenchSet.lower

    def counted(self, w):
        calls["n"] += 1
        return lower(self, w)

    monkeypatch.setattr(failure.WrenchSet, "lower", counted)

    def drive():
        clock = FailureClock(4, wset)
        calls["n"] = 0
        out = []
        for period in walk.reshape(300, 5, 3, 6):
            g = clock.settle(rows, period, factor)
            assert g is not None
            out.append((g, clock._peak_lo.copy(), clock._peak_wrench.copy()))
        return out, clock.peaks(), calls["n"]

    skipping, peaks, n_skipping = drive()
    monkeypatch.setattr(failure, "_LOWER_MARGIN", np.inf)
    forming, peaks_all, n_forming = drive()
    assert all(np.array_equal(a, b) for x, y in zip(skipping, forming, strict=True)
               for a, b in zip(x, y, strict=True))
    assert np.array_equal(peaks, peaks_all) and peaks.max() > 0.3
    assert n_forming > 2 * n_skipping


def test_sole_wrenches_equal_the_fancy_indexed_shift_bit_for_bit():
    """:func:`_sole_wrenches` (moment shift through ``take``) returns exactly the numbers of
    the shift written with fancy indexing and the same rotation, on random wrenches."""
    rng = np.random.default_rng(5)
    for n in (1, 4, 20):
        ext = rng.standard_normal((n, 6)) * 30
        r = rng.standard_normal((n, 3)) * 0.1
        Rs = np.array([pin.utils.rpyToMatrix(*rng.uniform(-3, 3, 3)) for _ in range(n)])
        plain = ext.copy()
        f = plain[:, 3:]
        plain[:, :3] += r[:, [1, 2, 0]] * f[:, [2, 0, 1]] - r[:, [2, 0, 1]] * f[:, [1, 2, 0]]
        plain = (plain.reshape(-1, 2, 1, 3) @ Rs.reshape(-1, 1, 3, 3)).reshape(-1, 6)
        plain = plain[:, [3, 4, 5, 0, 1, 2]]
        assert np.array_equal(_sole_wrenches(ext.copy(), r, Rs.reshape(n, 9)), plain)


def test_simulator_reads_through_cached_views_equal_fresh_reads(wall_sim, hold_still):
    """After physics steps and after a state restore, the simulator's readings (body pose,
    encoders, IMU truth, joint-4 torques, the recorded gripper data) are exactly what reading
    MjData's arrays afresh gives."""
    import mujoco

    from clamber.quadruped.sim.simulator import GRAVITY_VECTOR

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
        sim.grippers.begin_cycle(1)
        sim.grippers.record_step(0)
        ext, com, pos, mat = sim.grippers._cycle
        assert np.array_equal(ext[0], d.cfrc_ext) and np.array_equal(com[0], d.subtree_com)
        assert np.array_equal(pos[0], d.site_xpos) and np.array_equal(mat[0], d.site_xmat)


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
