"""Generated MJCF/URDF: loads, steps without warnings, and equals clamber's dynamics."""

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from clamber.exceptions import ConfigError
from clamber.jumper.mjcf import Geometry, load_scene, parameter_vector, urdf, write_model
from clamber.jumper.model import jumper_model
from clamber.jumper.morphology import Morphology

CAD = Morphology(lengths=(0.07, 0.09, 0.10, 0.06), masses=(0.01, 0.10, 0.09, 0.06, 0.01),
                 link_mass=(0.01, 0.02, 0.0, 0.015), link_com=(0.03, 0.04, 0.0, 0.02),
                 link_inertia=(1e-5, 2e-5, 0.0, 1e-5))


def test_scene_files_load_and_step_under_noise_without_warnings(tmp_path):
    """The written scene.xml (including jumper.xml) compiles and 1000 noisy steps raise no
    MuJoCo warning, with both gripper pins active."""
    paths = write_model(CAD, tmp_path)
    m = mujoco.MjModel.from_xml_path(str(paths["scene"]))
    d = mujoco.MjData(m)
    d.qpos[:] = [0.01, 0.0, 1.2, 0.8, 0.7, 0.6]
    mujoco.mj_forward(m, d)
    for name, site in (("front_hook", "front_gripper"), ("rear_hook", "rear_gripper")):
        m.eq_data[m.equality(name).id, 3:6] = d.site_xpos[m.site(site).id]
        d.eq_active[m.equality(name).id] = 1
    rng = np.random.default_rng(0)
    for _ in range(1000):
        d.ctrl[:] = rng.normal(0.0, 0.05, 3) - 2.0 * (d.qpos[3:6] - [0.8, 0.7, 0.6]) \
            - 0.02 * d.qvel[3:6]
        mujoco.mj_step(m, d)
    assert all(w.number == 0 for w in d.warning), [w.number for w in d.warning]
    assert np.all(np.isfinite(d.qpos))


@pytest.mark.parametrize("morph", [Morphology.nominal(), CAD], ids=["nominal", "cad"])
def test_mujoco_mass_matrix_bias_and_kinematics_equal_clamber(morph):
    """mj_fullM, qfrc_bias and the gripper sites equal jumper_model('rear_foot') at random
    states, CAD link inertias included."""
    m = load_scene(morph)
    d = mujoco.MjData(m)
    model = jumper_model("rear_foot")
    p = morph.parameters()
    rng = np.random.default_rng(1)
    for _ in range(5):
        q, qd = rng.uniform(-2, 2, 6), rng.normal(0, 2, 6)
        d.qpos[:], d.qvel[:] = q, qd
        mujoco.mj_forward(m, d)
        M = np.zeros((6, 6))
        mujoco.mj_fullM(m, d, M)
        np.testing.assert_allclose(M, np.array(model.mass_matrix(q, p)), atol=1e-9)
        np.testing.assert_allclose(d.qfrc_bias, np.array(model.bias(q, qd, p)).ravel(),
                                   atol=1e-9)
        P = np.array(model.points(q, p))
        np.testing.assert_allclose(d.site_xpos[m.site("front_gripper").id, :2], P[:, 0],
                                   atol=1e-12)
        np.testing.assert_allclose(d.site_xpos[m.site("rear_gripper").id, :2], P[:, 4],
                                   atol=1e-12)


def test_urdf_mass_matrix_equals_clamber_in_pinocchio():
    """The URDF parsed by Pinocchio gives clamber's mass matrix (independent parser)."""
    pm = pin.buildModelFromXML(urdf(CAD))
    data = pm.createData()
    q = np.random.default_rng(2).uniform(-2, 2, 6)
    M = pin.crba(pm, data, q)
    M = np.triu(M) + np.triu(M, 1).T
    np.testing.assert_allclose(M, np.array(jumper_model("rear_foot").mass_matrix(
        q, CAD.parameters())), atol=1e-9)


def test_bad_inputs_raise_config_errors():
    """Non-positive geometry and malformed parameter vectors are refused by name."""
    with pytest.raises(ConfigError, match="foot_radius"):
        Geometry(foot_radius=0.0)
    with pytest.raises(ConfigError, match="parameter vector"):
        parameter_vector(np.ones(5))


def test_urdf_loads_in_mujoco_with_clamber_mass_matrix_and_real_limits():
    """MuJoCo's URDF importer accepts the URDF (positive-definite inertias) and its mass
    matrix equals clamber's; the motor joints carry 2.6 rad and 0.25 N m, 40 rad/s."""
    text = urdf(CAD)
    m = mujoco.MjModel.from_xml_string(text)
    d = mujoco.MjData(m)
    q = np.random.default_rng(3).uniform(-2, 2, 6)
    d.qpos[:] = q
    mujoco.mj_forward(m, d)
    M = np.zeros((6, 6))
    mujoco.mj_fullM(m, d, M)
    np.testing.assert_allclose(M, np.array(jumper_model("rear_foot").mass_matrix(
        q, CAD.parameters())), atol=1e-9)
    np.testing.assert_allclose(m.jnt_range[m.joint("hip").id], [-2.6, 2.6])
    assert 'effort="0.25" velocity="40"' in text and "effort=\"100\"" not in text


def test_model_files_have_torque_limits_camera_and_a_home_keyframe_on_the_wall(tmp_path):
    """jumper.xml limits the servos' torque to +-0.25 N m and the joints to +-2.6 rad, has a
    camera, and its 'home' key hangs both grippers on the wall with every motor clear of it."""
    paths = write_model(CAD, tmp_path)
    m = mujoco.MjModel.from_xml_path(str(paths["scene"]))
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, m.key("home").id)
    mujoco.mj_forward(m, d)
    np.testing.assert_allclose(m.actuator_forcerange, [[-0.25, 0.25]] * 3)
    assert m.ncam >= 1 and m.jnt_limited[m.joint("spine").id]
    r_foot = Geometry().foot_radius
    for site in ("front_gripper", "rear_gripper"):
        assert d.site_xpos[m.site(site).id][0] == pytest.approx(r_foot, abs=1e-9)
    for body in ("link3", "link2", "link1"):
        assert d.xpos[m.body(body).id][0] > Geometry().motor_radius
    mujoco.mj_step(m, d)
    assert all(w.number == 0 for w in d.warning)


@pytest.mark.parametrize("mu", [0.3, 1.0])
def test_a_free_gripper_meets_the_wall_with_the_stated_friction(mu):
    """MuJoCo gives a contact the larger of its two geoms' coefficients, so the wall carries
    none of its own: a gripper pressed into the wall slides with ``Geometry.wall_friction``
    (at the default it was 1.0 from the wall's MuJoCo default whatever the setting said)."""
    m = load_scene(Morphology.nominal(), Geometry(wall_friction=mu))
    d = mujoco.MjData(m)
    d.qpos[:] = [0.005, 0.0, 1.2, 0.8, 0.7, 0.6]  # the rear gripper 5 mm into the wall
    mujoco.mj_forward(m, d)
    foot = m.geom("rear_foot").id
    hits = [c for c in d.contact[:d.ncon] if foot in (c.geom1, c.geom2)]
    assert hits
    for c in hits:
        assert c.friction[:2] == pytest.approx([mu, mu])
    assert Geometry().wall_friction == 1.0
