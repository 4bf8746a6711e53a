"""The controller comparison and its ablations: tuned gains, scenarios, held-out seeds, tables.

One run (:func:`run_comparison`) tunes the three controllers with one procedure
(:mod:`clamber.quadruped.tuning`, training seeds 1000+), then runs every (scenario,
controller) cell on the evaluation seeds (0, 1, ...; no tuning step used them). Ablations run
with the tuned gains of their parent controller. Every trial is a pure function of its task
``(controller, scenario, seed, gains)``; the trials of all cells share one process pool, and
the results do not depend on the number of workers.

Cell statistics: successes with the Wilson 95 % interval (``scipy.stats.binomtest``); the
maximum body error, mean and peak power over the *completed* climbs only (the same motion
for every controller; "-" when none completed); the peak gripper load as the largest gauge
of a gripper's wrench in its achievable set (1 = on the boundary; median and maximum over all
trials); the share of control cycles in which a wrench-QP gripper limit was active; and
where failed trials failed (gait phase, swing leg).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy.stats import binomtest

from clamber.exceptions import ConfigError
from clamber.quadruped.scenarios import SCENARIOS, scenario
from clamber.quadruped.sim.grippers import DEFAULT_SOLE, SoleCompliance
from clamber.quadruped.trials.climb import ClimbSettings, run_climb
from clamber.quadruped.trials.result import TrialResult
from clamber.quadruped.tuning import Evaluator, TuningResult, TuningSpec, tune
from clamber.quadruped.variants import ABLATIONS, GAINS, check_name, parent

#: The compared controllers, then the ablations.
MAIN = tuple(GAINS)
ABLATION_ROWS = ("qwbc", "qwbc-nolimits", "qwbc-noweights", "qwbc-noramp", "qwbc-notorque",
                 "vmc", "vmc-plain", "clik", "clik-plain")

Gains = dict[str, tuple[tuple[str, float], ...]]
#: The paper's 70-degree successes out of 5 (hardware).
PAPER_70 = {"qwbc": (5,), "clik": (3,), "vmc": (3,)}
#: The tuning procedure of the comparison.
DEFAULT_TUNING = TuningSpec()


def scenario_settings(name: str, **kwargs):
    """:class:`~clamber.quadruped.trials.climb.ClimbSettings` of scenario ``name``; keyword
    arguments (controller, gains, gait, ...) are passed on."""
    sc = scenario(name)
    return ClimbSettings(incline_deg=sc.incline_deg, heading_deg=sc.heading_deg, rocks=sc.rocks,
                         disturbance=sc.disturbance, scenario=sc.name, **kwargs)


def simulated_evaluator(workers: int = 0, cycles: int = 1) -> Evaluator:
    """The evaluator of the comparison: seeded climbs of the scenario (breakable grippers)."""
    def evaluate(controller, gains, scenario, seeds):
        settings = scenario_settings(scenario, controller=controller, gains=gains)
        settings = replace(settings, gait=replace(settings.gait, cycles=cycles))
        return [(r.success, r.max_tracking_error_mm)
                for r in run_settings(settings, list(seeds), workers)]
    return evaluate


def _job(job: tuple[str, ClimbSettings, int]) -> TrialResult:
    """One climbing trial of a ``("climb", settings, seed)`` job."""
    return run_climb(job[1], job[2])[0]


def run_settings(settings: ClimbSettings, seeds: Sequence[int],
                 workers: int = 0) -> list[TrialResult]:
    """Trials of one setting on ``seeds``, in their order, for any number of workers."""
    jobs = [("climb", settings, s) for s in seeds]
    if workers <= 0:
        return [_job(j) for j in jobs]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(_job, jobs))


def run_cells(cells: Sequence[tuple[str, str]], seeds: Sequence[int], gains: Gains,
              workers: int = 0, cycles: int = 1,
              sole: SoleCompliance | None = DEFAULT_SOLE,
              physics_dt: float = 0.004) -> dict[tuple[str, str], list]:
    """Trials of every ``(scenario, controller)`` cell on ``seeds`` with the gains of each
    controller's parent; ``workers`` processes (0: this process); physics step [s]."""
    jobs = []
    for sc, name in cells:
        check_name(name)
        settings = scenario_settings(sc, controller=name, gains=gains.get(parent(name), ()),
                                     sole=sole, physics_dt=physics_dt)
        settings = replace(settings, gait=replace(settings.gait, cycles=cycles))
        jobs += [(("climb", settings, s), (sc, name)) for s in seeds]
    if workers <= 0:
        results = [_job(j) for j, _ in jobs]
    else:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(_job, [j for j, _ in jobs], chunksize=1))
    out: dict[tuple[str, str], list] = {c: [] for c in cells}
    for (_, key), r in zip(jobs, results, strict=True):
        out[key].append(r)
    return out


