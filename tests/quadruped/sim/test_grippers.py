"""Gripper attach, release and break-off logic on a vertical wall."""

import mujoco
import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.quadruped.model.robot import LEG_NAMES, Marcbot
from clamber.quadruped.sim.grippers import GripperState


def _rest_on_start_holds(sim, layout, hold_still, steps: int) -> None:
    """Weld all four grippers to their start holds (unbreakable) and hold still ``steps``
    control cycles."""
    for leg in LEG_NAMES:
        sim.grippers.attach(leg, layout.holds[leg][0])
    sim.grippers.breakable = False
    for _ in range(steps):
        sim.step(hold_still(sim))


def test_attach_only_on_a_hold(wall_sim):
    """A grasp closes on the hold under the sole and misses a hold elsewhere."""
    sim, layout, _ = wall_sim
    assert not sim.grippers.attach("LF", layout.holds["RR"][0])
    assert sim.grippers.events[-1].kind == "miss"
    assert sim.grippers.state["LF"] is GripperState.OPEN
    assert sim.grippers.attach("LF", layout.holds["LF"][0])
    assert sim.grippers.state["LF"] is GripperState.ATTACHED
    assert sim.data.eq_active[sim.grippers.eq["LF"]] == 1
    with pytest.raises(ConfigError):
        sim.grippers.attach("LF", layout.holds["LF"][0])


def test_weld_holds_the_robot_and_balances_gravity(wall_sim, hold_still):
    """With four grippers welded and the servos holding still, the body stays within 1 cm
    and the grippers' wrenches (in world axes) carry the robot's weight."""
    sim, layout, body = wall_sim
    _rest_on_start_holds(sim, layout, hold_still, 100)
    assert np.linalg.norm(sim.data.qpos[:3] - body.translation) < 0.01
    W = sim.grippers.wrenches(LEG_NAMES)
    total = sum(sim.data.site_xmat[sim.grippers.wrench_site[leg]].reshape(3, 3) @ W[i, :3]
                for i, leg in enumerate(LEG_NAMES))
    weight = sim.model.body_mass.sum() * 9.81
    assert np.allclose(total, [0.0, 0.0, weight], atol=0.05 * weight)


def test_release_frees_the_gripper(wall_sim):
    """After a release the weld is off and the gripper carries no weld force."""
    sim, layout, _ = wall_sim
    for leg in LEG_NAMES:
        sim.grippers.attach(leg, layout.holds[leg][0])
    sim.grippers.release("LF")
    assert sim.data.eq_active[sim.grippers.eq["LF"]] == 0
    assert sim.grippers.state["LF"] is GripperState.OPEN
    assert "LF" not in sim.grippers.attached
    assert sim.grippers.events[-1].kind == "release"


def test_overload_breaks_the_gripper(wall_sim, hold_still):
    """Grippers on holds whose capacity is far below their load break off within one control
    cycle: weld off, state broken, event logged."""
    sim, layout, _ = wall_sim
    for leg in LEG_NAMES:
        sim.grippers.attach(leg, layout.holds[leg][0])
        layout.holds[leg][0].capacity_factor[:] = 1e-3
    rec = sim.step(hold_still(sim))
    assert set(rec.broken) == set(LEG_NAMES)
    assert all(sim.grippers.state[leg] is GripperState.BROKEN for leg in LEG_NAMES)
    assert not sim.data.eq_active.any()
    assert sim.grippers.events[-1].kind == "break"


def test_conservative_box_lies_in_the_true_capacity():
    """Every vertex of the controllers' conservative box lies inside the gripper's achievable
    wrench set (gauge <= 1), and its single-axis extents exceed the box by at least 2x."""
    from clamber.attachment.wrench_limits import PAPER_BOX_HALF_WIDTHS
    from clamber.attachment.wrench_set import BOX_SIGNS
    from clamber.quadruped.sim.failure import default_wrench_set

    wset = default_wrench_set()
    assert np.all(wset.gauge(BOX_SIGNS * PAPER_BOX_HALF_WIDTHS) <= 1.0)
    values, _ = wset.sets.support(np.vstack([np.eye(6), -np.eye(6)]))
    assert np.all(np.minimum(values[:6], values[6:]) > 2 * PAPER_BOX_HALF_WIDTHS)


