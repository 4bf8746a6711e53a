"""Tables and figures of the quadruped controller comparison beside the paper's hardware numbers."""

from __future__ import annotations

import math
from collections.abc import Sequence

#: The paper's 70-degree results (Q-WBC, CLIK, VMC): successes of 5, maximum body error
#: [mm], mean and peak power [W]; on the vertical wall only Q-WBC completed its climbs.
PAPER_70 = {"qwbc": (5, 6.64, 64.65, 120.29), "clik": (3, 11.12, 80.84, 147.65),
            "vmc": (3, 8.54, 69.71, 128.03)}


def _num(x, fmt: str = ".1f") -> str:
    return "-" if x is None else format(x, fmt)


def cell_table(cells: dict[str, dict], rows: Sequence[str], scenarios: Sequence[str]) -> str:
    """Markdown table: one row per (scenario, controller) cell; on the 70-degree wall the
    paper's hardware figures in brackets (successes of 5, maximum body error, mean / peak
    power)."""
    lines = ["| scenario | controller | success (95 % CI) | max body error [mm] (worst) "
             "| mean / peak power [W] | peak gripper load / capacity (median, max) "
             "| QP limit active [% cycles] | where failed trials failed |",
             "|---|---|---|---|---|---|---|---|"]
    for sc in scenarios:
        for c in rows:
            s = cells.get(f"{c}@{sc}")
            if s is None:
                continue
            lo, hi = s["success_interval"] or (math.nan, math.nan)
            paper = error = power = ""
            if sc == "wall70" and c in PAPER_70:
                n, e, mean, peak = PAPER_70[c]
                paper, error = f" [paper {n}/5]", f" [paper {e:.2f}]"
                power = f" [paper {mean:.1f} / {peak:.1f}]"
            act = s["limit_active_fraction"]
            fails = "; ".join(f"{k}: {v}" for k, v in sorted(s["failures"].items())) or "-"
            lines.append(
                f"| {sc} | {c} | {s['successes']}/{s['trials']} ({lo:.2f}-{hi:.2f}){paper} | "
                f"{_num(s['max_tracking_error_mm'], '.2f')} "
                f"({_num(s['worst_tracking_error_mm'], '.2f')}){error} | "
                f"{_num(s['mean_power_w'])} / {_num(s['peak_power_w'])}{power} | "
                f"{s['peak_gripper_load_median']:.2f}, {s['peak_gripper_load_max']:.2f} | "
                f"{'-' if act is None else format(100 * act, '.1f')} | {fails} |")
    return "\n".join(lines)


def failure_table(cells: dict[str, dict], rows: Sequence[str], scenarios: Sequence[str]) -> str:
    """Markdown table: one row per failed trial, where (gait cycle, phase and swing leg,
    height up the wall, time) and why it failed; empty when no trial failed."""
    lines = ["| scenario | controller | seed | cycle | phase | height [m] | t [s] | why |",
             "|---|---|---|---|---|---|---|---|"]
    for sc in scenarios:
        for c in rows:
            for f in (cells.get(f"{c}@{sc}") or {}).get("failed_trials", []):
                why = f["reason"] + (f" ({f['detail']})" if f["detail"] else "")
                cycle = "placement" if f["cycle"] == 0 else str(f["cycle"])
                lines.append(f"| {sc} | {c} | {f['seed']} | {cycle} | {f['phase']} | "
                             f"{_num(f['height_m'], '.3f')} | {_num(f['time_s'], '.1f')} | "
                             f"{why} |")
    return "\n".join(lines) if len(lines) > 2 else ""


def rerun_note(reruns: int, total: int) -> str:
    """The sentence under a comparison table that says how many verdicts came from a
    fine-step rerun (:mod:`clamber.quadruped.sim.rates`); empty when none did."""
    if not reruns:
        return ""
    from clamber.quadruped.sim.rates import FINE_CLIMB_PHYSICS_DT, VERDICT_MARGIN

    return (f"{reruns} of {total} trials came within {100 * VERDICT_MARGIN:g} % of a "
            f"gripper's boundary (peak gauge) and were climbed again at "
            f"{1000 * FINE_CLIMB_PHYSICS_DT:g} ms; their results are those climbs.")
