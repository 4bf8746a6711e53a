"""Trajectory options that buy landing margin, and the defaults ``optimize --robust`` uses.

Each option is an ordinary setting of :class:`~clamber.jumper.settings.OptimizationSettings`
(no new constraint rows): the optimum trades nominal speed for time and slack at the
catches. Measured in the calibrated simulator (docs/results/jumper_landing.md):

* ``phase_duration_min[3]``: a longer phase 4 gives the joints time to settle after the
  front catch before the rear gripper lands (the paper's hand tuning); the default
  optimum sits at the 45 ms bound and its rear gripper tears off at impact;
* ``catch_approach_speed``: the catching gripper must move into the wall; measured
  inactive on the nominal robot (its catches already approach faster than 0.3 m/s);
* ``torque_rate_weight``: smoother torques, fewer direction changes in flight;
* ``release_force_max``: each gripper lets go of the wall nearly unloaded (|f| <= 0.5 N
  at its release node). The robust optimum without it released the rear gripper under
  3.3 N, and the unloading kick at take-off varied from robot to robot: in 100 seeded
  closed-loop ten-jump climbs (same seeds) 65 succeeded without the bound, 76 with 1.5 N,
  81 with 0.5 N, at the same speed (0.516 -> 0.514 m/s).

One option is a constraint term, not a setting: :data:`ROBUST_SCENARIOS`
(:class:`~clamber.jumper.formulation.scenarios.MassScenarios`) keeps the free front foot
off the wall after take-off on a robot with a 12.5 % lighter shoulder motor too, where
the optimum alone only grazed it on the nominal robot. :func:`optimize_robust` solves
with it: at the earlier calibration (tolerances 0.75 x, m2 7.5 % lower) in 200 seeded
closed-loop ten-jump climbs (same seeds) 77 succeeded without it and 89 with it (front
misses 35 -> 1), at 0.1 % of the speed (0.5143 -> 0.5138 m/s);
docs/results/jumper_landing.md has the figures at the present calibration.

**The margin as a design target.** :func:`clearance_scenarios` sizes that scenario from a
mass tolerance, so ``optimize --robust --tol-scale X`` holds the clearance at X times the
calibrated scatter; :func:`with_design_tol_scale` records X in the solution's history,
where ``robustness`` reads it back (docs/results/robust_pareto.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from clamber import _validate as check
from clamber.jumper.formulation.problem import DEFAULT_TERMS
from clamber.jumper.formulation.scenarios import MassScenarios
from clamber.jumper.formulation.terms import TermGroup
from clamber.jumper.morphology import Morphology
from clamber.jumper.settings import OptimizationSettings
from clamber.jumper.solution import TrajectorySolution
from clamber.jumper.solve import optimize, solve

#: The robust defaults: phase 4 at least 100 ms [s] (chosen by ready rate in the calibrated
#: simulator against 45, 80, 100 and 120 ms) and grippers released under at most 0.5 N
#: (chosen by ten-jump climbs against none and 1.5 N; docs/results/jumper_landing.md).
ROBUST_CHANGES: dict[str, Any] = {
    "phase_duration_min": (0.090, 0.045, 0.075, 0.100, 0.060),
    "release_force_max": 0.5,
}


def robust_settings(base: OptimizationSettings | None = None) -> OptimizationSettings:
    """``base`` (default settings if None) with the robust options applied.

    A phase-4 minimum above ``base``'s own, or a release-force bound below it, is kept.
    """
    base = base or OptimizationSettings()
    lo = tuple(max(a, b) for a, b in zip(base.phase_duration_min,
                                         ROBUST_CHANGES["phase_duration_min"], strict=True))
    release = ROBUST_CHANGES["release_force_max"]
    if base.release_force_max is not None:
        release = min(release, base.release_force_max)
    return base.with_(phase_duration_min=lo, release_force_max=release)


def clearance_scenarios(mass_rel: float) -> MassScenarios:
    """The take-off clearance of ``optimize --robust`` for robots whose masses scatter by
    ``mass_rel`` [-] (half-width of a uniform scatter, below 0.5): the front foot clears
    the wall over the first 35 % of the flight on the nominal robot and on one whose
    shoulder motor mass m2 is lower by twice ``mass_rel`` (m2 moves that clearance most,
    docs/results/jumper_landing.md)."""
    check.number("robust", "mass_rel", mass_rel, low=0.0, high=0.5, high_open=True)
    return MassScenarios(scales=((1.0, 1.0 - 2.0 * mass_rel, 1.0, 1.0, 1.0),),
                         flight_share=0.35)


#: The clearance of ``optimize --robust`` at the calibrated mass tolerance (1.25 x 5 %):
#: m2 12.5 % lower.
ROBUST_SCENARIOS = clearance_scenarios(0.0625)
#: The same clearance at the earlier calibration's tolerance (m2 7.5 % lower): the take-off
#: clearance of the tuned hardware jump (``clamber.experiments.calibration``), fixed before
#: that calibration so that the calibration does not depend on its own result.
TUNED_SCENARIOS = MassScenarios(scales=((1.0, 0.925, 1.0, 1.0, 1.0),), flight_share=0.35)


def robust_terms(base: Sequence[TermGroup] = DEFAULT_TERMS,
                 scenarios: MassScenarios = ROBUST_SCENARIOS) -> tuple[TermGroup, ...]:
    """``base`` term groups with ``scenarios`` (:data:`ROBUST_SCENARIOS`) added."""
    return (*base, scenarios)


def optimize_robust(morphology: Morphology, settings: OptimizationSettings | None = None,
                    resolution: str = "fine", guess: str | TrajectorySolution = "seed",
                    seed: int = 0,
                    scenarios: MassScenarios = ROBUST_SCENARIOS) -> TrajectorySolution:
    """The robust optimum: :func:`~clamber.jumper.solve.optimize` with
    :func:`robust_settings` of ``settings``, then :func:`with_clearance_scenarios` with
    ``scenarios`` (:func:`clearance_scenarios` of the tolerance to hold).
    """
    s = robust_settings(settings)
    first = optimize(morphology, s, resolution, guess, seed)
    if not first.status.success:
        return first
    return with_clearance_scenarios(morphology, first, s, resolution, scenarios=scenarios)


#: The history key of the tolerance scale a robust design was made to hold [-].
DESIGN_TOL_SCALE = "design_tol_scale"


def with_design_tol_scale(sol: TrajectorySolution, tol_scale: float) -> TrajectorySolution:
    """A copy of ``sol`` whose history records that it was designed to hold ``tol_scale``
    times the calibrated tolerances (kept through save and load)."""
    scale = check.in_range("robust", "tol_scale", tol_scale, "design_tolerance_scale")
    return replace(sol, history=[*sol.history, {DESIGN_TOL_SCALE: scale}])


def design_tol_scale(sol: TrajectorySolution) -> float | None:
    """The tolerance scale ``sol`` was designed to hold: the last one its history records,
    None for a solution that records none (not designed for a margin, or older)."""
    for entry in reversed(sol.history):
        if isinstance(entry, dict) and DESIGN_TOL_SCALE in entry:
            return check.in_range("history", DESIGN_TOL_SCALE, entry[DESIGN_TOL_SCALE],
                                  "design_tolerance_scale")
    return None


def with_clearance_scenarios(morphology: Morphology, first: TrajectorySolution,
                             settings: OptimizationSettings,
                             resolution: str = "fine",
                             base: Sequence[TermGroup] = DEFAULT_TERMS,
                             scenarios: MassScenarios = ROBUST_SCENARIOS) -> TrajectorySolution:
    """One solve of ``morphology`` with ``scenarios`` added to ``base``, warm-started from
    ``first`` (an optimum of ``settings`` on the ``resolution`` grid).

    The scenario solve uses the 'reference' backend: the term plays the push-off as a chain
    of Runge-Kutta steps whose exact Hessian generates too much C code to compile. If it
    does not converge, ``first`` is returned with its history noting the attempt.
    """
    sol = solve(morphology, settings.with_(backend="reference"), resolution, first,
                terms=robust_terms(base, scenarios))
    if not sol.status.success:
        first.history = first.history + [dict(sol.history[-1], scenarios="failed")]
        return first
    sol.settings = settings  # the optimizer's settings, not the backend this solve needed
    sol.history[-1]["scenarios"] = repr(scenarios)
    sol.history = first.history + sol.history
    return sol