def summarize_cell(results: list[TrialResult]) -> dict:
    """Statistics of one cell (see the module docstring)."""
    if not results:
        raise ConfigError("no trials to summarize")
    n, ok = len(results), [r for r in results if r.success]
    ci = binomtest(len(ok), n).proportion_ci(method="wilson")
    loads = [r.peak_gripper_load for r in results]
    active = [r.limit_active_fraction for r in results if math.isfinite(r.limit_active_fraction)]
    where = Counter(f"{r.reason.split(' at ')[0]} ({r.failure_phase})" for r in results
                    if not r.success)
    return {
        "trials": n, "successes": len(ok), "success_ci95": [float(ci.low), float(ci.high)],
        "max_tracking_error_mm": float(np.mean([r.max_tracking_error_mm for r in ok]))
        if ok else None,
        "worst_tracking_error_mm": float(max(r.max_tracking_error_mm for r in ok))
        if ok else None,
        "mean_power_w": float(np.mean([r.mean_power_w for r in ok])) if ok else None,
        "peak_power_w": float(max(r.peak_power_w for r in ok)) if ok else None,
        "peak_gripper_load_median": float(np.median(loads)),
        "peak_gripper_load_max": float(max(loads)),
        "planned_load_max": float(max(r.planned_load for r in results)),
        "limit_active_fraction": float(np.mean(active)) if active else None,
        "failed_at_m": [round(r.failure_distance_m, 3) for r in results if not r.success],
        "failures": dict(where),
        "sim_time_s": float(sum(r.sim_time_s for r in results)),
        "wall_time_s": float(sum(r.wall_time_s for r in results)),
    }


def tune_all(spec: TuningSpec, workers: int = 0, cycles: int = 1) -> dict[str, TuningResult]:
    """The tuning procedure, identically for every controller of ``MAIN``."""
    evaluate = simulated_evaluator(workers, cycles)
    return {c: tune(c, spec, evaluate) for c in MAIN}


def run_comparison(trials: int, scenarios: Sequence[str], controllers: Sequence[str] = MAIN,
                   seed: int = 0, workers: int = 0, cycles: int = 1,
                   tuning: TuningSpec | None = DEFAULT_TUNING, gains: Gains | None = None,
                   sole: SoleCompliance | None = DEFAULT_SOLE,
                   physics_dt: float = 0.004) -> dict:
    """Tune (unless ``gains`` are given or ``tuning`` is None: class defaults), then run every
    cell on seeds ``seed .. seed + trials - 1``. Returns the gains, the tuning record, the
    cell summaries keyed ``"controller@scenario"`` and every trial."""
    for sc in scenarios:
        if sc not in SCENARIOS:
            raise ConfigError(f"unknown scenario {sc!r}; scenarios are {', '.join(SCENARIOS)}")
    record = {}
    if gains is None:
        if tuning is None:
            gains = {}
        else:
            tuned = tune_all(tuning, workers, cycles)
            gains = {c: t.best.gains for c, t in tuned.items()}
            record = {c: t.to_dict() for c, t in tuned.items()}
    if set(range(seed, seed + trials)) & set(tuning.seeds if tuning else ()):
        raise ConfigError("evaluation seeds overlap the tuning seeds")
    cells = [(sc, c) for sc in scenarios for c in controllers]
    results = run_cells(cells, list(range(seed, seed + trials)), gains, workers, cycles, sole,
                        physics_dt)
    return {"gains": {c: dict(g) for c, g in gains.items()}, "tuning": record,
            "cells": {f"{c}@{sc}": summarize_cell(rs) for (sc, c), rs in results.items()},
            "trials": [r for rs in results.values() for r in rs]}


