"""`clamber jumper safe-region`: fit a gripper's safe region to hanging-weight trials."""

from __future__ import annotations

import argparse
from pathlib import Path

from clamber.attachment.safe_region_fit import fit_safe_region, synthetic_trials
from clamber.attachment.spine_gripper import SpineGripperGeometry, SpineLimits
from clamber.attachment.trials_file import read_trials
from clamber.cli.options import add_output_options, input_file, strict_json

EXAMPLES = """examples:
  clamber jumper safe-region trials.csv --unit kg --out out/gripper
  clamber jumper safe-region --json          # synthetic trials from the statics model

trials.csv has a header and one trial per line:
  load,angle_deg,held
  0.4,0,1
  2.0,120,0
"""
#: The paper's Fig. 4 grid: 400 g to 2 kg, from vertical to about 135 deg.
PAPER_MASSES_KG = (0.4, 0.8, 1.2, 1.6, 2.0)
PAPER_ANGLES_DEG = tuple(range(0, 136, 15))
def run(trials_path: Path | None, unit: str, out: Path) -> dict:
    """Fit, write safe_region.json and the figures; return the summary."""
    from clamber.report.gripper import plot_adhesion_trends, plot_trials
    from clamber.report.save import save_figure

    geometry = SpineGripperGeometry()
    if trials_path is None:
        source = "synthetic (spined-gripper statics, seed 0)"
        # The chosen pivot (the paper's position 2): a pitching foot does not hold.
        limits = SpineLimits(pitched_hold_probability=0.0)
        trials = synthetic_trials(geometry, limits, PAPER_MASSES_KG, PAPER_ANGLES_DEG,
                                  seed=0, strength_scatter=0.1, repeats=2)
    else:
        source = str(trials_path)
        trials = read_trials(trials_path, unit)
        from clamber import _validate as check

        for k, t in enumerate(trials, start=1):
            check.in_range(f"{trials_path}: trial {k}", "load_n", t.load_n, "gripper_load")
    fit = fit_safe_region(trials)
    out.mkdir(parents=True, exist_ok=True)
    region = {"angle_deg": fit.angle_deg, "max_load_n": fit.max_load_n,
              **fit.region.to_dict()}
    (out / "safe_region.json").write_text(strict_json(region, indent=2))
    figures = {}
    for name, fig in (("safe_region_trials", plot_trials(trials, fit)),
                      ("adhesion_trends", plot_adhesion_trends(geometry, 9.81, 30.0))):
        figures[name] = str(save_figure(fig, out / f"{name}.png"))
    return {
        "trials": len(trials), "source": source,
        "sector_angle_deg": fit.angle_deg, "max_load_n": fit.max_load_n,
        "held_inside": fit.held_inside, "held_outside": fit.held_outside,
        "failed_inside": fit.failed_inside, "failed_outside": fit.failed_outside,
        "region_path": str(out / "safe_region.json"), "figures": figures,
    }


def _command(args: argparse.Namespace) -> dict:
    return run(args.trials, args.unit, Path(args.out))


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `safe-region` under `clamber jumper`."""
    p = subparsers.add_parser(
        "safe-region", help="fit a gripper safe region to hanging-weight trials",
        description="Fit the two-inequality safe region (adhesion sector angle and load cap) "
        "to hanging-weight trials (load, angle from vertical, held or not), as in the "
        "paper's Fig. 4 experiment; plot the trials, the region and the adhesion trends of "
        "the spined-gripper statics.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("trials", nargs="?", type=input_file,
                   help="trials CSV (default: synthetic trials from the statics model)")
    p.add_argument("--unit", choices=("kg", "N"), default="kg", help="load unit (kg)")
    add_output_options(p, "out/gripper", figures=False)
    p.set_defaults(func=_command)


def demo_step(out_dir: Path, summary: dict, as_json: bool) -> tuple[dict, list]:
    """The demo's gripper part: fit and plot a safe region from synthetic trials."""
    from clamber.report.html import Section

    result = run(None, "kg", Path(out_dir) / "gripper")
    table = {k: result[k] for k in ("trials", "source", "sector_angle_deg", "max_load_n")}
    figures = {"Hanging-weight trials and the fitted safe region":
               result["figures"]["safe_region_trials"]}
    return {"gripper": result}, [Section("Gripper safe region", table, figures)]
