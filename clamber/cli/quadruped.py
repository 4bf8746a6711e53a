"""`clamber quadruped`: simulated climbing and trotting trials and the controller comparison."""

from __future__ import annotations

import argparse
import logging
import os
import time
from pathlib import Path

from clamber.cli import rock
from clamber.cli.options import (
    RESEAT_HELP,
    LazyChoices,
    add_execution_options,
    add_output_options,
    number_type,
    quantity_type,
    seed_int,
    strict_json,
    write_trials_csv,
)
from clamber.cli.quadruped_compare import (
    CYCLE_S,
    add_physics_dt,
    check_stored_trials,
    physics_dt_of,
    register_compare,
    sole_compliance,
)
from clamber.exceptions import ConfigError

log = logging.getLogger("clamber")
#: Where the scenario and controller names live (loaded when a command needs them).
SCENARIO_NAMES_AT = ("clamber.experiments.quadruped_scenarios", "SCENARIOS")
SCENARIO_NAMES = LazyChoices(*SCENARIO_NAMES_AT)
CONTROLLER_NAMES = LazyChoices("clamber.quadruped.control.variants", "CONTROLLER_NAMES")

#: Option ranges: wall inclines from flat ground to an overhanging ceiling [deg], control
#: rates up to the 1 kHz servo loop [Hz], sole stiffness up to a practically rigid sole.
incline_deg = number_type(float, 0, 180, unit=" deg")
control_rate = quantity_type(float, "control_rate")
sole_stiffness = quantity_type(float, "sole_stiffness")
trial_count = quantity_type(int, "trials")
cycle_count = quantity_type(int, "gait_cycles")
reseat_count = quantity_type(int, "reseat_every")
sighting_mm = quantity_type(float, "sighting")
held_tilt = quantity_type(float, "held_tilt")
capacity_margin = quantity_type(float, "capacity_margin")
capacity_weight = quantity_type(float, "capacity_weight")
attitude_integral = quantity_type(float, "attitude_integral")
replacement_count = number_type(int, 0, 5)
level_gain = number_type(float, 0, 100, unit=" 1/s")
#: The knee angles a plan may be held to [rad]: from the knee's limit to below its default.
_knee_angle = number_type(float, -0.4, 0.99, unit=" rad")


def _knee_bend(text: str) -> str | float:
    """``--knee-bend``: 'limit' (the knee's own limit) or an angle [rad]."""
    if text == "limit":
        return text
    try:
        return _knee_angle(text)
    except argparse.ArgumentTypeError as e:
        raise argparse.ArgumentTypeError(f"{e}, or 'limit'") from None

EXAMPLES = """examples:
  clamber quadruped climb --controller qwbc --incline 90 --trials 5 --seed 0
  clamber quadruped climb --controller clik --incline 70 --trials 20 --workers 2 --json
  clamber quadruped climb --controller vmc --unbreakable --out out/quadruped/vmc
  clamber quadruped climb --scenario wall90 --cycles 20 --trials 20 --seed 8000 --workers 2 --json
  clamber quadruped climb --scenario wall90 --cycles 5 --reseat-order swing --swing-retries 0
  clamber quadruped climb --wall rock --incline 70 90 110 --trials 20 --workers 2 --json
  clamber quadruped climb --wall rock --grasp fixed --incline 90 --distance 0.5 --trials 5
  clamber quadruped trot --terrain gravel --feet both --cycles 20
  clamber quadruped trot --terrain flat --feet all --contacts torque --level-gain 2 --json
  clamber quadruped compare --trials 20 --workers 2 --json   # every scenario, 5 cycles
  clamber quadruped compare --trials 20 --scenarios wall70 wall90 --sole-stiffness 50
  clamber quadruped compare --trials 20 --tune --ablations --scenarios wall90 --workers 2
  clamber quadruped compare --trials 5 --gains out/quadruped/compare/comparison.json
  clamber quadruped compare --trials 20 --cycles 1 --state true   # one cycle, true state
  clamber quadruped compare --resume out/quadruped/compare    # a killed comparison goes on
  clamber quadruped model --out models/marcbot                # MJCF, URDF, README
"""


def examples_of(command: str) -> str:
    """The lines of :data:`EXAMPLES` for one subcommand (its help shows only its own)."""
    lines = [ln for ln in EXAMPLES.splitlines()[1:] if f"quadruped {command} " in ln + " "]
    return "examples:\n" + "\n".join(lines) + "\n"


def _prepare_gl(args: argparse.Namespace | None = None) -> None:
    """Ask MuJoCo for a headless EGL context (unless the user chose one) when an animation
    will be rendered; without a working context the GIF falls back to matplotlib."""
    if args is None or not (args.no_figures or args.no_animation):
        os.environ.setdefault("MUJOCO_GL", "egl")


