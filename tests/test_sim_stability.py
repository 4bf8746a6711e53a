"""MuJoCo instability is read from the simulation's own warning counters."""

import mujoco
import numpy as np
import pytest

from clamber.sim_stability import UnstableSimulation, check_stable, instability

SPRING = """<mujoco><option timestep="{dt}" integrator="Euler"/><worldbody><body>
  <joint name="hinge" type="hinge" stiffness="{k}"/>
  <geom type="capsule" size="0.01" fromto="0 0 0 0.1 0 0" mass="0.01"/>
</body></worldbody></mujoco>"""


def _run(k: float, dt: float, steps: int = 200) -> mujoco.MjData:
    m = mujoco.MjModel.from_xml_string(SPRING.format(k=k, dt=dt))
    d = mujoco.MjData(m)
    d.qpos[0] = 0.1
    mujoco.mj_step(m, d, steps)
    return d


def test_a_diverging_spring_is_unstable_even_after_mujocos_reset():
    """An explicit spring far too stiff for its time step diverges: MuJoCo resets the state
    to rest (finite again) but the BADQACC counter survives, so the run is reported
    unstable; the same spring at a fine step is not."""
    bad = _run(k=1e9, dt=0.01)
    assert np.isfinite(bad.qpos).all()  # the reset hid the divergence from the state
    assert "BADQACC" in instability(bad)
    with pytest.raises(UnstableSimulation, match=r"spring went unstable by t = 2\.000 s"):
        check_stable(bad, "spring", 2.0)
    good = _run(k=1.0, dt=0.001)
    assert instability(good) is None
    check_stable(good, "spring", 0.2)


def test_a_non_finite_state_is_unstable():
    """A NaN in the state is unstable even before MuJoCo has stepped and warned."""
    d = _run(k=1.0, dt=0.001, steps=1)
    d.qvel[0] = np.nan
    assert instability(d) == "non-finite state"