def _num(x, fmt: str = ".1f") -> str:
    return "-" if x is None else format(x, fmt)


def cell_table(cells: dict[str, dict], rows: Sequence[str], scenarios: Sequence[str]) -> str:
    """Markdown table: one row per (scenario, controller) cell."""
    lines = ["| scenario | controller | success (95 % CI) | max body error [mm] (worst) "
             "| mean / peak power [W] | peak gripper load / capacity (median, max) "
             "| QP limit active [% cycles] | where failed trials failed |",
             "|---|---|---|---|---|---|---|---|"]
    for sc in scenarios:
        for c in rows:
            s = cells.get(f"{c}@{sc}")
            if s is None:
                continue
            lo, hi = s["success_ci95"]
            paper = ""
            if sc == "wall70" and c in PAPER_70:
                paper = f" [paper {PAPER_70[c][0]}/5]"
            act = s["limit_active_fraction"]
            fails = "; ".join(f"{k}: {v}" for k, v in sorted(s["failures"].items())) or "-"
            lines.append(
                f"| {sc} | {c} | {s['successes']}/{s['trials']} ({lo:.2f}-{hi:.2f}){paper} | "
                f"{_num(s['max_tracking_error_mm'], '.2f')} "
                f"({_num(s['worst_tracking_error_mm'], '.2f')}) | "
                f"{_num(s['mean_power_w'])} / {_num(s['peak_power_w'])} | "
                f"{s['peak_gripper_load_median']:.2f}, {s['peak_gripper_load_max']:.2f} | "
                f"{'-' if act is None else format(100 * act, '.1f')} | {fails} |")
    return "\n".join(lines)


def plot_loads(trials: list[TrialResult], path: str | Path, title: str = "") -> Path:
    """Per-trial peak gripper load (gauge in the achievable set) and planned load (over the
    controllers' box) for every controller and scenario: how close each comes to its limits."""
    import matplotlib.pyplot as plt

    scenarios = list(dict.fromkeys(r.setting for r in trials))
    names = list(dict.fromkeys(r.controller for r in trials))
    fig, axes = plt.subplots(1, 2, figsize=(12, 0.5 + 0.35 * len(scenarios) * len(names)),
                             sharey=True)
    labels = []
    for row, (sc, c) in enumerate((sc, c) for sc in scenarios for c in names):
        rs = [r for r in trials if r.setting == sc and r.controller == c]
        labels.append(f"{c} @ {sc}")
        for ax, key in zip(axes, ("peak_gripper_load", "planned_load"), strict=True):
            x = [getattr(r, key) for r in rs]
            colours = ["tab:green" if r.success else "tab:red" for r in rs]
            ax.scatter(x, np.full(len(x), row) + np.linspace(-0.25, 0.25, len(x)), s=10,
                       c=colours)
    axes[0].axvline(1.0, color="k", lw=1)
    axes[0].set_xlabel("peak gripper wrench gauge in the achievable set (1 = breaks)")
    axes[1].axvline(1.0, color="k", lw=1)
    axes[1].set_xlabel("peak planned wrench / controllers' box (per axis; 1 = box limit)")
    axes[0].set_yticks(range(len(labels)), labels, fontsize=7)
    axes[0].invert_yaxis()
    fig.suptitle(title or "Gripper loads against their limits (green: completed, red: failed)")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


__all__ = ["ABLATIONS", "ABLATION_ROWS", "MAIN", "cell_table", "plot_loads", "run_cells",
           "run_comparison", "summarize_cell", "tune_all"]
