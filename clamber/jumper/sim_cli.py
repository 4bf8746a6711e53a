"""`clamber jumper simulate | robustness | export | telemetry | model`, and the demo's sim step."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

FMT = argparse.RawDescriptionHelpFormatter

EXAMPLES_SIMULATE = """examples:
  clamber jumper simulate out/jumper/solution.npz
  clamber jumper simulate out/jumper/solution.npz --jumps 5 --out out/sim --json
  clamber jumper simulate sol.npz --no-animation --log out/sim/telemetry.csv
"""
EXAMPLES_ROBUSTNESS = """examples:
  clamber jumper robustness out/jumper/solution.npz --trials 30
  clamber jumper robustness sol.npz --trials 200 --workers 2 --seed 1 --json
  clamber jumper robustness sol.npz --trials 100 --mass-tol 0.1 --jitter 0.002
  clamber jumper robustness aimed.npz --trials 200 --foot-radius 0.010  # robot's real radius
"""
EXAMPLES_ROBUSTNESS += (
    "  clamber jumper robustness s.npz --controller closed-loop --jumps 10 --json\n")
EXAMPLES_EXPORT = """examples:
  clamber jumper export out/jumper/solution.npz --out out/export
  clamber jumper export sol.npz --supply-voltage 7.4     # fails if 7.4 V cannot follow
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

    return TrajectorySolution.load(path)


def _config(args: argparse.Namespace):
    from clamber.jumper.sim.calibration import calibrated_config
    from clamber.jumper.sim.motor import MotorParameters

    motor = MotorParameters(supply_voltage=args.supply_voltage)
    return calibrated_config(motor=motor, foot_radius=getattr(args, "foot_radius", None),
                             controller=getattr(args, "controller", "open-loop"))


def _simulate(args: argparse.Namespace) -> dict:
    from clamber.jumper.sim.plots import save_simulation_figures
    from clamber.jumper.sim.simulate import simulate
    from clamber.jumper.sim.telemetry import write_log

    sol = _load(args.solution)
    res = simulate(sol, jumps=args.jumps, config=_config(args))
    out = Path(args.out)
    summary = res.summary()
    if not args.no_figures:
        if not args.json:
            print("writing figures ...", file=sys.stderr)
        paths = save_simulation_figures(res, sol, out, animation=not args.no_animation)
        summary["figures"] = {k: str(v) for k, v in paths.items()}
    if args.log:
        forces = Path(args.log).with_name(Path(args.log).stem + "_forces.csv")
        write_log(res, args.log, forces)
        summary["telemetry_log"] = str(args.log)
        summary["force_plate_log"] = str(forces)
    summary["events"] = [f"{t:.3f} s {g} {e}" for t, g, e in res.events]
    return summary


def _robustness(args: argparse.Namespace) -> dict:
    from clamber.jumper.sim.calibration import CALIBRATED
    from clamber.jumper.sim.robustness import Tolerances, robustness

    sol = _load(args.solution)
    base = Tolerances().scaled(CALIBRATED["tolerance_scale"] * args.tol_scale)
    tol = Tolerances(
        mass_rel=base.mass_rel if args.mass_tol is None else args.mass_tol,
        length_abs=base.length_abs if args.length_tol is None else args.length_tol,
        jitter=base.jitter if args.jitter is None else args.jitter)
    if not args.json:
        print(f"{args.trials} trials on {args.workers} processes ...", file=sys.stderr)
    res = robustness(sol, args.trials, seed=args.seed, jumps=args.jumps, config=_config(args),
                     tolerances=tol, workers=args.workers)
    return res.summary()


def _calibrate(args: argparse.Namespace) -> dict:
    from clamber.jumper.sim.calibration import calibrate, hardware_trajectories

    if not args.json:
        print("solving the optimized and the tuned jump ...", file=sys.stderr)
    traj = hardware_trajectories()
    grid = None
    if args.quick:
        grid = {"hook_timeconst": (0.002, 0.006), "tolerance_scale": (1.0, 1.5)}
    res = calibrate(traj, grid, args.trials, args.check_trials, args.seed, args.workers)
    out = res.summary()
    out["speeds_mps"] = {k: v.speed for k, v in traj.items()}
    return out


