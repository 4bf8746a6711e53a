"""`clamber jumper safe-region`: fit a gripper's safe region to hanging-weight trials."""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import numpy as np

from clamber.attachment.safe_region_fit import (
    HangingTrial,
    fit_safe_region,
    synthetic_trials,
    trials_from_records,
)
from clamber.attachment.spine_gripper import SpineGripperGeometry, SpineLimits
from clamber.cli.options import add_output_options
from clamber.exceptions import FileFormatError

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
_TRUE = {"1", "true", "yes", "held", "y"}
_FALSE = {"0", "false", "no", "failed", "n"}


def read_trials(path: Path, unit: str) -> list[HangingTrial]:
    """Trials from a CSV with columns load, angle_deg, held; errors name the line."""
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        raise FileFormatError(f"{path}: no such file") from None
    rows = list(csv.reader(lines))
    if not rows or [c.strip().lower() for c in rows[0]] != ["load", "angle_deg", "held"]:
        raise FileFormatError(f"{path}:1: header must be 'load,angle_deg,held'")
    records = []
    for n, row in enumerate(rows[1:], start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != 3:
            raise FileFormatError(f"{path}:{n}: expected 3 fields, got {len(row)}")
        held = row[2].strip().lower()
        if held not in _TRUE | _FALSE:
            raise FileFormatError(f"{path}:{n}: held={row[2]!r}; allowed: 1/0, true/false")
        try:
            load, angle = float(row[0]), float(row[1])
        except ValueError:
            raise FileFormatError(f"{path}:{n}: load and angle_deg must be numbers") from None
        if not (np.isfinite(load) and np.isfinite(angle)):
            raise FileFormatError(f"{path}:{n}: load and angle_deg must be finite")
        records.append((load, angle, held in _TRUE))
    if not records:
        raise FileFormatError(f"{path}: no trials after the header")
    return trials_from_records(records, unit=unit)


def run(trials_path: Path | None, unit: str, out: Path) -> dict:
    """Fit, write safe_region.json and the figures; return the summary."""
    import matplotlib.pyplot as plt

    from clamber.report.gripper import plot_adhesion_trends, plot_trials

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
    fit = fit_safe_region(trials)
    out.mkdir(parents=True, exist_ok=True)
    region = {"angle_deg": fit.angle_deg, "max_load_n": fit.max_load_n,
              **fit.region.to_dict()}
    (out / "safe_region.json").write_text(json.dumps(region, indent=2))
    figures = {}
    for name, fig in (("safe_region_trials", plot_trials(trials, fit)),
                      ("adhesion_trends", plot_adhesion_trends(geometry, 9.81, 30.0))):
        figures[name] = str(out / f"{name}.png")
        fig.savefig(figures[name], dpi=110)
        plt.close(fig)
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
    p.add_argument("trials", nargs="?", type=Path,
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
