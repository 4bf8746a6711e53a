"""Figures of the spined gripper: adhesion against geometry, trials against the safe region."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from clamber.attachment.safe_region import SafeRegion
from clamber.attachment.safe_region_fit import HangingTrial, SafeRegionFit, trial_forces
from clamber.attachment.spine_gripper import (
    SpineGripperGeometry,
    hanging_load,
    required_adhesion,
    solve_statics,
)

#: Default sweeps [m] of each geometry parameter for :func:`plot_adhesion_trends`.
DEFAULT_SWEEPS: dict[str, tuple[float, float]] = {
    "x_p": (0.002, 0.030),
    "y_p": (-0.010, 0.020),
    "y_s": (0.005, 0.060),
}
_LABELS = {
    "x_p": "pivot distance from wall $x_p$ [mm]",
    "y_p": "pivot drop below spines $y_p$ [mm]",
    "y_s": "spar length $y_s$ [mm]",
}


def plot_adhesion_trends(
    geometry: SpineGripperGeometry,
    load_n: float,
    angle_deg: float,
    sweeps: dict[str, tuple[float, float]] | None = None,
    n_points: int = 200,
) -> Figure:
    """Adhesion the spines need [N] as ``x_p``, ``y_p`` and ``y_s`` vary one at a time.

    Solid where the spar touches the wall, dashed where the foot pitches (spar lifted off,
    the spines carry the pull ``L_x`` alone); the dotted line is ``L_x``, the dot the
    nominal ``geometry``.

    Args:
        geometry: Nominal foot; each panel varies one of its fields.
        load_n: Hanging weight [N].
        angle_deg: Pull angle from the vertical [deg].
        sweeps: Range [m] per field name (``x_p``, ``y_p``, ``y_s``), defaults to
            :data:`DEFAULT_SWEEPS`.
        n_points: Samples per sweep.
    """
    sweeps = dict(DEFAULT_SWEEPS, **(sweeps or {}))
    fig = Figure(figsize=(11.0, 3.4), layout="constrained")
    axes = fig.subplots(1, 3, sharey=True)
    l_x = float(hanging_load(load_n, angle_deg)[0])
    for ax, name in zip(axes, ("x_p", "y_p", "y_s"), strict=True):
        lo, hi = sweeps[name]
        values = np.linspace(lo, hi, n_points)
        adhesion = np.empty(n_points)
        pitches = np.empty(n_points, dtype=bool)
        for k, v in enumerate(values):
            g = dataclasses.replace(geometry, **{name: float(v)})
            st = solve_statics(g, hanging_load(load_n, angle_deg))
            adhesion[k], pitches[k] = st.adhesion_n, st.pitches
        mm = 1e3 * values
        ax.plot(mm, np.where(pitches, np.nan, adhesion), "C0-", label="spar in contact")
        ax.plot(mm, np.where(pitches, adhesion, np.nan), "C3--", label="foot pitches")
        ax.axhline(l_x, color="0.5", ls=":", lw=1.0, label="$L_x$ (spines alone)")
        nominal = float(getattr(geometry, name))
        ax.plot(1e3 * nominal, required_adhesion(geometry, load_n, angle_deg), "ko", ms=4)
        ax.set_xlabel(_LABELS[name])
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("adhesion needed at the spines [N]")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Spined gripper statics: {load_n:.3g} N pulling {angle_deg:.3g} deg off vertical")
    return fig


def region_polygon(
    region: SafeRegion, xlim: tuple[float, float], ylim: tuple[float, float]
) -> np.ndarray:
    """Vertices [N] of ``region`` clipped to the box ``xlim x ylim``, shape (k, 2), ccw.

    Clips the box polygon by each half-plane ``a . f <= b`` in turn (Sutherland-Hodgman).
    """
    poly = np.array(
        [[xlim[0], ylim[0]], [xlim[1], ylim[0]], [xlim[1], ylim[1]], [xlim[0], ylim[1]]]
    )
    for a, b in zip(region.A, region.b, strict=True):
        if len(poly) == 0:
            break
        side = poly @ a - b  # <= 0 inside
        out = []
        for i in range(len(poly)):
            p, q = poly[i], poly[(i + 1) % len(poly)]
            sp, sq = side[i], side[(i + 1) % len(poly)]
            if sp <= 0.0:
                out.append(p)
            if (sp < 0.0 < sq) or (sq < 0.0 < sp):
                out.append(p + (q - p) * sp / (sp - sq))
        poly = np.array(out).reshape(-1, 2)
    return poly


def plot_trials(
    trials: Sequence[HangingTrial],
    fit: SafeRegionFit | SafeRegion | None = None,
    reference: SafeRegion | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Trials in the ``f_x``-``f_y`` plane [N] (held: circles, failed: crosses) and regions.

    Args:
        trials: Hanging-weight trials.
        fit: The fitted region (shaded), or None.
        reference: A region to outline for comparison (e.g. the statics' prediction).
        ax: Axes to draw in; a new figure when None.
    """
    if ax is None:
        fig = Figure(figsize=(5.5, 5.0), layout="constrained")
        ax = fig.subplots()
    else:
        fig = ax.get_figure()
    f, held = trial_forces(trials)
    span = 1.1 * max(float(np.max(np.abs(f))), 1e-9)
    xlim, ylim = (-span, 0.35 * span), (-0.6 * span, span)
    region = fit.region if isinstance(fit, SafeRegionFit) else fit
    if region is not None:
        poly = region_polygon(region, xlim, ylim)
        ax.fill(poly[:, 0], poly[:, 1], color="C2", alpha=0.2, lw=0, label="fitted safe region")
    if reference is not None:
        poly = region_polygon(reference, xlim, ylim)
        label = "reference region"
        for p, q in zip(poly, np.roll(poly, -1, axis=0), strict=True):
            on_box = any(np.isclose(p[k], v) and np.isclose(q[k], v)
                         for k, lim in enumerate((xlim, ylim)) for v in lim)
            if not on_box:  # draw the region's own boundary, not the clipping box
                ax.plot([p[0], q[0]], [p[1], q[1]], "k--", lw=1.0, label=label)
                label = None
    ax.plot(f[held, 0], f[held, 1], "o", color="C0", ms=4, mfc="none", label="held")
    ax.plot(f[~held, 0], f[~held, 1], "x", color="C3", ms=4, label="failed")
    ax.axvline(0.0, color="0.3", lw=0.8)
    ax.axhline(0.0, color="0.3", lw=0.8)
    ax.set_xlim(xlim)
    ax.set_ylim(ylim)
    ax.set_aspect("equal")
    ax.set_xlabel("$f_x$ [N] (negative: adhesion)")
    ax.set_ylabel("$f_y$ [N] (along the wall, up)")
    ax.legend(fontsize=8, loc="lower left")
    ax.grid(alpha=0.3)
    return fig
