"""The main board's reference clock: open-loop playback or event-triggered catching.

The board streams the optimized joint reference at 500 Hz; what a controller decides is
*which instant of the reference* to send, from the sensors such a robot carries:

* gripper contact switches (one per gripper; the simulator reports a hook
  ``Sensors.switch_latency`` late), read at the board rate;
* joint encoders at 1 kHz on the ESCs (quantized to ``Sensors.encoder_resolution``),
  used by the ESCs' PD loops; the clock itself does not need them;
* an IMU on the rear link for the body angle and rate, used only by the push-off
  feedback (modelled in :class:`~clamber.jumper.sim.stance_feedback.StanceLQRSettings`).

:class:`OpenLoop` advances the reference by the board period every tick, whatever
happens (the paper's playback). :class:`EventTriggered` switches phases on events:

* catch reflex: a front (rear) hook detected before the optimized catch jumps the
  reference to the start of phase 4 (5), so loading starts from the real catch;
* wait for the catch: at the optimized catch instant the reference holds the catch pose
  until the switch closes, at most ``rear_wait`` (``front_wait``) [s];
* settle: at the end of a jump the stance is held ``settle_time`` [s] before the next
  jump starts, so the joints' oscillation after impact decays;
* stiff push-off: until the front catch is detected the ESCs' proportional gain is
  ``push_kp_scale`` times its default, so the take-off follows the reference despite the
  robot's own motor and gain errors (the flight then lands where it was planned);
* impact damping: for ``impact_damping_time`` after a detected catch the ESCs' derivative
  gain is raised by ``impact_kd_scale`` (a gain sent with the packets), which damps the
  joint ringing the paper saw after impact.
* rear re-catch (``recovery``): when the rear switch is still open ``recovery_after`` [s]
  after the reference reached the rear catch (the landing window) while the front switch
  is closed, the robot hangs from its front gripper. The board re-arms the rear gripper
  and, on the first try, holds the rear catch pose ``recovery_wait`` [s] more (most misses
  are feet that arrive a few milliseconds late); later tries wind the reference
  ``recovery_rewind`` [s] back into phase 4 (at ``recovery_rate`` times real time), which
  swings the rear foot off the wall along its optimized approach, and play phase 4's tail
  again as slowly before the hold. A catch goes on with phase 5 and the next jump; after
  ``recovery_attempts`` failed tries the jump ends as without recovery. With recovery on
  the rear catch pose is held through the whole landing window, not only ``rear_wait``:
  starting phase 5 on the front gripper alone tore it off, and a late rear catch is
  re-caught anyway.
* push-off feedback (``stance_feedback="tvlqr"``): over the stance phases up to the rear
  release the board adds a time-varying LQR's voltage correction, on the encoders and an
  IMU's body angle, to the feed-forward it sends (:mod:`clamber.jumper.sim.stance_feedback`).
  Off by default.
* release lift (``release_lift``): after the front release the shoulder's target is
  offset so that the released front gripper leaves the wall instead of sliding up it as
  planned; ramped out in the flight's first milliseconds. Off by default.
* flight re-aim (``flight_feedback="aim"``): at the rear release the board predicts the
  flight from the sensed take-off and offsets the joint targets so that the front gripper
  meets the wall at the planned catch (:mod:`clamber.jumper.sim.flight_aim`). Off by
  default.

Only that feedback changes the commanded voltages beyond the reference's own, and it
travels as voltage too (the ESC clips the voltage to the supply in every case), so a
closed-loop robot never commands beyond its motor limits.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from clamber import _validate as check
from clamber.exceptions import ConfigError
from clamber.jumper.sim.flight_aim import FlightAimSettings, check_flight_feedback
from clamber.jumper.sim.stance_feedback import StanceLQRSettings, check_stance_feedback

CONTROLLERS = ("open-loop", "closed-loop")


@dataclass(frozen=True)
class Sensors:
    """What the simulated robot measures (units in brackets)."""

    encoder_resolution: float = 2 * math.pi / 4096
    """Joint angle quantum of the ESCs' 12-bit magnetic encoders [rad], read at 1 kHz."""
    speed_filter: float = 0.002
    """Time constant [s] of the ESC's first-order low-pass on the differenced encoder
    angle, its joint-speed estimate (so a high derivative gain amplifies quantization)."""
    switch_latency: float = 0.002
    """Delay from a gripper hooking to its contact switch reading closed [s]."""

    def __post_init__(self) -> None:
        check.numeric_fields(self, "sensors",
                             names=("encoder_resolution", "switch_latency", "speed_filter"))


