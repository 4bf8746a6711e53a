"""MJCF and URDF models of the planar jump-climber, generated from any morphology.

The kinematic tree mirrors :func:`clamber.jumper.model.jumper_model` ``("rear_foot")``:
the base body is link 4 with its frame at the rear gripper (mass 5); three planar base
joints (slide ``x5``, slide ``y5``, hinge ``phi5`` about z) make ``qpos`` equal to the
clamber coordinates ``[x5, y5, phi5, th4, th3, th2]``. Each following body is one link,
its frame at the link's rear end, hinged about z (hip, spine, shoulder).

Lumping (exact for the planar dynamics): every point mass sits on a joint axis, so it is
assigned to the body of the link behind it (m5 and m4 to link 4, m3 to link 3, m2 to
link 2, m1 to link 1). A body's inertial is the combination of its point masses and its
CAD link body (``link_mass``, ``link_com``, ``link_inertia``). Out-of-plane inertias are
set so the triangle inequality holds; they never enter the planar dynamics.

Frame convention: the world is the x-y plane with gravity along -y and the wall at x = 0
(robot at x > 0), not MuJoCo's usual z-up. The reason: ``qpos`` and every site position are
then clamber's planar coordinates unchanged (x from the wall, y up the wall), which the
simulator, the telemetry and the tests compare entry by entry with the CasADi model; a
z-up model would need a rotation at every one of those boundaries. The camera ``side``
looks along -z at that plane. Gripper hooks are MuJoCo ``connect`` equality constraints
(pins), inactive by default and toggled by the simulator.

Model files (``clamber jumper model``) carry the robot's real limits: +-0.25 N m per motor
(the servos' ``forcerange``, URDF ``effort``), 40 rad/s and +-2.6 rad per joint, the
optimization's bounds; their actuators are position servos with the ESC's gains and both
hooks start closed, so the keyframe ``home`` (the robot hanging on the wall by both
grippers, the motors clear of it) holds under its own ``ctrl``. The simulator compiles the
scene with torque motors, open hooks and no torque range: its DC-motor model already limits
each torque through the supply voltage.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from clamber import _validate as v
from clamber.exceptions import ConfigError
from clamber.jumper.model import GRAVITY
from clamber.jumper.morphology import N_PARAMETERS, Morphology
from clamber.jumper.settings import OptimizationSettings
from clamber.model_readme import model_readme

_LIMITS = OptimizationSettings()
#: The robot's limits written into model files: motor torque [N m], joint speed [rad/s],
#: relative joint angle [rad] (the optimization's bounds, from the paper's robot).
TORQUE_LIMIT = _LIMITS.torque_limit
SPEED_LIMIT = _LIMITS.joint_speed_limit
ANGLE_LIMIT = _LIMITS.joint_angle_limit
#: Out-of-plane inertia added to every body and the mass of the URDF's planar-base carriers
#: [kg m^2, kg]: they make every inertia positive definite (MuJoCo's URDF importer refuses
#: zero ones) and never enter the planar dynamics (carriers: 1e-12 of the robot's mass).
_OUT_OF_PLANE = 1e-8
_CARRIER_MASS = 1e-12

#: MJCF joint names in qpos order (equal to the rear-foot coordinates of clamber's model).
JOINTS = ("x5", "y5", "phi5", "hip", "spine", "shoulder")
#: Actuated joints, in the order of clamber's torque vector (th4, th3, th2).
ACTUATED = ("hip", "spine", "shoulder")
#: Body names from the base outward.
BODIES = ("link4", "link3", "link2", "link1")
GRIPPERS = ("front", "rear")
#: Physics step of generated models [s]; the simulator's 1 kHz loop takes two steps.
DEFAULT_TIMESTEP = 0.0005
#: The ESC's default PD gains at the joint, for model files' position servos: 40 V/rad and
#: 0.4 V s/rad through the default motor's 0.05 N m/V (``clamber.jumper.sim.motor.EscGains``,
#: ``MotorParameters.gain``) are 2 N m/rad and 0.02 N m s/rad; the motor's own back-EMF
#: damping adds 0.0003 N m s/rad, left out. Checked against those classes by the tests.
SERVO_KP = 2.0
SERVO_KV = 0.02


@dataclass(frozen=True)
class Geometry:
    """Collision geometry and physics options of a generated model (units in brackets)."""

    foot_radius: float = 0.010
    """Gripper disc radius [m]: a hooked gripper's centre sits this far from the wall."""
    motor_radius: float = 0.015
    """Collision radius of the inner joints' motors [m]."""
    armature: float = 0.0
    """Reflected rotor inertia added to each actuated joint [kg m^2] (0: clamber's model)."""
    timestep: float = DEFAULT_TIMESTEP
    """Physics step [s]."""
    wall_friction: float = 1.0
    """Coulomb friction of a free gripper or motor touching the wall [-]: the released
    gripper's spines drag on the carpet. The calibration (docs/results/jumper_landing.md)
    was fitted with it; at 0.3 the optimized jump's open-loop front catches rise from 0.44
    to 0.9 against the hardware's 0.40."""
    torque_limit: float | None = None
    """Motor torque range [N m] written as ``ctrlrange``; None: unlimited (the simulator's
    motor model limits the torque itself)."""
    joint_limits: bool = False
    """Whether the motor joints are limited to +-2.6 rad (model files; the simulator plays
    optimized motions that respect the bound by construction)."""
    servos: bool = False
    """Actuators as the robot's position servos (the ESC's PD at the joint, :data:`SERVO_KP`,
    :data:`SERVO_KV`, torque clipped to ``torque_limit``; ``ctrl`` in rad) instead of torque
    motors (``ctrl`` in N m): model files, so that ``home`` holds under its own ``ctrl``.
    The simulator drives torque motors through its DC-motor and ESC model."""
    hooked: bool = False
    """Whether both gripper hooks start closed (model files: ``home`` hangs on them); the
    simulator closes and opens them itself."""

    def __post_init__(self) -> None:
        v.numeric_fields(self, "geometry", strict=True,
                         names=("foot_radius", "motor_radius", "timestep"))
        v.numeric_fields(self, "geometry", names=("armature", "wall_friction"))
        if self.torque_limit is not None:
            v.positive("geometry", "torque_limit", self.torque_limit)


@dataclass(frozen=True)
class _Body:
    mass: float  # [kg]
    com: float  # [m] along the link from the body frame
    izz: float  # [kg m^2] about the centre of mass


def parameter_vector(morphology: Morphology | np.ndarray) -> np.ndarray:
    """The parameter vector (``PARAMETER_NAMES`` order) of a morphology or a raw vector.

    Raw vectors let the robustness study perturb masses and lengths beyond the design
    bounds a :class:`Morphology` enforces.
    """
    if isinstance(morphology, Morphology):
        return morphology.parameters()
    p = np.asarray(morphology, dtype=float)
    if p.shape != (N_PARAMETERS,) or not np.all(np.isfinite(p)):
        raise ConfigError(f"parameter vector must be {N_PARAMETERS} finite numbers, got {p.shape}")
    if np.any(p[:9] <= 0):
        raise ConfigError("link lengths and point masses must be positive")
    return p


def _bodies(p: np.ndarray) -> list[_Body]:
    """Lumped inertial of link 4, 3, 2, 1 bodies (base outward)."""
    L, m, lm, lc, lI = p[0:4], p[4:9], p[9:13], p[13:17], p[17:21]
    out = []
    for i in (3, 2, 1, 0):  # link index (0-based L1..L4), base outward
        parts = [(m[i], L[i]), (lm[i], lc[i])]  # mass i at the link's front end
        if i == 3:
            parts.append((m[4], 0.0))  # rear gripper at the base frame
        mass = sum(pm for pm, _ in parts)
        com = sum(pm * x for pm, x in parts) / mass
        izz = lI[i] + sum(pm * (x - com) ** 2 for pm, x in parts)
        out.append(_Body(mass, com, izz))
    return out


def _f(x: float) -> str:
    return f"{x:.12g}"


def robot_xml(morphology: Morphology | np.ndarray, geometry: Geometry | None = None) -> str:
    """The robot alone as an MJCF document (a model file for ``scene.xml`` to include)."""
    return _mujoco_doc("jumper", _robot_sections(parameter_vector(morphology),
                                                 geometry or Geometry()))


def _robot_sections(p: np.ndarray, g: Geometry) -> dict[str, str]:
    L = p[0:4]
    bodies = _bodies(p)
    lengths = (L[3], L[2], L[1], L[0])  # link 4, 3, 2, 1
    hinge = ("hip", "spine", "shoulder")
    xml = []
    indent = "    "
    for k, (name, body, length) in enumerate(zip(BODIES, bodies, lengths, strict=True)):
        pad = indent * (k + 2)
        pos = "0 0 0" if k == 0 else f"{_f(lengths[k - 1])} 0 0"
        xml.append(f'{pad}<body name="{name}" pos="{pos}">')
        if k == 0:
            xml.append(f'{pad}  <joint name="x5" type="slide" axis="1 0 0"/>')
            xml.append(f'{pad}  <joint name="y5" type="slide" axis="0 1 0"/>')
            xml.append(f'{pad}  <joint name="phi5" type="hinge" axis="0 0 1"/>')
        else:
            xml.append(f'{pad}  <joint name="{hinge[k - 1]}" type="hinge" axis="0 0 1" '
                       f'armature="{_f(g.armature)}" range="{_f(-ANGLE_LIMIT)} '
                       f'{_f(ANGLE_LIMIT)}" limited="{str(g.joint_limits).lower()}"/>')
        izz = max(body.izz, 1e-12)
        ixx = izz + _OUT_OF_PLANE
        xml.append(f'{pad}  <inertial pos="{_f(body.com)} 0 0" mass="{_f(body.mass)}" '
                   f'diaginertia="{_f(ixx)} {_f(ixx)} {_f(izz)}"/>')
        xml.append(f'{pad}  <geom name="{name}_bar" type="capsule" fromto="0 0 0 '
                   f'{_f(length)} 0 0" size="0.003" contype="0" conaffinity="0" '
                   f'rgba="0.3 0.3 0.35 1"/>')
        if k == 0:
            xml.append(f'{pad}  <geom name="rear_foot" type="sphere" size="{_f(g.foot_radius)}" '
                       f'contype="1" conaffinity="0" friction="{_f(g.wall_friction)} 0 0" '
                       f'rgba="0.8 0.2 0.2 1"/>')
            xml.append(f'{pad}  <site name="rear_gripper" size="0.002"/>')
            xml.append(f'{pad}  <camera name="side" mode="trackcom" pos="0.1 0 0.6" '
                       'xyaxes="1 0 0 0 1 0"/>')
        else:
            xml.append(f'{pad}  <geom name="{hinge[k - 1]}_motor" type="sphere" '
                       f'size="{_f(g.motor_radius)}" contype="1" conaffinity="0" '
                       f'friction="{_f(g.wall_friction)} 0 0" rgba="0.2 0.4 0.8 0.6"/>')
        if k == 3:
            xml.append(f'{pad}  <geom name="front_foot" type="sphere" pos="{_f(length)} 0 0" '
                       f'size="{_f(g.foot_radius)}" contype="1" conaffinity="0" '
                       f'friction="{_f(g.wall_friction)} 0 0" rgba="0.8 0.2 0.2 1"/>')
            xml.append(f'{pad}  <site name="front_gripper" pos="{_f(length)} 0 0" '
                       f'size="0.002"/>')
    for k in range(len(BODIES) - 1, -1, -1):
        xml.append(f"{indent * (k + 2)}</body>")
    if g.servos:
        force = ("" if g.torque_limit is None else
                 f' forcelimited="true" forcerange="{_f(-g.torque_limit)} {_f(g.torque_limit)}"')
        actuators = "\n".join(
            f'    <position name="{j}" joint="{j}" kp="{_f(SERVO_KP)}" kv="{_f(SERVO_KV)}" '
            f'ctrlrange="{_f(-ANGLE_LIMIT)} {_f(ANGLE_LIMIT)}"{force}/>' for j in ACTUATED)
    else:
        ctrl = ("" if g.torque_limit is None else
                f' ctrllimited="true" ctrlrange="{_f(-g.torque_limit)} {_f(g.torque_limit)}"')
        actuators = "\n".join(f'    <motor name="{j}" joint="{j}" gear="1"{ctrl}/>'
                               for j in ACTUATED)
    home = home_qpos(p, g)
    stiff = 'solref="0.002 1" solimp="0.998 0.999 0.001"'
    if g.hooked:  # closed on the holds where home puts the grippers (world sites)
        for grip, at in zip(GRIPPERS, gripper_positions(p, home), strict=True):
            xml.append(f'    <site name="{grip}_hold" pos="{_f(at[0])} {_f(at[1])} 0" '
                       'size="0.002"/>')
        equality = "\n".join(f'    <connect name="{grip}_hook" site1="{grip}_gripper" '
                              f'site2="{grip}_hold" {stiff}/>' for grip in GRIPPERS)
    else:  # open; the simulator sets the world point when it closes one
        equality = (f'    <connect name="front_hook" body1="link1" anchor="{_f(L[0])} 0 0" '
                    f'active="false" {stiff}/>\n'
                    f'    <connect name="rear_hook" body1="link4" anchor="0 0 0" '
                    f'active="false" {stiff}/>')
    key = f'    <key name="home" qpos="{" ".join(_f(x) for x in home)}"'
    if g.servos:  # the servos hold the joints where home puts them
        key += f' ctrl="{" ".join(_f(x) for x in home[3:])}"'
    key += "/>"
    return {
        "compiler": '<compiler angle="radian" inertiafromgeom="false"/>',
        "option": (f'<option timestep="{_f(g.timestep)}" gravity="0 {_f(-GRAVITY)} 0" '
                   f'integrator="implicitfast"/>'),
        "worldbody": "\n".join(xml),
        "actuator": actuators,
        "equality": equality,
        "keyframe": key,
    }


def home_qpos(p: np.ndarray, g: Geometry) -> np.ndarray:
    """Both grippers hooked on the wall (centres at x = foot radius), link 4 leaning out by
    0.3 rad, links 3 and 2 parallel to the wall and link 1 back to it, so every motor
    clears the wall by more than its radius: ``[x5, y5, phi5, hip, spine, shoulder]``."""
    L1, L4 = p[0], p[3]
    lean = 0.3
    out = L4 * np.sin(lean)  # the inner joints' distance from the rear gripper's line [m]
    link1 = np.arccos(np.clip(-out / L1, -1.0, 1.0))  # link 1 direction from +x [rad]
    return np.array([g.foot_radius, 0.0, np.pi / 2 - lean, lean, 0.0, link1 - np.pi / 2])


def gripper_positions(p: np.ndarray, qpos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World positions [m] of the front and rear gripper at ``qpos`` (planar chain from the
    rear gripper: link 4, 3, 2, 1, each turned by the joint before it)."""
    lengths = (p[3], p[2], p[1], p[0])  # link 4, 3, 2, 1
    rear = np.array(qpos[:2], float)
    angles = np.cumsum([qpos[2], *qpos[3:6]])
    front = rear + sum(L * np.array([np.cos(a), np.sin(a)])
                       for L, a in zip(lengths, angles, strict=True))
    return front, rear


def _wall_xml() -> str:
    # MuJoCo gives a contact the larger of its two geoms' coefficients: a wall without
    # friction of its own leaves each contact the robot geom's ``wall_friction``.
    return ('    <light pos="0.3 0 1" dir="0 0 -1"/>\n'
            '    <geom name="wall" type="box" pos="-0.01 0 0" size="0.01 5 0.06" '
            'contype="0" conaffinity="1" friction="0 0 0" rgba="0.75 0.7 0.6 1"/>')


def _mujoco_doc(model: str, s: dict[str, str], extra_world: str = "") -> str:
    world = s["worldbody"] + ("\n" + extra_world if extra_world else "")
    return (f'<mujoco model="{model}">\n  {s["compiler"]}\n  {s["option"]}\n'
            f"  <worldbody>\n{world}\n  </worldbody>\n"
            f"  <actuator>\n{s['actuator']}\n  </actuator>\n"
            f"  <equality>\n{s['equality']}\n  </equality>\n"
            f"  <keyframe>\n{s['keyframe']}\n  </keyframe>\n</mujoco>\n")


def scene_xml(model_file: str = "jumper.xml") -> str:
    """A scene that includes the robot file and adds the world: the vertical wall."""
    return (f'<mujoco model="jumper scene">\n  <include file="{model_file}"/>\n'
            f"  <worldbody>\n{_wall_xml()}\n  </worldbody>\n</mujoco>\n")


def scene_string(morphology: Morphology | np.ndarray, geometry: Geometry | None = None) -> str:
    """Robot and wall in one MJCF document (what the simulator compiles, no files)."""
    return _mujoco_doc("jumper scene", _robot_sections(parameter_vector(morphology),
                                                       geometry or Geometry()), _wall_xml())


def urdf(morphology: Morphology | np.ndarray, name: str = "jumper") -> str:
    """URDF of the same tree: massless carriers for the planar base (x, y, yaw), then links.

    URDF has no planar joint, so the base is two prismatic joints and one revolute joint
    through carrier links of negligible mass, without bounds (the base stays free, as in
    the MJCF); joint order equals :data:`JOINTS`. The motor joints carry the robot's limits
    (+-2.6 rad, 0.25 N m, 40 rad/s); every inertia is positive definite, so MuJoCo's URDF
    importer and Pinocchio both load it. Links carry the MJCF's geometry: a rod each
    (visual) and the grippers and motors as spheres (collision).
    """
    p = parameter_vector(morphology)
    L = p[0:4]
    bodies = _bodies(p)
    lengths = (L[3], L[2], L[1], L[0])
    out = [f'<?xml version="1.0"?>\n<robot name="{name}">', '  <link name="world"/>']
    carriers = ("base_x", "base_y")
    for c in carriers:
        out.append(f'  <link name="{c}"><inertial><mass value="{_f(_CARRIER_MASS)}"/>'
                   f'<inertia ixx="{_f(_CARRIER_MASS)}" ixy="0" ixz="0" '
                   f'iyy="{_f(_CARRIER_MASS)}" iyz="0" izz="{_f(_CARRIER_MASS)}"/></inertial>'
                   '</link>')
    g = Geometry()
    for k, (body, nm) in enumerate(zip(bodies, BODIES, strict=True)):
        izz = max(body.izz, 1e-12)
        ixx = izz + _OUT_OF_PLANE
        # the link as a thin rod (visual); the rear gripper (link 4) or the motor at the
        # link's rear joint, and link 1's front gripper, as spheres (collision), as in MJCF
        rod = (f'<visual><origin xyz="{_f(lengths[k] / 2)} 0 0" rpy="0 1.5707963267949 0"/>'
               f'<geometry><cylinder radius="0.003" length="{_f(lengths[k])}"/></geometry>'
               '</visual>')
        radius = g.foot_radius if k == 0 else g.motor_radius
        spheres = [("0", radius)] + ([(_f(lengths[k]), g.foot_radius)] if k == 3 else [])
        collision = "".join(f'<collision><origin xyz="{x} 0 0"/><geometry><sphere '
                            f'radius="{_f(r)}"/></geometry></collision>' for x, r in spheres)
        out.append(
            f'  <link name="{nm}"><inertial><origin xyz="{_f(body.com)} 0 0"/>'
            f'<mass value="{_f(body.mass)}"/><inertia ixx="{_f(ixx)}" ixy="0" ixz="0" '
            f'iyy="{_f(ixx)}" iyz="0" izz="{_f(izz)}"/></inertial>{rod}{collision}</link>')
    out.append('  <link name="front_gripper"/>')
    chain = [("x5", "prismatic", "world", "base_x", "0 0 0", "1 0 0"),
             ("y5", "prismatic", "base_x", "base_y", "0 0 0", "0 1 0"),
             ("phi5", "revolute", "base_y", "link4", "0 0 0", "0 0 1")]
    for k, j in enumerate(ACTUATED):
        chain.append((j, "revolute", BODIES[k], BODIES[k + 1], f"{_f(lengths[k])} 0 0",
                      "0 0 1"))
    for jn, kind, parent, child, xyz, axis in chain:
        if kind == "prismatic" or jn == "phi5":
            # the unactuated base, free in the plane: URDF requires a limit element on
            # these joint types but not its bounds, and a joint without them is unlimited
            # in MuJoCo (Pinocchio reads them as 0 and does not enforce them); a plain
            # revolute for phi5 keeps nq at 6
            limit = '<limit effort="0" velocity="100"/>'
        else:
            limit = (f'<limit lower="{_f(-ANGLE_LIMIT)}" upper="{_f(ANGLE_LIMIT)}" '
                     f'effort="{_f(TORQUE_LIMIT)}" velocity="{_f(SPEED_LIMIT)}"/>')
        out.append(f'  <joint name="{jn}" type="{kind}"><parent link="{parent}"/>'
                   f'<child link="{child}"/><origin xyz="{xyz}"/><axis xyz="{axis}"/>'
                   f"{limit}</joint>")
    out.append(f'  <joint name="front_gripper_fixed" type="fixed"><parent link="link1"/>'
               f'<child link="front_gripper"/><origin xyz="{_f(lengths[3])} 0 0"/></joint>')
    out.append("</robot>\n")
    return "\n".join(out)


#: What model files carry: the robot's limits, position servos and closed hooks, so that the
#: scene holds ``home`` under its keyframe's ``ctrl`` (Menagerie's convention).
MODEL_FILE_GEOMETRY = Geometry(torque_limit=TORQUE_LIMIT, joint_limits=True, servos=True,
                               hooked=True)


def write_model(morphology: Morphology, out_dir: str | Path,
                geometry: Geometry | None = None) -> dict[str, Path]:
    """Write ``jumper.xml``, ``scene.xml`` and ``jumper.urdf`` into ``out_dir``; the model
    file is :data:`MODEL_FILE_GEOMETRY`'s unless ``geometry`` says otherwise."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"mjcf": out / "jumper.xml", "scene": out / "scene.xml", "urdf": out / "jumper.urdf"}
    paths["mjcf"].write_text(robot_xml(morphology, geometry or MODEL_FILE_GEOMETRY))
    paths["scene"].write_text(scene_xml(paths["mjcf"].name))
    paths["urdf"].write_text(urdf(morphology))
    paths["readme"] = out / "README.md"
    paths["readme"].write_text(_readme(paths))
    return paths


def _readme(paths: dict[str, Path]) -> str:
    """The model folder's README, read from the compiled model file."""
    import mujoco

    return model_readme(
        mujoco.MjModel.from_xml_path(str(paths["mjcf"])), "Planar jump-climber",
        "A five-mass, four-link planar robot that climbs a vertical carpeted wall by jumping, "
        "with a spined gripper at each end (rear foot: link 4's base; front foot: link 1's tip).",
        {"robot (MJCF, position servos with the ESC's gains and the motors' torque range, "
         "hooks closed, camera `side`, keyframe `home` held under its `ctrl`)":
         paths["mjcf"], "scene: the robot in front of the wall at x = 0": paths["scene"],
         "the same kinematic tree, masses and limits as URDF (Pinocchio, ROS)": paths["urdf"]},
        ("Planar world: x away from the wall, y up the wall, gravity along -y; joints hinge "
         "about z. Chosen so that qpos equals clamber's coordinates [x5, y5, phi5, th4, th3, th2].",
         "SI units: m, kg, s, rad, N m.",
         "Gripper hooks are `connect` equality constraints, closed in this file (home hangs "
         "on them); the simulator opens and closes them itself and drives torque motors "
         "through its DC-motor and ESC model instead of these servos.",
         "Out-of-plane inertias are set only to satisfy the triangle inequality; they never "
         "enter the planar dynamics."),
        "Masses and lengths: the morphology given to `clamber jumper model` (default: the "
        "paper's nominal robot); motor limits 0.25 N m, 40 rad/s, joint range +-2.6 rad.")


def load_scene(morphology: Morphology | np.ndarray, geometry: Geometry | None = None):
    """Compile the scene (robot + wall) into a ``mujoco.MjModel``."""
    import mujoco

    return mujoco.MjModel.from_xml_string(scene_string(morphology, geometry))
