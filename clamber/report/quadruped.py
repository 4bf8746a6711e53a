"""Figures and animations of quadruped climbing and trotting runs (paper's Figs. 8, 10, 11)."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.trials.log import TrialLog
from clamber.quadruped.trials.result import TrialResult
from clamber.report.save import save_figure

LEG_COLORS = {"LF": "#1f77b4", "LR": "#ff7f0e", "RF": "#2ca02c", "RR": "#d62728"}
AXES = ("x", "y", "z")


def shade_swings(ax, log: TrialLog) -> None:
    """Shade each leg's unload-to-reload interval in its colour (the paper's phase bands)."""
    spans: dict[tuple[str, int], list[float]] = {}
    count = 0
    for a, b, name, leg in log.bands:
        if name == "unload":
            count += 1
        if leg and name not in ("settle", "body", "done"):
            spans.setdefault((leg, count), [a, b])[1] = b
    for (leg, _), (a, b) in spans.items():
        ax.axvspan(a, b, color=LEG_COLORS[leg], alpha=0.12, lw=0, zorder=0)


def plot_climb(log: TrialLog, title: str = ""):
    """Feet in {B}, body position in {S} against its reference, and power (Figs. 8, 10)."""
    a = log.arrays()
    t = a["t"]
    fig, axes = plt.subplots(4, 1, sharex=True, figsize=(8, 9))
    for k in range(3):
        ax = axes[k]
        for i, leg in enumerate(LEG_NAMES):
            ax.plot(t, 1000 * a["feet_body"][:, i, k], c=LEG_COLORS[leg], label=leg, lw=1)
        ax.set_ylabel(f"foot {AXES[k]} in {{B}} [mm]")
        shade_swings(ax, log)
    from matplotlib.patches import Patch

    swing = Patch(color="0.5", alpha=0.25, lw=0, label="shaded: a leg's swing\n(unload to "
                  "reload,\nin the leg's colour)")
    axes[0].legend(handles=[*axes[0].get_legend_handles_labels()[0], swing], fontsize=8,
                   loc="upper left", bbox_to_anchor=(1.01, 1.0), title="foot", title_fontsize=8)
    ax = axes[3]
    ax2 = ax.twinx()
    for k, ls in zip(range(3), ("-", "--", ":"), strict=True):
        ax2.plot(t, 1000 * (a["body_true"][:, k] - a["body_true"][0, k]), c="k", ls=ls, lw=1,
                 label=f"body {AXES[k]} [mm]")
        ax2.plot(t, 1000 * (a["body_ref"][:, k] - a["body_true"][0, k]), c="0.6", ls=ls,
                 lw=1)
    ax2.set_ylabel("body displacement in {S} [mm]\n(black true, grey reference)")
    ax.plot(t, a["power_w"], c="tab:purple", lw=0.8, label="joint power [W]")
    ax.set_ylabel("joint power [W]", color="tab:purple")
    ax.set_xlabel("time [s]")
    shade_swings(ax, log)
    ref = plt.Line2D([], [], c="0.6", lw=1, label="reference (same line style)")
    handles = [*ax2.get_legend_handles_labels()[0], ref, *ax.get_legend_handles_labels()[0]]
    ax2.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.2, 1.0))
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_trot(log: TrialLog, title: str = ""):
    """Body attitude error and power against time for one trotting trial."""
    a = log.arrays()
    fig, (a1, a2, a3) = plt.subplots(3, 1, sharex=True, figsize=(8, 6))
    for k, ls in zip(range(3), ("-", "--", ":"), strict=True):
        a1.plot(a["t"], 1000 * a["feet_body"][:, 0, k], c=LEG_COLORS["LF"], ls=ls, lw=1,
                label=f"LF {AXES[k]}")
    a1.set_ylabel("LF foot in {B} [mm]")
    a1.legend(fontsize=8, ncol=3)
    a2.plot(a["t"], a["attitude_deg"], c="k", lw=1)
    a2.set_ylabel("attitude error [deg]")
    a3.plot(a["t"], a["power_w"], c="tab:purple", lw=0.8)
    a3.set_ylabel("joint power [W]")
    a3.set_xlabel("time [s]")
    for a_, (s, e, _, _) in ((ax, b) for ax in (a1, a2, a3) for b in log.bands):
        a_.axvspan(s, e, color="tab:blue", alpha=0.06, lw=0)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_trot_study(study: list[dict]):
    """Attitude error and mean power with grippers and rubber feet per terrain (Fig. 11C);
    ``study`` holds one summary per condition with its ``feet`` and ``terrain``."""
    by = {(r["feet"], r["terrain"]): r for r in study}
    terrains = sorted({t for _, t in by})
    feet = sorted({f for f, _ in by})
    x = np.arange(len(terrains))
    width = 0.8 / max(1, len(feet))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))

    def value(f: str, t: str, key: str) -> float:
        v = by.get((f, t), {}).get(key)
        return np.nan if v is None else v

    for j, f in enumerate(feet):
        att = [value(f, t, "attitude_error_rms_deg") for t in terrains]
        pw = [value(f, t, "mean_power_w") for t in terrains]
        a1.bar(x + j * width, att, width, label=f)
        a2.bar(x + j * width, pw, width, label=f)
    for ax, label in ((a1, "RMS attitude error [deg]"), (a2, "mean power [W]")):
        ax.set_xticks(x + width * (len(feet) - 1) / 2, terrains)
        ax.set_ylabel(label)
        ax.legend()
    fig.tight_layout()
    return fig


def _render_mujoco(log: TrialLog, width: int = 480, height: int = 360) -> list[np.ndarray]:
    """Offscreen MuJoCo frames of the snapshots (raises if no GL context is available)."""
    import mujoco

    model = log.model
    data = mujoco.MjData(model)
    cam = mujoco.MjvCamera()
    frames = []
    with mujoco.Renderer(model, height, width) as r:
        for _, qpos, _ in log.snapshots:
            data.qpos[:] = qpos
            mujoco.mj_forward(model, data)
            # Look at the body along its -z axis (into the wall), slightly from above.
            forward = -data.xmat[1].reshape(3, 3)[:, 2]
            cam.lookat[:] = qpos[:3]
            cam.distance = 1.4
            cam.azimuth = float(np.degrees(np.arctan2(forward[1], forward[0])))
            cam.elevation = float(np.degrees(np.arcsin(np.clip(forward[2], -1, 1)))) - 25.0
            r.update_scene(data, cam)
            frames.append(r.render().copy())
    return frames


def _render_matplotlib(log: TrialLog) -> list[np.ndarray]:
    """Stick figures of the bodies' positions, side and front views, for headless machines."""
    import mujoco

    model = log.model
    parent = model.body_parentid
    pts = np.array([x for _, _, x in log.snapshots])
    lo, hi = pts[:, 1:].min(axis=(0, 1)) - 0.1, pts[:, 1:].max(axis=(0, 1)) + 0.1
    rocks = np.array([model.geom_pos[g] for g in range(model.ngeom)
                      if model.geom_bodyid[g] == 0
                      and model.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH]).reshape(-1, 3)
    links = [(parent[b], b) for b in range(2, model.nbody)]
    fig, axes = plt.subplots(1, 2, figsize=(6.4, 3.6))
    views = ((0, 2), (1, 2))
    drawn = []
    for ax, (i, j), name in zip(axes, views, ("side (x-z)", "front (y-z)"), strict=True):
        ax.scatter(rocks[:, i], rocks[:, j], c="0.6", s=40, marker="s")
        lines = [ax.plot([], [], c="k", lw=1.5)[0] for _ in links]
        body = ax.plot([], [], "o", c="tab:red", ms=5)[0]
        drawn.append((lines, body))
        ax.set_xlim(lo[i], hi[i])
        ax.set_ylim(lo[j], hi[j])
        ax.set_aspect("equal")
        ax.set_title(name, fontsize=9)
    title = fig.suptitle("", fontsize=9)
    frames = []
    for t, _, xpos in log.snapshots:
        for (i, j), (lines, body) in zip(views, drawn, strict=True):
            for line, (p, b) in zip(lines, links, strict=True):
                line.set_data([xpos[p, i], xpos[b, i]], [xpos[p, j], xpos[b, j]])
            body.set_data([xpos[1, i]], [xpos[1, j]])
        title.set_text(f"t = {t:.1f} s")
        fig.canvas.draw()
        frames.append(np.asarray(fig.canvas.buffer_rgba())[..., :3].copy())
    plt.close(fig)
    return frames


def _stamped(frames: list[np.ndarray], log: TrialLog) -> list[np.ndarray]:
    """Each frame with its time and how far the body has moved from its start [m]."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=15)
    start = np.asarray(log.snapshots[0][1][:3])
    out = []
    for frame, (t, qpos, _) in zip(frames, log.snapshots, strict=True):
        image = Image.fromarray(frame)
        moved = float(np.linalg.norm(np.asarray(qpos[:3]) - start))
        ImageDraw.Draw(image).text((8, 8), f"t = {t:5.1f} s   body moved {moved:.2f} m",
                                   fill=(255, 255, 255), font=font, stroke_width=2,
                                   stroke_fill=(0, 0, 0))
        out.append(np.asarray(image))
    return out


def animate(log: TrialLog, path: str | Path, fps: float = 8.0) -> tuple[Path, str]:
    """Write a GIF of the trial's snapshots: MuJoCo offscreen rendering if a GL context
    exists (``MUJOCO_GL=egl`` or ``osmesa``), otherwise matplotlib stick figures.
    Returns the path and the renderer used."""
    from PIL import Image

    if not log.snapshots or log.model is None:
        raise ValueError("the trial log has no snapshots to animate")
    frames, how = None, "mujoco"
    if os.environ.get("MUJOCO_GL") in ("egl", "osmesa", "glfw"):
        try:
            frames = _render_mujoco(log)
        except Exception:  # noqa: BLE001 - any GL failure falls back to matplotlib
            frames = None
    if frames is None:
        frames, how = _render_matplotlib(log), "matplotlib"
    else:  # the camera follows the body: a stamp tells the frames apart
        frames = _stamped(frames, log)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    images = [Image.fromarray(f) for f in frames]
    images[0].save(path, save_all=True, append_images=images[1:], duration=int(1000 / fps),
                   loop=0)
    return path, how


def save_climb(log: TrialLog, out: str | Path, title: str = "",
               animation: bool = True) -> dict[str, Path]:
    """Write the climb figure, the log (npz) and optionally the GIF under ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"figure": out / "climb.png", "log": out / "climb_log.npz"}
    save_figure(plot_climb(log, title), paths["figure"])
    np.savez_compressed(paths["log"], **log.arrays())
    if animation:
        paths["animation"], _ = animate(log, out / "climb.gif")
    return paths


