"""Gripper attach, release and break-off logic on a vertical wall."""

import mujoco
import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.quadruped.robot import LEG_NAMES
from clamber.quadruped.sim.grippers import GripperState, spasas_axis_extents


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
    for leg in LEG_NAMES:
        sim.grippers.attach(leg, layout.holds[leg][0])
    sim.grippers.breakable = False
    for _ in range(100):
        sim.step(hold_still(sim))
    assert np.linalg.norm(sim.data.qpos[:3] - body.translation) < 0.01
    W = sim.grippers.wrenches(LEG_NAMES)
    total = sum(sim.data.site_xmat[sim.grippers.site[leg]].reshape(3, 3) @ W[i, :3]
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
    """A gripper whose true capacity is below its load breaks off: weld off, event logged."""
    sim, layout, _ = wall_sim
    for leg in LEG_NAMES:
        sim.grippers.attach(leg, layout.holds[leg][0])
    sim.grippers.box = spasas_axis_extents() * 1e-3
    rec = sim.step(hold_still(sim))
    assert set(rec.broken) == set(LEG_NAMES)
    assert all(sim.grippers.state[leg] is GripperState.BROKEN for leg in LEG_NAMES)
    assert not sim.data.eq_active.any()
    assert sim.grippers.events[-1].kind == "break"


def test_true_capacity_exceeds_the_conservative_box():
    """The true capacity's extents (at the lowest hold factor 0.7) exceed the paper's box."""
    from clamber.attachment.wrench_limits import PAPER_BOX_HALF_WIDTHS

    assert np.all(0.7 * spasas_axis_extents() > PAPER_BOX_HALF_WIDTHS)


def test_wrench_matches_constraint_forces(wall_sim, hold_still):
    """The cfrc_ext wrench equals the one from efc_J^T efc_force on the free-joint columns."""
    sim, layout, _ = wall_sim
    for leg in LEG_NAMES:
        sim.grippers.attach(leg, layout.holds[leg][0])
    sim.grippers.breakable = False
    for _ in range(20):
        sim.step(hold_still(sim))
    m, d = sim.model, sim.data
    leg = "LR"
    n = d.nefc
    rows = (d.efc_type[:n] == int(mujoco.mjtConstraint.mjCNSTR_EQUALITY)) & (
        d.efc_id[:n] == sim.grippers.eq[leg])
    g = sim.grippers.geom[leg]
    touching = (d.contact.geom1[:d.ncon] == g) | (d.contact.geom2[:d.ncon] == g)
    contact = d.efc_type[:n] >= int(mujoco.mjtConstraint.mjCNSTR_CONTACT_FRICTIONLESS)
    rows |= contact & touching[np.where(contact, d.efc_id[:n], 0)]
    qfrc = d.efc_J.reshape(n, m.nv)[rows, :6].T @ d.efc_force[:n][rows]
    jacp, jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
    mujoco.mj_jacSite(m, d, jacp, jacr, sim.grippers.site[leg])
    w = np.linalg.solve(np.vstack([jacp[:, :6], jacr[:, :6]]).T, qfrc)
    R = d.site_xmat[sim.grippers.site[leg]].reshape(3, 3)
    expected = np.concatenate([R.T @ w[:3], R.T @ w[3:]])
    assert np.allclose(sim.grippers.wrench(leg), expected, atol=1e-6 * max(1, abs(w).max()))