class ReferenceClock(ABC):
    """Decides, at each board tick, the reference time ``r`` [s] to send.

    ``r`` runs over consecutive jumps (jump ``k`` covers ``[k T, (k+1) T)``); the trial
    issues the gripper commands and jump records as ``r`` crosses their instants.
    """

    def __init__(self, period: float, phase_times, jumps: int) -> None:
        self.period = float(period)
        self.phase_times = [float(x) for x in phase_times]
        self.jumps = jumps
        self.r = 0.0

    @property
    def kd_scale(self) -> float:
        """Factor on the ESCs' derivative gain sent with the next packet [-]."""
        return 1.0

    @property
    def kp_scale(self) -> float:
        """Factor on the ESCs' proportional gain sent with the next packet [-]."""
        return 1.0

    def take_commands(self) -> list[tuple[int, str]]:
        """Gripper commands (gripper 0 front, 1 rear; 'rearm' or 'disarm') the clock issues
        with the next packet, besides those the reference's instants carry."""
        return []

    @abstractmethod
    def advance(self, dt: float, switches: tuple[bool, bool]) -> float:
        """Move the clock one board tick of ``dt`` [s] given the contact switches."""


class OpenLoop(ReferenceClock):
    """The reference at the board's own time: nothing is fed back."""

    def advance(self, dt: float, switches: tuple[bool, bool]) -> float:
        self.r += dt
        return self.r


@dataclass(frozen=True)
class EventTriggeredSettings:
    """Tuning of :class:`EventTriggered` (units in brackets)."""

    front_wait: float = 0.0
    """Longest hold of the front catch pose waiting for the front switch [s]. Off by
    default: it lowered the ready rate (the flight pose held does not reach the wall)."""
    rear_wait: float = 0.03
    """Longest hold of the rear catch pose waiting for the rear switch [s]: phase 5 then
    starts from the real rear catch, so the next push-off starts from a settled stance
    (10-jump climbs: 7/10 with it, 2/10 without, on the robust jump)."""
    settle_time: float = 0.0
    """Hold of the stance between jumps [s]. Off by default: the stance pose held still
    loads the rear gripper outside its safe region and tears it off in the simulator."""
    reflex_lead: float = 0.0
    """How early before the optimized catch a detected hook starts the next phase [s]
    (0: off; skipping reference steps jumps the joint targets)."""
    push_kp_scale: float = 3.0
    """Factor on the ESC proportional gain from a jump's start to the detected front
    catch [-] (1: off)."""
    push_kd_scale: float = 3.0
    """Factor on the ESC derivative gain over the same span [-]."""
    impact_kd_scale: float = 3.0
    """Factor on the ESC derivative gain after a detected catch [-] (1: off)."""
    impact_damping_time: float = 0.08
    """How long the raised derivative gain lasts after a detected catch [s]."""
    stance_kp_scale: float = 1.0
    """Factor on the ESC proportional gain from the detected rear catch to the jump's
    end [-] (1: off): a stiff landing stance brings the joints to the next jump's start."""
    recovery: bool = True
    """Swing the rear foot back to the wall after a missed rear catch (module docstring)."""
    recovery_after: float = 0.05
    """Landing window: how long after the reference reached the rear catch the rear switch
    must still be open for a re-catch to start [s] (the simulator's catch timeout)."""
    recovery_attempts: int = 2
    """Re-catch tries per jump before the jump counts as failed [-]."""
    recovery_rewind: float = 0.06
    """How far the second and later tries wind the reference back from the rear catch
    into phase 4 [s] (capped at 80 % of phase 4: the front's commands are never replayed)."""
    recovery_rate: float = 0.5
    """Speed of the re-catch motion (rewind and replay) relative to the jump's [-]: a
    slower swing meets the wall slower."""
    recovery_wait: float = 0.06
    """Longest hold of the rear catch pose in a re-catch try [s]."""
    stance_feedback: str = "none"
    """Feedback on the push-off added to the feed-forward: 'none' or 'tvlqr' (module
    docstring)."""
    stance_lqr: StanceLQRSettings = field(default_factory=StanceLQRSettings)
    """Weights and IMU model of the 'tvlqr' push-off feedback."""
    release_lift: float = 0.0
    """Offset of the shoulder's target [rad] from the front release to the rear release,
    ramped in over ``release_lift_ramp`` and out over the flight's first ``release_lift_ramp``
    times two (0: off; negative turns the front gripper off the wall). The optimum slides
    the released front gripper up the wall; a perturbed robot's gripper drags there and
    stalls the shoulder (docs/results/long_climbs.md)."""
    release_lift_ramp: float = 0.01
    """Ramp of ``release_lift`` [s]."""
    flight_feedback: str = "none"
    """Re-aim of the flight from the measured take-off: 'none' or 'aim' (module
    docstring)."""
    flight_aim: FlightAimSettings = field(default_factory=FlightAimSettings)
    """Aim and limits of the 'aim' flight feedback."""

    def __post_init__(self) -> None:
        check.numeric_fields(self, "event_triggered",
                             names=("front_wait", "rear_wait", "settle_time", "reflex_lead",
                                    "push_kp_scale", "push_kd_scale", "impact_kd_scale",
                                    "impact_damping_time", "stance_kp_scale",
                                    "recovery_rewind", "recovery_wait", "recovery_after"))
        check.integer("event_triggered", "recovery_attempts", self.recovery_attempts, low=0)
        check.number("event_triggered", "release_lift", self.release_lift, low=-0.5, high=0.5)
        check.number("event_triggered", "release_lift_ramp", self.release_lift_ramp, low=0.0,
                     low_open=True, high=0.05)
        check.choice("event_triggered", "recovery", self.recovery, (False, True))
        check_stance_feedback(self.stance_feedback)
        check_flight_feedback(self.flight_feedback)
        if not isinstance(self.flight_aim, FlightAimSettings):
            raise ConfigError(f"event_triggered.flight_aim = {self.flight_aim!r}: must be "
                              "FlightAimSettings")
        if not isinstance(self.stance_lqr, StanceLQRSettings):
            raise ConfigError(f"event_triggered.stance_lqr = {self.stance_lqr!r}: must be "
                              "StanceLQRSettings")
        if not 0 < self.recovery_rate <= 10:
            raise ConfigError(f"event_triggered.recovery_rate = "
                              f"{self.recovery_rate!r}: must be in (0, 10]")


