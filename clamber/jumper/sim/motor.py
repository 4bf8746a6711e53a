"""Joint motor modules as on the robot: DC motor with back-EMF and an ESC running PD.

Motor (geared, referred to the joint), with the electrical time constant neglected:

.. math:: \\tau = \\frac{k_t}{R} (V - k_e \\omega) - b \\omega, \\qquad |V| \\le V_s

so the torque a module can give shrinks linearly with speed, from the stall torque
:math:`k_t V_s / R` to zero at the no-load speed :math:`V_s / (k_e + b R / k_t)`.

ESC: every 1 ms it samples the joint angle and speed and applies

.. math:: V = K_p (\\theta_{ref} - \\theta) + K_d (\\omega_{ref} - \\omega) + V_{ff}

clipped to the supply, where ``theta_ref`` and ``V_ff`` arrive from the main board at
500 Hz. ``V_ff`` is the voltage that produces the optimized torque at the optimized
speed (:meth:`MotorParameters.voltage`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from clamber import _validate as check

#: ESC loop rate [Hz] and reference rate [Hz] of the paper's robot.
ESC_RATE_HZ = 1000
REFERENCE_RATE_HZ = 500


#: Highest supply voltage [V] of the motor modules modelled here: small brushed DC motors
#: on packs of up to 12 lithium cells.
MAX_SUPPLY_VOLTAGE = 48.0


@dataclass(frozen=True)
class MotorParameters:
    """One geared DC motor referred to its joint (units in brackets).

    The defaults give 0.6 N m stall torque and 0.5 N m at 40 rad/s on 12 V: enough for
    the optimizer's 0.25 N m torque bound over its whole speed range.
    """

    torque_constant: float = 0.05
    """k_t [N m/A] at the joint (motor constant times gear ratio)."""
    back_emf_constant: float = 0.05
    """k_e [V s/rad] at the joint (equals k_t in SI for an ideal motor)."""
    resistance: float = 1.0
    """Winding resistance R [ohm]."""
    supply_voltage: float = 12.0
    """Battery voltage V_s [V]: the ESC cannot apply more."""
    viscous_friction: float = 5e-4
    """Gearbox viscous friction b [N m s/rad]."""

    def __post_init__(self) -> None:
        check.numeric_fields(self, "MotorParameters", strict=True,
                         names=("torque_constant", "back_emf_constant", "resistance"))
        check.non_negative("MotorParameters", "viscous_friction", self.viscous_friction)
        check.number("MotorParameters", "supply_voltage", self.supply_voltage, low=0.0,
                 high=MAX_SUPPLY_VOLTAGE, low_open=True)

    @property
    def gain(self) -> float:
        """a = k_t / R [N m/V]: torque per volt at standstill."""
        return self.torque_constant / self.resistance

    @property
    def damping(self) -> float:
        """c = k_t k_e / R + b [N m s/rad]: torque lost per unit speed."""
        return self.torque_constant * self.back_emf_constant / self.resistance \
            + self.viscous_friction

    @property
    def stall_torque(self) -> float:
        """[N m] at the supply voltage."""
        return self.gain * self.supply_voltage

    @property
    def no_load_speed(self) -> float:
        """[rad/s] at the supply voltage."""
        return self.gain * self.supply_voltage / self.damping

    def torque(self, voltage: np.ndarray | float, speed: np.ndarray | float) -> np.ndarray:
        """Joint torque [N m] at terminal voltage [V] (clipped to the supply) and speed [rad/s]."""
        v = np.clip(voltage, -self.supply_voltage, self.supply_voltage)
        return self.gain * v - self.damping * np.asarray(speed)

    def voltage(self, torque: np.ndarray | float, speed: np.ndarray | float) -> np.ndarray:
        """Voltage [V] that yields ``torque`` [N m] at ``speed`` [rad/s] (not clipped)."""
        return (np.asarray(torque) + self.damping * np.asarray(speed)) / self.gain

    def scaled(self, torque_constant: float = 1.0, resistance: float = 1.0) -> MotorParameters:
        """A copy with k_t = k_e and R scaled by the given factors (a perturbed unit)."""
        return replace(self, torque_constant=self.torque_constant * torque_constant,
                       back_emf_constant=self.back_emf_constant * torque_constant,
                       resistance=self.resistance * resistance)


@dataclass(frozen=True)
class EscGains:
    """PD gains of the ESC in volts (units in brackets).

    With the default motor, 40 V/rad is 2 N m/rad and 0.4 V s/rad is 0.02 N m s/rad at
    the joint: stable at 1 kHz for the lightest distal inertia (the 10 g gripper on an
    80 mm link) and stiff enough to hold a 0.1 rad error with 0.2 N m.
    """

    kp: float = 40.0
    """Proportional gain [V/rad]."""
    kd: float = 0.4
    """Derivative gain [V s/rad] on the speed error (reference speed: difference of packets)."""

    def __post_init__(self) -> None:
        check.positive("EscGains", "kp", self.kp)
        check.non_negative("EscGains", "kd", self.kd)


def pd_voltage(gains: EscGains, theta_ref: float, theta: float, speed_ref: float, speed: float,
               v_ff: float, supply: float) -> float:
    """The ESC law for one joint [V], clipped to +-``supply``.

    Angles [rad], speeds [rad/s]; ``speed_ref`` is the ESC's difference of consecutive
    reference packets.
    """
    v = gains.kp * (theta_ref - theta) + gains.kd * (speed_ref - speed) + v_ff
    return supply if v > supply else (-supply if v < -supply else v)
