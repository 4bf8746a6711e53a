"""Spined gripper on the wall: capture window, pin while hooked, release, tear-off.

The model is a small state machine per gripper, independent of the physics engine:

* ``HOOKED``: pinned to the wall (a MuJoCo ``connect`` constraint in the simulator).
  It leaves this state when the release is commanded (-> ``FREE``) or when its wall
  force stays outside the safe region by more than ``tear_margin`` for ``tear_time``
  (-> ``TORN``, the spines ripped out; the schedule may arm it again like a free one).
* ``FREE``: not touching or sliding. Armed by the schedule (the catch is expected), a
  free gripper hooks the first time it enters the :class:`CaptureWindow`.

The capture window is what spines need to engage (approximation: all-or-nothing):
the gripper centre within ``distance`` of its attached position (``x = foot_radius``),
its speed at most ``max_speed``, the approach speed into the wall at most
``max_normal_speed`` (faster impacts bounce), and the distal link (joint -> gripper)
within ``max_angle_deg`` of the inward wall normal (-x), so the spines face the wall.

The foot itself pivots passively on the gripper (:class:`FootPivot`, the paper's wrist
with a weak rubber-band return spring): a sharp deceleration of the distal link flips
the foot, whose centre of mass sits off the pivot, and the spines then face away from
the wall. The front foot's spar stops that flip early; the rear foot has no spar. A
free foot hooks only while its sole is within ``capture_angle`` of the wall.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, replace

from clamber import _validate as check
from clamber.attachment.safe_region import SafeRegion
from clamber.exceptions import ConfigError


class GripperState(enum.Enum):
    """Where a gripper stands."""

    HOOKED = "hooked"
    FREE = "free"
    TORN = "torn"


@dataclass(frozen=True)
class CaptureWindow:
    """When a free, armed gripper hooks on (units in brackets)."""

    distance: float = 0.001
    """Largest gap between the gripper disc and the wall [m]."""
    max_speed: float = 3.0
    """Largest gripper speed [m/s]: faster spines skid over the asperities."""
    max_normal_speed: float = 1.5
    """Largest approach speed into the wall [m/s]: faster impacts bounce off."""
    max_angle_deg: float = 80.0
    """Largest angle between the distal link and the inward wall normal [deg]."""
    tear_margin: float = 2.0
    """Safe-region violation [N] beyond which the spines start to rip out."""
    tear_time: float = 0.005
    """How long the violation must last to tear the gripper off [s] (impact spikes pass)."""

    def __post_init__(self) -> None:
        check.numeric_fields(self, "capture",
                             names=("distance", "max_speed", "max_normal_speed", "max_angle_deg",
                                    "tear_margin", "tear_time"))
        if self.max_angle_deg > 180:
            raise ConfigError(f"capture.max_angle_deg = {self.max_angle_deg}: must be <= 180")

    def accepts(self, gap: float, vx: float, vy: float, link_dx: float, link_dy: float) -> bool:
        """Whether a gripper hooks.

        ``gap`` [m] between disc and wall, velocity ``(vx, vy)`` [m/s], and the distal
        link vector ``(link_dx, link_dy)`` from the adjacent joint to the gripper [m].
        """
        if gap > self.distance:
            return False
        if vx * vx + vy * vy > self.max_speed * self.max_speed:
            return False
        if -vx > self.max_normal_speed:
            return False
        norm = math.hypot(link_dx, link_dy)
        if norm == 0.0:
            return False
        cos_angle = -link_dx / norm
        return cos_angle >= math.cos(math.radians(self.max_angle_deg))


@dataclass(frozen=True)
class FootPivot:
    r"""Passive wrist of a spined foot (units in brackets).

    One rotational degree of freedom per free foot, driven by the measured acceleration
    of its pivot (one-way coupled: the 10 g foot's reaction on the robot is neglected):

    .. math:: I \ddot\beta = -k (\beta - \beta_{rest}) - c (\dot\beta - \dot\phi)
              + m r_c [\sin\beta\, a_x - \cos\beta\, (a_y + g)]

    with ``beta`` the direction of the foot's centre of mass from the pivot, ``phi`` the
    distal link's angle, ``beta_rest = phi + psi_rest`` (the spring holds the sole flush
    with the wall at the optimized catch pose) and ``I = 1.5 m r_c^2`` (a plate about its
    edge, an approximation). The spar (front) or the foot's body (rear) stops
    ``|beta - beta_rest|`` at a hard, inelastic limit.
    """

    com_offset: float = 0.008
    """r_c: pivot to the foot's centre of mass [m] (close to the wall, as in the paper)."""
    spring: float = 0.004
    """k: return spring [N m/rad]; weak: about 5 times the foot's own gravity torque."""
    damping: float = 2e-5
    """c: pivot friction [N m s/rad]."""
    spar_angle: float = 0.35
    """Front foot's largest rotation off its rest angle, set by the spar [rad]."""
    rear_stop_angle: float = 1.2
    """Rear foot's largest rotation (no spar; its body hits the link) [rad]."""
    capture_angle: float = 0.6
    """Largest sole-to-wall angle at which the spines engage [rad]."""

    def __post_init__(self) -> None:
        check.numeric_fields(self, "pivot",
                             names=("com_offset", "spring", "damping", "spar_angle",
                                    "rear_stop_angle", "capture_angle"))
        if self.com_offset <= 0:
            raise ConfigError(f"pivot.com_offset = {self.com_offset}: must be > 0")

    def with_rear_spar(self) -> FootPivot:
        """The same feet with a spar on the rear foot too, at the front spar's angle: a
        hardware option (the paper's rear foot has none) that keeps the rear sole within
        its capture angle while it swings to the wall (docs/results/jumper_landing.md)."""
        return replace(self, rear_stop_angle=self.spar_angle)


