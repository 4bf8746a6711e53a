"""Fit a gripper's two-inequality safe region to hanging-weight trials (the paper's Fig. 4).

A trial hangs a weight ``W`` [N] from the gripper on a wall tilted so the pull leans
``theta`` [deg] from the vertical, and records whether the gripper held. The wall force
on the gripper is then ``f = W (-sin(theta), cos(theta))`` (wall frame of
:mod:`clamber.attachment.safe_region`): ``theta = 0`` is pure shear along the wall,
``theta = 90`` pure adhesion.

Method. The region is ``SafeRegion.sector(beta, T)``: the load leans at most ``beta``
from the wall and the wall-tangential load ``f_y`` is at most ``T``. Both boundaries are
monotone (a larger ``beta`` or ``T`` only adds trials), so the best region has its
boundaries on held trials: every pair (``beta`` = a held trial's angle, ``T`` = a held
trial's ``f_y``) is scored exhaustively,

    score = (held trials inside) - failed_weight * (failed trials inside),

and the best score wins, ties going to the smaller region. The default
``failed_weight = inf`` returns the region holding the most held trials and *no* failed
trial; a finite weight trades a few failures inside (scattered data, as with the paper's
low pivot) for many held ones. Putting the boundaries on the outermost accepted held
trials is conservative by construction (nothing is claimed beyond the evidence); the
optional margins shrink the region further, by an angle [deg] and a load fraction.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from clamber import _validate as v
from clamber.attachment.safe_region import SafeRegion
from clamber.attachment.spine_gripper import (
    STANDARD_GRAVITY,
    SpineGripperGeometry,
    SpineLimits,
    hanging_load,
    solve_statics,
)
from clamber.exceptions import ConfigError

LOAD_UNITS = ("N", "kg")


@dataclass(frozen=True)
class HangingTrial:
    """One hanging-weight trial: a weight ``load_n`` [N] pulling ``angle_deg`` [deg] off vertical.

    Attributes:
        load_n: Hanging weight in [N], > 0.
        angle_deg: Angle of the pull from the vertical in [deg], in [-180, 180]; positive
            angles pull away from the wall.
        held: Whether the gripper held the weight.
    """

    load_n: float
    angle_deg: float
    held: bool

    def __post_init__(self) -> None:
        v.positive("trial", "load_n", self.load_n)
        v.number("trial", "angle_deg", self.angle_deg, low=-180.0, high=180.0)
        if not isinstance(self.held, (bool, np.bool_)):
            raise ConfigError(f"trial held={self.held!r} is invalid; allowed: True or False")

    @classmethod
    def from_mass(cls, mass_kg: float, angle_deg: float, held: bool) -> HangingTrial:
        """A trial recorded as a hanging mass in [kg] (converted with standard gravity)."""
        return cls(float(mass_kg) * STANDARD_GRAVITY, float(angle_deg), bool(held))

    @property
    def wall_force(self) -> np.ndarray:
        """Force ``f`` [N] the wall applies on the gripper, shape (2,)."""
        return -hanging_load(self.load_n, self.angle_deg)


def trials_from_records(
    records: Iterable[Sequence], unit: str = "kg"
) -> list[HangingTrial]:
    """Trials from ``(load, angle_deg, held)`` records, the load in ``unit`` ("N" or "kg")."""
    if unit not in LOAD_UNITS:
        raise ConfigError(f"unit={unit!r} is invalid; allowed: {', '.join(LOAD_UNITS)}")
    scale = STANDARD_GRAVITY if unit == "kg" else 1.0
    trials = []
    for i, rec in enumerate(records):
        if len(rec) != 3:
            raise ConfigError(
                f"record {i} = {rec!r} is invalid; allowed: (load, angle_deg, held)"
            )
        load, angle, held = rec
        trials.append(HangingTrial(float(load) * scale, float(angle), bool(held)))
    return trials


def trial_forces(trials: Sequence[HangingTrial]) -> tuple[np.ndarray, np.ndarray]:
    """Wall forces [N] of the trials, shape (n, 2), and their held flags, shape (n,)."""
    loads = np.array([t.load_n for t in trials], dtype=float)
    angles = np.array([t.angle_deg for t in trials], dtype=float)
    held = np.array([bool(t.held) for t in trials], dtype=bool)
    return -hanging_load(loads, angles), held


@dataclass(frozen=True)
class SafeRegionFit:
    """A fitted safe region and how it classifies the trials it was fitted to.

    Attributes:
        region: ``SafeRegion.sector(angle_deg, max_load_n)``.
        angle_deg: Sector half-angle from the wall [deg].
        max_load_n: Cap on the wall-tangential load ``f_y`` [N].
        held_inside: Held trials inside the region (correctly accepted).
        held_outside: Held trials outside (conservatively rejected).
        failed_inside: Failed trials inside (wrongly accepted; 0 with the default weight).
        failed_outside: Failed trials outside (correctly rejected).
    """

    region: SafeRegion
    angle_deg: float
    max_load_n: float
    held_inside: int
    held_outside: int
    failed_inside: int
    failed_outside: int


def _in_sector(f: np.ndarray, angles_deg: np.ndarray) -> np.ndarray:
    """Membership of forces ``f`` (n, 2) in sectors of half-angles ``angles_deg`` (m,): (m, n)."""
    t = np.tan(np.radians(angles_deg))[:, None]
    return -f[None, :, 0] - t * f[None, :, 1] <= 1e-12 * (1.0 + np.abs(f[None, :, 0]))


def fit_safe_region(
    trials: Sequence[HangingTrial],
    failed_weight: float = math.inf,
    angle_margin_deg: float = 0.0,
    load_margin: float = 0.0,
) -> SafeRegionFit:
    """Fit the sector-and-cap safe region to hanging-weight trials (method in module doc).

    Args:
        trials: The trials; at least one must have held at an angle in (0, 90) deg.
        failed_weight: Cost of one failed trial inside the region, in held trials;
            ``inf`` (default) admits no failed trial.
        angle_margin_deg: Shrink the fitted sector by this much [deg], >= 0.
        load_margin: Shrink the fitted load cap by this fraction, in [0, 1).

    Returns:
        The region and its confusion counts on ``trials`` (after the margins).
    """
    if failed_weight != math.inf:
        v.positive("fit", "failed_weight", failed_weight)
    v.non_negative("fit", "angle_margin_deg", angle_margin_deg)
    v.number("fit", "load_margin", load_margin, low=0.0, high=1.0, high_open=True)
    if len(trials) == 0:
        raise ConfigError("trials is empty; allowed: at least one held trial")
    f, held = trial_forces(trials)
    angles = np.array([t.angle_deg for t in trials], dtype=float)

    # Candidate boundaries sit on held trials that a sector of angle in (0, 90) can hold.
    cand_angle = np.unique(angles[held & (angles > 0.0) & (angles < 90.0)])
    if cand_angle.size == 0:
        raise ConfigError(
            "no held trial leans off the wall at an angle in (0, 90) deg; "
            "allowed: trials with at least one such held pull"
        )
    cand_load = np.unique(f[held & (f[:, 1] > 0.0), 1])

    # Confusion counts for every (angle, load) pair: sector membership x cap membership.
    in_sector = _in_sector(f, cand_angle).astype(float)  # (n_angle, n)
    under_cap = (f[None, :, 1] <= cand_load[:, None]).astype(float)  # (n_load, n)
    held_in = (in_sector * held) @ under_cap.T
    failed_in = (in_sector * ~held) @ under_cap.T
    if math.isinf(failed_weight):
        score = np.where(failed_in == 0.0, held_in, -np.inf)
    else:
        score = held_in - failed_weight * failed_in
    # argmax picks the first maximum, i.e. the smallest angle then the smallest load.
    i_angle, i_load = np.unravel_index(np.argmax(score), score.shape)
    if not np.isfinite(score[i_angle, i_load]):
        raise ConfigError("every candidate region holds a failed trial; use a finite failed_weight")

    angle = float(cand_angle[i_angle]) - angle_margin_deg
    load = float(cand_load[i_load]) * (1.0 - load_margin)
    if angle <= 0.0:
        raise ConfigError(
            f"angle_margin_deg={angle_margin_deg!r} leaves no sector "
            f"(fitted angle {cand_angle[i_angle]:.3g} deg); allowed: a smaller margin"
        )
    region = SafeRegion.sector(angle, load)
    inside = region.contains(f, tol=1e-9)
    return SafeRegionFit(
        region=region,
        angle_deg=angle,
        max_load_n=load,
        held_inside=int(np.sum(inside & held)),
        held_outside=int(np.sum(~inside & held)),
        failed_inside=int(np.sum(inside & ~held)),
        failed_outside=int(np.sum(~inside & ~held)),
    )


def synthetic_trials(
    geometry: SpineGripperGeometry,
    limits: SpineLimits,
    masses_kg: Sequence[float],
    angles_deg: Sequence[float],
    seed: int = 0,
    strength_scatter: float = 0.0,
    repeats: int = 1,
) -> list[HangingTrial]:
    """Hanging-weight trials simulated with the spined gripper's statics, seeded.

    Every (mass, angle) pair is tried ``repeats`` times. A trial holds when the foot does
    not pitch and the spine force lies in the hook cone under the shear cap, the cap scaled
    per trial by ``max(0, 1 + strength_scatter * n)`` with ``n`` standard normal. A
    pitching foot holds with probability ``limits.pitched_hold_probability``. The same
    ``seed`` gives the same trials.

    Args:
        geometry: The foot under test.
        limits: What its spines hold.
        masses_kg: Hanging masses [kg], each > 0.
        angles_deg: Pull angles from the vertical [deg].
        seed: Seed of the random generator.
        strength_scatter: Relative standard deviation of the shear cap, >= 0.
        repeats: Trials per (mass, angle) pair, >= 1.
    """
    v.non_negative("synthetic_trials", "strength_scatter", strength_scatter)
    v.integer("synthetic_trials", "repeats", repeats, low=1)
    masses = np.asarray(masses_kg, dtype=float)
    if masses.size == 0 or np.any(~np.isfinite(masses)) or np.any(masses <= 0.0):
        raise ConfigError(f"masses_kg={masses_kg!r} is invalid; allowed: finite masses > 0 kg")
    m, a, _ = np.meshgrid(masses, np.asarray(angles_deg, dtype=float), np.arange(repeats),
                          indexing="ij")
    m, a = m.ravel(), a.ravel()
    rng = np.random.default_rng(seed)
    strength = np.maximum(0.0, 1.0 + strength_scatter * rng.standard_normal(m.size))
    lucky = rng.random(m.size) < limits.pitched_hold_probability
    statics = solve_statics(geometry, hanging_load(m * STANDARD_GRAVITY, a))
    held = np.where(statics.pitches, lucky, limits.spines_hold(statics, strength))
    return [
        HangingTrial(float(w) * STANDARD_GRAVITY, float(th), bool(h))
        for w, th, h in zip(m, a, held, strict=True)
    ]
