"""Figures of co-design runs and Sobol sweeps: progress, parameters, design, trends."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Circle

from clamber.jumper.morphology import Morphology
from clamber.jumper.solution import TrajectorySolution
from clamber.report.save import save_figure
from clamber.storage.runs import CandidateTrial, TrialState

#: Angle of links L1..L4 from the wall in the drawing pose [rad]: bowed away from the wall.
_DRAW_ANGLES = np.radians([-40.0, -15.0, 15.0, 40.0])
#: Disc radius of a 100 g point mass in the design drawing [m] (area scales with mass).
_DISC_RADIUS_100G = 0.012


def _generation_axis(ax, count: int) -> None:
    """Generations counted from 1, whole numbers only."""
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    ax.set_xlim(0.5, max(count, 1) + 0.5)
    ax.set_xlabel("generation")


def plot_progress(summaries: Sequence[dict[str, Any]]):
    """Best and median speed of each generation, and the best so far [m/s]."""
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    g = [s["generation"] + 1 for s in summaries]
    ax.plot(g, [s["best_speed_mps"] for s in summaries], "o-", ms=3, label="generation best")
    ax.plot(g, [s["median_speed_mps"] for s in summaries], "s-", ms=3,
            label="generation median")
    ax.plot(g, [s["best_so_far_mps"] for s in summaries], "k--", lw=1, label="best so far")
    failed = [s["generation"] + 1 for s in summaries if s["failed"]]
    if failed:
        ax.plot(failed, [0.0] * len(failed), "rx", ms=4, label="generation with failures")
    _generation_axis(ax, len(summaries))
    ax.set_ylabel("climbing speed [m/s]")
    ax.set_title("Co-design progress")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_parameters(trials: Sequence[CandidateTrial], summaries: Sequence[dict[str, Any]]):
    """Every candidate's link lengths [mm] and inner masses [g] per generation (dots), with
    the CMA-ES mean after each generation (lines)."""
    fig, (a1, a2) = plt.subplots(2, 1, sharex=True, figsize=(7.5, 6))
    gens = np.array([t.generation + 1 for t in trials])
    means = np.array([s["mean_design"] for s in summaries]) if summaries else np.empty((0, 7))
    mg = [s["generation"] + 1 for s in summaries]
    for j in range(4):
        vals = np.array([t.lengths[j] for t in trials]) * 1e3
        a1.scatter(gens, vals, s=6, color=f"C{j}", alpha=0.35)
        if len(means):
            a1.plot(mg, means[:, j], color=f"C{j}", label=f"L{j + 1}")
    for j in range(3):
        vals = np.array([t.masses[j + 1] for t in trials]) * 1e3
        a2.scatter(gens, vals, s=6, color=f"C{j + 4}", alpha=0.35)
        if len(means):
            a2.plot(mg, means[:, 4 + j], color=f"C{j + 4}", label=f"m{j + 2}")
    a1.set_ylabel("link length [mm]")
    a2.set_ylabel("inner mass [g]")
    a1.set_title("Candidates (dots) and the CMA-ES mean after each generation (lines)",
                 fontsize=10)
    _generation_axis(a2, max([*mg, *gens.tolist(), 1]))
    for ax in (a1, a2):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def _zigzag(m: Morphology) -> np.ndarray:
    """(2, 5) drawing pose: rear gripper at the origin on the wall, the body bowed out."""
    P = np.zeros((2, 5))
    for j in (3, 2, 1, 0):  # L4 from the rear gripper up to L1
        a = _DRAW_ANGLES[j]
        P[:, j] = P[:, j + 1] + m.lengths[j] * np.array([np.sin(a), np.cos(a)])
    P[0] -= P[0].min() - 0.01  # keep the whole body off the wall
    return P


def _draw_robot(ax, P: np.ndarray, m: Morphology, color: str, labels: bool) -> None:
    ax.plot(P[0], P[1], "-", color=color, lw=2.5, zorder=2)
    for i in range(5):
        r = _DISC_RADIUS_100G * np.sqrt(m.masses[i] / 0.1)
        ax.add_patch(Circle((P[0, i], P[1, i]), r, color=color, alpha=0.85, zorder=3))
        if labels:
            ax.text(P[0, i] + r + 0.004, P[1, i], f"m{i + 1} {m.masses[i] * 1e3:.0f} g",
                    fontsize=7, va="center")
    if labels:
        for j in range(4):
            c = 0.5 * (P[:, j] + P[:, j + 1])
            ax.text(c[0] + 0.006, c[1], f"L{j + 1} {m.lengths[j] * 1e3:.0f} mm", fontsize=7,
                    ha="left", va="center", color="0.25")


def plot_design(best: Morphology, reference: Morphology | None = None,
                solution: TrajectorySolution | None = None):
    """The design drawn to scale (cf. the paper's Fig. 6): discs of area proportional to
    mass, links at their lengths, next to the initial design; with ``solution``, also its
    poses at the start of each phase of the optimized jump."""
    reference = reference or Morphology.nominal(best.bounds)
    panels = [("initial design", reference, "0.55"), ("optimized design", best, "C3")]
    n = len(panels) + (solution is not None)
    top, bottom = max(0.4, 1.05 * max(sum(m.lengths) for _, m, _ in panels)), -0.03
    if solution is not None:
        rise = solution.points[:, 1, :] - solution.points[0, 1, 4]
        top = max(top, float(rise.max()) + 0.03)
        bottom = min(bottom, float(rise.min()) - 0.03)
    fig, axes = plt.subplots(1, n, figsize=(3.2 * n, 1.0 + 9.0 * (top - bottom)), sharey=True)
    for ax, (title, m, color) in zip(axes, panels, strict=False):
        ax.fill_betweenx([bottom, top], -0.03, -0.012, color="#bbbbbb")
        _draw_robot(ax, _zigzag(m), m, color, labels=True)
        ax.set_title(f"{title}\n{sum(m.lengths) * 1e3:.0f} mm, {m.total_mass * 1e3:.0f} g",
                     fontsize=9)
    if solution is not None:
        ax = axes[-1]
        t_unique, keep = np.unique(solution.t, return_index=True)
        ax.fill_betweenx([bottom, top], -0.03, 0.0, color="#bbbbbb")
        for p, t in enumerate(solution.phase_times[:-1]):
            k = keep[min(np.searchsorted(t_unique, t), len(keep) - 1)]
            P = solution.points[k] - solution.points[0][:, [4]] * np.array([[0.0], [1.0]])
            ax.plot(P[0], P[1], "-o", ms=3, color=f"C{p}", label=f"phase {p + 1} start")
        ax.set_title(f"optimized jump: {solution.speed:.3f} m/s", fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
    for ax in axes:
        ax.set_aspect("equal")
        ax.set_xlim(-0.03, 0.2)
        ax.set_ylim(bottom, top)
        ax.plot([0.1, 0.15], [bottom + 0.015, bottom + 0.015], "k-", lw=2)
        ax.text(0.125, bottom + 0.02, "50 mm", ha="center", fontsize=7)
        ax.set_xticks([])
    axes[0].set_ylabel("height [m]")
    fig.tight_layout()
    return fig


def plot_sweep(rows: Sequence[dict[str, Any]]):
    """Speed of every sample against spine mass fraction, distal link length and the
    front/rear length ratio (the paper's Fig. 7); failed samples as crosses at zero."""
    axes_spec = (("spine_mass_fraction", "spine mass fraction m3 / (m2 + m3 + m4)"),
                 ("distal_link_length_mm", "distal link length (L1 + L4) / 2 [mm]"),
                 ("front_rear_ratio", "front / rear length (L1 + L2) / (L3 + L4)"))
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8), sharey=True)
    ok = [r for r in rows if r["state"] == TrialState.COMPLETE.value]
    bad = [r for r in rows if r["state"] != TrialState.COMPLETE.value]
    for ax, (key, label) in zip(axes, axes_spec, strict=True):
        ax.scatter([r[key] for r in ok], [r["speed_mps"] for r in ok], s=12, c="C0",
                   label=f"converged ({len(ok)})")
        if bad:
            ax.scatter([r[key] for r in bad], [0.0] * len(bad), marker="x", s=14, c="C3",
                       label=f"failed ({len(bad)})")
        ax.set_xlabel(label, fontsize=9)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("climbing speed [m/s]")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats in both coordinates (larger is better),
    in input order."""
    keep = []
    for i, (a, b) in enumerate(points):
        if not any((c >= a and d >= b) and (c > a or d > b) for c, d in points):
            keep.append(i)
    return keep


def landing_points(trials: Sequence[CandidateTrial]) -> list[CandidateTrial]:
    """The converged trials that carry a simulated ready rate (robust fitness)."""
    return [t for t in trials if t.state is TrialState.COMPLETE
            and isinstance(t.info, dict) and "ready_rate" in t.info]


def plot_pareto(trials: Sequence[CandidateTrial]):
    """Planned speed [m/s] against the simulated ready rate of every evaluated design,
    coloured by the expected speed (the robust fitness), with the non-dominated designs
    joined, the robust-fitness best (star) and the fastest design (diamond) marked."""
    pts = landing_points(trials)
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    if not pts:
        ax.text(0.5, 0.5, "no design with a simulated ready rate", ha="center",
                transform=ax.transAxes)
        return fig
    ready = np.array([t.info["ready_rate"] for t in pts])
    speed = np.array([t.speed_mps for t in pts])
    fit = np.array([t.fitness for t in pts])
    sc = ax.scatter(ready, speed, c=fit, cmap="viridis", s=18, alpha=0.8)
    fig.colorbar(sc, ax=ax, label="expected speed [m/s]")
    front = sorted(pareto_front(list(zip(ready.tolist(), speed.tolist(), strict=True))),
                   key=lambda i: ready[i])
    ax.plot(ready[front], speed[front], "k-", lw=1, label="non-dominated")
    b, f = int(np.argmax(fit)), int(np.argmax(speed))
    ax.plot(ready[b], speed[b], "r*", ms=14, label=f"robust best ({fit[b]:.3f} m/s expected)")
    ax.plot(ready[f], speed[f], "D", mfc="none", mec="C3", ms=9,
            label=f"fastest ({speed[f]:.3f} m/s, ready {ready[f]:.2f})")
    ax.set_xlabel("simulated ready rate, first jump [-]")
    ax.set_ylabel("planned climbing speed [m/s]")
    ax.set_xlim(-0.03, 1.03)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    return fig


def _save(fig, path: Path) -> Path:
    return save_figure(fig, path)


def save_codesign_figures(trials: Sequence[CandidateTrial], summaries: Sequence[dict[str, Any]],
                          best: Morphology | None, solution: TrajectorySolution | None,
                          out: str | Path) -> dict[str, Path]:
    """Write the co-design figures into ``out``; returns their paths by name."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"progress": _save(plot_progress(summaries), out / "progress.png"),
             "parameters": _save(plot_parameters(trials, summaries), out / "parameters.png")}
    if best is not None:
        paths["design"] = _save(plot_design(best, solution=solution), out / "design.png")
    if landing_points(trials):
        paths["pareto"] = _save(plot_pareto(trials), out / "pareto.png")
    return paths


