"""The simulator's control period against MuJoCo's own quantities: the servo torques and power
of a period against MuJoCo's steps and actuator power, the IMU against the state's change,
a refused command, and the same climb twice from the same seed."""

import mujoco
import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.quadruped.control.controllers import JointCommand
from clamber.quadruped.model.robot import GRAVITY_VECTOR, LEG_NAMES, N_JOINTS
from clamber.quadruped.trials.climb import ClimbSettings, ClimbTrial


def _rest_on_holds(sim, layout) -> None:
    for leg in LEG_NAMES:
        sim.grippers.attach(leg, layout.holds[leg][0])
    sim.grippers.breakable = False


def test_a_period_is_mujocos_steps_and_its_record_their_torques_and_power(wall_sim):
    """One control period equals ``substeps`` calls of ``mujoco.mj_step`` on a copy of the
    data (same state to 1e-12); the record's torques are the mean of ``|actuator_force|``
    over those steps and its power ``V sum(|tau| A/(N m) + I_idle)`` at them."""
    sim, layout, _ = wall_sim
    _rest_on_holds(sim, layout)
    m = sim.model
    q = sim.joints()[0]
    cmd = JointCommand(q + 0.02, np.linspace(-0.2, 0.2, N_JOINTS), 0.5 * sim.servos.current_max)
    for _ in range(3):
        copy = mujoco.MjData(m)
        mujoco.mj_copyData(copy, m, sim.data)
        rec = sim.step(cmd)
        copy.ctrl[:] = sim.data.ctrl  # the servo goals the command wrote
        forces = []
        for _ in range(sim.substeps):
            mujoco.mj_step(m, copy)
            forces.append(np.abs(copy.actuator_force))
        np.testing.assert_allclose(sim.data.qpos, copy.qpos, atol=1e-12)
        np.testing.assert_allclose(rec.torque, np.mean(forces, axis=0), rtol=1e-12)
        p = sim.servos.params
        want = p.voltage * np.sum(rec.torque * sim.servos.current_per_torque + p.idle_current)
        assert rec.power == pytest.approx(want, rel=1e-12)
        assert rec.t == pytest.approx(copy.time) and rec.broken == ()
    assert np.all(rec.torque > 0.0)


def test_electrical_power_exceeds_the_mechanical_power_mujoco_reports():
    """Along a climb, every servo's electrical power ``V (|tau| A/(N m) + I_idle)`` is at
    least the mechanical power its actuator delivers in MuJoCo (``|force * velocity|``):
    the current model cannot create energy while the joints turn slower than ``V`` times
    the current per torque (6.7 rad/s for the XM430), as they do in a climb."""
    trial = ClimbTrial(ClimbSettings(), 0, time_limit=6.0)
    sim, servos = trial.sim, trial.sim.servos
    p = servos.params
    checked = 0
    while trial.step():
        d = sim.data
        mech = np.abs(d.actuator_force * d.actuator_velocity)
        elec = p.voltage * (np.abs(d.actuator_force) * servos.current_per_torque
                            + p.idle_current)
        assert np.all(np.abs(d.actuator_velocity) < p.voltage * servos.current_per_torque)
        assert np.all(elec >= mech)
        checked += 1
    assert checked > 100


def test_imu_readings_are_the_change_of_the_state_over_the_period(wall_sim, hold_still):
    """The specific force is the velocity change over the period less gravity, in the body
    frame; the rate is the rotation vector from the period's first to its last attitude
    (MuJoCo's quaternion difference) over the period."""
    sim, layout, _ = wall_sim
    _rest_on_holds(sim, layout)
    for _ in range(5):
        v0, q0 = sim.data.qvel[:3].copy(), sim.data.qpos[3:7].copy()
        sim.step(hold_still(sim))
        f, w = sim.imu_truth()
        R = sim.data.xmat[sim.body_id].reshape(3, 3)
        np.testing.assert_allclose(
            f, R.T @ ((sim.data.qvel[:3] - v0) / sim.dt - GRAVITY_VECTOR), atol=1e-12)
        rate = np.empty(3)
        mujoco.mju_subQuat(rate, sim.data.qpos[3:7], q0)
        np.testing.assert_allclose(w, rate / sim.dt, atol=1e-12)
    p, R_true = sim.body_pose()
    assert np.array_equal(p, sim.data.qpos[:3]) and np.array_equal(R_true, R)


