"""Figures of a gripper's sampled wrench space with its fitted box and polytope (Fig. 12)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Polygon, Rectangle
from scipy.spatial import ConvexHull

from clamber.attachment.wrench_limits import WRENCH_AXES, WrenchLimits
from clamber.attachment.wrench_space import WrenchSpaceFit, polytope_vertices

#: Axis pairs drawn by default: fx-fz, fy-fz, tx-ty, fx-tz (indices into WRENCH_AXES).
DEFAULT_PAIRS = ((0, 2), (1, 2), (3, 4), (0, 5))

_UNITS = ("N", "N", "N", "N m", "N m", "N m")


def _outline(ax, points: np.ndarray, **style) -> None:
    """Draw the convex outline of 2D points."""
    if points.shape[0] >= 3:
        hull = ConvexHull(points)
        ax.add_patch(Polygon(points[hull.vertices], closed=True, fill=False, **style))


def plot_wrench_space(
    fit: WrenchSpaceFit,
    pairs: Sequence[tuple[int, int]] = DEFAULT_PAIRS,
    paper_box: WrenchLimits | None = None,
) -> Figure:
    """2D projections of the samples, the hull outline, the fitted box and polytope.

    Args:
        fit: result of :func:`~clamber.attachment.wrench_space.fit_wrench_space`.
        pairs: wrench-axis index pairs, one panel each.
        paper_box: another box (e.g. ``WrenchLimits.paper_box()``) drawn dashed.
    """
    fig = Figure(figsize=(4.0 * len(pairs), 4.0), layout="constrained")
    axes = fig.subplots(1, len(pairs), squeeze=False)[0]
    samples = fit.samples.wrenches
    poly = polytope_vertices(fit.polytope)
    for ax, (i, j) in zip(axes, pairs, strict=True):
        ax.scatter(samples[:, i], samples[:, j], s=2, color="0.6", label="samples")
        _outline(ax, samples[:, [i, j]], edgecolor="tab:red", label="sampled hull")
        _outline(ax, poly[:, [i, j]], edgecolor="tab:green", label="polytope")
        for box, style in ((fit.box, "-"), (paper_box, "--")):
            if box is None:
                continue
            hi, lo = box.h[:6], -box.h[6:]
            ax.add_patch(Rectangle((lo[i], lo[j]), hi[i] - lo[i], hi[j] - lo[j], fill=False,
                                   edgecolor="tab:blue", linestyle=style, label=box.name))
        ax.set_xlabel(f"{WRENCH_AXES[i]} [{_UNITS[i]}]")
        ax.set_ylabel(f"{WRENCH_AXES[j]} [{_UNITS[j]}]")
    axes[0].legend(loc="best", fontsize="small")
    fig.suptitle(f"SPASAS wrench space at tau_pha = {fit.samples.tau_pha:.2f} N m")
    return fig
