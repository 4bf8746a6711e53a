"""`clamber jumper simulate | robustness | export | telemetry | model`, and the demo's sim step."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from clamber import _validate as check
from clamber.cli.options import (
    FMT,
    add_execution_options,
    add_output_options,
    input_file,
    number_type,
    output_file,
    positive_int,
    quantity_type,
    seed_int,
    supply_voltage,
)
from clamber.exceptions import ConfigError

log = logging.getLogger("clamber")
#: Ranges of the simulation options: a gripper disc of at most 5 cm (the robot's is 1 cm),
#: up to 100 consecutive jumps, mass tolerances below 50 %, length shifts below the 20 mm
#: that keep the shortest (40 mm) link longer than its centre offset, packet jitter below
#: ten 500 Hz periods.
foot_radius = quantity_type(float, "foot_radius")
jump_count = number_type(int, 1, 100)
trial_count = quantity_type(int, "trials")
#: A factor on the calibrated tolerances (RANGES["tolerance_scale"]).
tolerance_scale = quantity_type(float, "tolerance_scale")
mass_tolerance = number_type(float, 0, 0.5)
length_tolerance = number_type(float, 0, 0.02, unit=" m")
jitter_s = number_type(float, 0, 0.02, unit=" s")
release_lift = number_type(float, -0.5, 0.5, unit=" rad")

EXAMPLES_SIMULATE = """examples:
  clamber jumper simulate out/jumper/solution.npz
  clamber jumper simulate out/jumper/solution.npz --jumps 5 --out out/sim --json
  clamber jumper simulate sol.npz --no-animation --log out/sim/telemetry.csv
"""
EXAMPLES_ROBUSTNESS = """examples:
  clamber jumper robustness out/jumper/solution.npz --trials 30
  clamber jumper robustness sol.npz --trials 200 --workers 2 --seed 1 --json
  clamber jumper robustness --resume out/robustness     # a killed study goes on
  clamber jumper robustness sol.npz --trials 100 --mass-tol 0.1 --jitter 0.002
  clamber jumper robustness aimed.npz --trials 200 --foot-radius 0.010  # robot's real radius
"""
EXAMPLES_ROBUSTNESS += (
    "  clamber jumper robustness s.npz --controller closed-loop --jumps 10 --json\n"
    "  clamber jumper robustness s.npz --controller closed-loop --jumps 10 --rear-spar\n"
    "  clamber jumper robustness docs/data/long_climb/solution.npz --controller closed-loop "
    "--jumps 30\n"
    "  clamber jumper robustness docs/data/long_climb/solution.npz --controller closed-loop "
    "--jumps 10 --tol-scale 1.5 --stance-feedback tvlqr\n"
    "  clamber jumper robustness docs/data/long_climb/solution.npz --controller closed-loop "
    "--jumps 10 --release-lift -0.2 --flight-feedback aim\n")
EXAMPLES_CALIBRATE = """examples:
  clamber jumper calibrate --json                  # the fine grid and the 200-trial check
  clamber jumper calibrate --stage coarse --json   # the first, coarse search
  clamber jumper calibrate --tuned edits --json    # the tuned jump without the clearance
  clamber jumper calibrate --quick --workers 2     # a two-point smoke run
"""
EXAMPLES_EXPORT = """examples:
  clamber jumper export out/jumper/solution.npz --out out/export
  clamber jumper export sol.npz --supply-voltage 7.4     # fails if 7.4 V cannot follow
  clamber jumper export sol.npz --hardware robot.toml    # this robot's joint limits, motors
"""
EXAMPLES_TELEMETRY = """examples:
  clamber jumper telemetry run3.csv --solution out/jumper/solution.npz
  clamber jumper telemetry run3.csv --forces plate3.csv --morphology robot.toml --json
"""
EXAMPLES_MODEL = """examples:
  clamber jumper model --out models/jumper
  clamber jumper model --morphology robot.toml --out models/robot
