"""Figures of simulated climbs and telemetry: tracking, forces vs safe region, Fig.-8 style, GIF."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.animation import FuncAnimation, PillowWriter

from clamber.jumper.model import JOINT_NAMES, jumper_model
from clamber.jumper.sim.reference import optimized_angles, unique_nodes
from clamber.jumper.sim.result import SimulationResult
from clamber.jumper.sim.telemetry import TelemetryAnalysis
from clamber.jumper.solution import TrajectorySolution
from clamber.report.gripper import region_polygon
from clamber.report.jumper import stick_axes
from clamber.report.save import save_figure


def _hook_spans(ax, t: np.ndarray, hooked: np.ndarray, color: str, label: str) -> None:
    on = np.r_[False, hooked > 0.5, False]
    starts = np.flatnonzero(~on[:-1] & on[1:])
    ends = np.flatnonzero(on[:-1] & ~on[1:]) - 1
    for i, (a, b) in enumerate(zip(starts, ends, strict=True)):
        ax.axvspan(t[a], t[min(b, len(t) - 1)], color=color, alpha=0.15, lw=0,
                   label=label if i == 0 else None)


def plot_tracking(result: SimulationResult, sol: TrajectorySolution):
    """Simulated joint angles over the optimized ones, one panel per joint [deg]."""
    t = result.column("t")
    T = result.reference.period
    opt = optimized_angles(sol, t % T)
    fig, axes = plt.subplots(3, 1, sharex=True, figsize=(7, 6))
    for j, (ax, name) in enumerate(zip(axes, JOINT_NAMES, strict=True)):
        ax.plot(t, np.degrees(opt[:, j]), "k--", lw=1, label="optimized")
        ax.plot(t, np.degrees(result.column(name)), "C0", lw=1.2, label="simulated")
        ax.set_ylabel(f"{name} [deg]")
        _hook_spans(ax, t, result.column("front_hooked"), "C2", "front hooked")
        for i, (te, g) in enumerate((te, g) for te, g, e in result.events if e == "tear"):
            ax.axvline(te, color="C3", lw=1.2, ls=":",
                       label="tear-off" if i == 0 else None)
            if j == 0:
                ax.annotate(f"{g} tears off", (te, 1.0), xycoords=("data", "axes fraction"),
                            fontsize=7, color="C3", ha="left", va="top")
    axes[0].legend(fontsize=7, loc="lower left", bbox_to_anchor=(0.0, 1.08), ncols=4,
                   frameon=False)  # above the panels: no trace or label under it
    axes[-1].set_xlabel("t [s]")
    fig.suptitle("Open-loop playback: joint angles")
    fig.tight_layout()
    return fig


def plot_forces(result: SimulationResult, sol: TrajectorySolution):
    """Wall forces on each gripper while hooked, simulated and optimized, over the safe region.

    The axes frame the safe region and the optimized forces; impact spikes beyond it are
    counted in the panel (their peak is given) rather than shrinking the region to a dot."""
    fig, axes = plt.subplots(1, 2, figsize=(8, 4))
    regions = (sol.settings.safe_region_front, sol.settings.safe_region_rear)
    opt = (sol.f_front, sol.f_rear)
    for ax, g, region, f_opt in zip(axes, ("front", "rear"), regions, opt, strict=True):
        fx, fy = result.column(f"fx_{g}"), result.column(f"fy_{g}")
        ok = np.isfinite(fx)
        cap = float(np.max(region.b, initial=0.0))  # the load cap [N]
        lim = max(8.0, 1.3 * cap, 1.2 * float(np.max(np.abs(np.nan_to_num(f_opt)), initial=0.0)))
        outside = ok & ((np.abs(fx) > lim) | (np.abs(fy) > lim))
        if outside.any():
            peak = float(np.max(np.hypot(fx[outside], fy[outside])))
            ax.text(0.02, 0.02, f"{int(outside.sum())} samples beyond the frame\n(impacts, "
                    f"peak {peak:.0f} N)", transform=ax.transAxes, fontsize=7, va="bottom")
        poly = region_polygon(region, (-lim, lim), (-lim, lim))
        if len(poly):
            ax.fill(poly[:, 0], poly[:, 1], color="C2", alpha=0.2, label="safe region")
        ax.plot(fx[ok], fy[ok], ".", ms=2, c="C0", label="simulated")
        ax.plot(f_opt[:, 0], f_opt[:, 1], "k.", ms=4, label="optimized")
        ax.set_xlim(-lim, lim)
        ax.set_ylim(-lim, lim)
        ax.set_aspect("equal")
        ax.set_title(f"{g} gripper")
        ax.set_xlabel("f_x [N] (wall on gripper)")
    axes[0].set_ylabel("f_y [N]")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_telemetry(analysis: TelemetryAnalysis):
    """The paper's Fig. 8 layout: angles, torques, power and gripper forces against time."""
    t = analysis.t
    fig, axes = plt.subplots(4, 1, sharex=True, figsize=(7, 8))
    for j, name in enumerate(JOINT_NAMES):
        axes[0].plot(t, np.degrees(analysis.q[:, 3 + j]), label=name)
        axes[1].plot(t, analysis.torque[:, j], c=f"C{j}", label=f"{name} (motor fit)")
        axes[1].plot(t, analysis.torque_id[:, j], ".", ms=2, c=f"C{j}",
                     label="inverse dynamics\nof the measured motion" if j == 0 else None)
        axes[2].plot(t, analysis.torque[:, j] * analysis.qd[:, 3 + j], c=f"C{j}")
    for g, f, ls in (("front", analysis.f_front, "-"), ("rear", analysis.f_rear, "--")):
        axes[3].plot(t, f[:, 0], ls, c="C3", label=f"{g} f_x")
        axes[3].plot(t, f[:, 1], ls, c="C4", label=f"{g} f_y")
    axes[0].set_ylabel("angle [deg]")
    axes[1].set_ylabel("torque [N m]")
    axes[2].set_ylabel("power [W]")
    axes[3].set_ylabel("wall force [N]")
    axes[3].set_xlabel("t [s]")
    axes[0].legend(fontsize=7, ncols=3)
    handles, labels = axes[1].get_legend_handles_labels()
    dots = labels.index("inverse dynamics\nof the measured motion")
    handles[dots] = plt.Line2D([], [], ls="", marker=".", c="0.3")  # for every joint
    axes[1].legend(handles, labels, fontsize=7, ncols=2)
    axes[3].legend(fontsize=7, ncols=4)
    for ax in axes:
        _hook_spans(ax, t, analysis.hooked[:, 0].astype(float), "C2", None)
    fig.tight_layout()
    return fig