def _study_folder(args: argparse.Namespace) -> Path:
    """The run folder of a recorded quadruped study, its options recorded (a new run) or
    restored from it (``--resume``; a conflicting option is refused here, before any
    worker starts)."""
    from clamber.cli.options import restore_options, run_folder

    out = run_folder(args)
    restore_options(args, out)
    return out


def _run(args: argparse.Namespace, kind: str, conditions: list, run_dir: Path,
         cycles: int = 1):
    """Run or resume a recorded study of ``conditions`` x ``--trials`` seeds."""
    from clamber.cli.options import TrialProgress, evaluator_for, progress_enabled, release_run
    from clamber.experiments.quadruped import run_quadruped_study

    seeds = list(range(args.seed, args.seed + args.trials))
    total = len(conditions) * len(seeds)
    if args.resume:
        check_stored_trials(run_dir, kind, len(conditions), seeds)
    with evaluator_for(args, total, CYCLE_S * cycles) as evaluator, \
            TrialProgress(total, kind, progress_enabled(args)) as bar:
        out = run_quadruped_study(kind, conditions, seeds, evaluator, run_dir,
                                  bool(args.resume), bar)
    release_run(run_dir)
    return out


def _write_json(path: Path, summary: dict) -> None:
    path.write_text(strict_json(summary, indent=1) + "\n")


def _contact_force(args: argparse.Namespace) -> float | None:
    """The gait's descent rule from ``--contact``: None (the gait's default), the force
    threshold [N], or 0 (the joint-4 torque rule)."""
    from clamber.quadruped.gaits.climb import CONTACT_FORCE

    return {None: None, "force": CONTACT_FORCE, "torque": 0.0}[args.contact]


def _climb_settings(args: argparse.Namespace, incline: float):
    """The condition of one incline: the plane trial's settings, or the rock trial's."""
    from clamber.quadruped.gaits import ClimbGaitSettings
    from clamber.quadruped.trials.climb import ClimbSettings

    settings = ClimbSettings(controller=args.controller, incline_deg=incline,
                             control_rate=args.rate, state=args.state,
                             physics_dt=physics_dt_of(args, args.rate),
                             gait=ClimbGaitSettings(cycles=args.cycles,
                                                    reseat_every=args.reseat_every,
                                                    contact_force=_contact_force(args),
                                                    move_moment=args.move_moment,
                                                    swing_retries=args.swing_retries,
                                                    reseat_order=args.reseat_order
                                                    or "wound",
                                                    wound_limit=args.wound_limit,
                                                    body_tilt=args.body_tilt or 0.0,
                                                    tilt_goal=args.tilt_goal or "move",
                                                    landing=args.landing),
                             breakable=not args.unbreakable,
                             sole=sole_compliance(args.sole_stiffness),
                             sighting=None if args.sighting is None else args.sighting / 1e3,
                             attitude_integral=args.attitude_integral)
    if args.scenario:
        from dataclasses import replace

        from clamber.experiments.quadruped_scenarios import scenario_settings

        base = scenario_settings(args.scenario)
        settings = replace(settings, incline_deg=base.incline_deg, heading_deg=base.heading_deg,
                           rocks=base.rocks, disturbance=base.disturbance, scenario=args.scenario)
    if args.wall == "plane":
        return settings
    from clamber.quadruped.model.windup import LANDING_CONE
    from clamber.quadruped.trials.rock_climb import (
        CONTACT_FORCE,
        SEAT_RISE,
        RockClimbSettings,
    )

    return RockClimbSettings(climb=settings, distance=args.distance, rule=args.rule,
                             grasp=args.grasp,
                             capacity_limits=args.gripper_limits == "capacity",
                             reorder=args.leg_order == "adaptive",
                             landing_cone=None if args.landing == "hold" else LANDING_CONE,
                             seat_rise=_seat_rise(args, SEAT_RISE),
                             seat_margin=args.seat_margin / 1000.0,
                             contact_force=None if args.contact == "torque" else CONTACT_FORCE,
                             footpad_push=args.compression == "footpad",
                             anchor_ekf=args.anchor_ekf == "on" or args.estimator == "anchor",
                             body_search=args.body_pose == "search",
                             pre_move=args.pre_move == "on",
                             **({} if args.held_tilt is None else
                                {"held_tilt": args.held_tilt}),
                             **({} if args.capacity_margin is None else
                                {"capacity_margin": args.capacity_margin}),
                             **({} if args.capacity_weight is None else
                                {"capacity_weight": args.capacity_weight}),
                             plan_reseats=args.plan_reseats == "on",
                             reseat_centre=args.reseat_centre == "on",
                             reseat_landing=args.reseat_landing == "on",
                             **({} if args.start_probe is None else
                                {"start_probe": args.start_probe}),
                             **({} if args.lookahead is None else
                                {"lookahead": args.lookahead}),
                             **({} if args.foot_gap is None else
                                {"foot_gap": args.foot_gap}),
                             **({} if args.knee_bend is None else
                                {"knee_bend": None if args.knee_bend == "limit"
                                 else float(args.knee_bend)}),
                             knee_fallback=args.knee_fallback == "on",
                             reposition=args.reposition == "on",
                             **({} if args.stall_raises is None else
                                {"stall_raises": args.stall_raises}),
                             **({} if args.unload_slip is None else
                                {"unload_slip": args.unload_slip}),
                             **({} if args.body_tilt is None else
                                {"body_tilt": args.body_tilt}),
                             **({} if args.tilt_goal is None else
                                {"tilt_goal": args.tilt_goal}),
                             **({} if args.regrasps is None else
                                {"regrasps": args.regrasps}),
                             **({} if args.reseat_order is None and not args.wound_share
                                else {"reseat_order": args.reseat_order or "wound"}),
                             wound_share=args.wound_share,
                             estimator=args.estimator, replacements=args.replace_missed,
                             map_frame=args.map_frame,
                             reseat_every=(1 if args.reseat_every is None
                                           else args.reseat_every),
                             move_moment=args.move_moment,
                             carry_limits=args.carry_limits)


