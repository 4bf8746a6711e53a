"""Generated model folders carry a README that matches the model files they describe."""

import re
import subprocess
import sys

import mujoco
import numpy as np
import pytest


def _cli(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "clamber", *args], check=True, capture_output=True,
                   text=True, timeout=300)


def _joint_rows(readme: str) -> dict[str, str]:
    rows = re.findall(r"^\| `([^`]+)` \| (free|ball|slide|hinge) \| [^|]* \| ([^|]+) \|$",
                      readme, flags=re.MULTILINE)
    return {name: rng.strip() for name, _, rng in rows}


@pytest.mark.parametrize("robot, model_file", [("quadruped", "marcbot.xml"),
                                               ("jumper", "jumper.xml")])
def test_readme_lists_every_joint_with_the_model_s_range(tmp_path, robot, model_file):
    """Every joint of the compiled model appears once in the README with its own range,
    every actuator with its control range, and the keyframe is named."""
    _cli(robot, "model", "--out", str(tmp_path))
    model = mujoco.MjModel.from_xml_path(str(tmp_path / model_file))
    readme = (tmp_path / "README.md").read_text()
    rows = _joint_rows(readme)
    assert len(rows) == model.njnt
    for j in range(model.njnt):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j)
        if model.jnt_limited[j]:
            lo, hi = (float(x) for x in rows[name].split()[::2][:2])
            assert np.allclose([lo, hi], model.jnt_range[j], rtol=1e-3, atol=1e-4)
        else:
            assert rows[name] == "unlimited"
    for a in range(model.nu):
        assert f"`{mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, a)}`" in readme
    assert "`home`" in readme


def test_quadruped_model_files_load_in_mujoco_and_pinocchio(tmp_path):
    """The written MARCBot files load in both engines with the same joint count, and the
    home keyframe puts every sole on or above the ground."""
    import pinocchio as pin

    _cli("quadruped", "model", "--out", str(tmp_path))
    scene = mujoco.MjModel.from_xml_path(str(tmp_path / "scene.xml"))
    data = mujoco.MjData(scene)
    mujoco.mj_resetDataKeyframe(scene, data, 0)
    mujoco.mj_kinematics(scene, data)
    soles = [data.site_xpos[i][2] for i in range(scene.nsite)
             if mujoco.mj_id2name(scene, mujoco.mjtObj.mjOBJ_SITE, i) != "imu"]
    assert min(soles) >= -1e-6
    urdf = pin.buildModelFromUrdf(str(tmp_path / "marcbot.urdf"))  # floating joint `root`
    assert urdf.nv == scene.nv