"""


def _load(path: Path):
    from clamber.jumper.solution import TrajectorySolution

    try:
        sol = TrajectorySolution.load(path)
    except RecursionError:
        raise ConfigError(f"{path}: its JSON is nested too deeply to be a solution") from None
    return check.solution_in_range(sol, str(path))


def _config(args: argparse.Namespace):
    from clamber.experiments.calibration import calibrated_config
    from clamber.jumper.sim.control import EventTriggeredSettings
    from clamber.jumper.sim.gripper import FootPivot
    from clamber.jumper.sim.motor import MotorParameters

    motor = MotorParameters(supply_voltage=args.supply_voltage)
    pivot = FootPivot().with_rear_spar() if getattr(args, "rear_spar", False) else FootPivot()
    controller = getattr(args, "controller", "open-loop")
    stance = getattr(args, "stance_feedback", None) or "none"
    if stance != "none" and controller != "closed-loop":
        raise ConfigError(f"--stance-feedback {stance} is part of the closed-loop controller; "
                          "add --controller closed-loop")
    flight = getattr(args, "flight_feedback", None) or "none"
    if flight != "none" and controller != "closed-loop":
        raise ConfigError(f"--flight-feedback {flight} is part of the closed-loop controller; "
                          "add --controller closed-loop")
    lift = getattr(args, "release_lift", None) or 0.0
    if lift and controller != "closed-loop":
        raise ConfigError("--release-lift is part of the closed-loop controller; "
                          "add --controller closed-loop")
    closed = EventTriggeredSettings(recovery=getattr(args, "recovery", None) is not False,
                                    stance_feedback=stance, flight_feedback=flight,
                                    release_lift=lift)
    return calibrated_config(motor=motor, foot_radius=getattr(args, "foot_radius", None),
                             controller=controller, pivot=pivot, event_triggered=closed)


def _hardware(args: argparse.Namespace, sol) -> None:
    """Hardware options not given on the command line from those the solution records."""
    from clamber.jumper.sim.settings import hardware_options

    if getattr(args, "rear_spar", False) is None:
        args.rear_spar = hardware_options(sol).get("rear_spar", False)


def _simulate(args: argparse.Namespace) -> dict:
    from clamber.jumper.sim.simulate import simulate
    from clamber.jumper.sim.telemetry import write_log
    from clamber.report.simulation import save_simulation_figures

    sol = _load(args.solution)
    _hardware(args, sol)
    log.info("simulating %d jump(s) ...", args.jumps)
    res = simulate(sol, jumps=args.jumps, config=_config(args))
    out = Path(args.out)
    summary = res.summary()
    if not args.no_figures:
        log.info("writing figures%s ...", "" if args.no_animation else " and the animation")
        paths = save_simulation_figures(res, sol, out, animation=not args.no_animation)
        summary["figures"] = {k: str(v) for k, v in paths.items()}
    if args.log:
        Path(args.log).parent.mkdir(parents=True, exist_ok=True)
        forces = Path(args.log).with_name(Path(args.log).stem + "_forces.csv")
        write_log(res, args.log, forces)
        summary["telemetry_log"] = str(args.log)
        summary["force_plate_log"] = str(forces)
    summary["events"] = [f"{t:.3f} s {g} {e}" for t, g, e in res.events]
    played = len(summary.get("jumps", []))
    if played < args.jumps:
        last = summary["events"][-1] if summary["events"] else "no event"
        log.warning("warning: the simulation stopped after %d of %d jumps (the last event: "
                    "%s; a jump that does not land ready ends the climb)", played,
                    args.jumps, last)
    return summary


#: CPU time of one simulated jump of a robustness trial [s]: 5.8 s for 200 one-jump trials
#: of the packaged seed jump in one process (`clamber jumper robustness --trials 200
#: --workers 0`), rounded up; what decides whether a study pays for a cluster
#: (options.pays_for_a_cluster): from about 600 simulated jumps on.
ROBUSTNESS_JUMP_S = 0.05
#: Options that define a robustness study, stored in its run folder so a resume replays it.
STUDY_OPTIONS = {"trials": 30, "jumps": 1, "seed": 0, "mass_tol": None, "length_tol": None,
                 "jitter": None, "supply_voltage": 12.0, "foot_radius": None,
                 "controller": "open-loop", "tol_scale": 1.0, "rear_spar": None,
                 "recovery": True, "stance_feedback": "none", "flight_feedback": "none",
                 "release_lift": 0.0}


def _study_options(args: argparse.Namespace, run_dir: Path) -> argparse.Namespace:
    """Unset options from the stored run on ``--resume``, else from the defaults."""
    import json

    stored = {}
    if args.resume:
        path = run_dir / "study.json"
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ConfigError(f"{path}: cannot read the study's options ({e})") from None
    if not isinstance(stored, dict):
        raise ConfigError(f"{run_dir / 'study.json'}: must hold a JSON object")
    given = getattr(args, "given_options", set())
    conflicts = [f"--{name.replace('_', '-')} {getattr(args, name)} (the run has "
                 f"{stored[name]})" for name in STUDY_OPTIONS
                 if name in given and name in stored and getattr(args, name)
                 != _stored_option(run_dir, name, stored[name])]
    if conflicts:
        raise ConfigError(f"--resume {run_dir} continues the study with its own options; "
                          "drop " + ", ".join(conflicts))
    for name, default in STUDY_OPTIONS.items():
        if getattr(args, name) is None:
            setattr(args, name, _stored_option(run_dir, name, stored.get(name, default)))
    return args


def _stored_option(run_dir: Path, name: str, value):
    """A study option read back from study.json, checked with its command-line type."""
    types = {"trials": trial_count, "jumps": jump_count, "seed": seed_int,
             "mass_tol": mass_tolerance, "length_tol": length_tolerance, "jitter": jitter_s,
             "supply_voltage": supply_voltage, "foot_radius": foot_radius,
             "tol_scale": tolerance_scale, "release_lift": release_lift}
    if value is None:
        return None
    if name in ("rear_spar", "recovery"):
        if not isinstance(value, bool):
            raise ConfigError(f"{run_dir / 'study.json'}: {name} = {value!r}: must be "
                              "true or false")
        return value
    if name in ("stance_feedback", "flight_feedback"):
        from clamber.jumper.sim.flight_aim import FLIGHT_FEEDBACKS
        from clamber.jumper.sim.stance_feedback import STANCE_FEEDBACKS

        allowed = STANCE_FEEDBACKS if name == "stance_feedback" else FLIGHT_FEEDBACKS
        if value not in allowed:
            raise ConfigError(f"{run_dir / 'study.json'}: {name} = {value!r}: must "
                              f"be one of {', '.join(allowed)}")
        return value
    if name == "controller":
        if value not in ("open-loop", "closed-loop"):
            raise ConfigError(f"{run_dir / 'study.json'}: controller = {value!r}: must be "
                              "'open-loop' or 'closed-loop'")
        return value
    if not check.is_real(value):
        raise ConfigError(f"{run_dir / 'study.json'}: {name} = {value!r}: must be a number")
    try:
        return types[name](repr(value))
    except argparse.ArgumentTypeError as e:
        raise ConfigError(f"{run_dir / 'study.json'}: {name} = {value!r}: {e}") from None


def _robustness(args: argparse.Namespace) -> dict:
    import json
    from dataclasses import replace

    from clamber.cli.options import (
        TrialProgress,
        evaluator_for,
        progress_enabled,
        release_run,
        run_folder,
        write_trials_csv,
    )
    from clamber.experiments.calibration import calibrated_tolerances
    from clamber.experiments.robustness import robustness
    run_dir = run_folder(args)
    if args.resume and args.solution is not None:
        raise ConfigError(f"--resume {args.resume} replays the solution stored in the run; "
                          f"drop {args.solution}")
    args = _study_options(args, run_dir)
    stored_solution = run_dir / "solution.npz"
    if args.solution is None:
        if not args.resume:
            raise ConfigError("give the solution to play (or --resume RUN_DIR)")
        args.solution = stored_solution
    sol = _load(args.solution)
    _hardware(args, sol)
    from clamber.jumper.robust import design_tol_scale

    designed = design_tol_scale(sol)  # the margin it was designed for (None: not recorded)
    # every calibrated tolerance, with the three the options name replaced where given
    overrides = {"mass_rel": args.mass_tol, "length_abs": args.length_tol,
                 "jitter": args.jitter}
    tol = replace(calibrated_tolerances(args.tol_scale),
                  **{k: v for k, v in overrides.items() if v is not None})
    config = _config(args)  # a bad combination of options is refused before anything runs
    if not args.resume:
        run_dir.mkdir(parents=True, exist_ok=True)
        sol.save(stored_solution)
        (run_dir / "study.json").write_text(json.dumps(
            {k: getattr(args, k) for k in STUDY_OPTIONS}, indent=1), encoding="utf-8")
    cost = ROBUSTNESS_JUMP_S * args.jumps
    with evaluator_for(args, args.trials, cost) as evaluator, \
            TrialProgress(args.trials, "robustness", progress_enabled(args)) as bar:
        res = robustness(sol, args.trials, seed=args.seed, jumps=args.jumps,
                         config=config, tolerances=tol, evaluator=evaluator,
                         run_dir=run_dir, resume=bool(args.resume), progress=bar)
    trials_csv = write_trials_csv(run_dir / "trials.csv", res.trials)
    release_run(run_dir)
    out = {**res.summary(), "tol_scale": args.tol_scale,
           "design_tol_scale": designed, "trials_csv": str(trials_csv),
           "run_dir": str(run_dir)}
    if args.jumps > 1:  # a climb: how far it went before its first failed landing
        from clamber.report.simulation import plot_height_climbed

        counts = [int(t.metrics.get("ready_jumps", 0)) for t in res.trials]
        label = f"{args.controller}, tolerances x{args.tol_scale:g}"
        plot_height_climbed({label: (counts, args.jumps)}, sol.height).savefig(
            run_dir / "height_climbed.png", dpi=120)
        out["figure"] = str(run_dir / "height_climbed.png")
    return out


def _calibrate(args: argparse.Namespace) -> dict:
    from clamber.experiments.calibration import STAGES, calibrate, hardware_trajectories

    log.info("solving the optimized and the tuned jump (minutes) ...")
    traj = hardware_trajectories(tuned=args.tuned)
    grid, trials = STAGES[args.stage]
    if args.quick:
        grid = {"hook_timeconst": (0.008, 0.01), "tolerance_scale": (1.25,), "kd_scale": (0.75,)}
    from clamber.cli.options import evaluator_for

    with evaluator_for(args) as evaluator:
        res = calibrate(traj, grid, args.trials or trials, args.check_trials, args.seed,
                        evaluator)
    out = res.summary()
    out["speeds_mps"] = {k: v.speed for k, v in traj.items()}
    out["stage"], out["tuned_jump"] = args.stage, args.tuned
    return out


def _export(args: argparse.Namespace) -> dict:
    import json

    from clamber.jumper.sim.export import Hardware, export_reference

    if args.hardware:
        hardware = Hardware.load(args.hardware, supply_voltage=args.supply_voltage)
    else:
        hardware = Hardware().with_supply(args.supply_voltage)
    sol = _load(args.solution)
    paths = export_reference(sol, args.out, hardware=hardware, force=args.force)
    record = json.loads(paths["record"].read_text(encoding="utf-8"))
    return {**{k: str(v) for k, v in paths.items()}, **record}


def _telemetry(args: argparse.Namespace) -> dict:
    from clamber.jumper.morphology import Morphology
    from clamber.jumper.sim.telemetry import load_and_analyze
    from clamber.report.simulation import plot_telemetry

    kwargs = {}
    if args.solution:
        sol = _load(args.solution)
        morph = sol.morphology
        kwargs = {"safe_front": sol.settings.safe_region_front,
                  "safe_rear": sol.settings.safe_region_rear}
    elif args.morphology:
        morph = check.morphology_in_range(Morphology.load(args.morphology))
    else:
        morph = Morphology.nominal()
    analysis = load_and_analyze(args.log, morph, args.forces, **kwargs)
    summary = analysis.summary()
    if not args.no_figures:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        fig = plot_telemetry(analysis)
        fig.savefig(out / "telemetry.png", dpi=120)
        summary["figure"] = str(out / "telemetry.png")
    return summary


def _model(args: argparse.Namespace) -> dict:
    from clamber.jumper.mjcf import write_model
    from clamber.jumper.morphology import Morphology

    morph = Morphology.load(args.morphology) if args.morphology else Morphology.nominal()
    check.morphology_in_range(morph)
    return {k: str(v) for k, v in write_model(morph, args.out).items()}


def register(subparsers) -> None:
    """Add the simulation and hand-off subcommands under `clamber jumper`."""
    sim = subparsers.add_parser(
        "simulate", help="play an optimized jump open-loop in MuJoCo",
        description="Open-loop playback of an optimized jump for consecutive jumps: 500 Hz "
        "reference, 1 kHz ESC PD with voltage feed-forward, DC motors, spined grippers that "
        "hook within a capture window and tear off outside the safe region. Reports per "
        "jump the front and rear catch, readiness, height gained and tracking error.",
        epilog=EXAMPLES_SIMULATE, formatter_class=FMT)
    sim.add_argument("solution", type=input_file, help="solution .npz (with its .json)")
    sim.add_argument("--jumps", type=jump_count, default=3,
                     help="consecutive jumps, 1-100 (default 3)")
    sim.add_argument("--log", type=output_file, help="also write a 167 Hz telemetry CSV here")
    add_output_options(sim, "out/sim")
    sim.add_argument("--no-animation", action="store_true", help="skip the GIF only")
    sim.set_defaults(func=_simulate)

    rob = subparsers.add_parser(
        "robustness", help="Monte-Carlo catch and landing rates",
        description="Seeded trials over perturbed masses, lengths, ESC gains, motor constants, "
        "initial state and reference timing; catch rate (front gripper) and ready-landing rate "
        "with 95% Wilson intervals.", epilog=EXAMPLES_ROBUSTNESS, formatter_class=FMT)
    rob.add_argument("solution", type=input_file, nargs="?",
                     help="solution .npz (with its .json); not with --resume")
    rob.add_argument("--trials", type=trial_count, help="number of trials (default 30)")
    rob.add_argument("--jumps", type=jump_count, help="jumps per trial (default 1)")
    rob.add_argument("--seed", type=seed_int, help="master seed (default 0)")
    rob.add_argument("--mass-tol", type=mass_tolerance,
                     help="relative mass tolerance, 0-0.5 (0.05)")
    rob.add_argument("--length-tol", type=length_tolerance,
                     help="link length tolerance [m], 0-0.02 (0.001)")
    rob.add_argument("--jitter", type=jitter_s,
                     help="reference packet jitter [s], 0-0.02 (0.001)")
    rob.add_argument("--controller", choices=("open-loop", "closed-loop"),
                     help="reference clock and gains: playback, or event-triggered gain "
                     "scheduling on the contact switches (default open-loop)")
    rob.add_argument("--stance-feedback", choices=("none", "tvlqr"),
                     help="closed loop: feedback on the push-off added to the feed-forward, "
                     "'tvlqr' (a time-varying LQR on the encoders and an IMU's body angle, "
                     "designed on the nominal robot; its voltage goes through the ESC's "
                     "supply clip) or 'none' (default; the LQR did not improve the climbs, "
                     "docs/results/long_climbs.md)")
    rob.add_argument("--flight-feedback", choices=("none", "aim"),
                     help="closed loop: re-aim the flight at the rear release, 'aim' (the "
                     "board predicts the flight from the sensed take-off with the nominal "
                     "model and offsets the joint targets so the front gripper meets the "
                     "wall at the planned catch) or 'none' (default)")
    rob.add_argument("--release-lift", type=release_lift, metavar="RAD",
                     help="closed loop: offset of the shoulder's target from the front release "
                     "to the take-off, in [-0.5, 0.5] rad (negative turns the released front "
                     "gripper off the wall; default 0, off)")
    rob.add_argument("--tol-scale", type=tolerance_scale,
                     help="every tolerance times this, on top of the calibrated scale (1)")
    add_output_options(rob, "out/robustness", figures=False)
    add_execution_options(rob)
    rob.set_defaults(func=_robustness)

    cal = subparsers.add_parser(
        "calibrate", help="fit the simulator to the paper's 30-trial hardware counts",
        description="Solve the optimized and the hand-tuned jump of the nominal robot, grid-"
        "search the hook compliance, tolerance scale and ESC damping against 12/30 front "
        "catches, 1/30 ready (optimized) and 25/30 both caught (tuned), then rerun the best "
        "point.",
        epilog=EXAMPLES_CALIBRATE, formatter_class=FMT)
    cal.add_argument("--trials", type=positive_int, default=None,
                     help="trials per grid point (the stage's: 60 coarse, 100 fine)")
    cal.add_argument("--stage", choices=("fine", "coarse"), default="fine",
                     help="which grid: the coarse first search or the fine one around its "
                     "best point (fine)")
    cal.add_argument("--tuned", choices=("clearance", "edits"), default="clearance",
                     help="the tuned jump: the paper's two edits with the take-off clearance "
                     "their 25/30 front catches imply, or the two edits alone (clearance)")
    cal.add_argument("--check-trials", type=positive_int, default=200,
                     help="trials of the check (200)")
    cal.add_argument("--seed", type=seed_int, default=0, help="master seed (0)")
    cal.add_argument("--quick", action="store_true", help="a two-point grid (a smoke run)")
    add_output_options(cal, None, figures=False)
    add_execution_options(cal, resumable=False)
    cal.set_defaults(func=_calibrate)

    exp = subparsers.add_parser(
        "export", help="500 Hz reference + voltage feed-forward for the robot",
        description="Resample the optimized joint angles at 500 Hz with the motor model's "
        "voltage feed-forward; check joint, torque, speed and voltage limits; write "
        "reference.csv and reference.bin (versioned header).",
        epilog=EXAMPLES_EXPORT, formatter_class=FMT)
    exp.add_argument("solution", type=input_file,
                     help="solution .npz (with its .json) of `clamber jumper optimize`")
    exp.add_argument("--hardware", type=input_file,
                     help="hardware description TOML of the robot (joint limits, motors); "
                     "default: the paper's motors. Never taken from the solution")
    exp.add_argument("--force", action="store_true",
                     help="export a failed or unverified solve anyway (the limits are "
                     "still checked)")
    add_output_options(exp, "out/export", figures=False)
    exp.set_defaults(func=_export)

    tel = subparsers.add_parser(
        "telemetry", help="analyze a robot log: motor fit, torques, work, safe region",
        description="Read a 167 Hz joint log (and force-plate CSV), fit tau = a V - c omega "
        "per joint, compute torques, mechanical work per joint per jump and the share of "
        "stance outside the safe region; writes a Fig.-8 style figure.",
        epilog=EXAMPLES_TELEMETRY, formatter_class=FMT)
    tel.add_argument("log", type=input_file, help="telemetry CSV")
    tel.add_argument("--forces", type=input_file, help="force-plate CSV (front gripper)")
    tel.add_argument("--solution", type=input_file,
                     help="take morphology and safe regions from it")
    tel.add_argument("--morphology", type=input_file, help="morphology TOML (default nominal)")
    add_output_options(tel, "out/telemetry")
    tel.set_defaults(func=_telemetry)

    mod = subparsers.add_parser(
        "model", help="write MJCF, scene and URDF of a morphology",
        description="Generate jumper.xml, scene.xml (with the wall) and jumper.urdf.",
        epilog=EXAMPLES_MODEL, formatter_class=FMT)
    mod.add_argument("--morphology", type=input_file, help="morphology TOML (default nominal)")
    add_output_options(mod, "models/jumper", figures=False)
    mod.set_defaults(func=_model)

    for p in (sim, rob, exp):
        p.add_argument("--supply-voltage", type=supply_voltage,
                       default=None if p in (rob, exp) else 12.0,
                       help="motor supply voltage [V], 0-48 (default 12; for export, the "
                       "hardware description's)")
    for p in (sim, rob):
        p.add_argument("--foot-radius", type=foot_radius,
                       help="the robot's gripper radius [m], up to 0.05 (default: the "
                       "optimization's)")
        p.add_argument("--rear-spar", action="store_true", default=None,
                       help="a spar on the rear foot too, at the front spar's angle (a "
                       "hardware option; the paper's rear foot has none; default: what the "
                       "solution records)")
        p.add_argument("--no-recovery", dest="recovery", action="store_false", default=None,
                       help="closed loop: no re-catch after a missed rear catch (the climb "
                       "ends there)")


#: The stored design that climbs furthest (docs/results/long_climbs.md), which the demo
#: races against its own landing design.
LONG_CLIMB = Path(__file__).resolve().parents[2] / "docs" / "data" / "long_climb" / "solution.npz"
#: The demo's climbs per design: trials and jumps each.
DEMO_CLIMBS = (20, 10)


def demo_step(out_dir: Path, summary: dict, as_json: bool) -> tuple[dict, list]:
    """Simulate the demo's best design for 3 jumps with a robustness study; returns its
    summary and report section. With a landing design (calibrated simulator, closed-loop
    catching with the rear re-catch) it and the stored long-climb design each climb
    :data:`DEMO_CLIMBS`, and the one that climbs higher on average before its first failed
    landing is shown with its long-climb figure; otherwise the design is played open loop
    with 30 one-jump trials."""
    from clamber.cli.options import pays_for_a_cluster
    from clamber.experiments.robustness import robustness
    from clamber.jumper.sim.simulate import simulate
    from clamber.parallel.dask import available_cores
    from clamber.parallel.factory import make_evaluator
    from clamber.report.html import Section
    from clamber.report.simulation import plot_height_climbed, save_simulation_figures

    landing = summary.get("landing_solution")
    path = landing or summary.get("codesign_best_solution") or summary.get("solution_path")
    if not path:
        return {}, []
    sol = _load(Path(path))
    if not sol.status.success:
        return {"simulation": "skipped: the optimization did not converge"}, []
    candidates = [(str(path), sol)]
    if landing and LONG_CLIMB.exists():
        candidates.append((str(LONG_CLIMB), _load(LONG_CLIMB)))
    config = tolerances = None
    trials, jumps = (30, 1) if not landing else DEMO_CLIMBS
    climbs = {}
    cost = len(candidates) * trials * jumps  # simulated jumps: a cluster only where it pays
    workers = min(2, available_cores()) if pays_for_a_cluster(cost, ROBUSTNESS_JUMP_S) else 0
    with make_evaluator(workers) as evaluator:
        for name, cand in candidates:
            if landing:  # calibrated simulator, closed-loop catching, the design's hardware
                from clamber.experiments.calibration import calibrated_tolerances

                args = argparse.Namespace(supply_voltage=12.0, controller="closed-loop",
                                          rear_spar=None)
                _hardware(args, cand)
                config, tolerances = _config(args), calibrated_tolerances()
            climbs[name] = (cand, config, robustness(cand, trials, jumps=jumps, config=config,
                                                     tolerances=tolerances,
                                                     evaluator=evaluator))
    path, (sol, config, rob) = max(  # the design that climbs furthest on average
        climbs.items(), key=lambda kv: kv[1][2].height_climbed()["mean"])
    res = simulate(sol, jumps=3, config=config)
    figures = save_simulation_figures(res, sol, Path(out_dir) / "sim")
    log.info("simulation: %d/3 ready landings; robustness: catch %d/%d, ready %d/%d",
             res.summary()["ready_landings"], rob.catch.successes, trials,
             rob.landing.successes, trials)
    sim = res.summary()
    table = {"design": path,
             "simulator": ("calibrated, closed-loop catching with rear re-catch" if landing
                           else "default, open loop"),
             "ready landings (3 jumps)": sim["ready_landings"],
             f"catch rate ({trials} trials)": rob.catch.rate,
             f"climbs that land all {jumps} jump(s) ({trials} trials)": rob.landing.rate}
    long_climb = {}
    if landing:
        heights = {}
        for name, (_, _, r) in climbs.items():
            s = r.summary()
            long_climb[name] = {k: s[k] for k in (
                "per_jump_ready_rate", "per_jump_ready_interval", "landing_rate",
                "rear_misses", "recovered_rear_misses", "height_climbed_m")}
            heights[Path(name).parent.name] = ([t.metrics.get("ready_jumps", 0)
                                               for t in r.trials], jumps)
        s = rob.summary()
        table.update({"ready landings per jump": s["per_jump_ready_rate"],
                      "rear misses re-caught": f"{s['recovered_rear_misses']} of "
                                               f"{s['rear_misses']}",
                      "median height climbed [m]": s["height_climbed_m"]["median"],
                      "designs raced": ", ".join(climbs)})
        figure = Path(out_dir) / "sim" / "height_climbed.png"
        plot_height_climbed(heights, sol.height, "the demo's climbs, calibrated "
                            "tolerances").savefig(figure, dpi=120)
        figures["height_climbed"] = figure
    section = Section("The design that climbs furthest, in simulation", table,
                      {k: v for k, v in figures.items() if str(v).endswith(".png")})
    return {"simulated_solution": path,
            "simulation": {k: sim[k] for k in ("front_catches", "rear_catches",
                                               "ready_landings", "jumps")},
            "simulation_figures": {k: str(v) for k, v in figures.items()},
            "robustness": rob.summary(), "long_climb": long_climb}, [section]
