"""The committed model files (models/jumper, models/marcbot) follow Menagerie's conventions:
each scene holds its `home` keyframe under the keyframe's own control, each URDF loads in
MuJoCo and Pinocchio with the MJCF's masses and joint limits, collision and visual geometry,
and a base that stays free; the files are what the generators write."""

from pathlib import Path

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from clamber.jumper import mjcf as jumper_mjcf
from clamber.jumper.morphology import Morphology
from clamber.quadruped.model import description
from clamber.quadruped.model.robot import Marcbot

MODELS = Path(__file__).resolve().parents[1] / "models"
#: (folder, MJCF, URDF, base body, how far it may move from home in 2 s [m], joint drift
#: [rad]): the quadruped's position servos are P-only, so its sprawled stance settles a
#: little under its weight.
CASES = [("jumper", "jumper.xml", "jumper.urdf", "link4", 0.001, 0.02),
         ("marcbot", "marcbot.xml", "marcbot.urdf", "body", 0.02, 0.06)]


@pytest.mark.parametrize("folder, xml, urdf, base, sink, drift", CASES,
                         ids=[c[0] for c in CASES])
def test_scene_holds_home_under_its_keyframe_control(folder, xml, urdf, base, sink, drift):
    """From `home`, with the keyframe's ctrl held, two simulated seconds leave the pose
    where it was (body height and every joint within the stated bounds), no warnings."""
    m = mujoco.MjModel.from_xml_path(str(MODELS / folder / "scene.xml"))
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, m.key("home").id)
    mujoco.mj_forward(m, d)
    body = m.body(base).id
    z0 = d.xpos[body].copy()
    q0 = d.qpos.copy()
    while d.time < 2.0:
        mujoco.mj_step(m, d)
    assert all(w.number == 0 for w in d.warning)
    assert np.linalg.norm(d.xpos[body] - z0) < sink
    for a in range(m.nu):
        adr = m.jnt_qposadr[m.actuator_trnid[a, 0]]
        assert abs(d.qpos[adr] - q0[adr]) < drift


@pytest.mark.parametrize("folder, xml, urdf, base, sink, drift", CASES,
                         ids=[c[0] for c in CASES])
def test_urdf_loads_in_both_libraries_with_the_mjcf_masses_and_limits(folder, xml, urdf, base,
                                                                     sink, drift):
    """The URDF, read by MuJoCo and by Pinocchio, has the MJCF's total mass and every
    actuated joint's range; the base joints are not limited in MuJoCo; collision and visual
    geometry are there."""
    ref = mujoco.MjModel.from_xml_path(str(MODELS / folder / xml))
    path = str(MODELS / folder / urdf)
    mj = mujoco.MjModel.from_xml_path(path)
    pm = pin.buildModelFromUrdf(path)
    mass = float(np.sum(ref.body_mass))
    assert float(np.sum(mj.body_mass)) == pytest.approx(mass, rel=1e-9)
    assert sum(i.mass for i in pm.inertias) == pytest.approx(mass, rel=1e-9)
    assert mj.nv == ref.nv and pm.nv == ref.nv
    for a in range(ref.nu):
        j = ref.actuator_trnid[a, 0]
        name = mujoco.mj_id2name(ref, mujoco.mjtObj.mjOBJ_JOINT, j)
        np.testing.assert_allclose(mj.jnt_range[mj.joint(name).id], ref.jnt_range[j])
        pj = pm.joints[pm.getJointId(name)]
        np.testing.assert_allclose([pm.lowerPositionLimit[pj.idx_q],
                                    pm.upperPositionLimit[pj.idx_q]], ref.jnt_range[j])
    actuated = {int(ref.actuator_trnid[a, 0]) for a in range(ref.nu)}
    base = [j for j in range(ref.njnt) if j not in actuated]
    assert not any(mj.jnt_limited[j] for j in base)
    assert mj.ngeom > 0
    for kind in (pin.GeometryType.COLLISION, pin.GeometryType.VISUAL):
        assert pin.buildGeomFromUrdf(pm, path, kind).ngeoms > 0


def test_quadruped_urdf_base_is_free_in_both_libraries():
    """The quadruped's URDF keeps its base floating: a free joint in MuJoCo (the body and
    its mass are not fused into the world) and a free flyer in Pinocchio."""
    path = str(MODELS / "marcbot" / "marcbot.urdf")
    mj = mujoco.MjModel.from_xml_path(path)
    assert mj.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE
    assert mj.body_mass[mj.body("body").id] == pytest.approx(Marcbot().body_mass)
    assert pin.buildModelFromUrdf(path).joints[1].shortname() == "JointModelFreeFlyer"


def test_committed_files_are_what_the_generators_write():
    """models/jumper holds exactly what clamber.jumper.mjcf writes for the nominal robot
    (models/marcbot is checked by the quadruped's own tests)."""
    d, nominal = MODELS / "jumper", Morphology.nominal()
    assert (d / "jumper.xml").read_text() == jumper_mjcf.robot_xml(
        nominal, jumper_mjcf.MODEL_FILE_GEOMETRY)
    assert (d / "jumper.urdf").read_text() == jumper_mjcf.urdf(nominal)
    assert (d / "scene.xml").read_text() == jumper_mjcf.scene_xml("jumper.xml")


def test_servo_gains_are_the_simulators():
    """The model files' servo gains are the simulators' own: the jumper's ESC PD through
    its default motor, the quadruped's Dynamixel position gain."""
    from clamber.jumper.sim.motor import EscGains, MotorParameters
    from clamber.quadruped.sim.servos import POSITION_GAIN_A_PER_RAD

    motor, esc = MotorParameters(), EscGains()
    assert jumper_mjcf.SERVO_KP == pytest.approx(esc.kp * motor.gain)
    assert jumper_mjcf.SERVO_KV == pytest.approx(esc.kd * motor.gain)
    assert description.SERVO_GAIN_A_PER_RAD == pytest.approx(POSITION_GAIN_A_PER_RAD)
