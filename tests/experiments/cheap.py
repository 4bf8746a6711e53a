"""A cheap, deterministic stand-in for the trajectory optimization, for driver tests.

It scores a morphology by a smooth analytic speed that rewards the paper's three trends
(spine mass, short distal links, longer front links) and declares a failed solve when
the second link is short, so that failures and penalties happen in every run.
:func:`warm_fitness` also depends on the warm start and returns a trajectory, as real
solves do, so that the choice of warm start shows in the results.
"""

import dataclasses
import math
import os
import signal
import time
from pathlib import Path

import numpy as np

from clamber.experiments.fitness import CandidateResult, CandidateTask
from clamber.experiments.landing_fitness import race
from clamber.experiments.record import TrialOutcome
from clamber.failures import FailureReason
from clamber.jumper.seed import seed_solution

#: When set, the worker evaluating candidate (0, 1) kills its own process once, the first
#: time, and leaves this file behind as the mark that it did.
KILL_MARKER_ENV = "CLAMBER_TEST_KILL_MARKER"
#: Seconds each evaluation sleeps, so that an outside kill can land mid-run.
DELAY_ENV = "CLAMBER_TEST_DELAY"


def analytic_speed(task: CandidateTask) -> float:
    L1, L2, L3, L4 = task.morphology.lengths
    _, m2, m3, m4, _ = task.morphology.masses
    return (0.4 + 2.0 * (m3 - 0.5 * (m2 + m4)) - 1.5 * (L1 + L4 - 0.08)
            + 1.0 * ((L1 + L2) - (L3 + L4)) - 20.0 * (L2 - 0.09) ** 2)


def cheap_fitness(task: CandidateTask) -> CandidateResult:
    marker = os.environ.get(KILL_MARKER_ENV)
    if marker and (task.generation, task.index) == (0, 1) and not Path(marker).exists():
        Path(marker).write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    delay = float(os.environ.get(DELAY_ENV, "0"))
    if delay:
        time.sleep(delay)
    if task.morphology.lengths[1] < 0.06:
        return CandidateResult(success=False, status="infeasible", speed_mps=math.nan,
                               solve_time_s=0.001, wall_time_s=0.001, guess="seed")
    return CandidateResult(success=True, status="converged", speed_mps=analytic_speed(task),
                           solve_time_s=0.001, wall_time_s=0.001,
                           guess="warm" if task.guess is not None else "seed")


def warm_fitness(task: CandidateTask) -> CandidateResult:
    """:func:`cheap_fitness` plus a bonus of half the warm start's first link length [m/s]
    (no bonus without one); a converged candidate returns the packaged seed trajectory
    relabelled with its own design, which the run stores and later loads as a warm start."""
    base = cheap_fitness(task)
    if not base.success:
        return base
    bonus = 0.0 if task.guess is None else 0.5 * task.guess.morphology.lengths[0]
    solution = dataclasses.replace(seed_solution(), morphology=task.morphology)
    return dataclasses.replace(base, speed_mps=base.speed_mps + bonus, solution=solution)


def start_fitness(task: CandidateTask) -> CandidateResult:
    """:func:`cheap_fitness` of one start: start k adds ``0.01 * ((k + index) % 3)`` m/s
    (so a different start wins for different candidates), start 2 of candidate 0 fails,
    and the worker's random sleep makes starts finish out of order."""
    k = 0 if task.start is None else task.start
    time.sleep(0.002 * ((task.index * 7 + k * 3) % 5))
    base = cheap_fitness(task)
    if not base.success or (task.index == 0 and k == 2):
        return dataclasses.replace(base, success=False, status="infeasible",
                                   speed_mps=math.nan, guess=f"start{k}")
    return dataclasses.replace(base, speed_mps=base.speed_mps + 0.01 * ((k + task.index) % 3),
                               guess=f"start{k}", info={"cpu_time_s": 0.5})


def landing_fitness(task: CandidateTask) -> CandidateResult:
    """:func:`cheap_fitness` with a made-up ready rate that falls with the speed, scored
    by speed x ready rate as the robust fitness is (for the report's Pareto figure)."""
    base = cheap_fitness(task)
    if not base.success:
        return base
    ready = max(0.0, min(1.0, 1.5 - 2.0 * base.speed_mps))
    return dataclasses.replace(base, fitness_mps=base.speed_mps * ready,
                               info={"ready_rate": ready, "cpu_time_s": 0.1})


def made_up_climbs(task: CandidateTask, trials: int, jumps: int) -> list[TrialOutcome]:
    """Seeded made-up climbs of a candidate: each jump lands ready with a probability
    that falls with the speed, a climb stops at its first failure (no simulation)."""
    rng = np.random.default_rng((task.generation, task.index, task.start or 0))
    p = max(0.05, min(0.98, 1.6 - 2.0 * analytic_speed(task)))
    out = []
    for _ in range(trials):
        ready = 0
        while ready < jumps and rng.random() < p:
            ready += 1
        out.append(TrialOutcome(ready == jumps, None if ready == jumps else FailureReason.FELL,
                                "", {"first_ready": ready > 0, "ready_jumps": ready}))
    return out


def race_fitness(task: CandidateTask) -> CandidateResult:
    """:func:`cheap_fitness` scored as the robust fitness scores a candidate (speed x the
    fraction of jumps landed ready) from :func:`made_up_climbs`, raced against
    ``task.beat`` when the fitness races; the record keeps the threshold it was given."""
    base = cheap_fitness(task)
    if not base.success:
        return base
    f = task.fitness
    climbs = made_up_climbs(task, f.landing_trials, f.landing_jumps)
    tally = race(climbs, base.speed_mps, f.landing_trials, f.landing_jumps,
                 task.beat if f.landing_race else None)
    expected = base.speed_mps * tally.ready_jumps / (tally.done * f.landing_jumps)
    return dataclasses.replace(base, fitness_mps=expected, info={
        "beat": task.beat, "landing_trials_run": tally.done, "raced": tally.raced,
        "solve_cpu_s": 0.005, "landing_cpu_s": 0.01 * tally.done,
        "cpu_time_s": 0.005 + 0.01 * tally.done})
