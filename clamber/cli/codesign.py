"""`clamber jumper codesign` and `clamber jumper sweep`."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path
from typing import Any

from clamber.cli.options import (
    TrialProgress,
    add_execution_options,
    add_output_options,
    evaluator_for,
    input_file,
    number_type,
    positive_float,
    progress_enabled,
    quantity_type,
    release_run,
    run_folder,
    seed_int,
)

log = logging.getLogger("clamber")

EXAMPLES_CODESIGN = """examples:
  clamber jumper codesign                          # paper's run: 50 x 9, one worker per core
  clamber jumper codesign --generations 3 --popsize 4 --fitness coarse --out runs/quick
  clamber jumper codesign --resume runs/quick      # continue a killed run, same result
  clamber jumper codesign --workers 0              # in-process, for debugging
  clamber jumper codesign --cluster tcp://10.0.0.5:8786 --json
  clamber jumper codesign --scheduler-file scheduler.json   # a dask-jobqueue cluster
  clamber jumper codesign --cma-option tolfun=1e-3 --dashboard
  clamber jumper codesign --settings tuned.toml    # any optimization setting, safe regions too
  clamber jumper codesign --fitness robust --landing-score climbs --workers 2 --json
  clamber jumper codesign --fitness robust --landing-score measured --rear-spar --workers 2
A generation runs at most --popsize evaluations at once, so more workers than that idle.
"""
EXAMPLES_SWEEP = """examples:
  clamber jumper sweep --samples 256 --out runs/sweep
  clamber jumper sweep --samples 32 --workers 2 --json
  clamber jumper sweep --resume runs/sweep
"""
FITNESS_CHOICES = {"coarse": None, "fine": "fine", "robust": "fine"}
#: Seeded landing trials per candidate under ``--fitness robust``, jumps per trial, and
#: optimizer starts per candidate (docs/results/jumper_codesign.md: one-jump ready rates
#: did not predict ten-jump climbs, so the robust fitness simulates climbs; a second start,
#: the designed guess, scored higher for 9 of 38 recorded candidates, never for a run's best design,
#: at about half of the evaluation's CPU time, so it is opt-in: ``--starts 2``).
ROBUST_LANDING_TRIALS = 30
ROBUST_LANDING_JUMPS = 10
ROBUST_STARTS = 1


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `codesign` and `sweep` under `clamber jumper`."""
    fmt = argparse.RawDescriptionHelpFormatter
    cd = subparsers.add_parser(
        "codesign", help="CMA-ES search of link lengths and inner masses",
        description="Co-design (the paper's Stage 2): CMA-ES over the four link lengths and "
        "three inner masses, each candidate scored by the climbing speed of its optimized "
        "jump. Every evaluation is recorded as it finishes; a killed run resumes.",
        epilog=EXAMPLES_CODESIGN, formatter_class=fmt)
    cd.add_argument("--generations", type=number_type(int, 1, 10_000),
                    help="generations (default 50)")
    cd.add_argument("--popsize", type=number_type(int, 1, 1000),
                    help="candidates per generation (default 9; a generation uses at most "
                    "this many workers at once)")
    cd.add_argument("--sigma0", type=number_type(float, 0, 10, low_open=True),
                    help="initial step size (default 0.5)")
    cd.add_argument("--seed", type=seed_int,
                    help="seed of the CMA-ES sampler (default 0)")
    cd.add_argument("--fitness", choices=sorted(FITNESS_CHOICES),
                    help="coarse solve only, coarse then fine refinement (default fine), or "
                    "robust: fine with the landing-margin options, scored by the expected "
                    "speed of 30 seeded closed-loop 10-jump climbs (falls included), "
                    "climbs raced against the best finished generation")
    cd.add_argument("--no-race", action="store_true",
                    help="run every landing trial of every candidate (the robust fitness "
                    "otherwise stops a candidate's climbs once it cannot beat the best of "
                    "the finished generations)")
    cd.add_argument("--landing-score", choices=("jumps", "climbs", "measured"),
                    help="with --fitness robust: score the jumps landed ready before each "
                    "climb's first failure (expected speed, default), only the climbs "
                    "that land all ten jumps (speed x climb success rate), or the same "
                    "with the simulated climbing speed, waits included (measured)")
    cd.add_argument("--rear-spar", action="store_true",
                    help="with --fitness robust: simulate the landings with a spar on the "
                    "rear foot too (a hardware option; the paper's rear foot has none)")
    cd.add_argument("--tol-scale", type=quantity_type(float, "design_tolerance_scale"),
                    help="with --fitness robust: draw the landing trials' robots from the "
                    "calibrated tolerances times this, (0, 4] (default 1; above 1 trades "
                    "speed for margin; recorded in every scored trajectory)")
    cd.add_argument("--finalists", type=number_type(int, 0, 100),
                    help="with --fitness robust: rescore this many best designs on held-out "
                    "climbs after the run and recommend the best of them (default 5; 0: "
                    "skip; written to RUN_DIR/validation.json)")
    cd.add_argument("--validation-trials", type=number_type(int, 1, 10_000),
                    help="held-out climbs per finalist (default 100, master seed 1000)")
    cd.add_argument("--starts", type=number_type(int, 1, 100),
                    help="optimizer starts per candidate, run as separate tasks (warm/seed, "
                    "designed guess, then seeded random guesses; default 1)")
    cd.add_argument("--settings", type=input_file,
                    help="TOML file setting any optimization setting of the fitness (safe "
                    "regions too; see clamber.jumper.settings_file)")
    cd.add_argument("--torque-limit", type=positive_float,
                    help="joint torque bound [N m] (0.25)")
    cd.add_argument("--cma-option", action="append", metavar="KEY=VALUE", default=[],
                    type=cma_option,
                    help="a pycma stopping criterion (tolfun, tolx, tolstagnation, ...; "
                    "repeatable); by default none is set and every generation runs")
    add_output_options(cd, "out/codesign")
    add_execution_options(cd)
    cd.set_defaults(func=codesign_command)

    sw = subparsers.add_parser(
        "sweep", help="Sobol sweep of the design space (coarse)",
        description="Morphologies from a scrambled Sobol sequence over the feasible design "
        "space, each optimized at coarse resolution from one seed trajectory (the paper's "
        "Fig. 7). Writes sweep.csv, figures and report.html.",
        epilog=EXAMPLES_SWEEP, formatter_class=fmt)
    sw.add_argument("--samples", type=number_type(int, 1, 1_000_000),
                    help="number of designs (default 256)")
    sw.add_argument("--seed", type=seed_int, help="Sobol scrambling seed (default 0)")
    add_output_options(sw, "out/sweep")
    add_execution_options(sw)
    sw.set_defaults(func=sweep_command)


def _stored_config(run_dir: str | Path, kind: str) -> dict[str, Any]:
    from clamber.storage.runs import RunStore

    return RunStore.read_config(run_dir, kind)


def _from_stored(run_dir: str | Path, build, stored: dict[str, Any]):
    """``build(stored)``; a stored configuration that does not fit (a missing key, a value
    of the wrong type or range) is one FileFormatError naming the run's config."""
    from clamber.exceptions import FileFormatError
    from clamber.storage.runs import STORE_NAME

    try:
        return build(stored)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        what = f"missing key {e}" if isinstance(e, KeyError) else str(e)
        raise FileFormatError(f"{Path(run_dir) / STORE_NAME}: table meta, key 'config': "
                              f"{what}") from None


def _fitness_from_dict(d: dict[str, Any]):
    from clamber.experiments.fitness import FitnessSettings
    from clamber.jumper.settings import OptimizationSettings

    def nodes(v):
        return v if v is None or isinstance(v, str) else tuple(v)

    return FitnessSettings(settings=OptimizationSettings.from_dict(d["settings"]),
                         resolution=nodes(d["resolution"]), refine=nodes(d["refine"]),
                         failure_speed=d["failure_speed"],
                         landing_trials=d.get("landing_trials", 0),
                         landing_controller=d.get("landing_controller", "closed-loop"),
                         landing_jumps=d.get("landing_jumps", 1), starts=d.get("starts", 1),
                         landing_race=d.get("landing_race", False),
                         landing_score=d.get("landing_score", "jumps"),
                         landing_rear_spar=d.get("landing_rear_spar", False),
                         landing_tol_scale=d.get("landing_tol_scale", 1.0))