def animate_simulation(result: SimulationResult, sol: TrajectorySolution, path: str | Path,
                       fps: float = 25.0, slowdown: float = 4.0) -> Path:
    """Stick-figure GIF of the simulated climb (drawn from simulated positions).

    The optimized motion of the current jump is shown faintly for comparison.
    """
    path = Path(path)
    m = jumper_model("rear_foot")
    t = result.column("t")
    step = max(1, round(1000.0 / (fps * slowdown)))
    idx = np.arange(0, len(t), step)
    q = np.column_stack([result.column(c) for c in ("x5", "y5", "phi5", "hip", "spine",
                                                    "shoulder")])[idx]
    P = np.array(m.points.map(len(idx))(q.T, result.parameters)).reshape(2, len(idx), 5)
    P = P.transpose(1, 0, 2)
    keep = unique_nodes(sol)
    T = result.reference.period
    fig, ax, line, text = stick_axes(P, margin=0.04)
    (ghost,) = ax.plot([], [], "-", c="0.6", lw=1)
    line.set_label("simulated")
    ghost.set_label("optimized (this jump)")
    ax.legend(loc="lower right", fontsize=7)
    ax.set_title("Simulated climb", fontsize=9)
    fig.tight_layout()
    front = result.column("front_hooked")[idx]
    rear = result.column("rear_hooked")[idx]

    def draw(i):
        line.set_data(P[i, 0], P[i, 1])
        jump = int(t[idx[i]] // T)
        tt = t[idx[i]] - jump * T
        g = np.array([[np.interp(tt, sol.t[keep], sol.points[keep, a, b]) for b in range(5)]
                      for a in range(2)])
        ghost.set_data(g[0], g[1] + jump * sol.height)
        text.set_text(f"t = {t[idx[i]]:.3f} s  front {'on' if front[i] else 'off'}  "
                      f"rear {'on' if rear[i] else 'off'}")
        return line, ghost, text

    anim = FuncAnimation(fig, draw, frames=len(idx), blit=True)
    anim.save(path, writer=PillowWriter(fps=fps))
    plt.close(fig)
    return path


def save_simulation_figures(result: SimulationResult, sol: TrajectorySolution, out: str | Path,
                            animation: bool = True) -> dict[str, Path]:
    """Write tracking and force figures (and the GIF) into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, fn in (("sim_tracking", plot_tracking), ("sim_forces", plot_forces)):
        paths[name] = save_figure(fn(result, sol), out / f"{name}.png", dpi=120)
    if animation:
        paths["sim_animation"] = animate_simulation(result, sol, out / "sim_climb.gif")
    return paths




def plot_height_climbed(ready_jumps: dict[str, tuple[np.ndarray, int]], jump_height: float,
                        title: str = ""):
    """Share of climbs with at least ``n`` ready landings before their first failure,
    against ``n`` (an empirical survival curve; its last step is the share that finished),
    with the nominal height climbed, ``n`` times ``jump_height`` [m], on the top axis.

    ``ready_jumps`` maps a label to the per-climb counts and the climb's length in jumps.
    """
    fig, ax = plt.subplots(figsize=(6.5, 4))
    longest = max((jumps for _, jumps in ready_jumps.values()), default=1)
    for i, (label, (counts, jumps)) in enumerate(ready_jumps.items()):
        counts = np.asarray(counts, int)
        if len(counts) == 0:
            continue
        n = np.arange(jumps + 1)
        share = (counts[None, :] >= n[:, None]).mean(axis=1)
        ax.step(n, share, where="post", color=f"C{i}",
                label=f"{label}: {len(counts)} climbs, {share[-1]:.0%} finished")
    ax.set_xlabel("ready landings before the first failed one")
    ax.set_ylabel("share of climbs")
    ax.set_xlim(0, longest)
    ax.set_ylim(0, 1.02)
    top = ax.secondary_xaxis("top", functions=(lambda x: x * jump_height,
                                               lambda h: h / jump_height))
    top.set_xlabel("height climbed [m] (nominal jump height)")
    ax.grid(alpha=0.3)
    ax.legend(loc="center right", fontsize=7)
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig
