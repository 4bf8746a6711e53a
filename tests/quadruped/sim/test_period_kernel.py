"""The control period stepped in one compiled call (MuJoCo's C step from a kernel) leaves the
physics, the servo torques and the grippers' checks exactly where the Python loop of
physics steps leaves them: on a climb in which a gripper breaks off (recorded periods,
the rerun after the break, open grippers) and on a trot (no grippers)."""

import numpy as np
import pytest

from clamber.quadruped.gaits import TrotGaitSettings
from clamber.quadruped.sim import period_kernel
from clamber.quadruped.trials.climb import ClimbSettings, ClimbTrial
from clamber.quadruped.trials.trot import TrotSettings, TrotTrial

pytestmark = pytest.mark.skipif(not period_kernel.AVAILABLE,
                                reason="MuJoCo's library is not linked into kernels here")


def _physics(sim) -> list[np.ndarray]:
    d = sim.data
    return [d.qpos, d.qvel, d.act, d.qacc_warmstart, np.array([d.time]), d.ctrl,
            d.actuator_force, sim._torque, sim._forces]


def _same(a, b) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def _recording(sim) -> list:
    """The step records of ``sim`` from now on (its ``step`` wrapped)."""
    records, step = [], sim.step

    def recorded(cmd):
        records.append(step(cmd))
        return records[-1]

    sim.step = recorded
    return records


def _result(trial) -> dict:
    return {k: v for k, v in trial.result().to_dict().items() if "wall" not in k
            and "setup" not in k and "cpu" not in k}


def test_compiled_period_climbs_as_the_python_loop_until_a_gripper_breaks():
    """Plain CLIK on the vertical wall (seed 1) overloads a gripper at its first release:
    stepped cycle by cycle, the compiled periods and the Python loop give the same state,
    torques, records, gauges, failure clocks and events bit for bit, up to and through the
    break (whose period is rerun step by step either way)."""
    settings = ClimbSettings(controller="clik-plain", incline_deg=90.0)
    fast, plain = ClimbTrial(settings, 1, time_limit=12.0), ClimbTrial(settings, 1,
                                                                        time_limit=12.0)
    assert fast.sim.compiled
    plain.sim.compiled = False
    ra, rb = _recording(fast.sim), _recording(plain.sim)
    running = True
    while running:
        running = fast.step()
        assert plain.step() == running
        assert _same(_physics(fast.sim), _physics(plain.sim))
        a, b = fast.sim.grippers, plain.sim.grippers
        assert np.array_equal(a.gauges, b.gauges)
        assert _same(a.clock.save(), b.clock.save())
    assert len(ra) == len(rb) and all(
        x.t == y.t and x.power == y.power and x.broken == y.broken
        and np.array_equal(x.torque, y.torque) for x, y in zip(ra, rb, strict=True))
    assert fast.sim.grippers.events == plain.sim.grippers.events
    assert any(e.kind == "break" for e in fast.sim.grippers.events)
    assert _result(fast) == _result(plain)


def test_compiled_period_trots_as_the_python_loop():
    """A trot (a simulator without grippers) stepped both ways: the same state, torques and
    result bit for bit."""
    settings = TrotSettings(gait=TrotGaitSettings(cycles=1, start_time=0.4))
    fast, plain = TrotTrial(settings, seed=0), TrotTrial(settings, seed=0)
    assert fast.sim.compiled and fast.sim.grippers is None
    plain.sim.compiled = False
    running = True
    while running:
        running = fast.step()
        assert plain.step() == running
        assert _same(_physics(fast.sim), _physics(plain.sim))
    assert _result(fast) == _result(plain)


def test_the_kernel_runs_the_bindings_mujoco():
    """The linked library is the one the bindings run (its version), and one compiled
    period equals five ``mujoco.mj_step`` calls with the forces and gripper data copied
    (after ``mj_getState`` where it saves the state)."""
    import mujoco

    xml = """<mujoco><worldbody><geom type='plane' size='1 1 0.1'/>
      <body pos='0 0 0.3'><freejoint/><geom size='0.1'/><site name='s'/></body>
      <body pos='0.5 0 1'><joint name='j' type='hinge'/><geom size='0.1'/></body>
      </worldbody><actuator><motor joint='j'/></actuator></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    fast, plain = mujoco.MjData(m), mujoco.MjData(m)
    for d in (fast, plain):
        d.ctrl[:] = 0.7
        d.qvel[:] = [0.3, -0.2, 0.1, 1.0, -2.0, 3.0, 0.5]
    sources = [lambda d, a=a: getattr(d, a)
               for a in ("cfrc_ext", "subtree_com", "site_xpos", "site_xmat")]
    cycle = tuple(np.zeros((5, *s(fast).shape)) for s in sources)
    expected = tuple(np.zeros_like(c) for c in cycle)
    forces, torque = np.zeros((5, m.nu)), np.zeros(m.nu)
    kind = mujoco.mjtState.mjSTATE_INTEGRATION
    saved, plain_saved = (np.full(mujoco.mj_stateSize(m, kind), np.nan) for _ in range(2))
    for k in range(40):
        period_kernel.advance(m._address, fast._address, 5, fast.actuator_force, forces,
                              torque, True, tuple(s(fast) for s in sources), cycle,
                              k % 2 == 1, saved, int(kind))
        if k % 2 == 1:
            mujoco.mj_getState(m, plain, plain_saved, kind)
        assert np.array_equal(saved, plain_saved, equal_nan=True)
        plain_forces = np.zeros((5, m.nu))
        for j in range(5):
            mujoco.mj_step(m, plain)
            plain_forces[j] = plain.actuator_force
            mujoco.mj_rnePostConstraint(m, plain)
            for k, s in enumerate(sources):
                expected[k][j] = s(plain)
        mean = np.abs(plain_forces).sum(axis=0)
        mean *= 1.0 / 5
        assert np.array_equal(fast.qpos, plain.qpos) and np.array_equal(fast.qvel, plain.qvel)
        assert np.array_equal(forces, plain_forces) and np.array_equal(torque, mean)
        assert _same(cycle, expected)
    assert fast.ncon > 0 and np.any(cycle[0] != 0.0)