def save_sweep_figures(rows: Sequence[dict[str, Any]], out: str | Path) -> dict[str, Path]:
    """Write the sweep figure into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return {"trends": _save(plot_sweep(rows), out / "sweep_trends.png")}


def plot_margin_pareto(points: dict[str, dict[str, dict[str, Any]]]):
    """Expected climbing speed [m/s] against the share of ten-jump climbs of each design,
    one panel per tolerance scale: ``points[design][scale]`` holds ``expected_speed_mps``,
    ``landing_rate`` and ``landing_interval`` (Wilson); the non-dominated designs of each
    panel are filled and joined."""
    scales = sorted({s for by_scale in points.values() for s in by_scale}, key=float)
    fig, axes = plt.subplots(1, len(scales), figsize=(5.2 * len(scales), 4.4), sharey=True,
                             squeeze=False)
    names = list(points)
    for ax, scale in zip(axes[0], scales, strict=True):
        here = [n for n in names if scale in points[n]]
        x = np.array([points[n][scale]["expected_speed_mps"] for n in here])
        y = np.array([points[n][scale]["landing_rate"] for n in here])
        low = np.array([points[n][scale]["landing_interval"][0] for n in here])
        high = np.array([points[n][scale]["landing_interval"][1] for n in here])
        front = sorted(pareto_front(list(zip(x.tolist(), y.tolist(), strict=True))),
                       key=lambda i: x[i])
        ax.plot(x[front], y[front], "k-", lw=1, zorder=1, label="non-dominated")
        for i, n in enumerate(here):
            color = plt.get_cmap("tab20")(names.index(n) % 20)
            ax.errorbar(x[i], y[i], yerr=[[y[i] - low[i]], [high[i] - y[i]]], fmt="o",
                        ms=8, color=color, mfc=color if i in front else "white", capsize=3,
                        zorder=2, label=n)
        ax.set_title(f"tolerances x{float(scale):g}")
        ax.set_xlabel("expected climbing speed [m/s]")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("ten-jump climbs finished [-] (95 % Wilson)")
    axes[0][-1].legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig
