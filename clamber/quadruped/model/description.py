"""URDF (for Pinocchio) and MJCF with its scene (for MuJoCo) generated from one :class:`Marcbot`.

Both files carry the same kinematic tree, joint axes, masses, COMs and inertias; the servos'
rotor inertia and friction are left out of both so that the two dynamics agree exactly.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from clamber.model_readme import model_readme
from clamber.quadruped.model.robot import JOINTS_PER_LEG, LEG_NAMES, Link, Marcbot

LINK_NAMES = ("hip", "thigh", "calf", "ankle", "gripper")
BODY_NAME = "body"
#: Position gain of the model files' servos [A/rad]: the Dynamixel X-series default P gain
#: (6.25 units of 2.69 mA per 0.088 deg tick); a servo's kp [N m/rad] is this over A per N m.
SERVO_GAIN_A_PER_RAD = 6.25 * 2.69e-3 / np.deg2rad(0.088)


def joint_name(leg: str, j: int) -> str:
    """Name of joint ``j`` (1..5) of ``leg``, e.g. ``LF_j3``."""
    return f"{leg}_j{j}"


def foot_name(leg: str) -> str:
    """Name of the gripper contact frame (URDF link, MJCF site) of ``leg``."""
    return f"{leg}_foot"


def _fmt(v) -> str:
    return " ".join(f"{float(x):.10g}" for x in np.atleast_1d(v))


def _joint_origins(robot: Marcbot, leg: int) -> list[tuple[np.ndarray, float, str]]:
    """(position in parent [m], yaw in parent [rad], axis) of joints 1..5 of ``leg``."""
    g = robot.leg
    return [
        (robot.hip_position(leg), robot.mount_yaw[leg], "0 0 1"),
        (np.array([g.hip, 0.0, 0.0]), 0.0, "0 1 0"),
        (np.array([g.thigh, 0.0, 0.0]), 0.0, "0 1 0"),
        (np.array([g.calf, 0.0, 0.0]), 0.0, "0 1 0"),
        (np.array([g.ankle_forward, 0.0, -g.ankle_down]), 0.0, "0 0 1"),
    ]


def _urdf_inertial(link: Link) -> str:
    I = link.inertia()
    return (f'<inertial><origin xyz="{_fmt(link.com)}" rpy="0 0 0"/><mass value="{link.mass}"/>'
            f'<inertia ixx="{I[0, 0]:.10g}" ixy="0" ixz="0" iyy="{I[1, 1]:.10g}" iyz="0" '
            f'izz="{I[2, 2]:.10g}"/></inertial>')


def _urdf_box(link: Link, contact: bool) -> str:
    """The link's cuboid as URDF visual, and as collision where the MJCF's collides."""
    box = (f'<origin xyz="{_fmt(link.com)}" rpy="0 0 0"/><geometry><box '
           f'size="{_fmt(link.size)}"/></geometry>')
    return f"<visual>{box}</visual>" + (f"<collision>{box}</collision>" if contact else "")


def urdf_string(robot: Marcbot, floating_base: bool = False) -> str:
    """The robot as URDF: link cuboids as visual geometry, gripper boxes as collision. With
    ``floating_base`` (the model file) a ``floating`` joint ``root`` from a ``world`` link
    keeps the base free in every reader; without it the loader adds the free flyer."""
    out = ['<?xml version="1.0"?>', '<robot name="marcbot">']
    if floating_base:
        out += ['<link name="world"/>',
                f'<joint name="root" type="floating"><parent link="world"/>'
                f'<child link="{BODY_NAME}"/></joint>']
    out.append(f'<link name="{BODY_NAME}">{_urdf_inertial(robot.body_link())}'
               f'{_urdf_box(robot.body_link(), contact=False)}</link>')
    lo, hi = robot.q_min, robot.q_max
    servos = robot.servo_specs()
    for i, leg in enumerate(LEG_NAMES):
        parent = BODY_NAME
        for j, ((pos, yaw, axis), link) in enumerate(zip(_joint_origins(robot, i), robot.links(),
                                                          strict=True)):
            child = f"{leg}_{LINK_NAMES[j]}"
            s = servos[i * JOINTS_PER_LEG + j]
            out.append(f'<link name="{child}">{_urdf_inertial(link)}'
                       f'{_urdf_box(link, contact=j == 4)}</link>')
            out.append(
                f'<joint name="{joint_name(leg, j + 1)}" type="revolute">'
                f'<parent link="{parent}"/><child link="{child}"/>'
                f'<origin xyz="{_fmt(pos)}" rpy="0 0 {yaw:.10g}"/><axis xyz="{axis}"/>'
                f'<limit lower="{lo[j]}" upper="{hi[j]}" effort="{s.torque_limit}" '
                f'velocity="{s.velocity_limit}"/></joint>')
            parent = child
        out.append(f'<link name="{foot_name(leg)}"/>')
        out.append(f'<joint name="{leg}_sole" type="fixed"><parent link="{parent}"/>'
                   f'<child link="{foot_name(leg)}"/>'
                   f'<origin xyz="0 0 {-robot.leg.gripper_height}" rpy="0 0 0"/></joint>')
    out.append("</robot>")
    return "\n".join(out)


def _mjcf_inertial(link: Link) -> str:
    I = link.inertia()
    return (f'<inertial pos="{_fmt(link.com)}" mass="{link.mass}" '
            f'diaginertia="{_fmt(np.diag(I))}"/>')


def _mjcf_geom(link: Link, name: str, contact: bool) -> str:
    half = np.asarray(link.size) / 2
    bits = "" if contact else ' contype="0" conaffinity="0"'
    return f'<geom name="{name}" type="box" size="{_fmt(half)}" pos="{_fmt(link.com)}"{bits}/>'


def mjcf_string(robot: Marcbot, keyframe: bool = True, servos: bool = False) -> str:
    """The robot as an MJCF model (no world): only the gripper boxes collide; keyframe
    ``home`` is the default stance, soles on z = 0; actuators are torque motors (``ctrl``
    [N m]) or, with ``servos`` (the model file), position servos (``ctrl`` the goal [rad]).
    """
    out = ['<mujoco model="marcbot">',
           '<compiler angle="radian" autolimits="true"/>',
           '<option timestep="0.001" integrator="implicitfast"/>',
           "<worldbody>",
           f'<body name="{BODY_NAME}" pos="0 0 0.25">',
           '<freejoint name="root"/>',
           _mjcf_inertial(robot.body_link()),
           _mjcf_geom(robot.body_link(), "body_geom", contact=False),
           '<site name="imu" pos="0 0 0"/>']
    lo, hi = robot.q_min, robot.q_max
    for i, leg in enumerate(LEG_NAMES):
        depth = 0
        for j, ((pos, yaw, axis), link) in enumerate(zip(_joint_origins(robot, i), robot.links(),
                                                          strict=True)):
            quat = f"{np.cos(yaw / 2):.10g} 0 0 {np.sin(yaw / 2):.10g}"
            out.append(f'<body name="{leg}_{LINK_NAMES[j]}" pos="{_fmt(pos)}" quat="{quat}">')
            out.append(f'<joint name="{joint_name(leg, j + 1)}" type="hinge" axis="{axis}" '
                       f'range="{lo[j]} {hi[j]}"/>')
            out.append(_mjcf_inertial(link))
            out.append(_mjcf_geom(link, f"{leg}_{LINK_NAMES[j]}_geom", contact=j == 4))
            depth += 1
        out.append(f'<site name="{foot_name(leg)}" pos="0 0 {-robot.leg.gripper_height}"/>')
        out.extend(["</body>"] * depth)
    out.extend(["</body>", "</worldbody>", "<actuator>"])
    for i, s in enumerate(robot.servo_specs()):
        leg, j = LEG_NAMES[i // JOINTS_PER_LEG], i % JOINTS_PER_LEG + 1
        if servos:
            kp = SERVO_GAIN_A_PER_RAD / s.current_per_torque
            out.append(f'<position name="{joint_name(leg, j)}_servo" '
                       f'joint="{joint_name(leg, j)}" kp="{kp:.10g}" '
                       f'kv="{s.torque_limit / s.velocity_limit:.10g}" '
                       f'ctrlrange="{lo[j - 1]} {hi[j - 1]}" '
                       f'forcerange="{-s.torque_limit} {s.torque_limit}"/>')
        else:
            out.append(f'<motor name="{joint_name(leg, j)}_motor" joint="{joint_name(leg, j)}" '
                       f'ctrlrange="{-s.torque_limit} {s.torque_limit}"/>')
    out.extend(["</actuator>", '<sensor><framequat name="body_quat" objtype="site" objname="imu"/>'
                "</sensor>"])
    if keyframe:
        qpos = [0.0, 0.0, _home_height(robot), 1.0, 0.0, 0.0, 0.0,
                *robot.default_joint_angles()]
        ctrl = f' ctrl="{_fmt(robot.default_joint_angles())}"' if servos else ""
        out.extend(["<keyframe>", f'<key name="home" qpos="{_fmt(qpos)}"{ctrl}/>',
                    "</keyframe>"])
    out.append("</mujoco>")
    return "\n".join(out)


def _home_height(robot: Marcbot) -> float:
    """Body height [m] at which the default stance puts the lowest sole on z = 0."""
    import mujoco

    m = mujoco.MjModel.from_xml_string(mjcf_string(robot, keyframe=False))
    d = mujoco.MjData(m)
    d.qpos[7:] = robot.default_joint_angles()
    mujoco.mj_kinematics(m, d)
    soles = [d.site_xpos[m.site(foot_name(leg)).id][2] for leg in LEG_NAMES]
    return round(float(d.qpos[2] - min(soles)), 6)


def scene_string(model_file: str = "marcbot.xml") -> str:
    """A scene that includes the robot and adds a rock floor, light and gravity."""
    return "\n".join([
        '<mujoco model="marcbot scene">',
        f'<include file="{model_file}"/>',
        '<option gravity="0 0 -9.81"/>',
        "<worldbody>",
        '<light pos="0 0 2" dir="0 0 -1" directional="true"/>',
        '<geom name="ground" type="plane" size="2 2 0.05" friction="1.0 0.02 0.001"/>',
        "</worldbody>",
        "</mujoco>",
    ])


def write_models(robot: Marcbot, directory: str | Path) -> dict[str, Path]:
    """Write ``marcbot.urdf``, ``marcbot.xml``, ``scene.xml`` and the folder's
    ``README.md``; returns their paths."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    files = {"urdf": d / "marcbot.urdf", "mjcf": d / "marcbot.xml", "scene": d / "scene.xml"}
    files["urdf"].write_text(urdf_string(robot, floating_base=True) + "\n")
    files["mjcf"].write_text(mjcf_string(robot, servos=True) + "\n")
    files["scene"].write_text(scene_string(files["mjcf"].name) + "\n")
    files["readme"] = d / "README.md"
    files["readme"].write_text(_readme(files))
    return files


def _readme(files: dict[str, Path]) -> str:
    """The model folder's README, read from the compiled model file."""
    import mujoco

    return model_readme(
        mujoco.MjModel.from_xml_path(str(files["mjcf"])), "MARCBot-class quadruped climber",
        "A sprawling quadruped with four five-joint legs, each ending in a spiny gripper, "
        "for free climbing on rock and trotting on flat ground.",
        {"robot (MJCF: free-floating body, position servos with the servos' torque limits, "
         "IMU site and orientation sensor, keyframe `home` held under its `ctrl`)":
         files["mjcf"],
         "scene: the robot on a ground plane (z = 0)": files["scene"],
         "the same kinematic tree, masses and limits as URDF (Pinocchio, ROS), a floating "
         "joint `root` from `world`, the cuboids as visual and the grippers as collision "
         "geometry": files["urdf"]},
        ("z up, gravity along -z; the body frame has x forward and z up.",
         "SI units: m, kg, s, rad, N m.",
         "Links are solid cuboids; only the gripper boxes collide, so contacts happen where "
         "the real robot touches the rock.",
         "Servo rotor inertia and friction are left out of both files so that their "
         "dynamics agree exactly (the simulator adds its servo model).",
         "Actuators are position servos (ctrl: goal angle in rad) with the Dynamixel default "
         "gain; the simulator drives the joints through its own servo model instead."),
        "Dimensions, masses and servo limits: `clamber.quadruped.model.robot.Marcbot` defaults "
        "(MARCBot-class figures; servo torque limits from data-sheet-like values at 12 V).")


def build_pinocchio_model(robot: Marcbot):
    """Pinocchio model with a free-flyer root (nq = 27, nv = 26) built from the URDF string."""
    import pinocchio as pin

    return pin.buildModelFromXML(urdf_string(robot), pin.JointModelFreeFlyer())

