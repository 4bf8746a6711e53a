"""Figures of generated rock walls: heights, holding capacity and spectrum."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from clamber.quadruped.rock.surface import radial_psd
from clamber.quadruped.rock.wall import RockWall


def plot_wall(wall: RockWall, factors: np.ndarray):
    """Height map, normal-pull capacity factor and the fractal layer's spectrum."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 5.2), gridspec_kw={"width_ratios": [1, 1, 1.3]})
    extent = (wall.y[0], wall.y[-1], wall.u[0], wall.u[-1])
    im = axes[0].imshow(1000 * wall.z, origin="lower", extent=extent, cmap="gist_earth")
    fig.colorbar(im, ax=axes[0], label="height along the normal [mm]")
    for k in wall.knobs:
        axes[0].plot(k.y, k.u, "v" if k.ledge else "o", ms=3, c="k")
    axes[0].set(xlabel="y (left) [m]", ylabel="u (up the slope) [m]",
                title=f"wall seed {wall.seed}, {wall.incline_deg:g} deg\n(o knob, v ledge)")
    im = axes[1].imshow(factors[..., 2], origin="lower", extent=extent, vmin=0, vmax=1,
                        cmap="magma")
    fig.colorbar(im, ax=axes[1], label="capacity factor, normal pull f_z")
    axes[1].set(xlabel="y (left) [m]", title="holding capacity from local geometry")
    q, C = radial_psd(wall.fractal, wall.spacing)
    s = wall.spec.spectrum
    level = s.level(wall.fractal.shape, wall.spacing)
    axes[2].loglog(q, C, ".", label="generated (radial average)")
    axes[2].loglog(q, level * s.shape(q), "-",
                   label=f"stated: H = {s.hurst:g}, beta = {s.exponent:g}, "
                   f"RMS = {1000 * s.rms:g} mm")
    axes[2].axvline(1 / s.rolloff, ls=":", c="gray")
    axes[2].set(xlabel="wavenumber q [1/m]", ylabel="PSD [m^4]",
                title="spectrum of the fractal layer")
    axes[2].legend(fontsize=8)
    fig.tight_layout()
    return fig