def _seat_rise(args: argparse.Namespace, default: float) -> float | None:
    """The planner's seat check [m] from ``--seat-check`` and ``--seat-tolerance`` [mm]."""
    if args.seat_check == "off":
        return None
    return default if args.seat_tolerance is None else args.seat_tolerance / 1000.0


def _climb(args: argparse.Namespace) -> dict:
    out = _study_folder(args)
    _prepare_gl(args)
    if args.wall == "rock" and args.scenario:
        raise ConfigError("--scenario is for the plane wall; give --incline with --wall rock")
    if args.wall == "rock" and args.landing == "keep":
        raise ConfigError("--landing keep is for the plane wall; rock walls land each sole "
                          "by its hold: body or hold")
    from clamber.quadruped.model.robot import Marcbot
    from clamber.quadruped.planning.selection import default_foot_gap

    inclines = list(dict.fromkeys(args.incline))
    conditions = [_climb_settings(args, inc) for inc in inclines]
    t0 = time.perf_counter()
    results, trials = _run(args, "quadruped-climb", conditions, out, args.cycles)
    rows = []
    for inc, cond, result in zip(inclines, conditions, results, strict=True):
        row = {"command": "climb", "controller": args.controller, "incline_deg": inc,
               "state": args.state, "breakable": not args.unbreakable,
               "sole_stiffness": args.sole_stiffness,
               "reseat_every": (cond.reseat_every if args.wall == "rock"
                                else cond.gait.reseat_every),
               "move_moment": (cond.move_moment if args.wall == "rock"
                               else cond.gait.move_moment),
               "attitude_integral": args.attitude_integral,
               "sighting_mm": (None if args.wall == "rock"
                               else round(1e3 * cond.sighting, 3)),
               "contact": ("torque" if (cond.contact_force if args.wall == "rock"
                                        else cond.gait.contact_force) in (None, 0.0)
                           else "force")}
        if args.wall == "rock":
            row.update(wall="rock", grasp=args.grasp, rule=args.rule, distance=args.distance,
                       gripper_limits=args.gripper_limits, leg_order=args.leg_order,
                       landing=args.landing or "body", seat_check=args.seat_check,
                       seat_tolerance_mm=(None if cond.seat_rise is None
                                          else round(1000.0 * cond.seat_rise, 3)),
                       seat_margin_mm=round(1000.0 * cond.seat_margin, 3),
                       compression=args.compression,
                       anchor_ekf=("on" if cond.anchor_ekf else "off"),
                       body_pose=args.body_pose, pre_move=args.pre_move,
                       body_tilt=cond.body_tilt, tilt_goal=cond.tilt_goal,
                       held_tilt=cond.held_tilt, carry_limits=args.carry_limits,
                       capacity_margin=cond.capacity_margin,
                       capacity_weight=cond.capacity_weight, plan_reseats=args.plan_reseats,
                       reseat_centre="on" if cond.reseat_centre else "off",
                       reseat_landing="on" if cond.reseat_landing else "off",
                       start_probe=cond.start_probe, lookahead=cond.lookahead,
                       foot_gap_mm=round(1000.0 * (default_foot_gap(Marcbot())
                                                   if cond.foot_gap is None
                                                   else cond.foot_gap), 3),
                       knee_bend=("limit" if cond.knee_bend is None else cond.knee_bend),
                       knee_fallback="on" if cond.knee_fallback else "off",
                       reposition="on" if cond.reposition else "off",
                       stall_raises=cond.stall_raises, unload_slip=cond.unload_slip,
                       estimator=args.estimator,
                       replace_missed=args.replace_missed, regrasps=cond.regrasps,
                       map_frame=args.map_frame, reseat_order=cond.reseat_order,
                       wound_share=cond.wound_share)
        else:
            row.update(swing_retry_limit=cond.gait.swing_retries,
                       reseat_order=cond.gait.reseat_order, wound_limit=cond.gait.wound_limit,
                       body_tilt=cond.gait.body_tilt, tilt_goal=cond.gait.tilt_goal,
                       landing=cond.gait.landing)
        rows.append({**row, **result.summary})
    summary = dict(rows[0]) if len(rows) == 1 else {"command": "climb", "wall": args.wall,
                                                     "conditions": rows}
    write_trials_csv(out / "trials.csv", trials)
    figures = {}
    if not args.no_figures:
        figures = _climb_figures(args, conditions[0], inclines[0], out)
        if args.wall == "rock":
            from clamber.report.rock import plot_rock_climbs
            from clamber.report.save import save_figure

            climbs = [{"incline_deg": inclines[t.group], "distance_m":
                       t.metrics.get("distance_m"), "failure": t.metrics.get("failure")}
                      for t in trials]
            figures["study"] = str(save_figure(plot_rock_climbs(climbs, args.distance),
                                               out / "rock_climbs.png"))
    summary["figures"] = figures
    summary["trials_csv"] = str(out / "trials.csv")
    summary["run_dir"] = str(out)
    summary["total_wall_time_s"] = time.perf_counter() - t0
    _write_json(out / "summary.json", summary)
    return summary


def _climb_figures(args: argparse.Namespace, settings, incline: float, out: Path) -> dict:
    """Replay the first seed of the first incline with a log: its figure and GIF."""
    from clamber.report.quadruped import save_climb

    log.info("replaying seed %d for the figures%s ...", args.seed,
             "" if args.no_animation else " and the animation")
    wall = ""
    if args.wall == "rock":
        from clamber.quadruped.trials.rock_climb import run_rock_climb

        result, trace = run_rock_climb(settings, args.seed, log=True)
        wall = f"rock ({args.grasp} grasp), reached {result.distance_m:.2f} m, "
    else:
        from clamber.quadruped.trials.climb import run_climb

        _, trace = run_climb(settings, args.seed, log=True)
    if trace is None:
        return {}
    paths = save_climb(trace, out, f"{args.controller}, {wall}{incline:g} deg, seed "
                       f"{args.seed}", animation=not args.no_animation)
    return {k: str(v) for k, v in paths.items()}


def _trot(args: argparse.Namespace) -> dict:
    out = _study_folder(args)
    _prepare_gl(args)
    from clamber.experiments.quadruped import trot_conditions
    from clamber.quadruped.sim.world import TERRAINS
    from clamber.quadruped.trials.trot import TrotSettings, run_trot

    terrains = TERRAINS[1:] if args.terrain == "all" else (args.terrain,)
    from clamber.quadruped.sim.scene import FEET

    feet = {"both": ("gripper", "rubber"), "all": FEET}.get(args.feet, (args.feet,))
    t0 = time.perf_counter()
    estimation = {"estimator": args.estimator, "contacts": args.contacts,
                  "level_gain": args.level_gain}
    results, trials = _run(args, "quadruped-trot", trot_conditions(terrains, feet,
                                                                   args.cycles, **estimation),
                           out, args.cycles)
    study = [r.to_dict() for r in results]
    figures = {}
    if not args.no_figures:
        from clamber.quadruped.gaits import TrotGaitSettings
        from clamber.report.quadruped import animate, plot_trot, plot_trot_study
        from clamber.report.save import save_figure

        figures["study"] = save_figure(plot_trot_study(study), out / "trot_study.png")
        settings = TrotSettings(terrain=terrains[0], feet=feet[0],
                                gait=TrotGaitSettings(cycles=args.cycles), **estimation)
        log.info("replaying seed %d for the figures ...", args.seed)
        _, trace = run_trot(settings, args.seed, log=True, snapshot_period=0.1)
        figures["trot"] = save_figure(plot_trot(trace, f"trot, {terrains[0]}, {feet[0]} feet"),
                                      out / "trot.png")
        if not args.no_animation:
            figures["animation"], _ = animate(trace, out / "trot.gif")
    write_trials_csv(out / "trials.csv", trials)
    summary = {"command": "trot", "results": study, "run_dir": str(out),
               "figures": {k: str(v) for k, v in figures.items()},
               "total_wall_time_s": time.perf_counter() - t0}
    _write_json(out / "summary.json", summary)
    return summary


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `quadruped` command and its subcommands to the top-level parser."""
    fmt = argparse.RawDescriptionHelpFormatter
    quad = sub.add_parser("quadruped", help="the MARCBot-class quadruped in simulation",
                          description="Climbing and trotting trials of the quadruped climber "
                          "in MuJoCo, and the Q-WBC / CLIK / VMC comparison.",
                          epilog=EXAMPLES, formatter_class=fmt)
    qsub = quad.add_subparsers(dest="quadruped_command", required=True)

    def common(p: argparse.ArgumentParser, default_out: str, trials: int = 1,
               figures: bool = True) -> None:
        p.add_argument("--trials", type=trial_count, default=trials,
                       help=f"seeded trials per condition ({trials})")
        p.add_argument("--seed", type=seed_int, default=0, help="first seed (0)")
        add_output_options(p, default_out, figures=figures)
        if figures:
            p.add_argument("--no-animation", action="store_true", help="skip the GIF only")
        add_execution_options(p)

    climb = qsub.add_parser(
        "climb", help="free-climbing trials on a rock wall",
        description="Seeded trials of one gait cycle (0.22 m, about 90 s) on a wall of "
        "seeded rock holds with a perturbed robot; a trial fails when a gripper breaks off, "
        "a grasp misses or the body falls.", epilog=examples_of("climb"), formatter_class=fmt)
    climb.add_argument("--controller", choices=CONTROLLER_NAMES, default="qwbc",
                       metavar="NAME",
                       help="the controller: qwbc (the paper's wrench QP, default), clik and "
                       "vmc (its baselines) or an ablation; one of %(choices)s")
    climb.add_argument("--scenario", choices=SCENARIO_NAMES, default=None, metavar="NAME",
                       help="a comparison scenario (overrides --incline): %(choices)s")
    climb.add_argument("--incline", type=incline_deg, nargs="+", default=[90.0],
                       help="wall incline(s) [deg], 0-180 (90; rock walls 0-135); several "
                       "run as one study")
    climb.add_argument("--wall", choices=("plane", "rock"), default="plane",
                       help="a plane wall with seeded rock holds (default), or a generated "
                       "rock wall (height field) with holds planned from noisy depth maps")
    climb.add_argument("--grasp", choices=("winch", "fixed"), default="winch",
                       help="rock wall: grasp and release through the winch state machine "
                       "and tendon plant (default), or the fixed 3 s phases")
    climb.add_argument("--rule", choices=("planner", "nearest"), default="planner",
                       help="rock wall: hold selection rule (planner)")
    climb.add_argument("--gripper-limits", choices=("capacity", "box"), default="capacity",
                       help="rock wall: the Q-WBC limits each gripper to its hold's capacity "
                       "as estimated from the map (default), or to the paper's box")
    climb.add_argument("--leg-order", choices=("adaptive", "fixed"), default="adaptive",
                       help="rock wall: when the leg whose turn it is finds no hold, try the "
                       "other legs (default), or stop the climb")
    climb.add_argument("--landing", choices=("body", "hold", "keep"), default=None,
                       help="land each sole as near the body's normal as lies within 0.1 rad "
                       "of the hold's normal (body; the default on rock walls and on plane "
                       "climbs that re-seat), along the hold's normal (hold), or, on plane "
                       "walls only, at the attitude it lifted off with (keep; the default on "
                       "one-cycle climbs, the paper's gait)")
    climb.add_argument("--seat-check", choices=("on", "off"), default="on",
                       help="rock wall: choose no hold where mapped rock under the footpad "
                       "stands more than 1 cm above the landing sole's plane (default), or "
                       "do not check")
    climb.add_argument("--seat-tolerance", type=quantity_type(float, "seat_tolerance"),
                       default=None, metavar="MM",
                       help="rock wall: with --seat-check on, how far [mm] mapped rock under "
                       "the footpad may stand above the landing sole's plane (default 10, "
                       "the planner's SEAT_RISE)")
    climb.add_argument("--seat-margin", type=quantity_type(float, "seat_margin"),
                       default=0.0, metavar="MM",
                       help="rock wall: with --seat-check on, also read the mapped rock this "
                       "far [mm] around the footpad's 70 mm square, where the gripper's "
                       "corners land when the sole lands a little off the hold or turned "
                       "(default 0: under the pad only, the planner's SEAT_MARGIN)")
    climb.add_argument("--contact", choices=("force", "torque"), default=None,
                       help="a descent (a swing's, or a re-seat's) ends when the force "
                       "estimated from the leg's servo torques presses the foot 1.5 N more "
                       "along the hold's normal, or on the paper's joint-4 torque rule "
                       "(default: force on rock and on plane climbs that re-seat, torque on "
                       "one-cycle plane climbs)")
    climb.add_argument("--compression", choices=("footpad", "scaled"), default="footpad",
                       help="rock wall: compression on a gripper is borne by its footpad, "
                       "lowered only by an edge under it (default), or scaled by the hold's "
                       "pull factor as before")
    climb.add_argument("--body-pose", choices=("first", "search"), default="first",
                       help="rock wall: put each stance's body at the first pose from which "
                       "the legs reach and the wrench QP balances (default), or search near "
                       "it for the pose of least largest gripper load over the stance and "
                       "the next swing's three legs")
    climb.add_argument("--pre-move", choices=("on", "off"), default="on",
                       help="rock wall: when no leg finds a hold it can swing to from the "
                       "planned body, try body poses up to 6 cm away on the same stance "
                       "and move there before the swing (default), or stop planning")
    climb.add_argument("--held-tilt", type=held_tilt, default=None, metavar="RAD",
                       help="rock wall: the largest change [rad] of an attached sole's tilt "
                       "since it landed that the planner asks of it as the body moves "
                       "(default 0.08, the planner's LANDED_TILT_TOLERANCE; at most 0.25)")
    climb.add_argument("--capacity-margin", type=capacity_margin, default=None,
                       metavar="SHARE",
                       help="rock wall: the share of each hold's planned capacity (the "
                       "paper's box scaled by the hold) that a planned stance and a "
                       "re-seat's three-gripper check may load, in (0, 1] (default 0.9)")
    climb.add_argument("--capacity-weight", type=capacity_weight, default=None, metavar="M",
                       help="rock wall: the planner's ranking bonus [m] per unit of a hold's "
                       "capacity factor, against its distance from the nominal foothold, in "
                       "[0, 2] (default 0.05)")
    climb.add_argument("--plan-reseats", choices=("on", "off"), default="off",
                       help="rock wall: the planner counts an attached sole's tilt change "
                       "from the last stance the gait re-seats it at, where the other "
                       "three can carry the body (on), or from its landing (off, default)")
    climb.add_argument("--start-probe", type=number_type(int, 0, 40), default=None,
                       metavar="N",
                       help="rock wall: set the robot on the wall at the first of a few "
                       "spots within 0.1 m of the nominal start from which N swings plan "
                       "(default 16; 0: always the nominal start)")
    climb.add_argument("--lookahead", type=number_type(int, 0, 10), default=None,
                       metavar="N",
                       help="rock wall: before taking a hold, plan N swings on from it and "
                       "take another hold (up to three) where that plan stops (default 6; "
                       "0: the best-ranked hold that passes the checks, greedily)")
    climb.add_argument("--foot-gap", type=number_type(float, 0.0, 0.3), default=None,
                       metavar="M",
                       help="rock wall: pass over holds closer than M [m] to another foot's "
                       "hold, in the wall's plane (default: the gripper's 0.07 m width plus "
                       "0.02 m; 0: feet may be planned onto each other's grippers)")
    climb.add_argument("--knee-bend", type=_knee_bend, default=None, metavar="RAD",
                       help="rock wall: plan no stance that bends a leg's knee less than RAD "
                       "[rad] (default 0.3; 'limit': up to the knee's own -0.4 rad limit, "
                       "through the straight knee)")
    climb.add_argument("--knee-fallback", choices=("on", "off"), default="on",
                       help="rock wall: a swing that finds no hold with the knees bent is "
                       "planned again up to the knee's limit before the climb stops (on, "
                       "default), or the climb stops there (off)")
    climb.add_argument("--reposition", choices=("on", "off"), default="on",
                       help="rock wall: when no leg finds a hold ahead, a leg may step beside "
                       "or a little below its foot to free a stuck leg (at most twice in a "
                       "row) before the climb stops (on, default), or the climb stops there "
                       "(off)")
    climb.add_argument("--reseat-centre", choices=("on", "off"), default="on",
                       help="rock wall: a re-seat moves its open foot back over its hold's "
                       "top, as the body camera places the hold now, before pressing it on "
                       "again (on, default), or presses it on where it opened (off: soles "
                       "creep off their holds over many re-seats)")
    climb.add_argument("--reseat-landing", choices=("on", "off"), default="on",
                       help="rock wall: a re-seat also turns its open sole back to the "
                       "attitude it landed on that hold with (on, default), or welds it "
                       "again at the attitude the body moves left it in (off: the soles' "
                       "tilt from their holds grows re-seat by re-seat)")
    climb.add_argument("--stall-raises", type=number_type(int, 0, 5), default=None,
                       metavar="N",
                       help="rock wall: how often a swing whose transfer rock holds back "
                       "(the sensed foot 3 cm behind its reference) lifts again from where "
                       "it stalled, 3 cm higher each time, in [0, 5] (default 0: never)")
    climb.add_argument("--unload-slip", choices=("release", "fail"), default=None,
                       help="rock wall: a gripper whose spines slip off its hold while the "
                       "gait unloads it to let go (for a swing or a re-seat) is released "
                       "early and the climb goes on (release, default), or ends the climb "
                       "as a broken gripper (fail)")
    climb.add_argument("--carry-limits", choices=("box", "wound", "polytope"),
                       default="box",
                       help="rock wall: a gripper is re-seated only if the three others carry "
                       "the robot within their holds' planned share of the paper's box "
                       "(default), of the gripper's wrench set (its inner polytope) less the "
                       "moment each one's sensed sole wind-up already puts on it (wound), or "
                       "of the polytope alone")
    climb.add_argument("--anchor-ekf", choices=("on", "off"), default="on",
                       help="rock wall: run the anchor EKF (contacts from servo currents, "
                       "foot anchors in its state) alongside to report its drift (default), "
                       "or not")
    climb.add_argument("--estimator", choices=("odometry", "anchor"), default="odometry",
                       help="rock wall: the controller sees the leg-odometry EKF on the "
                       "grippers' attachment state (default), or the anchor EKF (contacts "
                       "from the servo currents, foot anchors in its state; runs it)")
    climb.add_argument("--replace-missed", type=replacement_count, default=1, metavar="N",
                       help="rock wall: a swing whose grasp did not take lifts off again to "
                       "another hold, planned from the same stance away from the missed one, "
                       "up to N times (0-5) before the miss ends the climb (default 1; 0: "
                       "the miss ends it)")
    climb.add_argument("--regrasps", type=replacement_count, default=None, metavar="N",
                       help="rock wall: a grasp whose spines did not catch (the winch's "
                       "engagement timeout) opens and closes again on the same hold up to N "
                       "times (0-5) before the swing counts as missed (default 1)")
    climb.add_argument("--map-frame", choices=("body", "world"), default="body",
                       help="rock wall: the depth camera on the body maps the rock relative "
                       "to the body, placed in the world where the estimate puts the body "
                       "(body, default), or the map is in the true world frame while the "
                       "controller works in the estimate's (world, for comparison)")
    climb.add_argument("--distance", type=quantity_type(float, "climb_distance"),
                       default=2.0,
                       help="rock wall: distance to climb [m] (2.0; at most 2.0 on the "
                       "default 3.1 m wall)")
    climb.add_argument("--cycles", type=cycle_count, default=1, help="gait cycles (1)")
    climb.add_argument("--reseat-every", type=reseat_count, default=None, metavar="N",
                       help=RESEAT_HELP)
    climb.add_argument("--move-moment", type=quantity_type(float, "move_moment"), default=None,
                       metavar="NM", help="split a body move predicted to wind a welded "
                       "sole's hinges past NM [N m] into parts and re-seat the wound grippers "
                       "between them (0: never; default 0.4 on rock climbs that re-seat, 0 on "
                       "plane walls)")
    climb.add_argument("--swing-retries", type=quantity_type(int, "swing_retries"),
                       default=None, metavar="N",
                       help="plane wall: a swing whose grasp misses its hold flies again to "
                       "it (lift, transfer, descend) up to N times, 0-5 (default: 1 on climbs "
                       "that re-seat, 0 on one-cycle climbs, the paper's)")
    climb.add_argument("--reseat-order", choices=("wound", "swing"), default=None,
                       help="after a body move, re-seat the most wound sole first, by its "
                       "hinge moment sensed from the estimate and encoders (wound; default on "
                       "plane walls), or the next swing's gripper first, then those that held "
                       "longest (swing; default on rock unless --wound-share is given); on "
                       "rock the wind-up is read as the share of the hold's capacity it takes")
    climb.add_argument("--wound-limit", type=quantity_type(float, "wound_limit"), default=0.0,
                       metavar="NM", help="plane wall, wound order: pause a body move to "
                       "re-seat a gripper whose sensed sole-hinge moment passes NM [N m] "
                       "(0: never, default)")
    climb.add_argument("--wound-share", type=quantity_type(float, "wound_share"), default=0.0,
                       metavar="S", help="rock wall: pause a body move to re-seat a gripper "
                       "whose sensed sole wind-up takes more than the share S of its hold's "
                       "capacity (the gripper's wrench set scaled by the hold); sets the wound "
                       "re-seat order (0: never, default)")
    climb.add_argument("--body-tilt", type=quantity_type(float, "body_tilt"), default=None,
                       metavar="RAD", help="each body move also turns the body, at most RAD "
                       "[rad] from the wall's attitude in all, to the attitude that the legs' "
                       "geometry predicts winds the welded soles least (0: keep the wall's "
                       "attitude; default 0 on plane walls, 0.05 on rock)")
    climb.add_argument("--tilt-goal", choices=("move", "held"), default=None,
                       help="with --body-tilt: turn the body for the least wind-up the move "
                       "adds (move; plane walls' default), or for the least moment the soles "
                       "hold once it ends, earlier moves' wind-up included (held; rock's)")
    climb.add_argument("--sighting", type=sighting_mm, default=None, metavar="MM",
                       help="plane wall: as each swing begins a body camera locates the body "
                       "among the mapped holds to MM per axis, and leg odometry's frame is "
                       "moved toward it (0: leg odometry alone; default: 3 mm on climbs that "
                       "re-seat, 0 on one-cycle climbs, the paper's)")
    climb.add_argument("--attitude-integral", type=attitude_integral, default=0.0,
                       metavar="PER_S", help="integral action [1/s] on the body's attitude "
                       "for qwbc and vmc: the servos' goals turn the body until its attitude "
                       "error is gone (0: none, the paper's controllers; clik has its own)")
    climb.add_argument("--rate", type=control_rate, default=50.0,
                       help="control rate [Hz], up to 1000 (50)")
    add_physics_dt(climb)
    climb.add_argument("--state", choices=("estimate", "true"), default="estimate",
                       help="controllers see the EKF estimate (default) or the true state")
    climb.add_argument("--unbreakable", action="store_true",
                       help="record gripper overloads without breaking")
    climb.add_argument("--sole-stiffness", type=sole_stiffness, default=25.0,
                       help="stiffness of the grippers' compliant soles about x and y "
                       "[N m/rad] (25; 0: rigid weld)")
    common(climb, "out/quadruped/climb")
    climb.set_defaults(func=_climb)

    trot = qsub.add_parser(
        "trot", help="trotting on ground terrains",
        description="Trotting gait (0.7 s cycle, duty 0.6, 150 mm steps, 80 mm height) with "
        "grippers or rubber feet; attitude error and power (the paper's Fig. 11).",
        epilog=examples_of("trot"), formatter_class=fmt)
    trot.add_argument("--terrain", choices=("flat", "gravel", "grass", "mud", "stone", "all"),
                      default="gravel", help="the ground: flat, gravel (default), grass, "
                      "mud or stone (friction, softness and roughness of each in "
                      "clamber.quadruped.sim.world); all: the four that are not flat")
    trot.add_argument("--feet", choices=("gripper", "rubber", "rubber_flat", "both", "all"),
                      default="both", help="both: gripper and rubber; all: also rubber_flat "
                      "(the gripper's flat sole on the rubber foot's mass)")
    trot.add_argument("--cycles", type=cycle_count, default=20, help="gait cycles (20)")
    trot.add_argument("--estimator", choices=("anchor", "odometry"), default="anchor",
                      help="EKF with the attached feet's anchors in its state, or leg odometry")
    trot.add_argument("--contacts", choices=("torque", "fused", "schedule", "truth"),
                      default="torque",
                      help="feet in contact for the EKF: from servo currents, from them cut "
                      "by the gait schedule, the schedule alone, or the simulator (a "
                      "reference only)")
    trot.add_argument("--level-gain", type=level_gain, default=0.0,
                      help="gain [1/s] of levelling the body on the estimate (0: open loop)")
    common(trot, "out/quadruped/trot")
    trot.set_defaults(func=_trot)

    register_compare(qsub, examples_of("compare"))
    rock.register(qsub)

    mod = qsub.add_parser(
        "model", help="write MJCF, scene, URDF and README of the robot",
        description="Generate marcbot.xml (keyframe home), scene.xml (ground plane), "
        "marcbot.urdf and a README listing joints, limits and actuators.",
        epilog="examples:\n  clamber quadruped model --out models/marcbot\n"
        "  clamber quadruped model --out models/marcbot --json", formatter_class=fmt)
    add_output_options(mod, "models/marcbot", figures=False)
    mod.set_defaults(func=_model)


def _model(args: argparse.Namespace) -> dict:
    from clamber.quadruped.model.description import write_models
    from clamber.quadruped.model.robot import Marcbot

    return {k: str(v) for k, v in write_models(Marcbot(), args.out).items()}


def demo_step(out_dir: Path, summary: dict, as_json: bool) -> tuple[dict, list]:
    """A Q-WBC climb (one gait cycle on the vertical wall) with its figure and GIF.

    The grippers are unbreakable here so that the animation shows the whole cycle; their
    peak load over the true capacity is reported (``clamber quadruped compare`` runs the
    trials in which they break).
    """
    _prepare_gl()
    from clamber.quadruped.trials.climb import ClimbSettings, run_climb
    from clamber.report.html import Section
    from clamber.report.quadruped import save_climb

    log.info("quadruped: a Q-WBC climb of one gait cycle (about a minute) ...")
    try:
        result, trace = run_climb(ClimbSettings(controller="qwbc", incline_deg=90.0,
                                                breakable=False), 0, log=True)
    except ConfigError as e:
        return {"quadruped_climb": f"failed: {e}"}, []
    paths = save_climb(trace, Path(out_dir) / "quadruped",
                       "Q-WBC, 90 deg, seed 0 (grippers unbreakable)")
    log.info("quadruped: Q-WBC climb %s (%s); peak gripper load %.2f x capacity",
             "completed" if result.success else "failed", result.reason or "one gait cycle",
             result.peak_gripper_load)
    keep = ("success", "reason", "sim_time_s", "max_tracking_error_mm", "mean_power_w",
            "peak_gripper_load", "estimation_rms_mm")
    climb = {k: result.to_dict()[k] for k in keep}
    figures = {name: paths[key] for name, key in
               (("Body and feet with the gait phases", "figure"),
                ("The climb (MuJoCo)", "animation")) if key in paths}
    return ({"quadruped_climb": climb,
             "quadruped_figures": {k: str(v) for k, v in paths.items()}},
            [Section("Quadruped: a Q-WBC climb on the vertical wall", climb, figures)])
