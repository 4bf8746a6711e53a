"""What a jump simulation is run with: the simulator's settings and one sampled robot.

Separate from the playback loop (:mod:`clamber.jumper.sim.simulate`) so that studies,
calibration and the CLI can describe a simulation without the loop itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from clamber import _validate as check
from clamber.exceptions import ConfigError
from clamber.jumper.sim.control import EventTriggeredSettings, Sensors, make_clock
from clamber.jumper.sim.gripper import CaptureWindow, FootPivot
from clamber.jumper.sim.motor import EscGains, MotorParameters
from clamber.jumper.solution import TrajectorySolution


@dataclass(frozen=True)
class SimulationSettings:
    """Everything about the simulated robot that is not the optimized trajectory."""

    motor: MotorParameters = field(default_factory=MotorParameters)
    """Nominal motor module (the feed-forward is computed with it)."""
    gains: EscGains = field(default_factory=EscGains)
    capture: CaptureWindow = field(default_factory=CaptureWindow)
    pivot: FootPivot = field(default_factory=FootPivot)
    sensors: Sensors = field(default_factory=Sensors)
    hook_timeconst: float = 0.002
    """Time constant of a hooked gripper's pin [s] (MuJoCo solref): the compliance of
    spines in carpet loops. Stiff pins stop the robot in a 1-2 ms impact spike."""
    hook_dampratio: float = 1.0
    """Damping ratio of the pin [-]; below 1 the gripper bounces on the wall at impact."""
    controller: str = "open-loop"
    """Reference clock: 'open-loop' or 'closed-loop' (event-triggered catching)."""
    event_triggered: EventTriggeredSettings = field(default_factory=EventTriggeredSettings)
    arm_lead: float = 0.03
    """A gripper is armed this long before its optimized catch [s]."""
    catch_timeout: float = 0.05
    """A catch not made this long after the reference reached it is a miss [s]."""
    ready_distance_tol: float = 0.01
    """Ready: gripper separation within this of the optimized stance [m]."""
    ready_angle_tol: float = 0.35
    """Ready: every joint within this of the optimized start angle [rad]."""
    settle_time: float = 0.1
    """Extra time simulated after the last jump when recording, holding the stance [s]."""
    physics_substeps: int = 1
    """Physics steps per 1 kHz ESC period (step = 1 ms / substeps)."""
    foot_radius: float | None = None
    """The robot's gripper radius [m]; None takes the optimization's. Optimizing with a
    smaller radius than the robot's aims the catches into the wall (a catch margin)."""
    rear_miss_jumps: tuple[int, ...] = ()
    """Fault injection: in these jumps (0-based) the rear gripper's first catch is refused,
    as if its spines skidded off the wall, whatever the window says."""

    def __post_init__(self) -> None:
        check.numeric_fields(self, "simulation",
                             names=("arm_lead", "catch_timeout", "ready_distance_tol",
                                    "ready_angle_tol", "settle_time", "hook_timeconst",
                                    "hook_dampratio"))
        check.integer("simulation", "physics_substeps", self.physics_substeps, low=1)
        for i, k in enumerate(self.rear_miss_jumps):
            check.integer("simulation", f"rear_miss_jumps[{i}]", k, low=0)
        make_clock(self.controller, 1.0, [0.0] * 6, 1)  # validates the name


@dataclass(frozen=True)
class Realization:
    """One sampled robot: what differs from the nominal in a robustness trial.

    ``parameters`` is the morphology vector (``PARAMETER_NAMES`` order; may leave the
    design bounds), ``motors`` and ``gains`` are per joint (hip, spine, shoulder),
    ``q0_offset``/``qd0_offset`` are added to the optimized initial state (rear-foot
    coordinates, [m], [rad], [m/s], [rad/s]), after which the chain is closed again with
    the front gripper on the wall, ``front_offset`` [m] above its optimized height (the
    robot starts hooked, whatever its tolerances); reference packets arrive
    ``start_delay`` [s] late plus a uniform ``[0, jitter]`` [s] each (seeded by ``seed``).
    """

    parameters: np.ndarray
    motors: tuple[MotorParameters, MotorParameters, MotorParameters]
    gains: tuple[EscGains, EscGains, EscGains]
    q0_offset: np.ndarray = field(default_factory=lambda: np.zeros(6))
    qd0_offset: np.ndarray = field(default_factory=lambda: np.zeros(6))
    front_offset: float = 0.0
    start_delay: float = 0.0
    jitter: float = 0.0
    seed: int = 0

    @classmethod
    def nominal(cls, sol: TrajectorySolution, config: SimulationSettings) -> Realization:
        """The robot exactly as designed."""
        return cls(parameters=sol.morphology.parameters(), motors=(config.motor,) * 3,
                   gains=(config.gains,) * 3)


#: Hardware options a solution can record for its simulation: ``rear_spar`` (a spar on the
#: rear foot too, :meth:`~clamber.jumper.sim.gripper.FootPivot.with_rear_spar`).
HARDWARE_OPTIONS = ("rear_spar",)


def hardware_options(sol: TrajectorySolution) -> dict[str, bool]:
    """The robot options ``sol`` was designed for: the last ``{"hardware": {...}}`` entry of
    its history (kept through save and load), {} when it records none."""
    for entry in reversed(sol.history):
        if isinstance(entry, dict) and "hardware" in entry:
            found = entry["hardware"]
            if not isinstance(found, dict):
                raise ConfigError(f"history hardware = {found!r}: must be a JSON object")
            for name, value in found.items():
                check.choice("hardware", name, name, HARDWARE_OPTIONS)
                if not isinstance(value, bool):
                    raise ConfigError(f"hardware.{name} = {value!r}: must be true or false")
            return dict(found)
    return {}


def with_hardware(sol: TrajectorySolution, **options: bool) -> TrajectorySolution:
    """A copy of ``sol`` that records ``options`` (names in :data:`HARDWARE_OPTIONS`) as the
    hardware its simulations need."""
    for name, value in options.items():
        check.choice("hardware", name, name, HARDWARE_OPTIONS)
        if not isinstance(value, bool):
            raise ConfigError(f"hardware.{name} = {value!r}: must be true or false")
    return replace(sol, history=[*sol.history, {"hardware": dict(options)}])
