"""The run store: frozen trial records and optimizer snapshots in one SQLite file.

Rules (every writer obeys them; resume depends on them):

* A trial is written once, when its evaluation has finished, in its own transaction;
  a finished trial is never modified or deleted. ``(generation, index)`` is unique.
* The optimizer state after generation ``g`` is written after all of that generation's
  trials, also once. A run killed at any moment therefore leaves a prefix of the
  uninterrupted run's record, and resuming replays it: restore the last snapshot, ask
  the same candidates again, reuse the trials already recorded, evaluate the rest.
* A store remembers the kind of run, the format version and the run's configuration;
  opening it with another kind, version or configuration is an error, never a restart.
"""

from __future__ import annotations

import enum
import json
import math
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clamber.exceptions import ConfigError, FileFormatError

FORMAT_VERSION = 1
STORE_NAME = "run.sqlite"

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE trials (
    generation INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    state TEXT NOT NULL,
    record TEXT NOT NULL,
    finished_at REAL NOT NULL,
    PRIMARY KEY (generation, idx)
);
CREATE TABLE optimizer_state (
    generation INTEGER PRIMARY KEY,
    state BLOB NOT NULL,
    summary TEXT NOT NULL,
    saved_at REAL NOT NULL
);
"""


class TrialState(enum.Enum):
    """How an evaluation ended. Every state is final; all are kept."""

    COMPLETE = "complete"
    """The trajectory optimization converged; ``fitness`` is its climbing speed."""
    FAIL = "fail"
    """The solver did not converge (or raised); ``fitness`` is the penalty."""
    LOST = "lost"
    """The worker process died on every attempt; ``fitness`` is the penalty."""


@dataclass(frozen=True)
class TrialRecord:
    """One finished evaluation of one candidate.

    ``params`` are the optimizer's coordinates, ``lengths`` [m] and ``masses`` [kg] the
    decoded design, ``fitness`` [m/s] what the optimizer was told (the speed, or the
    penalty), ``speed_mps`` the solution's speed (NaN without a solution).
    """

    generation: int
    index: int
    state: TrialState
    params: tuple[float, ...]
    lengths: tuple[float, ...]
    masses: tuple[float, ...]
    fitness: float
    speed_mps: float
    status: str
    solve_time_s: float
    wall_time_s: float
    attempts: int
    guess: str = ""
    trajectory: str = ""
    error: str = ""
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def slot(self) -> tuple[int, int]:
        """The record's unique key in a run store."""
        return self.generation, self.index

    def to_json(self) -> str:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["state"] = self.state.value
        for k in ("fitness", "speed_mps", "solve_time_s", "wall_time_s"):
            d[k] = None if not math.isfinite(d[k]) else d[k]
        return json.dumps(d, sort_keys=True, allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> TrialRecord:
        d = json.loads(text)
        d["state"] = TrialState(d["state"])
        for k in ("fitness", "speed_mps", "solve_time_s", "wall_time_s"):
            d[k] = float("nan") if d[k] is None else float(d[k])
        for k in ("params", "lengths", "masses"):
            d[k] = tuple(d[k])
        return cls(**d)


def canonical(config: dict[str, Any]) -> str:
    """The configuration as a stable JSON string."""
    return json.dumps(config, sort_keys=True, default=str)


class RunStore:
    """The SQLite record of one run directory; use :meth:`create` or :meth:`open`.

    ``record_type`` is the class of the trial records it holds: any frozen record with a
    ``slot`` ``(group, index)``, a ``state`` (:class:`TrialState`), ``to_json()`` and a
    ``from_json(text)`` class method (:class:`TrialRecord` for the co-design and sweep,
    ``clamber.experiments.record.StudyTrial`` for simulation studies).
    """

    def __init__(self, run_dir: Path, connection: sqlite3.Connection,
                 record_type: type | None = None) -> None:
        self.run_dir = run_dir
        self._db = connection
        self.record_type = TrialRecord if record_type is None else record_type

    # --- opening ------------------------------------------------------------------------
    @classmethod
    def exists(cls, run_dir: str | Path) -> bool:
        """Whether ``run_dir`` already holds a run record."""
        return (Path(run_dir) / STORE_NAME).exists()

    @classmethod
    def create(cls, run_dir: str | Path, kind: str, config: dict[str, Any],
               record_type: type | None = None) -> RunStore:
        """A new, empty record for a run of ``kind`` with ``config``."""
        run_dir = Path(run_dir)
        if cls.exists(run_dir):
            raise ConfigError(
                f"{run_dir} already holds a run; resume it or choose another directory"
            )
        run_dir.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(run_dir / STORE_NAME)
        with db:
            db.executescript(_SCHEMA)
            db.executemany("INSERT INTO meta VALUES (?, ?)", [
                ("format_version", str(FORMAT_VERSION)), ("kind", kind),
                ("config", canonical(config)), ("created_at", repr(time.time())),
            ])
        return cls(run_dir, db, record_type)

    @classmethod
    def _connect(cls, run_dir: Path, kind: str) -> tuple[sqlite3.Connection, dict[str, str]]:
        path = run_dir / STORE_NAME
        if not path.exists():
            raise ConfigError(f"{run_dir} holds no run record ({STORE_NAME}) to resume")
        try:
            db = sqlite3.connect(f"file:{path}?mode=rw", uri=True)
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            db.execute("SELECT count(*) FROM trials").fetchone()
            db.execute("SELECT count(*) FROM optimizer_state").fetchone()
            json.loads(meta["config"])
        except (sqlite3.DatabaseError, KeyError, json.JSONDecodeError) as e:
            raise FileFormatError(f"{path} is not a readable clamber run record ({e})") from None
        if meta.get("format_version") != str(FORMAT_VERSION):
            db.close()
            raise FileFormatError(
                f"{path} has format version {meta.get('format_version')!r}; this clamber "
                f"reads version {FORMAT_VERSION}"
            )
        if meta.get("kind") != kind:
            db.close()
            raise ConfigError(f"{run_dir} holds a {meta.get('kind')!r} run, not a {kind!r} run")
        return db, meta

    @classmethod
    def read_config(cls, run_dir: str | Path, kind: str) -> dict[str, Any]:
        """The configuration a stored run of ``kind`` was started with."""
        db, meta = cls._connect(Path(run_dir), kind)
        db.close()
        return json.loads(meta["config"])

    @classmethod
    def open(cls, run_dir: str | Path, kind: str, config: dict[str, Any],
             record_type: type | None = None) -> RunStore:
        """An existing record, checked against the expected kind and configuration."""
        run_dir = Path(run_dir)
        db, meta = cls._connect(run_dir, kind)
        stored = json.loads(meta["config"])
        expected = json.loads(canonical(config))
        if stored != expected:
            db.close()
            keys = sorted(k for k in set(stored) | set(expected)
                          if stored.get(k) != expected.get(k))
            details = "; ".join(f"{k}: run has {stored.get(k)!r}, asked {expected.get(k)!r}"
                                for k in keys)
            raise ConfigError(f"{run_dir} was started with different settings ({details})")
        return cls(run_dir, db, record_type)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- meta ---------------------------------------------------------------------------
    @property
    def config(self) -> dict[str, Any]:
        """The configuration the run was started with."""
        row = self._db.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()
        return json.loads(row[0])

    # --- trials -------------------------------------------------------------------------
    def append(self, trial: Any) -> None:
        """Record a finished trial (an error if that slot is already taken)."""
        group, index = trial.slot
        try:
            with self._db:
                self._db.execute("INSERT INTO trials VALUES (?, ?, ?, ?, ?)",
                                 (group, index, trial.state.value, trial.to_json(),
                                  time.time()))
        except sqlite3.IntegrityError:
            raise FileFormatError(
                f"trial {group}/{index} is already recorded; finished "
                "trials are never rewritten"
            ) from None

    def trials(self, generation: int | None = None) -> list[Any]:
        """Finished trials in (generation, index) order, all or of one generation."""
        sql, args = "SELECT record FROM trials", ()
        if generation is not None:
            sql, args = sql + " WHERE generation = ?", (generation,)
        rows = self._db.execute(sql + " ORDER BY generation, idx", args).fetchall()
        try:
            return [self.record_type.from_json(r[0]) for r in rows]
        except (ValueError, KeyError, TypeError, FileFormatError) as e:
            raise FileFormatError(f"a trial record in {self.run_dir} is malformed ({e})") from None

    # --- optimizer snapshots ----------------------------------------------------------------
    def save_state(self, generation: int, state: bytes, summary: dict[str, Any]) -> None:
        """The optimizer state after ``generation`` (written once)."""
        try:
            with self._db:
                self._db.execute("INSERT INTO optimizer_state VALUES (?, ?, ?, ?)",
                                 (generation, state, canonical(summary), time.time()))
        except sqlite3.IntegrityError:
            raise FileFormatError(
                f"the optimizer state after generation {generation} is already recorded"
            ) from None

    def latest_state(self) -> tuple[int, bytes] | None:
        """``(generation, state)`` of the newest snapshot, or None."""
        row = self._db.execute("SELECT generation, state FROM optimizer_state "
                               "ORDER BY generation DESC LIMIT 1").fetchone()
        return None if row is None else (int(row[0]), bytes(row[1]))

    def generation_summaries(self) -> list[dict[str, Any]]:
        """The per-generation summaries stored with each snapshot, in order."""
        rows = self._db.execute(
            "SELECT summary FROM optimizer_state ORDER BY generation").fetchall()
        return [json.loads(r[0]) for r in rows]


def best_trial(trials: Iterable[TrialRecord]) -> TrialRecord | None:
    """The complete trial of highest fitness (earliest wins ties), or None."""
    best = None
    for t in trials:
        if t.state is TrialState.COMPLETE and (best is None or t.fitness > best.fitness):
            best = t
    return best
