"""`clamber quadruped wall`: write a generated rock wall (MJCF asset, height field, figure)."""

from __future__ import annotations

import argparse
from pathlib import Path

from clamber.cli.options import add_output_options, number_type, seed_int

#: Wall inclines the generator accepts [deg]: from a slab to a 45-degree overhang.
wall_incline = number_type(float, 0, 135, unit=" deg")

EXAMPLES = """examples:
  clamber quadruped wall --seed 3 --incline 90 --out out/quadruped/wall
  clamber quadruped wall --seed 3 --incline 110 --json --no-figures
"""


def _wall(args: argparse.Namespace) -> dict:
    from clamber.quadruped.rock.holding import GripperSurfaceModel, patch_features
    from clamber.quadruped.rock.mjcf import hfield_bytes, wall_mjcf
    from clamber.quadruped.rock.wall import generate_wall

    wall = generate_wall(args.incline, args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"rock_wall_{args.seed}"
    (out / f"{stem}.bin").write_bytes(hfield_bytes(wall))
    (out / f"{stem}.xml").write_text(wall_mjcf(wall, f"{stem}.bin"))
    model = GripperSurfaceModel()
    feats = patch_features(wall.z, wall.spacing, model)
    factors = model.capacity_factor(feats.convexity, feats.step, wall.micro_rms)
    summary = {"seed": args.seed, "incline_deg": args.incline,
               "mjcf": str(out / f"{stem}.xml"), "hfield": str(out / f"{stem}.bin"),
               "grid": list(wall.z.shape), "spacing_m": wall.spacing,
               "hurst": wall.spec.spectrum.hurst, "psd_exponent": wall.spec.spectrum.exponent,
               "rms_m": wall.spec.spectrum.rms, "micro_rms_m": wall.micro_rms,
               "knobs": sum(not k.ledge for k in wall.knobs),
               "ledges": sum(k.ledge for k in wall.knobs),
               "area_fz_capacity_over_half": float((factors[..., 2] > 0.5).mean())}
    if not args.no_figures:
        import matplotlib.pyplot as plt

        from clamber.report.rock import plot_wall

        fig = plot_wall(wall, factors)
        fig.savefig(out / f"{stem}.png", dpi=110)
        plt.close(fig)
        summary["figure"] = str(out / f"{stem}.png")
    return summary


def register(qsub: argparse._SubParsersAction) -> None:
    """Add `wall` to the `quadruped` subcommands."""
    p = qsub.add_parser(
        "wall", help="write a generated rock wall (MJCF asset and a figure)",
        description="A seeded rock wall: a fractional-Brownian surface (Hurst 0.8, 5 mm RMS) "
        "with knobs and ledges, as a MuJoCo height field (MJCF plus binary elevations), "
        "with a figure of its heights, holding capacity and spectrum.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=seed_int, default=0, help="wall seed (0)")
    p.add_argument("--incline", type=wall_incline, default=90.0,
                   help="wall incline [deg], 0-135 (90; over 90 overhangs)")
    add_output_options(p, "out/quadruped/wall")
    p.set_defaults(func=_wall)
