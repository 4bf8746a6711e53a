"""A battery of bad inputs, run as a user runs them: every case is `python -m clamber ...`
in its own process under a time limit, and counted as

- clean error: exit status 2 and one line on stderr naming the problem;
- traceback: a Python traceback, or an exit status other than 0, 1, 2;
- hang: still running at the time limit;
- clear warning: a doubtful input the command may use, saying so in a warning (a
  motor fit of the wrong sign);
- silent acceptance: a bad input that exits 0 or 1 (it was used) without a warning;
- valid refused: a valid input (a byte-order mark, quoted CSV fields) that was not read;
- case error: the case itself names an option or command that does not exist.

The families: every numeric option with non-finite, negative, huge and non-numeric
values; the issue's named values (climb --rate 1e-9, --physics-dt 1e-9, compare --cycles
1e9, --tol-scale 1e300, ...); settings, morphology, hardware, gains and scheduler files;
solution files with huge or tiny times or angles, limits claimed by the file, failed or
unchecked solves; telemetry logs; safe-region trials; co-design, robustness and quadruped
run folders with damaged tables, triggers, views and links.

Usage: python benchmarks/bench_bad_inputs.py [--quick] [--jobs 2] [--timeout 60]
Prints one line per case that is not as expected, then one JSON object on its last line.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from clamber.jumper.seed import SEED_PATH
from clamber.storage.runs import STORE_NAME, CandidateTrial, RunStore, TrialState

REFUSE, ACCEPT, WARN = "refuse", "accept", "refuse or warn"


@dataclass
class Case:
    """One command line and what it must do."""

    name: str
    argv: list[str]
    expect: str = REFUSE


@dataclass
class Battery:
    """The cases and the scratch folder their files live in."""

    root: Path
    cases: list[Case] = field(default_factory=list)

    def add(self, name: str, argv: list, expect: str = REFUSE) -> None:
        self.cases.append(Case(name, [str(a) for a in argv], expect))

    def path(self, name: str) -> Path:
        return self.root / name

    def write(self, name: str, text: str | bytes) -> Path:
        p = self.path(name)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text if isinstance(text, bytes) else text.encode())
        return p

    def out(self, name: str) -> Path:
        return self.root / "out" / name


# --- families ---------------------------------------------------------------------------------
SEED = str(SEED_PATH)
#: (command, option) of every numeric option.
NUMERIC = [
    (["jumper", "optimize"], "--seed"), (["jumper", "optimize"], "--torque-limit"),
    (["jumper", "optimize"], "--torque-rate-weight"),
    (["jumper", "codesign"], "--generations"), (["jumper", "codesign"], "--popsize"),
    (["jumper", "codesign"], "--sigma0"), (["jumper", "codesign"], "--torque-limit"),
    (["jumper", "codesign"], "--workers"), (["jumper", "codesign"], "--starts"),
    (["jumper", "sweep"], "--samples"), (["jumper", "sweep"], "--seed"),
    (["jumper", "simulate", SEED], "--jumps"), (["jumper", "simulate", SEED], "--supply-voltage"),
    (["jumper", "simulate", SEED], "--foot-radius"),
    (["jumper", "robustness", SEED], "--trials"), (["jumper", "robustness", SEED], "--jumps"),
    (["jumper", "robustness", SEED], "--mass-tol"),
    (["jumper", "robustness", SEED], "--length-tol"),
    (["jumper", "robustness", SEED], "--jitter"),
    (["jumper", "robustness", SEED], "--tol-scale"),
    (["jumper", "robustness", SEED], "--supply-voltage"),
    (["jumper", "robustness", SEED], "--foot-radius"),
    (["jumper", "robustness", SEED], "--max-retries"),
    (["jumper", "export", SEED], "--supply-voltage"),
    (["quadruped", "climb"], "--incline"), (["quadruped", "climb"], "--cycles"),
    (["quadruped", "climb"], "--rate"), (["quadruped", "climb"], "--physics-dt"),
    (["quadruped", "climb"], "--sole-stiffness"), (["quadruped", "climb"], "--trials"),
    (["quadruped", "climb"], "--seed"), (["quadruped", "climb"], "--distance"),
    (["quadruped", "climb"], "--replace-missed"),
    (["quadruped", "trot"], "--cycles"), (["quadruped", "trot"], "--level-gain"),
    (["quadruped", "trot"], "--trials"),
    (["quadruped", "compare"], "--trials"), (["quadruped", "compare"], "--cycles"),
    (["quadruped", "compare"], "--tune-budget"),
    (["quadruped", "compare"], "--sole-stiffness"),
    (["quadruped", "compare"], "--sole-armature"),
    (["quadruped", "compare"], "--physics-dt"),
    (["quadruped", "wall"], "--incline"), (["quadruped", "holds"], "--distance"),
    (["quadruped", "holds"], "--trials"),
]
BAD_NUMBERS = ["nan", "inf", "-1e300", "1e300", "abc"]


def options(b: Battery, quick: bool) -> None:
    """Every numeric option with values no option may take."""
    for k, (cmd, opt) in enumerate(NUMERIC):
        for j, value in enumerate(BAD_NUMBERS):
            if quick and (k + j) % 4:
                continue
            b.add(f"option {' '.join(cmd[:2])} {opt}={value}",
                  [*cmd, f"{opt}={value}", "--out", b.out(f"opt{k}_{j}")])


def named(b: Battery) -> None:
    """The values the issue names."""
    for name, argv in [
        ("climb --rate 1e-9", ["quadruped", "climb", "--rate", "1e-9"]),
        ("climb --physics-dt 1e-9", ["quadruped", "climb", "--physics-dt", "1e-9"]),
        ("compare --cycles 1e9", ["quadruped", "compare", "--cycles", "1000000000"]),
        ("compare --sole-stiffness 1e300", ["quadruped", "compare", "--sole-stiffness",
                                             "1e300"]),
        ("compare --sole-armature 1e300", ["quadruped", "compare", "--sole-armature",
                                            "1e300"]),
        ("robustness --tol-scale 1e300", ["jumper", "robustness", SEED, "--tol-scale",
                                          "1e300"]),
        ("optimize --torque-rate-weight 1e300", ["jumper", "optimize",
                                                 "--torque-rate-weight", "1e300"]),
        ("optimize --torque-limit 1e300", ["jumper", "optimize", "--torque-limit", "1e300"]),
    ]:
        b.add(name, [*argv, "--out", b.out(name.replace(" ", "_"))])


SETTINGS = {
    "torque_limit 1e300": "torque_limit = 1e300", "joint angle 100 rad":
    "joint_angle_limit = 100.0", "foot radius 10 m": "foot_radius = 10.0",
    "max_iterations 1e29": "max_iterations = 1e29",
    "max_iterations 2**62": "max_iterations = 4611686018427387904",
    "torque_rate_weight 1e300": "torque_rate_weight = 1e300",
    "near-zero sector": "safe_region_front = {angle_deg = 1e-300, max_load_n = 15}",
    "9.8e299 N load": "safe_region_rear = {angle_deg = 30, max_load_n = 9.8e299}",
    "thin polygon": "safe_region_front = {A = [[-1, -1e-6], [1, -1e-6], [0, 1]], "
                    "b = [0, 0, 15]}",
    "phase 1e300 s": "phase_duration_max = [1e300, 0.135, 0.225, 0.135, 0.18]",
    "phase 1 ns": "phase_duration_min = [1e-9, 0.045, 0.075, 0.045, 0.06]",
    "speed limit 1e9": "joint_speed_limit = 1e9", "height gain 1 km": "min_height_gain = 1000.0",
    "tolerance 1e-300": "tolerance = 1e-300", "string region": 'safe_region_front = "nope.json"',
    "string number": 'torque_limit = "0.3"', "unknown key": "wheels = 4",
    "bool number": "torque_limit = true", "phase list short": "phase_duration_min = [0.1]",
    "clearance 1 m": "clearance_margin = 1.0", "force margin huge": "force_margin = 1e9",
}


def settings_files(b: Battery) -> None:
    """Settings TOML files with absurd values, through optimize and codesign."""
    for k, (name, text) in enumerate(SETTINGS.items()):
        path = b.write(f"settings/{k}.toml", text + "\n")
        b.add(f"settings {name}", ["jumper", "optimize", "--settings", path,
                                   "--out", b.out(f"set{k}")])
        if k % 3 == 0:
            b.add(f"settings {name} (codesign)", [
                "jumper", "codesign", "--settings", path, "--workers", "0", "--no-progress",
                "--out", b.out(f"setcd{k}")])


def _solution(b: Battery, name: str, arrays_fn=None, meta_fn=None, raw_json=None,
              checked: bool = True) -> Path:
    with np.load(SEED_PATH) as d:
        arrays = {k: np.array(d[k], dtype=float, order="C") for k in d.files}
    meta = json.loads(SEED_PATH.with_suffix(".json").read_text())
    if checked:
        meta["accuracy"] = {"max_position_drift_m": 0.001}
    if arrays_fn:
        arrays_fn(arrays)
    if meta_fn:
        meta_fn(meta)
    path = b.path(f"solutions/{name}.npz")
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **arrays)
    path.with_suffix(".json").write_text(raw_json if raw_json is not None
                                         else json.dumps(meta))
    return path


def _scale(key: str, factor: float, cols=slice(None)):
    def fn(a):
        a[key][..., cols] = a[key][..., cols] * factor
    return fn


def _meta(path: tuple, value):
    def fn(m):
        d = m
        for k in path[:-1]:
            d = d[k]
        d[path[-1]] = value
    return fn


def solutions(b: Battery) -> None:
    """Solution files with huge or tiny times or angles, or claims, through export and
    simulate (and telemetry --solution)."""
    variants = {
        "times x1e300": dict(arrays_fn=_scale("t", 1e300)),
        "times x1e-300": dict(arrays_fn=_scale("t", 1e-300)),
        "phases x1e6": dict(arrays_fn=_scale("phase_durations", 1e6)),
        "phases x1e-9": dict(arrays_fn=_scale("phase_durations", 1e-9)),
        "angles x1e300": dict(arrays_fn=_scale("q", 1e300, slice(3, 6))),
        "angles x1e3": dict(arrays_fn=_scale("q", 1e3, slice(3, 6))),
        "speeds x1e3": dict(arrays_fn=_scale("qd", 1e3, slice(3, 6))),
        "height 1e300": dict(meta_fn=_meta(("height",), 1e300)),
        "deep JSON": dict(raw_json="[" * 100000 + "]" * 100000),
        "deep JSON object": dict(raw_json='{"a":' * 50000 + "1" + "}" * 50000),
        "status failed": dict(meta_fn=_meta(("status",), "failed")),
        "never checked": dict(checked=False),
        "drifted 2 cm": dict(meta_fn=_meta(("accuracy",), {"max_position_drift_m": 0.02})),
        "torque_limit 1e300 in file": dict(meta_fn=_meta(("settings", "torque_limit"), 1e300)),
        "100 kg link in file": dict(meta_fn=_meta(("morphology", "masses_kg"),
                                                  [0.01, 100.0, 0.1, 0.1, 0.01])),
        "NaN torque": dict(arrays_fn=lambda a: a["tau"].__setitem__((5, 1), np.nan)),
    }
    #: unverified solves may be simulated (that is how one studies them), not exported
    export_only = {"status failed", "never checked", "drifted 2 cm"}
    for k, (name, kw) in enumerate(variants.items()):
        path = _solution(b, f"v{k}", **kw)
        b.add(f"solution {name} (export)", ["jumper", "export", path, "--out", b.out(f"ex{k}")])
        if name not in export_only:
            b.add(f"solution {name} (simulate)", ["jumper", "simulate", path, "--jumps", "1",
                                                  "--no-figures", "--out", b.out(f"sim{k}")])
    # the bypass: the file claims a 5 N m limit for torques four times the paper's
    with np.load(SEED_PATH) as d:
        tau = np.array(d["tau"])
    bypass = _solution(b, "bypass", arrays_fn=lambda a: a.__setitem__("tau", tau * 4.0),
                       meta_fn=_meta(("settings", "torque_limit"), 5.0))
    b.add("export: limit claimed by the file", ["jumper", "export", bypass, "--supply-voltage",
                                                "48", "--out", b.out("bypass")])
    b.add("export: limit claimed, forced", ["jumper", "export", bypass, "--force",
                                            "--supply-voltage", "48", "--out", b.out("bp2")])
    b.add("export: checked seed (valid)", ["jumper", "export", _solution(b, "ok"),
                                           "--out", b.out("exok")], ACCEPT)


HARDWARE = {"torque 1e300": "torque_limit = 1e300", "unknown field": "wheels = 4",
            "supply 1e300": "[motor]\nsupply_voltage = 1e300",
            "negative resistance": "[motor]\nresistance = -1.0",
            "angle 100 rad": "joint_angle_limit = 100.0", "not TOML": "= = =",
            "motor not a table": "motor = 3"}


def hardware(b: Battery) -> None:
    """Hardware descriptions for export."""
    sol = _solution(b, "hw")
    for k, (name, text) in enumerate(HARDWARE.items()):
        path = b.write(f"hardware/{k}.toml", text + "\n")
        b.add(f"hardware {name}", ["jumper", "export", sol, "--hardware", path,
                                   "--out", b.out(f"hw{k}")])


def telemetry(b: Battery, log: Path) -> None:
    """Telemetry logs: valid variants read, damaged ones refused."""
    with open(log, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]

    def write(name: str, h, rs, bom=False, quoting=csv.QUOTE_MINIMAL) -> Path:
        path = b.path(f"telemetry/{name}.csv")
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", newline="", encoding="utf-8-sig" if bom else "utf-8") as f:
            csv.writer(f, quoting=quoting).writerows([h, *rs])
        return path

    def col(name, fn):
        j = header.index(name)
        return [[*r[:j], fn(r[j], i), *r[j + 1:]] for i, r in enumerate(body)]

    argv = ["jumper", "telemetry"]
    b.add("telemetry BOM (valid)", [*argv, write("bom", header, body, bom=True),
                                    "--no-figures", "--out", b.out("tbom")], ACCEPT)
    b.add("telemetry quoted (valid)", [*argv, write("quoted", header, body,
                                                    quoting=csv.QUOTE_ALL),
                                       "--no-figures", "--out", b.out("tq")], ACCEPT)
    volts = ("v_hip_V", "v_spine_V", "v_shoulder_V")
    flipped = [[str(-float(x)) if header[i] in volts else x for i, x in enumerate(r)]
               for r in body]
    b.add("telemetry flipped voltages", [*argv, write("flipped", header, flipped),
                                         "--no-figures", "--out", b.out("tflip")], WARN)
    for name, rs in {
        "1 ns step": col("t_s", lambda x, i: f"{i * 1e-9:.12g}"),
        "1e300 V": col("v_hip_V", lambda x, i: "1e300"),
        "volts x1e-6": col("v_hip_V", lambda x, i: repr(float(x) * 1e-6)),
        "NaN angle": col("hip_rad", lambda x, i: "nan" if i == 3 else x),
        "hours apart": col("t_s", lambda x, i: str(i * 3600.0)),
        "1 km position": col("x5_m", lambda x, i: "1000"),
    }.items():
        b.add(f"telemetry {name}", [*argv, write(name.replace(" ", "_"), header, rs),
                                    "--no-figures", "--out", b.out("t" + name[:3])])
    for name, raw in {"empty": b"", "junk": b"\x00\xff\x80garbage", "header only":
                      ",".join(header).encode(), "pickle": b"\x80\x04\x95\x10\x00"}.items():
        b.add(f"telemetry {name}", [*argv, b.write(f"telemetry/{name}.csv", raw),
                                    "--no-figures"])


MORPHOLOGY = {
    "100 kg links": 'masses_kg = [0.01, 33.0, 33.0, 34.0, 0.01]\n[bounds]\n'
                    'inner_mass_total = 100.0\n',
    "10 m links": 'lengths_m = [10.0, 10.0, 10.0, 10.0]\n[bounds]\nlength_max = 20.0\n',
    "negative length": "lengths_m = [-0.08, 0.08, 0.08, 0.08]\n",
    "NaN mass": "masses_kg = [0.01, nan, 0.09, 0.08, 0.01]\n",
    "string length": 'lengths_m = ["a", 0.08, 0.08, 0.08]\n',
    "huge bounds": "[bounds]\nlength_max = 1e300\n",
}


def morphologies(b: Battery) -> None:
    """Morphology files through `jumper model` and `jumper optimize`."""
    for k, (name, text) in enumerate(MORPHOLOGY.items()):
        path = b.write(f"morphology/{k}.toml", text)
        b.add(f"morphology {name} (model)", ["jumper", "model", "--morphology", path,
                                             "--out", b.out(f"m{k}")])
        b.add(f"morphology {name} (optimize)", ["jumper", "optimize", "--morphology", path,
                                                "--out", b.out(f"mo{k}")])


GAINS = {"a JSON list": "[1, 2, 3]", "unknown controller": '{"gains": {"pid": {"kp": 1}}}',
         "missing gains": '{"gains": {"qwbc": {"body_kp": 1}}}',
         "huge": '{"gains": {"qwbc": {"body_kp": 1e300, "body_kd": 1, "clik_gain": 1}}}',
         "tiny": '{"gains": {"qwbc": {"body_kp": 1e-300, "body_kd": 1, "clik_gain": 1}}}',
         "string": '{"gains": {"vmc": {"stiffness": "x", "damping": 1, "clik_gain": 1}}}',
         "nested": "[" * 100000}


def gains(b: Battery) -> None:
    """Gains files for `quadruped compare --gains`."""
    for k, (name, text) in enumerate(GAINS.items()):
        path = b.write(f"gains/{k}.json", text)
        b.add(f"gains {name}", ["quadruped", "compare", "--gains", path, "--trials", "1",
                                "--workers", "0", "--no-progress", "--out", b.out(f"g{k}")])


def scheduler_files(b: Battery) -> None:
    """--scheduler-file pointing at files that are no scheduler file."""
    for k, (name, text) in enumerate({"TOML": "x = 1", "JSON list": "[1]", "empty": "",
                                      "no address": '{"id": "x"}'}.items()):
        path = b.write(f"scheduler/{k}.json", text)
        b.add(f"scheduler file {name}", ["jumper", "robustness", SEED, "--trials", "4",
                                         "--workers", "2", "--scheduler-file", path,
                                         "--no-progress", "--out", b.out(f"sf{k}")])


def trials_files(b: Battery) -> None:
    """Hanging-weight trials for `jumper safe-region`."""
    good = "load,angle_deg,held\n0.4,0,1\n2.0,120,0\n0.8,30,1\n1.0,60,0\n"
    for k, (name, text) in enumerate({
        "9.8e299 N load": good.replace("2.0,120,0", "9.8e299,120,0"),
        "negative load": good.replace("0.4,0,1", "-0.4,0,1"),
        "angle 1e300": good.replace("0.8,30,1", "0.8,1e300,1"),
        "held 7": good.replace("0.8,30,1", "0.8,30,7"),
        "pickle": "\x80\x04\x95",
        "BOM (valid)": "\ufeff" + good,
    }.items()):
        path = b.write(f"trials/{k}.csv", text)
        b.add(f"safe-region trials {name}", ["jumper", "safe-region", path, "--out",
                                             b.out(f"sr{k}")],
              ACCEPT if "valid" in name else REFUSE)


def _codesign_run(b: Battery, name: str) -> Path:
    """A one-generation co-design record, written as the store writes it (no solve)."""
    from clamber.experiments.codesign import CodesignSettings

    run = b.path(f"runs/{name}")
    config = json.loads(json.dumps(CodesignSettings(generations=2, popsize=2,
                                                    cma_options={"tolfun": 1e-3})
                                   .to_dict(), default=str))
    with RunStore.create(run, "codesign", config) as store:
        for i in range(2):
            store.append(CandidateTrial(0, i, TrialState.COMPLETE, (0.1 * i, 0.2),
                                        (0.08,) * 4, (0.01, 0.08, 0.09, 0.08, 0.01), 0.5,
                                        0.5, "converged", 1.0, 1.0, 1))
        store.save_generation(0, {"generation": 0, "best_speed_mps": 0.5})
    return run


def _sql(run: Path, sql: str, args: tuple = ()) -> None:
    db = sqlite3.connect(run / STORE_NAME)
    with db:
        db.execute(sql, args)
    db.close()


def _edit_config(fn):
    def damage(run):
        db = sqlite3.connect(run / STORE_NAME)
        (text,) = db.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()
        config = json.loads(text)
        fn(config)
        with db:
            db.execute("UPDATE meta SET value = ? WHERE key = 'config'", (json.dumps(config),))
        db.close()
    return damage


def _edit_record(fn):
    def damage(run):
        db = sqlite3.connect(run / STORE_NAME)
        (text,) = db.execute("SELECT record FROM trials WHERE idx = 1").fetchone()
        d = json.loads(text)
        fn(d)
        with db:
            db.execute("UPDATE trials SET record = ? WHERE idx = 1", (json.dumps(d),))
        db.close()
    return damage


def _link(name: str):
    def damage(run):
        victim = run.parent / f"{run.name}_victim.txt"
        victim.write_text("precious")
        target = run / name
        if target.exists():
            target.unlink()
        target.symlink_to(victim)
    return damage


def run_folders(b: Battery) -> None:
    """Damaged co-design records through `codesign --resume`, damaged robustness records
    through `robustness --resume`, and a trot record through `compare --resume`."""
    damages = {
        "garbage config row": lambda r: _sql(r, "UPDATE meta SET value = 'garbage{' "
                                                "WHERE key = 'config'"),
        "string CMA option": _edit_config(lambda c: c["cma_options"].update(tolfun="x")),
        "string safe region": _edit_config(
            lambda c: c["fitness"]["settings"].update(safe_region_front="strong")),
        "missing fitness field": _edit_record(lambda d: d.pop("fitness")),
        "string fitness": _edit_record(lambda d: d.update(fitness="fast")),
        "tampered fitness": _edit_record(lambda d: d.update(fitness=5.0)),
        "pickle in a generation summary": lambda r: _sql(
            r, "UPDATE generations SET summary = ?", (b"\x80\x04\x95\x05 pickle",)),
        "trigger": lambda r: _sql(r, "CREATE TRIGGER t AFTER INSERT ON trials BEGIN "
                                     "UPDATE trials SET record = '{}'; END"),
        "view": lambda r: _sql(r, "CREATE VIEW v AS SELECT * FROM trials"),
        "extra table": lambda r: _sql(r, "CREATE TABLE extra (x)"),
        "symlinked lock": _link("run.lock"),
        "symlinked output": _link("report.html"),
        "format version 1": lambda r: _sql(r, "UPDATE meta SET value = '1' WHERE key = "
                                              "'format_version'"),
        "sweep kind": lambda r: _sql(r, "UPDATE meta SET value = 'sweep' WHERE key = 'kind'"),
        "not SQLite": lambda r: (r / STORE_NAME).write_bytes(b"\x80\x04\x95 not sqlite"),
    }
    for k, (name, damage) in enumerate(damages.items()):
        run = _codesign_run(b, f"cd{k}")
        damage(run)
        b.add(f"codesign run: {name}", ["jumper", "codesign", "--resume", run, "--workers",
                                        "0", "--no-progress", "--no-figures"])
    from clamber.experiments.record import StudyTrial, TrialOutcome

    for k, (name, metrics, slot) in enumerate([
        ("extra group", {"distance_m": 0.4}, (3, 0)),
        ("string metric", {"distance_m": "far"}, (0, 0)),
        ("nested metric", {"max_tracking_error_mm": {"a": [1]}}, (0, 0)),
        ("beyond --trials", {"distance_m": 0.4}, (0, 5)),
    ]):
        run = b.path(f"runs/trot{k}")
        with RunStore.create(run, "quadruped-trot", {"x": 1}, record_type=StudyTrial) as s:
            s.append(StudyTrial(slot[0], slot[1], slot[1], TrialState.COMPLETE,
                                TrialOutcome(True, None, "", metrics), 1, 1.0))
        b.add(f"trot run: {name}", ["quadruped", "trot", "--resume", run, "--trials", "1",
                                    "--workers", "0", "--no-progress", "--no-figures"])
    run = b.path("runs/trot_for_compare")
    with RunStore.create(run, "quadruped-trot", {"x": 1}, record_type=StudyTrial):
        pass
    b.add("compare --resume of a trot run", ["quadruped", "compare", "--resume", run,
                                              "--workers", "0", "--no-progress"])


# --- running -----------------------------------------------------------------------------
def classify(case: Case, rc: int | None, err: str) -> str:
    """The outcome category of one case."""
    if rc is None:
        return "hang"
    if "Traceback (most recent call last)" in err or rc not in (0, 1, 2):
        return "traceback"
    if case.expect == ACCEPT:
        return "valid accepted" if rc == 0 else "valid refused"
    if rc != 2:
        warned = case.expect == WARN and "warning" in err
        return "clear warning" if warned else "silent acceptance"
    lines = [x for x in err.strip().splitlines() if x.strip()]
    if lines and ("unrecognized arguments" in lines[-1] or "invalid choice" in lines[-1]):
        return "case error"  # the case names an option or command that does not exist
    return "clean error" if len(lines) == 1 else "noisy error"


def run_case(case: Case, cwd: Path, timeout: float) -> tuple[Case, str, str, float]:
    env = {**os.environ, "MPLBACKEND": "Agg", "CLAMBER_CACHE": str(cwd / "cache")}
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-m", "clamber", *case.argv], cwd=cwd, env=env,
                           capture_output=True, text=True, timeout=timeout)
        rc, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired as e:
        rc = None
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else ""
    return case, classify(case, rc, err), err.strip()[-300:], time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a quarter of the option cases")
    ap.add_argument("--jobs", type=int, default=2, help="cases run at once (2)")
    ap.add_argument("--timeout", type=float, default=60.0,
                    help="seconds before a case counts as a hang (60)")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="clamber-battery-"))
    try:
        from clamber.jumper.seed import seed_solution
        from clamber.jumper.sim.simulate import simulate
        from clamber.jumper.sim.telemetry import write_log

        log = root / "good_log.csv"
        write_log(simulate(seed_solution(), jumps=1), log)
        b = Battery(root)
        options(b, args.quick)
        named(b)
        settings_files(b)
        solutions(b)
        hardware(b)
        telemetry(b, log)
        morphologies(b)
        gains(b)
        scheduler_files(b)
        trials_files(b)
        run_folders(b)
        t0 = time.perf_counter()
        counts: dict[str, int] = {}
        odd = []
        seconds = []
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            for case, kind, err, s in pool.map(lambda c: run_case(c, root, args.timeout),
                                              b.cases):
                counts[kind] = counts.get(kind, 0) + 1
                seconds.append(s)
                if kind not in ("clean error", "valid accepted", "clear warning"):
                    odd.append(case.name)
                    print(f"{kind}: {case.name}: {err.splitlines()[-1] if err else ''}",
                          file=sys.stderr)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps({"cases": len(b.cases), **{k.replace(" ", "_"): v
                                                 for k, v in sorted(counts.items())},
                      "median_case_s": float(np.median(seconds)),
                      "wall_s": round(time.perf_counter() - t0, 1), "not_as_expected": odd}))


if __name__ == "__main__":
    main()
