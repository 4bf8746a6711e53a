"""Figures of a gripper's sampled wrench space with its fitted box and polytope (Fig. 12)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Polygon, Rectangle
from scipy.spatial import ConvexHull

from clamber.attachment.wrench_fit import WrenchSpaceFit
from clamber.attachment.wrench_limits import WRENCH_AXES, WrenchLimits

#: Axis pairs drawn by default: fx-fz, fy-fz, tx-ty, fx-tz (indices into WRENCH_AXES).
DEFAULT_PAIRS = ((0, 2), (1, 2), (3, 4), (0, 5))

_UNITS = ("N", "N", "N", "N m", "N m", "N m")


def _outline(ax: Axes, points: np.ndarray, **style: object) -> None:
    """Draw the convex outline of 2D points (the projection of their 6-D hull)."""
    if points.shape[0] >= 3:
        hull = ConvexHull(points)
        ax.add_patch(Polygon(points[hull.vertices], closed=True, fill=False, **style))


def _rectangle(ax: Axes, box: WrenchLimits, i: int, j: int, label: str, **style: object) -> None:
    """Draw the (i, j) face of a box ``WrenchLimits`` (rows +e_k then -e_k)."""
    hi, lo = box.h[:6], -box.h[6:]
    ax.add_patch(Rectangle((lo[i], lo[j]), hi[i] - lo[i], hi[j] - lo[j], fill=False,
                           label=label, **style))


def plot_wrench_space(
    fit: WrenchSpaceFit,
    pairs: Sequence[tuple[int, int]] = DEFAULT_PAIRS,
    paper_box: WrenchLimits | None = None,
) -> Figure:
    """2D projections of the samples, their hull, the fitted box and polytope.

    Projections of convex sets are exact outlines: the red line is the projection of the
    sampled wrench space, green the polytope's, blue the fitted box, dashed black
    ``paper_box``.

    Args:
        fit: result of :func:`~clamber.attachment.wrench_space.fit_wrench_space`.
        pairs: wrench-axis index pairs, one panel each.
        paper_box: a reference box (e.g. ``WrenchLimits.paper_box()``) drawn dashed.
    """
    fig = Figure(figsize=(4.0 * len(pairs), 4.0), layout="constrained")
    axes = fig.subplots(1, len(pairs), squeeze=False)[0]
    samples = fit.samples.wrenches
    poly = fit.polytope_points
    for ax, (i, j) in zip(axes, pairs, strict=True):
        ax.scatter(samples[:, i], samples[:, j], s=2, color="0.6", label="samples")
        _outline(ax, samples[:, [i, j]], edgecolor="tab:red", label="sampled wrench space")
        _outline(ax, poly[:, [i, j]], edgecolor="tab:green",
                 label=f"polytope ({fit.polytope.H.shape[0]} facets)")
        _rectangle(ax, fit.box, i, j, "fitted box", edgecolor="tab:blue")
        if paper_box is not None:
            _rectangle(ax, paper_box, i, j, "paper box", edgecolor="black", linestyle="--")
        ax.set_xlabel(f"{WRENCH_AXES[i]} [{_UNITS[i]}]")
        ax.set_ylabel(f"{WRENCH_AXES[j]} [{_UNITS[j]}]")
        ax.autoscale_view()
    axes[0].legend(loc="best", fontsize="small")
    fig.suptitle(f"SPASAS wrench space at tau_pha = {fit.samples.tau_pha:.2f} N m "
                 f"(polytope/box volume {fit.volume_ratio:.2f})")
    return fig