class EventTriggered(ReferenceClock):
    """Phase switching on the contact switches: reflex, wait for the catch, settle,
    re-catch of a missed rear gripper."""

    def __init__(self, period: float, phase_times, jumps: int,
                 settings: EventTriggeredSettings | None = None) -> None:
        super().__init__(period, phase_times, jumps)
        self.s = settings or EventTriggeredSettings()
        self._held = 0.0
        self._seen = [False, False]
        self._time = 0.0  # board time [s]
        self._front_caught = False  # the front caught in the current jump
        self._rear_caught = False  # the rear caught in the current jump
        self._damp_until = -1.0
        self._rewind_to: float | None = None  # reference time the rewind stops at [s]
        self._recovering = False  # a re-catch is under way in the current jump
        self._attempts = 0  # re-catch tries in the current jump
        self._catch_time = math.inf  # board time the reference last reached the rear catch
        self._gave_up = False  # every re-catch try of the current jump failed
        self._commands: list[tuple[int, str]] = []

    def take_commands(self) -> list[tuple[int, str]]:
        out, self._commands = self._commands, []
        return out

    @property
    def kd_scale(self) -> float:
        if self._time < self._damp_until:
            return self.s.impact_kd_scale
        return 1.0 if self._front_caught else self.s.push_kd_scale

    @property
    def kp_scale(self) -> float:
        if self._rear_caught:
            return self.s.stance_kp_scale
        return 1.0 if self._front_caught else self.s.push_kp_scale

    def _hold(self, dt: float, limit: float) -> bool:
        """Count one held tick; whether to keep holding (``limit`` [s] not reached)."""
        if self._held + 0.5 * dt < limit:
            self._held += dt
            return True
        return False

    def advance(self, dt: float, switches: tuple[bool, bool]) -> float:
        T, pt = self.period, self.phase_times
        k = min(math.floor(self.r / T + 1e-9), self.jumps)
        base = k * T
        ri = self.r - base  # [s] into jump k (may be -1e-17 at a boundary)
        self._time += dt
        new = [switches[i] and not self._seen[i] for i in (0, 1)]
        self._seen = [bool(x) for x in switches]
        if any(new):
            self._damp_until = self._time + self.s.impact_damping_time
        if new[0] and ri > pt[1]:
            self._front_caught = True
        if new[1] and ri > pt[2] and self._front_caught:
            self._rear_caught = True
        if abs(ri) < 1e-9 and not self._held:
            self._front_caught = self._rear_caught = False  # a new jump: stiff until its catch
            self._recovering, self._attempts, self._catch_time = False, 0, math.inf
            self._gave_up = False
        if self._rewind_to is not None:
            return self._rewind(dt, switches, base)
        landing = min(self.s.recovery_after, 0.8 * (T - pt[4]))  # the landing window [s]
        window = self.s.recovery_wait if self._recovering else landing
        if (self.s.recovery and k < self.jumps and switches[0] and not switches[1]
                and not self._gave_up and ri >= pt[4] - 1e-9
                and self._time - self._catch_time >= window - 1e-9):
            if self._start_recovery(base):
                return self._rewind(dt, switches, base)
            self._commands.append((1, "disarm"))  # out of tries: the miss is final
            self._recovering, self._gave_up = False, True
        rear_wait = (window if self._recovering or self.s.recovery  # hold while it may catch
                     else self.s.rear_wait)
        for gi, catch, wait in ((0, pt[3], self.s.front_wait), (1, pt[4], rear_wait)):
            if k < self.jumps and new[gi] and catch - self.s.reflex_lead <= ri < catch:
                self.r, self._held = base + catch, 0.0  # reflex: the phase starts now
                return self.r
            if k < self.jumps and abs(ri - catch) < 1e-9 and not switches[gi]:
                if self._hold(dt, wait):
                    return self.r
        if self._recovering and switches[1] and ri >= pt[4] - 1e-9:
            self._recovering = False
        boundary = base + T if k < self.jumps else math.inf
        if abs(ri) < 1e-9 and 0 < k <= self.jumps and self._hold(dt, self.s.settle_time):
            return self.r  # settle in the stance before the next jump (and after the last)
        slow = self._recovering and ri < pt[4] - 1e-9  # the re-catch's replay of phase 4
        nxt = self.r + (dt * self.s.recovery_rate if slow else dt)
        for stop in (base + pt[3], base + pt[4], boundary):
            if self.r < stop < nxt - 1e-12 or (stop == nxt and stop == boundary):
                nxt = stop
                break
        if nxt != self.r:
            self._held = 0.0
        if self.r < base + pt[4] - 1e-9 and abs(nxt - base - pt[4]) < 1e-9:
            self._catch_time = self._time
        self.r = nxt
        return self.r

    def _start_recovery(self, base: float) -> bool:
        """Begin the next rear re-catch try if one is left; whether it began."""
        if self._attempts >= self.s.recovery_attempts:
            return False
        pt = self.phase_times
        rewind = min(self.s.recovery_rewind, 0.8 * (pt[4] - pt[3])) if self._attempts else 0.0
        self._rewind_to = base + pt[4] - rewind
        self._recovering, self._held = True, 0.0
        self._attempts += 1
        self._commands.append((1, "rearm"))
        return True

    def _rewind(self, dt: float, switches: tuple[bool, bool], base: float) -> float:
        """One tick of winding the reference back towards ``_rewind_to``; a rear catch
        made meanwhile stops the re-catch where it is."""
        if switches[1]:
            self._rewind_to, self._recovering = None, False
            return self.r
        self.r = max(self.r - dt * self.s.recovery_rate, self._rewind_to)
        if self.r <= self._rewind_to + 1e-12:
            self._rewind_to = None
            if abs(self.r - base - self.phase_times[4]) < 1e-9:
                self._catch_time = self._time  # back at the catch pose: its hold starts
        return self.r


def make_clock(name: str, period: float, phase_times, jumps: int,
               settings: EventTriggeredSettings | None = None) -> ReferenceClock:
    """The clock of a named controller (see :data:`CONTROLLERS`)."""
    if name == "open-loop":
        return OpenLoop(period, phase_times, jumps)
    if name == "closed-loop":
        return EventTriggered(period, phase_times, jumps, settings)
    raise ConfigError(f"controller {name!r} unknown; allowed: {CONTROLLERS}")