def _export(args: argparse.Namespace) -> dict:
    from clamber.jumper.sim.export import export_reference
    from clamber.jumper.sim.motor import MotorParameters

    sol = _load(args.solution)
    paths = export_reference(sol, args.out, MotorParameters(supply_voltage=args.supply_voltage))
    return {k: str(v) for k, v in paths.items()}


def _telemetry(args: argparse.Namespace) -> dict:
    from clamber.jumper.morphology import Morphology
    from clamber.jumper.sim.plots import plot_telemetry
    from clamber.jumper.sim.telemetry import load_and_analyze

    kwargs = {}
    if args.solution:
        sol = _load(args.solution)
        morph = sol.morphology
        kwargs = {"safe_front": sol.settings.safe_region_front,
                  "safe_rear": sol.settings.safe_region_rear}
    elif args.morphology:
        morph = Morphology.load(args.morphology)
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
    sim.add_argument("solution", type=Path, help="solution .npz (with its .json)")
    sim.add_argument("--jumps", type=int, default=3, help="consecutive jumps (default 3)")
    sim.add_argument("--out", default="out/sim", help="figure folder (default out/sim)")
    sim.add_argument("--log", type=Path, help="also write a 167 Hz telemetry CSV here")
    sim.add_argument("--no-figures", action="store_true", help="skip figures and GIF")
    sim.add_argument("--no-animation", action="store_true", help="skip the GIF only")
    sim.set_defaults(func=_simulate)

    rob = subparsers.add_parser(
        "robustness", help="Monte-Carlo catch and landing rates",
        description="Seeded trials over perturbed masses, lengths, ESC gains, motor constants, "
        "initial state and reference timing; catch rate (front gripper) and ready-landing rate "
        "with 95% Wilson intervals.", epilog=EXAMPLES_ROBUSTNESS, formatter_class=FMT)
    rob.add_argument("solution", type=Path)
    rob.add_argument("--trials", type=int, default=30, help="number of trials (default 30)")
    rob.add_argument("--jumps", type=int, default=1, help="jumps per trial (default 1)")
    rob.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    rob.add_argument("--workers", type=int, default=2, help="processes; 0 = serial (default 2)")
    rob.add_argument("--mass-tol", type=float, help="relative mass tolerance (0.05)")
    rob.add_argument("--length-tol", type=float, help="link length tolerance [m] (0.001)")
    rob.add_argument("--jitter", type=float, help="reference packet jitter [s] (0.001)")
    rob.add_argument("--controller", choices=("open-loop", "closed-loop"), default="open-loop",
                     help="reference clock: playback, or event-triggered catching on the "
                     "contact switches (default open-loop)")
    rob.add_argument("--tol-scale", type=float, default=1.0,
                     help="every tolerance times this, on top of the calibrated scale")
    rob.set_defaults(func=_robustness)

    cal = subparsers.add_parser(
        "calibrate", help="fit the simulator to the paper's 30-trial hardware counts",
        description="Solve the optimized and the hand-tuned jump of the nominal robot, grid-"
        "search the hook compliance and the tolerance scale against 12/30 front catches, 1/30 "
        "ready (optimized) and 25/30 both caught (tuned), then rerun the best point.",
        formatter_class=FMT)
    cal.add_argument("--trials", type=int, default=60, help="trials per grid point (60)")
    cal.add_argument("--check-trials", type=int, default=200, help="trials of the check (200)")
    cal.add_argument("--seed", type=int, default=0)
    cal.add_argument("--workers", type=int, default=0, help="processes; 0 = serial")
    cal.add_argument("--quick", action="store_true", help="a 2 x 2 grid (a smoke run)")
    cal.set_defaults(func=_calibrate)

    exp = subparsers.add_parser(
        "export", help="500 Hz reference + voltage feed-forward for the robot",
        description="Resample the optimized joint angles at 500 Hz with the motor model's "
        "voltage feed-forward; check joint, torque, speed and voltage limits; write "
        "reference.csv and reference.bin (versioned header).",
        epilog=EXAMPLES_EXPORT, formatter_class=FMT)
    exp.add_argument("solution", type=Path)
    exp.add_argument("--out", default="out/export", help="output folder (default out/export)")
    exp.set_defaults(func=_export)

    tel = subparsers.add_parser(
        "telemetry", help="analyze a robot log: motor fit, torques, work, safe region",
        description="Read a 167 Hz joint log (and force-plate CSV), fit tau = a V - c omega "
        "per joint, compute torques, mechanical work per joint per jump and the share of "
        "stance outside the safe region; writes a Fig.-8 style figure.",
        epilog=EXAMPLES_TELEMETRY, formatter_class=FMT)
    tel.add_argument("log", type=Path, help="telemetry CSV")
    tel.add_argument("--forces", type=Path, help="force-plate CSV (front gripper)")
    tel.add_argument("--solution", type=Path, help="take morphology and safe regions from it")
    tel.add_argument("--morphology", type=Path, help="morphology TOML (default nominal)")
    tel.add_argument("--out", default="out/telemetry", help="figure folder")
    tel.add_argument("--no-figures", action="store_true")
    tel.set_defaults(func=_telemetry)

    mod = subparsers.add_parser(
        "model", help="write MJCF, scene and URDF of a morphology",
        description="Generate jumper.xml, scene.xml (with the wall) and jumper.urdf.",
        epilog=EXAMPLES_MODEL, formatter_class=FMT)
    mod.add_argument("--morphology", type=Path, help="morphology TOML (default nominal)")
    mod.add_argument("--out", default="models/jumper", help="output folder")
    mod.set_defaults(func=_model)

    for p in (sim, rob, exp, tel, mod, cal):
        p.add_argument("--json", action="store_true", help="print one JSON summary")
    for p in (sim, rob, exp):
        p.add_argument("--supply-voltage", type=float, default=12.0,
                       help="motor supply voltage [V] (default 12)")
    for p in (sim, rob):
        p.add_argument("--foot-radius", type=float,
                       help="the robot's gripper radius [m] (default: the optimization's)")