def plot_loads(trials: list[TrialResult], path: str | Path, title: str = "") -> Path:
    """Per-trial peak gripper load (gauge in the achievable set) and planned load (over the
    controllers' box) for every controller and scenario: how close each comes to its limits."""
    scenarios = list(dict.fromkeys(r.setting for r in trials))
    names = list(dict.fromkeys(r.controller for r in trials))
    rows = len(scenarios) * len(names)
    fig, axes = plt.subplots(1, 2, figsize=(12, max(3.2, 1.4 + 0.35 * rows)), sharey=True)
    labels = []
    for row, (sc, c) in enumerate((sc, c) for sc in scenarios for c in names):
        rs = [r for r in trials if r.setting == sc and r.controller == c]
        labels.append(f"{c} @ {sc}")
        for ax, key in zip(axes, ("peak_gripper_load", "planned_load"), strict=True):
            x = [getattr(r, key) for r in rs]
            colours = ["tab:green" if r.success else "tab:red" for r in rs]
            ax.scatter(x, np.full(len(x), row) + np.linspace(-0.25, 0.25, len(x)), s=10,
                       c=colours)
    axes[0].axvline(1.0, color="k", lw=1)
    axes[0].set_xlabel("peak gripper wrench gauge in the achievable set (1 = breaks)")
    axes[1].axvline(1.0, color="k", lw=1)
    axes[1].set_xlabel("peak planned wrench / controllers' box (per axis; 1 = box limit)")
    axes[0].set_yticks(range(len(labels)), labels, fontsize=7)
    axes[0].set_ylim(rows - 0.5, -0.5)  # every row's markers inside, the first on top
    for ax in axes:
        ax.margins(x=0.08)
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(title or "Gripper loads against their limits (green: completed, red: failed)")
    fig.tight_layout()
    return save_figure(fig, Path(path))