@pytest.mark.parametrize("bad", [0, 1, 2])
def test_a_command_not_finite_is_refused_and_nothing_is_stepped(wall_sim, bad):
    """A command vector with a NaN is refused with the vector's name; the state, time and
    servo goals are untouched."""
    sim, _, _ = wall_sim
    vectors = [sim.joints()[0], np.zeros(N_JOINTS), np.ones(N_JOINTS)]
    vectors[bad][3] = np.nan
    before = (sim.data.qpos.copy(), sim.data.ctrl.copy(), sim.data.time)
    names = ("position", "torque", "current_limit")
    with pytest.raises(ConfigError, match=f"command {names[bad]} must be 20 finite numbers"):
        sim.step(JointCommand(*vectors))
    assert np.array_equal(sim.data.qpos, before[0]) and np.array_equal(sim.data.ctrl, before[1])
    assert sim.data.time == before[2]
    with pytest.raises(ConfigError, match="command torque must be 20"):
        sim.step(JointCommand(vectors[0], np.zeros(19), np.ones(N_JOINTS)))


def _climb(seed: int) -> tuple:
    trial = ClimbTrial(ClimbSettings(controller="clik-plain", incline_deg=90.0), seed,
                       time_limit=8.0)
    states = []
    while trial.step():
        states.append(trial.sim.data.qpos.copy())
    r = trial.result().to_dict()
    for k in [k for k in r if "wall" in k or "setup" in k or "cpu" in k]:
        r.pop(k)
    g = trial.sim.grippers
    return r, g.events, g.peak_loads(), np.array(states)


def test_the_same_seed_gives_the_same_climb():
    """Two climbs from the same seed in fresh objects (plain CLIK on the vertical wall,
    through its first release, where a gripper runs outside its set) give the same result,
    gripper events, peak loads and state at every cycle, exactly."""
    a, b = _climb(1), _climb(1)
    assert a[0] == b[0] and a[1] == b[1] and a[2] == b[2]
    assert np.array_equal(a[3], b[3])
    assert max(a[2].values()) > 0.9


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_the_stability_watch_says_what_instability_says():
    """On stable states, states with a non-finite or huge entry (sums that overflow with
    every entry finite included) and states with fatal or harmless warnings counted, the
    per-cycle watch returns exactly :func:`instability`'s verdict."""
    from clamber.sim_stability import StabilityWatch, instability

    m = mujoco.MjModel.from_xml_string(
        "<mujoco><worldbody><body><freejoint/><geom size='0.1'/></body>"
        "<body pos='1 0 0'><joint type='hinge'/><geom size='0.1'/></body></worldbody></mujoco>")
    d = mujoco.MjData(m)
    watch = StabilityWatch(d)
    rng = np.random.default_rng(9)
    specials = [np.nan, np.inf, -np.inf, 1e301, -1e301, 1.7e308, -1.7e308, 1e300]
    seen = set()
    for k in range(400):
        mujoco.mj_resetData(m, d)
        d.qpos[:] = rng.standard_normal(m.nq)
        d.qvel[:] = rng.standard_normal(m.nv)
        for _ in range(k % 3):
            target = d.qpos if rng.uniform() < 0.5 else d.qvel
            target[rng.integers(len(target))] = specials[rng.integers(len(specials))]
        if k % 7 == 0:
            d.warning[int(rng.integers(len(d.warning.number)))].number = 1
        verdict = instability(d)
        assert watch() == verdict
        seen.add(verdict is None)
    mujoco.mj_resetData(m, d)
    d.qpos[:] = 1.7e308  # every entry finite, their sum not
    assert watch() == instability(d) == "non-finite state"
    assert seen == {True, False}
