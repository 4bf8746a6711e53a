"""A run folder is read as data: no write follows a link, no trigger or view is honoured,
and every damaged field is one FileFormatError naming its table, row and field."""

import json
import sqlite3

import pytest

from clamber.exceptions import ConfigError, FileFormatError
from clamber.storage.lock import LOCK_NAME, RunLock
from clamber.storage.runs import STORE_NAME, CandidateTrial, RunStore, TrialState

KIND, CONFIG = "codesign", {"popsize": 3}


def _trial(generation=0, index=0, **changes) -> CandidateTrial:
    d = dict(generation=generation, index=index, state=TrialState.COMPLETE,
             params=(0.1, 0.2), lengths=(0.08,) * 4, masses=(0.01, 0.08, 0.09, 0.08, 0.01),
             fitness=0.5, speed_mps=0.5, status="converged", solve_time_s=1.0,
             wall_time_s=1.0, attempts=1)
    return CandidateTrial(**{**d, **changes})


@pytest.fixture
def run(tmp_path):
    """A closed run record with one trial and one generation summary."""
    run_dir = tmp_path / "run"
    with RunStore.create(run_dir, KIND, CONFIG) as store:
        store.append(_trial())
        store.save_generation(0, {"best": 0.5})
    return run_dir


def _sql(run_dir, *statements):
    with sqlite3.connect(run_dir / STORE_NAME) as db:
        for s in statements:
            db.execute(*s) if isinstance(s, tuple) else db.execute(s)
    db.close()


def test_a_symlinked_lock_is_refused_and_its_target_untouched(run, tmp_path):
    """A run.lock that links elsewhere is refused on open (an error naming the link), the
    lock itself refuses to open it, and the file it points to keeps its content."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (run / LOCK_NAME).unlink()
    (run / LOCK_NAME).symlink_to(victim)
    with pytest.raises(FileFormatError, match="link"):
        RunStore.open(run, KIND, CONFIG)
    with pytest.raises(ConfigError, match="link"):
        RunLock(run).acquire()
    assert victim.read_text() == "precious"


def test_a_symlinked_output_in_the_run_is_refused(run, tmp_path):
    """Any link inside a run folder (an output a run would rewrite) stops the open, so
    nothing is written through it; a new run in a folder with a link is refused too."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (run / "report.html").symlink_to(victim)
    with pytest.raises(FileFormatError, match="report.html is a link"):
        RunStore.open(run, KIND, CONFIG)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "trials.csv").symlink_to(victim)
    with pytest.raises(FileFormatError, match="link"):
        RunStore.create(fresh, KIND, CONFIG)
    assert victim.read_text() == "precious"


def test_a_trigger_in_the_record_is_rejected_before_it_can_fire(run):
    """A trigger that would rewrite every appended trial's fitness is refused when the
    run is opened (nothing appended, the stored fitness unchanged)."""
    _sql(run, "CREATE TRIGGER boost AFTER INSERT ON trials BEGIN UPDATE trials SET "
              "record = replace(record, '0.5', '99') ; END")
    with pytest.raises(FileFormatError, match="trigger boost"):
        RunStore.open(run, KIND, CONFIG)
    with sqlite3.connect(run / STORE_NAME) as db:
        assert db.execute("SELECT count(*) FROM trials").fetchone() == (1,)


@pytest.mark.parametrize("statement, match", [
    ("CREATE VIEW best AS SELECT * FROM trials", "view best"),
    ("CREATE TABLE extra (x)", "table extra"),
    ("ALTER TABLE trials ADD COLUMN note TEXT", "other columns in trials"),
    ("CREATE INDEX fast ON trials (state)", "index fast"),
])
def test_an_unexpected_schema_is_rejected(run, statement, match):
    """Views, extra tables, columns or indexes make the database not a run record."""
    _sql(run, statement)
    with pytest.raises(FileFormatError, match=match):
        RunStore.open(run, KIND, CONFIG)


@pytest.mark.parametrize("field, value", [
    ("fitness", "fast"), ("fitness", [1]), ("params", "abc"), ("lengths", [[1, 2]]),
    ("generation", 1.5), ("state", "won"), ("status", 3), ("info", [1]),
])
def test_a_damaged_trial_field_names_table_row_and_field(run, field, value):
    """A trial record whose field has the wrong type is one FileFormatError naming the
    trials table, the row and the field."""
    d = json.loads(_trial().to_json())
    d[field] = value
    _sql(run, ("UPDATE trials SET record = ?", (json.dumps(d),)))
    with RunStore.open(run, KIND, CONFIG) as store:
        with pytest.raises(FileFormatError, match=rf"table trials, row \(0, 0\).*{field}"):
            store.trials()


def test_a_missing_field_and_a_foreign_record_are_named(run):
    """A record without its fitness, and non-JSON (pickle) bytes, are FileFormatErrors."""
    d = json.loads(_trial().to_json())
    del d["fitness"]
    _sql(run, ("UPDATE trials SET record = ?", (json.dumps(d),)))
    with RunStore.open(run, KIND, CONFIG) as store:
        with pytest.raises(FileFormatError, match="missing fields.*fitness"):
            store.trials()
    _sql(run, ("UPDATE trials SET record = ?", (b"\x80\x04\x95 pickle",)))
    with RunStore.open(run, KIND, CONFIG) as store:
        with pytest.raises(FileFormatError, match="table trials"):
            store.trials()


@pytest.mark.parametrize("summary", [b"\x80\x04\x95\x00 pickle", "[1, 2]", "not json"])
def test_a_damaged_generation_summary_is_named(run, summary):
    """Pickle bytes, a JSON list or non-JSON text as a generation summary is one
    FileFormatError naming the generations table and the row."""
    _sql(run, ("UPDATE generations SET summary = ?", (summary,)))
    with RunStore.open(run, KIND, CONFIG) as store:
        with pytest.raises(FileFormatError, match="table generations, row 0"):
            store.generation_summaries()


@pytest.mark.parametrize("config", ["garbage{", "[1, 2]", "42"])
def test_a_garbage_config_row_is_named(run, config):
    """A config row that is not a JSON object is a FileFormatError naming it."""
    _sql(run, ("UPDATE meta SET value = ? WHERE key = 'config'", (config,)))
    with pytest.raises(FileFormatError, match="config"):
        RunStore.read_config(run, KIND)


def test_a_run_of_another_kind_is_refused(run):
    """Opening a co-design record as a sweep is a ConfigError naming both kinds."""
    with pytest.raises(ConfigError, match="'codesign' run, not a 'sweep' run"):
        RunStore.open(run, "sweep", CONFIG)


@pytest.mark.parametrize("damage", [
    lambda c: c["cma_options"].update(tolfun="tiny"),
    lambda c: c["fitness"]["settings"].update(safe_region_front="strong"),
    lambda c: c["fitness"].pop("failure_speed"),
    lambda c: c.update(popsize="many"),
    lambda c: c["fitness"].update(settings=[1, 2]),
])
def test_codesign_resume_of_a_damaged_config_is_one_line(tmp_path, capsys, damage):
    """`codesign --resume` of a record whose stored configuration has a string CMA option,
    a string safe region, a missing field or a wrong type exits 2 with one line naming
    the config, never a traceback."""
    from clamber.cli import main
    from clamber.experiments.codesign import CodesignSettings

    config = json.loads(json.dumps(CodesignSettings(cma_options={"tolfun": 1e-3})
                                   .to_dict(), default=str))
    damage(config)
    run_dir = tmp_path / "run"
    RunStore.create(run_dir, "codesign", config).close()
    rc = main(["jumper", "codesign", "--resume", str(run_dir), "--workers", "0",
               "--no-progress", "--no-figures"])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and "config" in err, err


@pytest.mark.parametrize("changes, match", [
    ({"fitness": 0.9}, "exceeds the trial's speed"),
    ({"fitness": 99.0, "speed_mps": 99.0}, "speed_mps"),
    ({"speed_mps": None}, "speed_mps"),
])
def test_a_tampered_fitness_is_not_reported_as_the_best(run, changes, match):
    """A complete trial whose fitness exceeds its speed, or whose speed is not a physical
    climbing speed, is refused when read rather than reported as the run's best."""
    d = json.loads(_trial().to_json())
    d.update(changes)
    _sql(run, ("UPDATE trials SET record = ?", (json.dumps(d),)))
    with RunStore.open(run, KIND, CONFIG) as store:
        with pytest.raises(FileFormatError, match=match):
            store.trials()


def test_generation_figures_are_recomputed_from_the_trials(run):
    """A generation summary claiming a best speed of 99 m/s reports the best of its
    trials instead (0.5); what the trials cannot give (sigma) is read as stored."""
    _sql(run, ("UPDATE generations SET summary = ?",
               (json.dumps({"best_speed_mps": 99.0, "median_speed_mps": 99.0,
                            "best_so_far_mps": 99.0, "failed": 7, "sigma": 0.3}),)))
    with RunStore.open(run, KIND, CONFIG) as store:
        (summary,) = store.generation_summaries()
    assert summary == {"best_speed_mps": 0.5, "median_speed_mps": 0.5,
                       "best_so_far_mps": 0.5, "failed": 0, "sigma": 0.3}
