"""The URDF (Pinocchio) and the MJCF (MuJoCo) generated from one description agree."""

import warnings

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from clamber.quadruped.model.description import foot_name, mjcf_string, write_models
from clamber.quadruped.model.robot import LEG_NAMES, Marcbot


def _mujoco_state(m, q: np.ndarray):
    """MuJoCo data at Pinocchio configuration q (quaternion reordered to w, x, y, z)."""
    d = mujoco.MjData(m)
    d.qpos[:3] = q[:3]
    d.qpos[3:7] = [q[6], q[3], q[4], q[5]]
    d.qpos[7:] = q[7:]
    mujoco.mj_forward(m, d)
    return d


def test_paper_figures():
    """Total mass 4.8 kg, limbs over 70 %, leg extension 0.39 m, body length 0.2 m."""
    r = Marcbot()
    assert r.total_mass == pytest.approx(4.8)
    assert 4 * sum(r.link_masses) / r.total_mass > 0.7
    g = r.leg
    assert g.hip + g.thigh + g.calf + g.ankle_forward == pytest.approx(0.39)
    assert r.body_size[0] == pytest.approx(0.2)
    assert r.link_masses[-1] == pytest.approx(0.4)


def test_same_masses(rm):
    """Every body has the same mass, COM and inertia in both models, and 4.8 kg in total."""
    m = mujoco.MjModel.from_xml_string(mjcf_string(rm.robot))
    assert m.body_mass.sum() == pytest.approx(rm.mass)
    assert rm.mass == pytest.approx(4.8)
    for jid in range(1, rm.model.njoints):
        name = rm.model.names[jid]
        body = "body" if name == "root_joint" else m.jnt_bodyid[
            mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name)]
        bid = body if isinstance(body, int | np.integer) else mujoco.mj_name2id(
            m, mujoco.mjtObj.mjOBJ_BODY, body)
        assert m.body_mass[bid] == pytest.approx(rm.model.inertias[jid].mass)
        np.testing.assert_allclose(m.body_ipos[bid], rm.model.inertias[jid].lever, atol=1e-12)


def test_same_kinematics_and_mass_matrix(rm):
    """Gripper poses and the joint-space mass matrix agree at random configurations."""
    m = mujoco.MjModel.from_xml_string(mjcf_string(rm.robot))
    rng = np.random.default_rng(0)
    for _ in range(5):
        quat = rng.normal(size=4)
        q = np.r_[rng.uniform(-1, 1, 3), quat / np.linalg.norm(quat),
                  rng.uniform(rm.q_min, rm.q_max)]
        d = _mujoco_state(m, q)
        pin.framesForwardKinematics(rm.model, rm.data, q)
        for leg, fid in zip(LEG_NAMES, rm.foot_ids, strict=True):
            sid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, foot_name(leg))
            np.testing.assert_allclose(d.site_xpos[sid], rm.data.oMf[fid].translation,
                                       atol=1e-9)
            np.testing.assert_allclose(d.site_xmat[sid].reshape(3, 3),
                                       rm.data.oMf[fid].rotation, atol=1e-9)
        M_mj = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M_mj)
        M = pin.crba(rm.model, rm.data, q)
        M = np.triu(M) + np.triu(M, 1).T
        # Pinocchio's free-flyer linear velocity is in the body frame, MuJoCo's in the world.
        T = np.eye(m.nv)
        T[:3, :3] = pin.Quaternion(q[6], *q[3:6]).toRotationMatrix()
        np.testing.assert_allclose(T.T @ M_mj @ T, M, atol=1e-9)


def test_scene_loads_and_steps_without_warnings(tmp_path):
    """The written scene.xml loads, and 200 noisy steps stay finite with no MuJoCo warning."""
    files = write_models(Marcbot(), tmp_path)
    assert {p.name for p in files.values()} == {"marcbot.urdf", "marcbot.xml", "scene.xml",
                                                "README.md"}
    m = mujoco.MjModel.from_xml_path(str(files["scene"]))
    d = mujoco.MjData(m)
    rng = np.random.default_rng(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(200):
            d.ctrl[:] = rng.normal(size=m.nu) * 0.2
            mujoco.mj_step(m, d)
    assert np.all(np.isfinite(d.qpos))
    assert all(d.warning[i].number == 0 for i in range(len(d.warning)))
    pin.buildModelFromUrdf(str(files["urdf"]))  # its floating joint is the free flyer


def test_committed_models_match_generator():
    """models/marcbot holds exactly what the description generates (regenerate on change)."""
    from pathlib import Path

    from clamber.quadruped.model.description import mjcf_string, scene_string, urdf_string

    d = Path(__file__).resolve().parents[3] / "models" / "marcbot"
    r = Marcbot()
    assert (d / "marcbot.urdf").read_text() == urdf_string(r, floating_base=True) + "\n"
    assert (d / "marcbot.xml").read_text() == mjcf_string(r, servos=True) + "\n"
    assert (d / "scene.xml").read_text() == scene_string("marcbot.xml") + "\n"


def test_home_keyframe_stands_on_the_ground():
    """The 'home' key is the default stance, body level, with the lowest sole on z = 0."""
    import mujoco

    r = Marcbot()
    m = mujoco.MjModel.from_xml_string(mjcf_string(r))
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, m.key("home").id)
    mujoco.mj_kinematics(m, d)
    soles = [d.site_xpos[m.site(foot_name(leg)).id][2] for leg in ("LF", "LR", "RF", "RR")]
    assert min(soles) == pytest.approx(0.0, abs=1e-5)
    np.testing.assert_allclose(d.qpos[7:], r.default_joint_angles())
