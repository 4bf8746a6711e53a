"""Run records: an append-only SQLite store per run directory, replayed to resume."""

from clamber.storage.runs import (
    FORMAT_VERSION,
    CandidateTrial,
    RunStore,
    StoredTrial,
    TrialState,
    best_trial,
)

__all__ = ["FORMAT_VERSION", "CandidateTrial", "RunStore", "StoredTrial", "TrialState",
           "best_trial"]
