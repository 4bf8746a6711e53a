"""The run store: frozen trial records and per-generation summaries in one SQLite file.

Rules (every writer obeys them; resume depends on them):

* A trial is written once, when its evaluation has finished, in its own transaction;
  a finished trial is never modified or deleted. ``(generation, index)`` is unique.
* The summary of generation ``g`` (with the optimizer's mean and step size after it) is
  written after all of that generation's trials, also once. A run killed at any moment
  therefore leaves a prefix of the uninterrupted run's record, and resuming replays it:
  a fresh optimizer asks the same candidates again and is told the recorded results,
  the trials already recorded are reused, the rest evaluated. The optimizer itself is
  never stored, and nothing in a run directory is ever unpickled.
* Paths in records are relative to the run directory and stay inside it.
* A store remembers the kind of run, the format version and the run's configuration;
  opening it with another kind, version or configuration is an error, never a restart.
* One process at a time: an open store holds the directory's lock (:mod:`.lock`).
"""

from __future__ import annotations

import enum
import json
import math
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath
from typing import Any, Protocol

from clamber.exceptions import ConfigError, FileFormatError
from clamber.storage.lock import RunLock

#: 2: per-generation summaries replace version 1's pickled optimizer snapshots.
FORMAT_VERSION = 2
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
CREATE TABLE generations (
    generation INTEGER PRIMARY KEY,
    summary TEXT NOT NULL,
    saved_at REAL NOT NULL
);
"""


class TrialState(enum.Enum):
    """How an evaluation ended. Every state is final; all are kept."""

    COMPLETE = "complete"
    """The evaluation finished: for a candidate, the trajectory optimization converged and
    ``fitness`` is its climbing speed; for a study trial, the simulation ran (its outcome
    says whether the robot succeeded)."""
    FAIL = "fail"
    """The candidate's solver did not converge (or raised); ``fitness`` is the penalty."""
    LOST = "lost"
    """The worker process died on every attempt (a candidate's ``fitness`` is the penalty)."""


class StoredTrial(Protocol):
    """What a run store needs of a trial record. Two records implement it, one per kind of
    run: :class:`CandidateTrial`, one evaluated design of a co-design or sweep (optimizer
    coordinates, design, fitness), and ``clamber.experiments.record.StudyTrial``, one seeded
    simulation trial of a study condition (seed, success, failure reason, metrics)."""

    state: TrialState

    @property
    def slot(self) -> tuple[int, int]:
        """``(generation or condition group, index)``, unique in a store."""

    def to_json(self) -> str:
        """Strict JSON (no NaN) that ``from_json`` reads back equal."""

    @classmethod
    def from_json(cls, text: str) -> StoredTrial:
        """The record ``to_json`` wrote; FileFormatError-worthy input raises ValueError,
        KeyError, TypeError or FileFormatError."""


@dataclass(frozen=True)
class CandidateTrial:
    """One finished evaluation of one design candidate (co-design or sweep).

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
    def from_json(cls, text: str) -> CandidateTrial:
        d = json.loads(text)
        d["state"] = TrialState(d["state"])
        for k in ("fitness", "speed_mps", "solve_time_s", "wall_time_s"):
            d[k] = float("nan") if d[k] is None else float(d[k])
        for k in ("params", "lengths", "masses"):
            d[k] = tuple(d[k])
        check_relative_path(d.get("trajectory", ""), "trajectory")
        return cls(**d)




def check_relative_path(path: str, name: str) -> str:
    """``path`` if it names a place inside the run directory ('' for none).

    Records are shared with their directory, so an absolute path or one that climbs out
    with ``..`` is a malformed record, on any operating system.
    """
    if not isinstance(path, str):
        raise FileFormatError(f"{name} = {path!r}: must be a relative path string")
    if not path:
        return path
    for flavour in (PurePosixPath, PureWindowsPath):
        p: PurePath = flavour(path)
        if p.is_absolute() or p.drive or p.root or ".." in p.parts:
            raise FileFormatError(
                f"{name} = {path!r}: paths in a run record must stay inside the run directory"
            )
    return path


def canonical(config: dict[str, Any]) -> str:
    """The configuration as a stable JSON string."""
    return json.dumps(config, sort_keys=True, default=str)


class RunStore:
    """The SQLite record of one run directory; use :meth:`create` or :meth:`open`.

    ``record_type`` is the class of the trial records it holds, a :class:`StoredTrial`
    (:class:`CandidateTrial` for the co-design and sweep, the default;
    ``clamber.experiments.record.StudyTrial`` for simulation studies).
    """

    def __init__(self, run_dir: Path, connection: sqlite3.Connection, lock: RunLock,
                 record_type: type[StoredTrial] | None = None) -> None:
        self.run_dir = run_dir
        self._db = connection
        self._lock = lock
        self.record_type = CandidateTrial if record_type is None else record_type

    # --- opening ------------------------------------------------------------------------
    @classmethod
    def exists(cls, run_dir: str | Path) -> bool:
        """Whether ``run_dir`` already holds a run record."""
        return (Path(run_dir) / STORE_NAME).exists()

    @classmethod
    def create(cls, run_dir: str | Path, kind: str, config: dict[str, Any],
               record_type: type[StoredTrial] | None = None) -> RunStore:
        """A new, empty record for a run of ``kind`` with ``config``."""
        run_dir = Path(run_dir)
        if cls.exists(run_dir):
            raise ConfigError(
                f"{run_dir} already holds a run; resume it or choose another directory"
            )
        run_dir.mkdir(parents=True, exist_ok=True)
        lock = RunLock(run_dir).acquire()
        try:
            if cls.exists(run_dir):  # created by another process since the check above
                raise ConfigError(f"{run_dir} already holds a run; resume it or choose "
                                  "another directory")
            db = sqlite3.connect(run_dir / STORE_NAME)
            with db:
                db.executescript(_SCHEMA)
                db.executemany("INSERT INTO meta VALUES (?, ?)", [
                    ("format_version", str(FORMAT_VERSION)), ("kind", kind),
                    ("config", canonical(config)), ("created_at", repr(time.time())),
                ])
        except BaseException:
            lock.release()
            raise
        return cls(run_dir, db, lock, record_type)

    @classmethod
    def _connect(cls, run_dir: Path, kind: str) -> tuple[sqlite3.Connection, dict[str, str]]:
        path = run_dir / STORE_NAME
        if not path.exists():
            raise ConfigError(f"{run_dir} holds no run record ({STORE_NAME}) to resume")
        try:
            db = sqlite3.connect(f"file:{path}?mode=rw", uri=True)
        except sqlite3.Error as e:
            raise FileFormatError(f"{path} cannot be opened ({e})") from None
        try:
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            version = meta.get("format_version")
            if version != str(FORMAT_VERSION):
                hint = (" (version 1 stores could hold a pickled optimizer, which is never read; "
                        "start a new run)" if version == "1" else "")
                raise FileFormatError(f"{path} has format version {version!r}; this clamber "
                                      f"reads version {FORMAT_VERSION}{hint}")
            db.execute("SELECT count(*) FROM trials").fetchone()
            db.execute("SELECT count(*) FROM generations").fetchone()
            json.loads(meta["config"])
        except (sqlite3.DatabaseError, KeyError, json.JSONDecodeError) as e:
            db.close()
            raise FileFormatError(f"{path} is not a readable clamber run record ({e})") from None
        except FileFormatError:
            db.close()
            raise
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
             record_type: type[StoredTrial] | None = None) -> RunStore:
        """An existing record, checked against the expected kind and configuration."""
        run_dir = Path(run_dir)
        if not (run_dir / STORE_NAME).exists():
            raise ConfigError(f"{run_dir} holds no run record ({STORE_NAME}) to resume")
        lock = RunLock(run_dir).acquire()
        try:
            db, meta = cls._connect(run_dir, kind)
            stored = json.loads(meta["config"])
            expected = json.loads(canonical(config))
            if stored != expected:
                db.close()
                keys = sorted(k for k in set(stored) | set(expected)
                              if stored.get(k) != expected.get(k))
                details = "; ".join(f"{k}: run has {stored.get(k)!r}, asked "
                                    f"{expected.get(k)!r}" for k in keys)
                raise ConfigError(f"{run_dir} was started with different settings ({details})")
        except BaseException:
            lock.release()
            raise
        return cls(run_dir, db, lock, record_type)

    def close(self) -> None:
        """Close the database and release the directory's lock (idempotent)."""
        self._db.close()
        self._lock.release()

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
    def append(self, trial: StoredTrial) -> None:
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

    def trials(self, generation: int | None = None) -> list[StoredTrial]:
        """Finished trials in (generation, index) order, all or of one generation."""
        sql, args = "SELECT record FROM trials", ()
        if generation is not None:
            sql, args = sql + " WHERE generation = ?", (generation,)
        try:
            rows = self._db.execute(sql + " ORDER BY generation, idx", args).fetchall()
            return [self.record_type.from_json(r[0]) for r in rows]
        except sqlite3.DatabaseError as e:  # corrupt pages, undecodable text
            raise FileFormatError(f"{self.run_dir / STORE_NAME}: the trials table is "
                                  f"corrupt ({e})") from None
        except (ValueError, KeyError, TypeError, FileFormatError) as e:
            raise FileFormatError(f"a trial record in {self.run_dir} is malformed ({e})") from None

    def path(self, relative: str) -> Path:
        """A path from a record, inside the run directory (FileFormatError otherwise,
        also when a link inside the directory points out of it)."""
        check_relative_path(relative, "path")
        root = self.run_dir.resolve()
        full = (root / relative).resolve()
        if not full.is_relative_to(root):
            raise FileFormatError(f"{relative!r} leads out of the run directory {self.run_dir}")
        return self.run_dir / relative

    # --- generations --------------------------------------------------------------------
    def save_generation(self, generation: int, summary: dict[str, Any]) -> None:
        """The summary of a finished ``generation`` (written once, after its trials)."""
        try:
            with self._db:
                self._db.execute("INSERT INTO generations VALUES (?, ?, ?)",
                                 (generation, canonical(summary), time.time()))
        except sqlite3.IntegrityError:
            raise FileFormatError(
                f"the summary of generation {generation} is already recorded"
            ) from None

    def generation_summaries(self) -> list[dict[str, Any]]:
        """The summaries of the finished generations, in order (0, 1, ... without gaps)."""
        rows = self._db.execute(
            "SELECT generation, summary FROM generations ORDER BY generation").fetchall()
        if [r[0] for r in rows] != list(range(len(rows))):
            raise FileFormatError(f"{self.run_dir}: the generation summaries have gaps")
        try:
            return [json.loads(r[1]) for r in rows]
        except json.JSONDecodeError as e:
            raise FileFormatError(
                f"{self.run_dir}: a generation summary is malformed ({e})") from None


def best_trial(trials: Iterable[CandidateTrial]) -> CandidateTrial | None:
    """The complete trial of highest fitness (earliest wins ties), or None."""
    best = None
    for t in trials:
        if t.state is TrialState.COMPLETE and (best is None or t.fitness > best.fitness):
            best = t
    return best