def codesign_config(args: argparse.Namespace):
    """The run configuration from options; on resume, unset options come from the run."""
    from clamber.experiments.codesign import CodesignSettings
    from clamber.experiments.fitness import FitnessSettings

    base = CodesignSettings()
    if args.resume:
        from clamber import _validate as check

        stored = _stored_config(args.resume, "codesign")
        base = _from_stored(args.resume, lambda stored: CodesignSettings(
            generations=stored["generations"], popsize=stored["popsize"],
            sigma0=stored["sigma0"], seed=stored["seed"],
            fitness=_fitness_from_dict(stored["fitness"]),
            cma_options={k: check.number("cma_options", k, v)
                         for k, v in stored.get("cma_options", {}).items()}), stored)
    fitness = base.fitness
    if args.fitness is not None or args.torque_limit is not None or args.settings:
        settings = fitness.settings
        if args.settings:
            from clamber.jumper.settings_file import load_settings

            settings = load_settings(args.settings, base=settings)
        if args.torque_limit is not None:
            settings = settings.with_(torque_limit=args.torque_limit)
        refine = fitness.refine if args.fitness is None else FITNESS_CHOICES[args.fitness]
        landing, jumps, starts = fitness.landing_trials, fitness.landing_jumps, fitness.starts
        race = fitness.landing_race
        if args.fitness == "robust":
            from clamber.jumper.robust import robust_settings

            settings, landing = robust_settings(settings), ROBUST_LANDING_TRIALS
            jumps, starts, race = ROBUST_LANDING_JUMPS, ROBUST_STARTS, True
        elif args.fitness is not None:
            landing, jumps, race = 0, 1, False
        fitness = FitnessSettings(settings=settings, resolution=fitness.resolution,
                                refine=refine, failure_speed=fitness.failure_speed,
                                landing_trials=landing,
                                landing_controller=fitness.landing_controller,
                                landing_jumps=jumps, starts=starts, landing_race=race,
                                landing_score=fitness.landing_score,
                                landing_rear_spar=fitness.landing_rear_spar,
                                landing_tol_scale=fitness.landing_tol_scale)
    from dataclasses import replace

    if args.starts is not None:
        fitness = replace(fitness, starts=args.starts)
    if args.no_race:
        fitness = replace(fitness, landing_race=False)
    if args.landing_score is not None:
        fitness = replace(fitness, landing_score=args.landing_score)
    if args.rear_spar:
        fitness = replace(fitness, landing_rear_spar=True)
    if getattr(args, "tol_scale", None) is not None:  # namespaces built in code may lack it
        if fitness.landing_trials == 0:
            from clamber.exceptions import ConfigError

            raise ConfigError("--tol-scale sets the margin of the landing trials; add "
                              "--fitness robust")
        fitness = replace(fitness, landing_tol_scale=args.tol_scale)

    def pick(name):
        v = getattr(args, name)
        return getattr(base, name) if v is None else v

    return CodesignSettings(generations=pick("generations"), popsize=pick("popsize"),
                          sigma0=pick("sigma0"), seed=pick("seed"), fitness=fitness,
                          cma_options=dict(args.cma_option) or base.cma_options)


def cma_option(text: str) -> tuple[str, float]:
    """``KEY=VALUE`` as a pycma option (an argparse type; the value is a number, 'inf'
    allowed; which keys are settable, CodesignSettings checks)."""
    key, sep, value = text.partition("=")
    try:
        number = float(value)
    except ValueError:
        sep = ""
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: expected KEY=NUMBER, e.g. tolfun=1e-3")
    return key.strip(), number