def test_wrench_matches_constraint_forces(wall_sim, hold_still):
    """The cfrc_ext wrench equals the one from efc_J^T efc_force on the free-joint columns."""
    sim, layout, _ = wall_sim
    _rest_on_start_holds(sim, layout, hold_still, 20)
    m, d = sim.model, sim.data
    leg = "LR"
    n = d.nefc
    rows = (d.efc_type[:n] == int(mujoco.mjtConstraint.mjCNSTR_EQUALITY)) & (
        d.efc_id[:n] == sim.grippers.eq[leg])
    g = list(sim.grippers.geoms[leg])
    touching = np.isin(d.contact.geom1[:d.ncon], g) | np.isin(d.contact.geom2[:d.ncon], g)
    contact = d.efc_type[:n] >= int(mujoco.mjtConstraint.mjCNSTR_CONTACT_FRICTIONLESS)
    rows |= contact & touching[np.where(contact, d.efc_id[:n], 0)]
    qfrc = d.efc_J.reshape(n, m.nv)[rows, :6].T @ d.efc_force[:n][rows]
    jacp, jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
    mujoco.mj_jacSite(m, d, jacp, jacr, sim.grippers.wrench_site[leg])
    w = np.linalg.solve(np.vstack([jacp[:, :6], jacr[:, :6]]).T, qfrc)
    R = d.site_xmat[sim.grippers.wrench_site[leg]].reshape(3, 3)
    expected = np.concatenate([R.T @ w[:3], R.T @ w[3:]])
    assert np.allclose(sim.grippers.wrenches((leg,))[0], expected, atol=1e-6 * max(1, abs(w).max()))


def test_compliant_sole_structure(wall_sim):
    """Each sole is a pad on two spring-damper hinges (gripper x and y) that the weld holds;
    the robot's mass is unchanged and the servo joints are found past the pad joints."""
    from clamber.quadruped.sim.grippers import SoleCompliance

    sim, layout, _ = wall_sim
    m, c = sim.model, SoleCompliance()
    assert sim.grippers.compliant
    for leg in LEG_NAMES:
        for tag, axis in (("x", [1, 0, 0]), ("y", [0, 1, 0])):
            j = m.joint(f"{leg}_sole_{tag}")
            assert np.allclose(j.axis, axis) and np.isclose(j.stiffness[0], c.stiffness)
            assert np.isclose(j.damping[0], c.damping)
            assert np.allclose(j.range, [-c.range, c.range])
            assert m.body(j.bodyid[0]).name == f"{leg}_pad"
        assert m.eq(sim.grippers.eq[leg]).obj1id[0] == m.body(f"{leg}_pad").id
    assert np.isclose(m.body_mass.sum(), Marcbot().total_mass)
    q = sim.joints()[0]
    assert np.allclose(q, sim.data.qpos[7:].reshape(4, 7)[:, :5].reshape(-1))
    assert np.array_equal(sim.grippers.wrenches(["LF", "RR"]),
                          sim.grippers.wrenches(("LF", "RR")))


def test_sole_springs_carry_the_moment_about_x_and_y(wall_sim, hold_still):
    """At rest on four welded pads, the rock's moment about each pad's x and y axes equals
    the hinge springs' ``k theta`` (the pad is in equilibrium; its own weight is negligible):
    a check of the wrench read-out against the spring law."""
    from clamber.quadruped.sim.grippers import SoleCompliance

    sim, layout, _ = wall_sim
    k = SoleCompliance().stiffness
    _rest_on_start_holds(sim, layout, hold_still, 75)
    m, d = sim.model, sim.data
    for leg in LEG_NAMES:
        theta = [d.qpos[m.jnt_qposadr[m.joint(f"{leg}_sole_{t}").id]] for t in "xy"]
        w = sim.grippers.wrenches((leg,))[0]
        assert np.allclose(w[3:5], k * np.array(theta), atol=0.01), (leg, w, theta)
    assert max(np.abs(theta)) > 1e-4


