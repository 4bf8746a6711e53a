"""What one trial of a study leaves behind: a frozen record and why it failed."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from clamber.exceptions import FileFormatError
from clamber.failures import FailureReason
from clamber.storage.runs import TrialState


@dataclass(frozen=True)
class TrialOutcome:
    """What a trial function returns: success, the failure (None on success), a one-line
    detail and the trial's metrics (JSON numbers, booleans or strings; None when a metric
    was not measured)."""

    success: bool
    failure: FailureReason | None = None
    detail: str = ""
    metrics: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.success == (self.failure is not None):
            raise ValueError("a trial either succeeds or has a failure reason, not both")


@dataclass(frozen=True)
class StudyTrial:
    """One finished trial of a simulation study, as recorded: condition ``group``,
    ``index`` within it, its ``seed``, the evaluation's ``state`` (LOST when every worker
    running it died) and the outcome. Written once, never modified.

    The run store's other record, :class:`~clamber.storage.runs.CandidateTrial`, is one
    evaluated design of a co-design or sweep; both are
    :class:`~clamber.storage.runs.StoredTrial`."""

    group: int
    index: int
    seed: int
    state: TrialState
    outcome: TrialOutcome
    attempts: int = 1
    wall_time_s: float = math.nan

    @property
    def slot(self) -> tuple[int, int]:
        """The record's unique key in a run store."""
        return self.group, self.index

    @property
    def success(self) -> bool:
        return self.outcome.success

    @property
    def metrics(self) -> dict[str, Any]:
        return self.outcome.metrics

    def to_json(self) -> str:
        o = self.outcome
        d = {"group": self.group, "index": self.index, "seed": self.seed,
             "state": self.state.value, "attempts": self.attempts,
             "wall_time_s": _finite_or_none(self.wall_time_s),
             "success": o.success, "failure": o.failure.name if o.failure else None,
             "detail": o.detail,
             "metrics": {k: _finite_or_none(v) for k, v in o.metrics.items()}}
        return json.dumps(d, sort_keys=True, allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> StudyTrial:
        try:
            d = json.loads(text)
            failure = FailureReason[d["failure"]] if d["failure"] is not None else None
            outcome = TrialOutcome(bool(d["success"]), failure, str(d["detail"]),
                                   dict(d["metrics"]))
            wall = d["wall_time_s"]
            return cls(int(d["group"]), int(d["index"]), int(d["seed"]),
                       TrialState(d["state"]), outcome, int(d["attempts"]),
                       math.nan if wall is None else float(wall))
        except (ValueError, KeyError, TypeError) as e:
            raise FileFormatError(f"malformed trial record ({e})") from None


def _finite_or_none(v: Any) -> Any:
    """Strict JSON: a non-finite float is recorded as null (unmeasured/undefined)."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v
