"""Sole wind-up: which way a 5-DOF leg cannot turn a held gripper, and when moving the body
turns it anyway."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
from scipy.linalg import null_space

from clamber.quadruped.model.kinematics import Clik, foot_poses
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.model.windup import blind_axis, follow, held_turns, windup

STRIDE = 0.22


def test_the_blind_axis_is_normal_to_every_turn_the_leg_makes_in_place(rm):
    """The turns a leg makes with its gripper held in place (joint steps in the null space
    of the position Jacobian, found by SciPy) are orthogonal to :func:`blind_axis`."""
    clik = Clik(rm)
    rng = np.random.default_rng(0)
    q0 = rm.robot.default_joint_angles()
    for _ in range(5):
        _, J = clik.kinematics(q0 + rng.uniform(-0.2, 0.2, q0.size))
        for i in range(len(LEG_NAMES)):
            turns = J[i][3:] @ null_space(J[i][:3])
            assert np.abs(blind_axis(J[i]) @ turns).max() < 1e-9


def test_following_keeps_grippers_in_place_turning_them_about_the_blind_axis_only(
        rm, tilted_stance):
    """After the body moves 5 cm up the wall and turns 20 mrad, :func:`follow`'s joints put
    each gripper where it was (Pinocchio's forward kinematics, within 1e-9 m) and turn it
    about its blind axis alone."""
    q0, body, feet = tilted_stance(rm, np.zeros((4, 2)))
    moved = pin.SE3(body.rotation @ pin.exp3(np.array([0.0, 0.02, 0.0])),
                    body.translation + 0.05 * body.rotation[:, 0])
    clik = Clik(rm)
    q = follow(clik, q0, moved, feet)
    conf = np.concatenate([pin.SE3ToXYZQUAT(moved), q])
    _, J = clik.kinematics(q)
    for i, M in enumerate(foot_poses(rm, conf)):
        assert np.linalg.norm(M.translation - feet[i].translation) < 1e-9
        turn = pin.log3(M.rotation.T @ feet[i].rotation)
        axis = blind_axis(J[i])
        assert np.linalg.norm(turn - (turn @ axis) * axis) < 1e-7


def test_soles_parallel_to_the_wall_keep_their_attitude_over_a_stride(rm, tilted_stance):
    """With every sole parallel to the wall the body slides a stride along the wall and no
    gripper turns (below 1 urad): the wind-up is not in the leg's geometry itself."""
    q0, body, feet = tilted_stance(rm, np.zeros((4, 2)))
    clik = Clik(rm)
    for s in (-STRIDE / 2, STRIDE / 2):
        moved = pin.SE3(body.rotation, body.translation + s * body.rotation[:, 0])
        assert np.abs(windup(clik, q0, moved, feet)).max() < 1e-6


def test_soles_tilted_to_the_rock_wind_up_as_the_body_slides(rm, tilted_stance):
    """With soles fitted to hold tops tilted by 2-3 deg the same stride turns some gripper
    about its blind axis by more than 10 mrad (0.25 N m on the 25 N m/rad sole), in
    opposite senses at the stride's two ends."""
    tilts = np.array([[0.03, -0.05], [-0.05, -0.05], [0.04, 0.05], [0.01, 0.03]])
    q0, body, feet = tilted_stance(rm, tilts)
    clik = Clik(rm)
    ends = [windup(clik, q0, pin.SE3(body.rotation,
                                     body.translation + s * body.rotation[:, 0]), feet)
            for s in (-STRIDE / 2, STRIDE / 2)]
    worst = int(np.argmax(np.abs(ends[1])))
    assert abs(ends[1][worst]) > 0.01
    assert ends[0][worst] * ends[1][worst] < 0


def test_held_turns_add_the_wind_up_a_gripper_already_holds(rm, tilted_stance):
    """:func:`held_turns` is the turn since each weld: welds turned by r (as earlier moves
    would have wound them) with the body still give -r (1e-9 rad); welds where the grippers
    are, after a stride, give the move's own wind-up, about the blind axis, as
    :func:`windup` (1e-7 rad); an unwelded gripper holds nothing."""
    tilts = np.array([[0.03, -0.05], [-0.05, -0.05], [0.04, 0.05], [0.01, 0.03]])
    q0, body, feet = tilted_stance(rm, tilts)
    clik = Clik(rm)
    r = np.random.default_rng(1).uniform(-0.03, 0.03, (4, 3))
    seated = [f.rotation @ pin.exp3(ri) for f, ri in zip(feet, r, strict=True)]
    assert np.abs(held_turns(clik, q0, body, feet, seated) + r).max() < 1e-9
    moved = pin.SE3(body.rotation, body.translation + STRIDE / 2 * body.rotation[:, 0])
    held = held_turns(clik, q0, moved, feet, [f.rotation for f in feet[:3]] + [None])
    _, J = clik.kinematics(q0)
    axes = np.array([blind_axis(J[i]) for i in range(len(LEG_NAMES))])
    own = windup(clik, q0, moved, feet)
    assert np.abs(np.sum(held * axes, axis=1)[:3] + own[:3]).max() < 1e-7
    assert np.abs(held[3]).max() == 0.0 and np.abs(own).max() > 0.01