class ProgressBar:
    """tqdm bar: generation, best speed, evaluations per minute and time left."""

    def __init__(self, total: int, generations: int, enabled: bool) -> None:
        from tqdm import tqdm

        self.generations = generations
        self.t0 = time.perf_counter()
        self.bar = tqdm(total=total, file=sys.stderr, disable=not enabled, unit="eval",
                        bar_format="{desc} {bar} {n_fmt}/{total_fmt} {postfix}")
        self.bar.set_description_str("reading the run record")

    def __call__(self, p: dict[str, Any]) -> None:
        elapsed = time.perf_counter() - self.t0
        rate = p["evaluations_this_session"] / elapsed * 60 if elapsed > 0 else 0.0
        left = (p["evaluations_total"] - p["evaluations_done"]) / rate if rate > 0 else 0.0
        self.bar.n = p["evaluations_done"]
        self.bar.set_description_str(f"generation {p['generation'] + 1}/{self.generations}")
        best = p.get("best_speed_mps", float("nan"))
        self.bar.set_postfix_str(f"best {best:.3f} m/s | {rate:.1f} evals/min | "
                                 f"{left:.1f} min left")

    def finish(self, done: int) -> None:
        """Show the run's recorded evaluations (a finished run resumed evaluates none)."""
        self.bar.n = done
        self.bar.set_description_str("done")
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()


def codesign_command(args: argparse.Namespace) -> dict[str, Any]:
    """Run or resume a co-design; returns the JSON summary."""
    from clamber.experiments.codesign import run_codesign
    from clamber.report.html import write_codesign_outputs

    config = codesign_config(args)
    run_dir = run_folder(args)
    t0 = time.perf_counter()
    bar = ProgressBar(config.generations * config.popsize, config.generations,
                      enabled=progress_enabled(args))

    def report(partial) -> None:  # rewritten after every generation, to watch a run
        write_codesign_outputs(partial, figures=not args.no_figures, live=True)

    try:
        with evaluator_for(args) as evaluator:
            result = run_codesign(config, run_dir, evaluator, resume=bool(args.resume),
                                  progress=bar, on_generation=report)
            bar.finish(result.evaluations)
            validation = _validation(args, result, evaluator)
    finally:
        bar.close()
    summary = write_codesign_outputs(result, figures=not args.no_figures,
                                     validation=validation)
    release_run(run_dir)
    summary["total_wall_time_s"] = time.perf_counter() - t0
    return _ordered(summary, ("best_speed_mps", "best_morphology", "generations",
                              "evaluations", "failed_evaluations", "wall_time_s",
                              "total_wall_time_s", "run_dir"))


def _validation(args: argparse.Namespace, result, evaluator) -> dict[str, Any] | None:
    """Held-out climbs of the finalists of a robust co-design, or None."""
    from clamber.experiments.finalists import (
        FINALISTS,
        VALIDATION_TRIALS,
        validate_finalists,
    )

    count = FINALISTS if args.finalists is None else args.finalists
    if result.config.fitness.landing_trials <= 0 or count == 0 or result.best is None:
        return None
    log.info("held-out climbs of %d finalists ...", count)
    trials = VALIDATION_TRIALS if args.validation_trials is None else args.validation_trials
    return validate_finalists(result, evaluator, count=count, trials=trials)


def sweep_command(args: argparse.Namespace) -> dict[str, Any]:
    """Run or resume a Sobol sweep; returns the JSON summary."""
    from clamber.experiments.sweep import SweepSettings, run_sweep
    from clamber.report.html import write_sweep_outputs

    if args.resume:
        stored = _stored_config(args.resume, "sweep")
        base = _from_stored(args.resume, lambda stored: SweepSettings(
            samples=stored["samples"], seed=stored["seed"],
            fitness=_fitness_from_dict(stored["fitness"])), stored)
    else:
        base = SweepSettings()
    config = SweepSettings(samples=base.samples if args.samples is None else args.samples,
                         seed=base.seed if args.seed is None else args.seed,
                         fitness=base.fitness)
    out = run_folder(args)  # --resume wins; with --out as well it is an error
    t0 = time.perf_counter()
    with evaluator_for(args) as evaluator, \
            TrialProgress(config.samples, "sweep", progress_enabled(args)) as bar:
        result = run_sweep(config, out, evaluator, resume=bool(args.resume),
                           progress=lambda p: bar(p["evaluations_done"], config.samples))
        bar(len(result.trials), config.samples)
    summary = write_sweep_outputs(result, figures=not args.no_figures)
    release_run(out)
    summary["total_wall_time_s"] = time.perf_counter() - t0
    return summary


def _ordered(d: dict[str, Any], first: tuple[str, ...]) -> dict[str, Any]:
    return {**{k: d[k] for k in first}, **{k: v for k, v in d.items() if k not in first}}
