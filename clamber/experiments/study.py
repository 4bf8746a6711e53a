"""The study runner: seeded trial tasks on an evaluator, recorded as they finish.

A study is a list of conditions (the settings shared by a group of trials, e.g. one
controller on one wall) and, for each, a list of seeds. Each trial is a pure function of
its :class:`TrialTask`, so:

* the serial evaluator (``--workers 0``) is the reference: any parallel evaluator returns
  exactly the same records, in the same (group, index) order;
* with a run folder, every trial is written to its :class:`~clamber.storage.RunStore` the
  moment it finishes, and a killed study resumed on the same folder evaluates only the
  trials that are missing; finished trials are never run again or rewritten.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clamber.exceptions import ConfigError
from clamber.experiments.record import StudyTrial, TrialOutcome
from clamber.failures import FailureReason
from clamber.parallel.base import Evaluator, Outcome
from clamber.parallel.serial import SerialEvaluator
from clamber.storage.runs import RunStore, TrialState

#: ``progress(done, total)`` after every finished trial.
ProgressCallback = Callable[[int, int], None]


@dataclass(frozen=True)
class TrialTask:
    """Everything one trial needs: its condition (picklable settings), group, index, seed."""

    group: int
    index: int
    seed: int
    condition: Any


TrialFunction = Callable[[TrialTask], TrialOutcome]


@dataclass(frozen=True)
class Study:
    """A study's definition: its ``kind`` (the run store refuses to resume another kind),
    the JSON ``config`` that decides its results (a resume with another is refused with a
    diff), its ``conditions`` and the ``seeds`` every condition runs."""

    kind: str
    config: dict[str, Any]
    conditions: tuple[Any, ...]
    seeds: tuple[int, ...]
    trial: TrialFunction

    def __post_init__(self) -> None:
        if not self.conditions:
            raise ConfigError(f"{self.kind}: a study needs at least one condition")
        if not self.seeds:
            raise ConfigError(f"{self.kind}: a study needs at least one trial")

    def tasks(self) -> list[TrialTask]:
        return [TrialTask(g, i, s, c) for g, c in enumerate(self.conditions)
                for i, s in enumerate(self.seeds)]

    @property
    def size(self) -> int:
        return len(self.conditions) * len(self.seeds)


def run_study(study: Study, evaluator: Evaluator | None = None,
              run_dir: str | Path | None = None, resume: bool = False,
              progress: ProgressCallback | None = None,
              stop_after: int | None = None) -> list[StudyTrial]:
    """Run (or resume) ``study``; returns every recorded trial in (group, index) order.

    Without ``run_dir`` nothing is written. ``stop_after`` ends the session after that
    many new trials (a controlled interruption; the record stays resumable).
    """
    evaluator = evaluator or SerialEvaluator()
    store = None
    if run_dir is not None:
        opener = RunStore.open if resume else RunStore.create
        store = opener(run_dir, study.kind, study.config, record_type=StudyTrial)
    elif resume:
        raise ConfigError("resume needs the run folder of the study")
    try:
        done = {t.slot: t for t in store.trials()} if store else {}
        todo = [t for t in study.tasks() if (t.group, t.index) not in done]
        if progress is not None:
            progress(len(done), study.size)
        new = 0
        for k, outcome in evaluator.imap_unordered(_timed(study.trial), todo):
            trial = _record(todo[k], outcome)
            if store is not None:
                store.append(trial)
            done[trial.slot] = trial
            new += 1
            if progress is not None:
                progress(len(done), study.size)
            if stop_after is not None and new >= stop_after:
                break
        return [done[k] for k in sorted(done)]
    finally:
        if store is not None:
            store.close()


class _timed:
    """``fn`` wrapped to return ``(outcome, seconds)``, measured where the trial runs."""

    def __init__(self, fn: TrialFunction) -> None:
        self.fn = fn

    def __call__(self, task: TrialTask) -> tuple[TrialOutcome, float]:
        t0 = time.perf_counter()
        outcome = self.fn(task)
        return outcome, time.perf_counter() - t0


def _record(task: TrialTask, outcome: Outcome) -> StudyTrial:
    if not outcome.ok:
        lost = TrialOutcome(False, FailureReason.WORKER_LOST, outcome.error)
        return StudyTrial(task.group, task.index, task.seed, TrialState.LOST, lost,
                          outcome.attempts, math.nan)
    result, seconds = outcome.value
    return StudyTrial(task.group, task.index, task.seed, TrialState.COMPLETE, result,
                      outcome.attempts, seconds)


def group_trials(trials: Sequence[StudyTrial], groups: int) -> list[list[StudyTrial]]:
    """The trials of each condition, in index order."""
    out: list[list[StudyTrial]] = [[] for _ in range(groups)]
    for t in trials:
        out[t.group].append(t)
    return out


def failure_counts(trials: Sequence[StudyTrial]) -> dict[str, int]:
    """How often each failure reason occurred (by the reason's name)."""
    counts: dict[str, int] = {}
    for t in trials:
        if t.outcome.failure is not None:
            name = t.outcome.failure.name.lower()
            counts[name] = counts.get(name, 0) + 1
    return counts
