"""Servo model: the current limit caps the torque, power follows current and voltage."""

import numpy as np

from clamber.quadruped.control.controllers import JointCommand
from clamber.quadruped.model.robot import Marcbot
from clamber.quadruped.sim.servos import ServoBank, ServoBankParameters


def test_current_limit_caps_torque(wall_sim):
    """Goals far from the joints saturate every servo at current limit / (A per N m)."""
    sim, _, _ = wall_sim
    servos = sim.servos
    limit = 0.3 * servos.current_max
    goal = sim.joints()[0] + 0.5
    servos.apply(sim.model, sim.data, JointCommand(goal, np.zeros(20), limit))
    import mujoco

    mujoco.mj_forward(sim.model, sim.data)
    expected = limit / servos.current_per_torque
    assert np.allclose(sim.data.actuator_force, expected, rtol=1e-9)
    assert np.all(expected < servos.tau_max)


def test_torque_limit_and_feed_forward(wall_sim):
    """A current limit above the maximum saturates at the torque limit; at the goal the
    servo applies exactly the feed-forward torque."""
    sim, _, _ = wall_sim
    servos = sim.servos
    import mujoco

    q = sim.joints()[0].copy()
    servos.apply(sim.model, sim.data, JointCommand(q - 1.0, np.zeros(20),
                                                   10 * servos.current_max))
    mujoco.mj_forward(sim.model, sim.data)
    assert np.allclose(sim.data.actuator_force, -servos.tau_max)
    tau = np.linspace(-0.5, 0.5, 20)
    servos.apply(sim.model, sim.data, JointCommand(q, tau, servos.current_max))
    mujoco.mj_forward(sim.model, sim.data)
    assert np.allclose(sim.data.actuator_force, tau, atol=1e-9)


def test_power_from_current_and_voltage():
    """P = V sum(|tau| A/(N m) + I_idle); zero torque draws only the standby current."""
    robot = Marcbot()
    bank = ServoBank(robot, ServoBankParameters(voltage=12.0, idle_current=0.04))
    assert np.isclose(bank.power(np.zeros(20)), 12.0 * 0.04 * 20)
    tau = np.full(20, -1.0)
    assert np.isclose(bank.power(tau), 12.0 * (robot.current_per_torque().sum() + 0.8))