def demo_step(out_dir: Path, summary: dict, as_json: bool) -> dict:
    """Simulate the demo's best design (the co-design's, else the optimized nominal robot)
    for 3 jumps with a 30-trial robustness study; add the result to the co-design report."""
    from clamber.jumper.sim.plots import save_simulation_figures
    from clamber.jumper.sim.robustness import robustness
    from clamber.jumper.sim.simulate import simulate

    path = summary.get("codesign_best_solution") or summary.get("solution_path")
    if not path:
        return {}
    sol = _load(Path(path))
    if not sol.status.success:
        return {"simulation": "skipped: the optimization did not converge"}
    res = simulate(sol, jumps=3)
    figures = save_simulation_figures(res, sol, Path(out_dir) / "sim")
    rob = robustness(sol, 30, workers=2)
    if not as_json:
        print(f"simulation: {res.summary()['ready_landings']}/3 ready landings; "
              f"robustness: catch {rob.catch.successes}/30, ready {rob.landing.successes}/30",
              file=sys.stderr)
    sim = res.summary()
    report = summary.get("codesign_report")
    if report and Path(report).exists():
        from clamber.search.report import append_section

        table = {"design": str(path), "ready landings (3 jumps)": sim["ready_landings"],
                 "catch rate (30 trials)": rob.catch.rate,
                 "ready-landing rate (30 trials)": rob.landing.rate}
        append_section(report, "The best design in simulation", table,
                       {k: v for k, v in figures.items() if str(v).endswith(".png")})
    return {"simulated_solution": str(path),
            "simulation": {k: sim[k] for k in ("front_catches", "rear_catches",
                                               "ready_landings", "jumps")},
            "simulation_figures": {k: str(v) for k, v in figures.items()},
            "robustness": rob.summary()}