def test_compliant_soles_relieve_moments_no_leg_can_apply(hold_still):
    """The same placement on four welds, rigid and compliant: the moments about the grippers'
    x axes (the direction no joint of a 5-DOF leg turns about) are smaller with the soles'
    compliance."""
    import pinocchio as pin

    from clamber.quadruped.gaits import ClimbGaitSettings
    from clamber.quadruped.model.robot_model import RobotModel
    from clamber.quadruped.sim.grippers import SoleCompliance
    from clamber.quadruped.sim.scene import climb_scene
    from clamber.quadruped.sim.servos import ServoBank
    from clamber.quadruped.sim.simulator import QuadrupedSim
    from clamber.quadruped.sim.world import ModelMismatch, wall_layout
    from clamber.quadruped.trials.stance import NOMINAL_FEET, initial_joints

    gp = ClimbGaitSettings()
    layout = wall_layout(70.0, gp.stance_offsets(NOMINAL_FEET), gp.stride, 1, seed=2)
    robot = ModelMismatch().perturb(Marcbot(), 2)
    R = layout.rotation
    tops = {leg: layout.holds[leg][0].top for leg in LEG_NAMES}
    body = pin.SE3(R, np.mean(list(tops.values()), axis=0) + gp.standoff * R[:, 2])
    q0 = initial_joints(RobotModel(robot), body, tops,
                         {leg: layout.holds[leg][0].normal for leg in LEG_NAMES}, lift=0.001)
    peak = {}
    for sole in (None, SoleCompliance()):
        servos = ServoBank(robot)
        sim = QuadrupedSim(climb_scene(robot, layout, servos, 0.004, sole), robot, servos,
                           50.0, grippers=True)
        sim.set_state(body.translation, body.rotation, q0)
        for leg in LEG_NAMES:
            sim.grippers.attach(leg, layout.holds[leg][0])
        sim.grippers.breakable = False
        worst = 0.0
        for _ in range(50):
            sim.step(hold_still(sim))
            worst = max(worst, float(np.abs(sim.grippers.wrenches(LEG_NAMES)[:, 3]).max()))
        peak[sole is None] = worst
    assert peak[False] < 0.5 * peak[True], peak


def _weld_give(sim, layout, hold_still) -> tuple[float, float]:
    """Largest rotation [rad] and translation [m] by which the four grasp welds are violated
    after 1.5 s at rest on the start holds."""
    _rest_on_start_holds(sim, layout, hold_still, 75)
    m, d = sim.model, sim.data
    mujoco.mj_forward(m, d)
    rows = d.efc_type[:d.nefc] == mujoco.mjtConstraint.mjCNSTR_EQUALITY
    violation = np.abs(d.efc_pos[:d.nefc][rows].reshape(-1, 6))
    return float(violation[:, 3:].max()), float(violation[:, :3].max())


def test_grasp_welds_are_as_stiff_as_the_step_allows(wall_sim, hold_still):
    """A weld stands for a grasp that does not give way (the sole's hinges carry the
    gripper's compliance): time constant two physics steps, impedance 0.99-0.999. At rest
    it gives way a fraction of a milliradian at the 4 ms step; with MuJoCo's default softness
    (0.02 s, 0.9-0.95) the same scene's welds give way 16 times as much."""
    from clamber.quadruped.sim.grippers import WELD_SOLIMP, weld_timeconst

    sim, layout, body = wall_sim
    m = sim.model
    for leg in LEG_NAMES:
        e = sim.grippers.eq[leg]
        assert np.allclose(m.eq_solref[e], [weld_timeconst(m.opt.timestep), 1.0])
        assert np.allclose(m.eq_solimp[e], WELD_SOLIMP)
    assert weld_timeconst(0.01) == pytest.approx(0.02)
    q0 = sim.joints()[0].copy()
    stiff = _weld_give(sim, layout, hold_still)
    # the same placement again with MuJoCo's default softness
    for leg in LEG_NAMES:
        sim.grippers.release(leg)
        m.eq_solref[sim.grippers.eq[leg]] = (0.02, 1.0)
        m.eq_solimp[sim.grippers.eq[leg]] = (0.9, 0.95, 0.001, 0.5, 2.0)
    sim.set_state(body.translation, body.rotation, q0)
    soft = _weld_give(sim, layout, hold_still)
    assert stiff[0] < 1e-3 and stiff[1] < 5e-5, stiff  # 0.46 mrad, 0.009 mm
    assert soft[0] > 5 * stiff[0] and soft[1] > 5 * stiff[1], (soft, stiff)  # 7.4, 0.36
