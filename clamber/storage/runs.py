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
* The record is data, never code: a database whose schema is not exactly the one below
  (a trigger, a view, another table or column) is refused before anything is read or
  written, and every field of every row is checked when it is read; an error names the
  table, the row and the field.
* Nothing is written through a link: a run folder holding a symbolic link is refused
  when a store is created or opened, and the lock file is opened without following one.
"""

from __future__ import annotations

import enum
import json
import math
import os
import sqlite3
import statistics
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath
from typing import Any, Protocol

from clamber import _validate as check
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
        """The record :meth:`to_json` wrote; every field's type is checked (FileFormatError
        naming the field)."""
        d = json.loads(text)
        if not isinstance(d, dict):
            raise FileFormatError("must be a JSON object")
        names = set(cls.__dataclass_fields__)
        required = names - {"guess", "trajectory", "error", "info"}
        if missing := sorted(required - set(d)):
            raise FileFormatError(f"missing fields {missing}")
        if extra := sorted(set(d) - names):
            raise FileFormatError(f"unknown fields {extra}")
        # Generation -1 holds a sweep's seed trajectory (the samples are generation 0).
        _field("generation", d["generation"], lambda x: check.integer("", "generation", x,
                                                                       low=-1))
        for k in ("index", "attempts"):
            _field(k, d[k], lambda x, k=k: check.integer("", k, x, low=0))
        d["state"] = _field("state", d["state"], TrialState)
        for k in ("fitness", "speed_mps", "solve_time_s", "wall_time_s"):
            d[k] = math.nan if d[k] is None else _field(k, d[k],
                                                         lambda x, k=k: check.number("", k, x))
        for k in ("params", "lengths", "masses"):
            d[k] = tuple(_field(k, d[k], lambda x, k=k: check.finite_array("", k, x, (None,))
                                .tolist()))
        for k in ("status", "guess", "trajectory", "error"):
            if not isinstance(d.get(k, ""), str):
                raise FileFormatError(f"field {k!r} = {d[k]!r}: must be a string")
        if not isinstance(d.get("info", {}), dict):
            raise FileFormatError(f"field 'info' = {d['info']!r}: must be an object")
        check_relative_path(d.get("trajectory", ""), "trajectory")
        if d["state"] is TrialState.COMPLETE:
            _check_complete(d["fitness"], d["speed_mps"])
        return cls(**d)


def _check_complete(fitness: float, speed: float) -> None:
    """A complete candidate's speed is a physical climbing speed and its fitness never
    exceeds it (a landing score multiplies it by a rate <= 1): a record claiming more
    was not written by a fitness function, and would be reported as the best."""
    _field("speed_mps", speed, lambda x: check.in_range("", "speed_mps", x, "climb_speed"))
    _field("fitness", fitness, lambda x: check.in_range("", "fitness", x, "climb_speed"))
    if fitness > speed + 1e-9 * max(1.0, abs(speed)):
        raise FileFormatError(f"field 'fitness' = {fitness!r} exceeds the trial's speed "
                              f"{speed!r} m/s: no fitness scores above the speed")


def _field(name: str, value: Any, parse: Any) -> Any:
    """``parse(value)``, its error (any ValueError or TypeError) re-raised as a
    FileFormatError naming the field."""
    try:
        return parse(value)
    except (ValueError, TypeError) as e:
        raise FileFormatError(f"field {name!r}: {e}") from None




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
        return os.path.lexists(Path(run_dir) / STORE_NAME)

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
        refuse_links(run_dir)
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
    def _connect(cls, run_dir: Path, kind: str | None
                 ) -> tuple[sqlite3.Connection, dict[str, str]]:
        path = run_dir / STORE_NAME
        if os.path.islink(path):
            raise ConfigError(f"{path} is a link; clamber never reads a run through links")
        if not path.exists():
            raise ConfigError(f"{run_dir} holds no run record ({STORE_NAME}) to resume")
        try:
            db = sqlite3.connect(f"file:{path}?mode=rw", uri=True)
        except sqlite3.Error as e:
            raise FileFormatError(f"{path} cannot be opened ({e})") from None
        try:
            db.execute("PRAGMA trusted_schema = OFF")
            meta = {}
            for key, value in db.execute("SELECT key, value FROM meta").fetchall():
                if not isinstance(value, str):
                    raise FileFormatError(f"{path}: table meta, key {key!r}: the value "
                                          "must be text")
                meta[key] = value
            version = meta.get("format_version")
            if version != str(FORMAT_VERSION):
                hint = (" (version 1 stores could hold a pickled optimizer, which is never read; "
                        "start a new run)" if version == "1" else "")
                raise FileFormatError(f"{path} has format version {version!r}; this clamber "
                                      f"reads version {FORMAT_VERSION}{hint}")
            check_schema(db, path)
            if not isinstance(json.loads(meta["config"]), dict):
                raise FileFormatError(f"{path}: table meta, key 'config': must be a JSON "
                                      "object")
        except FileFormatError:
            db.close()
            raise
        except (sqlite3.DatabaseError, KeyError, ValueError) as e:
            db.close()
            raise FileFormatError(f"{path} is not a readable clamber run record ({e})") from None
        if kind is not None and meta.get("kind") != kind:
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
    def stored_kind(cls, run_dir: str | Path) -> str:
        """The kind of run ``run_dir`` records (after the same checks as an open)."""
        db, meta = cls._connect(Path(run_dir), None)
        db.close()
        return str(meta.get("kind"))

    @classmethod
    def read_trials(cls, run_dir: str | Path, kind: str | None,
                    record_type: type[StoredTrial] | None = None) -> list[StoredTrial]:
        """The finished trials of a stored run of ``kind`` (None: of any kind), read
        without taking its lock (to check a record before resuming it); every row checked
        as :meth:`trials`."""
        db, _ = cls._connect(Path(run_dir), kind)
        try:
            return cls(Path(run_dir), db, RunLock(run_dir), record_type).trials()
        finally:
            db.close()

    @classmethod
    def open(cls, run_dir: str | Path, kind: str, config: dict[str, Any],
             record_type: type[StoredTrial] | None = None) -> RunStore:
        """An existing record, checked against the expected kind and configuration."""
        run_dir = Path(run_dir)
        if not (run_dir / STORE_NAME).exists():
            raise ConfigError(f"{run_dir} holds no run record ({STORE_NAME}) to resume")
        refuse_links(run_dir)
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
        sql, args = "SELECT generation, idx, state, record FROM trials", ()
        if generation is not None:
            sql, args = sql + " WHERE generation = ?", (generation,)
        where = self.run_dir / STORE_NAME
        try:
            rows = self._db.execute(sql + " ORDER BY generation, idx", args).fetchall()
        except sqlite3.DatabaseError as e:  # corrupt pages, undecodable text
            raise FileFormatError(f"{where}: the trials table is corrupt ({e})") from None
        out = []
        for group, index, state, text in rows:
            row = f"{where}: table trials, row ({group!r}, {index!r})"
            if not isinstance(text, str):
                raise FileFormatError(f"{row}: field record is not text")
            try:
                trial = self.record_type.from_json(text)
            except (ValueError, KeyError, TypeError, IndexError, AttributeError,
                    FileFormatError) as e:
                raise FileFormatError(f"{row}: record is malformed ({e})") from None
            if trial.slot != (group, index) or trial.state.value != state:
                raise FileFormatError(f"{row}: the record's slot {trial.slot} or state "
                                      f"{trial.state.value!r} differs from its row's")
            out.append(trial)
        return out

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
        """The summaries of the finished generations, in order (0, 1, ... without gaps).

        Of a candidate run, the figures its trials determine (best and median fitness,
        failures, best so far) are recomputed from the trials, never taken from the
        stored summary: only what the trials cannot give (the optimizer's mean and step
        size, which a replay checks against its own) is read from it."""
        where = self.run_dir / STORE_NAME
        rows = self._db.execute(
            "SELECT generation, summary FROM generations ORDER BY generation").fetchall()
        if [r[0] for r in rows] != list(range(len(rows))):
            raise FileFormatError(f"{where}: table generations: the generation numbers "
                                  "have gaps")
        out = []
        for generation, text in rows:
            try:
                summary = json.loads(text) if isinstance(text, str) else None
            except ValueError:
                summary = None
            if not isinstance(summary, dict):
                raise FileFormatError(f"{where}: table generations, row {generation}: "
                                      "field summary is not a JSON object")
            out.append(summary)
        if self.record_type is CandidateTrial and out:
            out = _recomputed(out, self.trials())
        return out


def _recomputed(summaries: list[dict[str, Any]],
                trials: list[CandidateTrial]) -> list[dict[str, Any]]:
    """``summaries`` with the figures the generations' trials determine recomputed
    (only the keys a summary holds)."""
    out = []
    for g, summary in enumerate(summaries):
        gen = [t for t in trials if t.generation == g]
        if not gen:
            out.append(summary)
            continue
        speeds = [t.fitness for t in gen]
        best = best_trial(t for t in trials if t.generation <= g)
        figures = {"best_speed_mps": max(speeds),
                   "median_speed_mps": statistics.median(speeds),
                   "failed": sum(t.state is not TrialState.COMPLETE for t in gen),
                   "best_so_far_mps": best.fitness if best else math.nan}
        out.append({**summary, **{k: x for k, x in figures.items() if k in summary}})
    return out


def _table_shapes(db: sqlite3.Connection) -> dict[tuple[str, str], list[tuple]]:
    """Every schema object ``(type, name)`` (SQLite's own internal indexes left out) with
    its columns' name, declared type, not-null flag and key position."""
    out = {}
    for kind, name in db.execute("SELECT type, name FROM sqlite_master").fetchall():
        if kind == "index" and str(name).startswith("sqlite_autoindex_"):
            continue
        cols = ([tuple(r[1:4]) + (r[5],) for r in db.execute(
            f"PRAGMA table_info({json.dumps(str(name))})")] if kind == "table" else [])
        out[(kind, name)] = cols
    return out


def check_schema(db: sqlite3.Connection, path: Path) -> None:
    """FileFormatError unless the database holds exactly this format's tables and columns:
    no trigger (it would run on clamber's own inserts), view, index or other table."""
    db.execute("PRAGMA trusted_schema = OFF")
    expected_db = sqlite3.connect(":memory:")
    expected_db.executescript(_SCHEMA)
    expected = _table_shapes(expected_db)
    expected_db.close()
    found = _table_shapes(db)
    if found != expected:
        extra = sorted(f"{k} {n}" for k, n in set(found) - set(expected))
        missing = sorted(f"{k} {n}" for k, n in set(expected) - set(found))
        changed = sorted(n for (k, n) in set(found) & set(expected)
                         if found[(k, n)] != expected[(k, n)])
        parts = ([f"unexpected {', '.join(extra)}"] if extra else []) + (
            [f"missing {', '.join(missing)}"] if missing else []) + (
            [f"other columns in {', '.join(changed)}"] if changed else [])
        raise FileFormatError(f"{path}: not a clamber run record's schema ("
                              f"{'; '.join(parts)}); a run record holds data only")


def refuse_links(run_dir: Path, root: bool = True) -> None:
    """FileFormatError if anything inside ``run_dir`` (or, with ``root``, ``run_dir``
    itself) is a symbolic link: a run writes into its folder and must never write
    through one."""
    if root and os.path.islink(run_dir):
        raise FileFormatError(f"{run_dir} is a link; clamber never writes through links")
    for folder, dirs, files in os.walk(run_dir):
        for name in dirs + files:
            if os.path.islink(os.path.join(folder, name)):
                raise FileFormatError(
                    f"{os.path.join(folder, name)} is a link (it could lead out of the run "
                    "directory); clamber never writes through links")


def best_trial(trials: Iterable[CandidateTrial]) -> CandidateTrial | None:
    """The complete trial of highest fitness (earliest wins ties), or None."""
    best = None
    for t in trials:
        if t.state is TrialState.COMPLETE and (best is None or t.fitness > best.fitness):
            best = t
    return best
