"""Figures and animations of a jumper TrajectorySolution."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.animation import FuncAnimation, PillowWriter

from clamber.jumper.model import JOINT_NAMES
from clamber.jumper.schedule import PHASES
from clamber.jumper.solution import TrajectorySolution
from clamber.report.gripper import region_polygon
from clamber.report.save import save_figure

#: Colours of the five phases (tab10: distinct, colour-blind-safe first five): markers in
#: full, shaded time spans as light tints of the same colour, so a phase reads alike in
#: every panel.
PHASE_MARKERS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd")
PHASE_SHADE_ALPHA = 0.13


def shade_phases(ax, sol: TrajectorySolution) -> None:
    """Shade the five phases on a time axis and label them."""
    edges = sol.phase_times
    for p, (a, b) in zip(PHASES, zip(edges[:-1], edges[1:], strict=True), strict=True):
        ax.axvspan(a, b, color=PHASE_MARKERS[p.index - 1], alpha=PHASE_SHADE_ALPHA, zorder=0,
                   lw=0)
        ax.text(0.5 * (a + b), 1.0, str(p.index), transform=ax.get_xaxis_transform(),
                ha="center", va="bottom", fontsize=8, color=PHASE_MARKERS[p.index - 1],
                fontweight="bold")


def plot_joints(sol: TrajectorySolution):
    """Joint angles and torques against time, phases shaded."""
    fig, (a1, a2) = plt.subplots(2, 1, sharex=True, figsize=(7, 5.5))
    for j, name in enumerate(JOINT_NAMES):
        a1.plot(sol.t, np.degrees(sol.q[:, 3 + j]), label=name)
        a2.plot(sol.t, sol.tau[:, j], label=name)
    lim = sol.settings.torque_limit
    a2.axhline(lim, ls="--", c="k", lw=0.8)
    a2.axhline(-lim, ls="--", c="k", lw=0.8)
    a1.set_ylabel("joint angle [deg]")
    a2.set_ylabel("torque [N m]")
    a2.set_xlabel("time [s]")
    for ax in (a1, a2):
        shade_phases(ax, sol)
    a1.legend(loc="best", fontsize=8)
    fig.suptitle(f"{sol.speed:.3f} m/s ({sol.speed_bl:.2f} BL/s), period {sol.period * 1e3:.0f} ms")
    fig.tight_layout()
    return fig


def plot_forces(sol: TrajectorySolution):
    """Gripper forces against time and inside their safe regions (the paper's Fig. 8)."""
    fig, axes = plt.subplots(2, 2, figsize=(9, 6))
    for row, (name, f, region) in enumerate((
        ("front", sol.f_front, sol.settings.safe_region_front),
        ("rear", sol.f_rear, sol.settings.safe_region_rear),
    )):
        ax = axes[row, 0]
        ax.plot(sol.t, f[:, 0], label="$f_x$ (normal)")
        ax.plot(sol.t, f[:, 1], label="$f_y$ (tangential)")
        shade_phases(ax, sol)
        ax.set_ylabel(f"{name} force [N]")
        ax.legend(fontsize=8)
        ax = axes[row, 1]
        finite = f[np.all(np.isfinite(f), axis=1)]
        span = max(1.0, float(np.abs(finite).max()) * 1.3) if len(finite) else 1.0
        poly = region_polygon(region, (-span, span), (-span, span))
        if len(poly):
            ax.fill(poly[:, 0], poly[:, 1], color="0.88", label="safe region")
        ph = sol.phase[np.all(np.isfinite(f), axis=1)]
        for k in np.unique(ph):  # one discrete colour per phase (the attached ones only)
            sel = ph == k
            ax.scatter(finite[sel, 0], finite[sel, 1], s=12, color=PHASE_MARKERS[int(k) - 1],
                       label=f"phase {int(k)}")
        ax.axvline(0, c="k", lw=0.5)
        ax.set_xlim(-span, span)
        ax.set_ylim(-span, span)
        ax.set_xlabel("$f_x$ [N]  (<0: adhesion)")
        ax.set_ylabel("$f_y$ [N]")
        ax.set_aspect("equal")
        ax.legend(fontsize=7, loc="upper right")
        axes[row, 0].set_title(f"{name} gripper: wall force over time", fontsize=9, pad=12)
        ax.set_title(f"{name} gripper: force in its safe region", fontsize=9)
    axes[1, 0].set_xlabel("time [s]")
    fig.tight_layout()
    return fig


def _frames(sol: TrajectorySolution, jumps: int, fps: float) -> tuple[np.ndarray, np.ndarray]:
    """Resampled stick figures for consecutive jumps: (times, points (n, 2, 5))."""
    t_all, P_all = [], []
    T = sol.period
    t_unique, keep = np.unique(sol.t, return_index=True)
    for j in range(jumps):
        ts = np.arange(0.0, T, 1.0 / fps)
        P = np.empty((len(ts), 2, 5))
        for a in range(2):
            for b in range(5):
                P[:, a, b] = np.interp(ts, t_unique, sol.points[keep, a, b])
        P[:, 1, :] += j * sol.height
        t_all.append(ts + j * T)
        P_all.append(P)
    return np.concatenate(t_all), np.concatenate(P_all)


def _draw_wall(ax, ymin: float, ymax: float) -> None:
    ax.fill_betweenx([ymin, ymax], -0.03, 0.0, color="#bbbbbb")


def stick_axes(P: np.ndarray, margin: float = 0.03):
    """Figure with the wall and an empty stick figure sized for frames ``P`` (n, 2, 5).

    Returns ``(fig, ax, line, text)``: the robot's line and a time label to update.
    """
    fig, ax = plt.subplots(figsize=(3.5, 6))
    ymin, ymax = P[:, 1].min() - margin, P[:, 1].max() + margin
    _draw_wall(ax, ymin, ymax)
    (line,) = ax.plot([], [], "-o", c="C0", lw=2, ms=4)
    text = ax.text(0.02, 0.98, "", transform=ax.transAxes, va="top", fontsize=8)
    ax.set_xlim(-0.03, max(0.25, P[:, 0].max() + 0.03))
    ax.set_ylim(ymin, ymax)
    ax.set_aspect("equal")
    ax.set_xlabel("x [m] (from the wall)")
    ax.set_ylabel("y [m] (up the wall)")
    fig.tight_layout()
    return fig, ax, line, text


def animate(sol: TrajectorySolution, path: str | Path, jumps: int = 2, fps: float = 30.0,
            slowdown: float = 4.0) -> Path:
    """Stick-figure GIF of ``jumps`` consecutive jumps, played ``slowdown`` x slower."""
    path = Path(path)
    ts, P = _frames(sol, jumps, fps * slowdown)
    fig, ax, line, text = stick_axes(P)

    def draw(i):
        line.set_data(P[i, 0], P[i, 1])
        text.set_text(f"t = {ts[i]:.3f} s")
        return line, text

    anim = FuncAnimation(fig, draw, frames=len(ts), blit=True)
    anim.save(path, writer=PillowWriter(fps=fps))
    plt.close(fig)
    return path


def filmstrip(sol: TrajectorySolution, frames: int = 12):
    """Snapshots of one jump side by side, shifted right, coloured by phase."""
    fig, ax = plt.subplots(figsize=(10, 4))
    t_unique, keep = np.unique(sol.t, return_index=True)
    ts = np.linspace(0, sol.period, frames)
    dx = 0.12
    for i, t in enumerate(ts):
        k = keep[min(np.searchsorted(t_unique, t), len(keep) - 1)]
        P = sol.points[k]
        off = i * dx
        ax.fill_betweenx([P[1].min() - 0.02, P[1].max() + 0.02], off - 0.01, off, color="#ccc")
        ax.plot(P[0] + off, P[1], "-o", c=f"C{int(sol.phase[k]) - 1}", ms=3)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_ylabel("y [m]")
    ax.set_title("one jump, left to right (colour: phase 1-5)")
    fig.tight_layout()
    return fig


def save_all(sol: TrajectorySolution, out: str | Path, animation: bool = True) -> dict[str, Path]:
    """Write every figure of a solution into ``out``; returns their paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, make in (("joints", plot_joints), ("forces", plot_forces),
                       ("filmstrip", filmstrip)):
        fig = make(sol)
        paths[name] = out / f"{name}.png"
        save_figure(fig, paths[name])
    if animation:
        paths["animation"] = animate(sol, out / "climb.gif")
    return paths