class FootState:
    """Angle of one free foot, integrated at the ESC rate (semi-implicit Euler)."""

    def __init__(self, pivot: FootPivot, mass: float, rest_offset: float, stop: float) -> None:
        self.k, self.c = pivot.spring, pivot.damping
        self.mr = mass * pivot.com_offset
        self.inertia = 1.5 * mass * pivot.com_offset ** 2
        self.rest_offset = rest_offset  # psi_rest [rad]
        self.stop = stop
        self.capture_angle = pivot.capture_angle
        self.beta = math.pi  # flush with the wall: centre of mass toward it
        self.rate = 0.0

    def flush(self) -> None:
        """Hooked: the sole lies on the wall."""
        self.beta, self.rate = math.pi, 0.0

    def step(self, dt: float, phi: float, phi_rate: float, ax: float, ay: float) -> None:
        """Advance ``dt`` [s]: link angle ``phi`` [rad], its rate, pivot accel [m/s^2]."""
        rel = self.beta - phi - self.rest_offset
        rel = (rel + math.pi) % (2 * math.pi) - math.pi
        torque = (-self.k * rel - self.c * (self.rate - phi_rate)
                  + self.mr * (math.sin(self.beta) * ax - math.cos(self.beta) * (ay + 9.81)))
        self.rate += dt * torque / self.inertia
        rel += dt * self.rate
        if abs(rel) > self.stop:
            rel = math.copysign(self.stop, rel)
            self.rate = phi_rate
        self.beta = phi + self.rest_offset + rel

    @property
    def sole_angle(self) -> float:
        """Angle between the sole and the wall [rad] (0: flush)."""
        return abs((self.beta - math.pi + math.pi) % (2 * math.pi) - math.pi)

    @property
    def faces_wall(self) -> bool:
        return self.sole_angle <= self.capture_angle


class Gripper:
    """State machine of one gripper; the simulator feeds it measurements each tick."""

    def __init__(self, name: str, region: SafeRegion, window: CaptureWindow, dt: float,
                 hooked: bool) -> None:
        self.name = name
        self.window = window
        self._rows = [(float(a[0]), float(a[1]), float(b)) for a, b in zip(region.A, region.b,
                                                                             strict=True)]
        self._tear_ticks = max(1, round(window.tear_time / dt))
        self._over = 0
        self.state = GripperState.HOOKED if hooked else GripperState.FREE
        self.hooked = hooked  # mirrors state is HOOKED (a plain attribute: read every tick)
        self.armed = False

    def violation(self, fx: float, fy: float) -> float:
        """Largest safe-region row violation [N] of the wall force ``(fx, fy)`` on the gripper."""
        worst = 0.0
        for ax, ay, b in self._rows:
            v = ax * fx + ay * fy - b
            if v > worst:
                worst = v
        return worst

    def release(self) -> None:
        """Commanded opening: the gripper lets go."""
        if self.state is GripperState.HOOKED:
            self.state = GripperState.FREE
            self.hooked = False
        self.armed = False
        self._over = 0

    def arm(self) -> None:
        """The schedule expects a catch: the next entry into the window hooks."""
        self.armed = True

    def try_capture(self, gap: float, vx: float, vy: float, link_dx: float,
                    link_dy: float) -> bool:
        """Hook if armed, free and inside the window; returns whether it hooked now."""
        if self.state is GripperState.HOOKED or not self.armed:
            return False
        if self.window.accepts(gap, vx, vy, link_dx, link_dy):
            self.state = GripperState.HOOKED
            self.hooked = True
            self.armed = False
            self._over = 0
            return True
        return False

    def check_force(self, fx: float, fy: float) -> bool:
        """Feed the hooked gripper's wall force [N]; returns True when it tears off now."""
        if self.state is not GripperState.HOOKED:
            return False
        if self.violation(fx, fy) > self.window.tear_margin:
            self._over += 1
            if self._over >= self._tear_ticks:
                self.state = GripperState.TORN
                self.hooked = False
                self._over = 0
                return True
        else:
            self._over = 0
        return False
