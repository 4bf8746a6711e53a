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


def plot_rock_climbs(climbs: list[dict], planned: float):
    """Distance each dynamic rock climb reached [m], per incline, coloured by how it ended.

    ``climbs`` are one dict per trial with ``incline_deg``, ``distance_m`` and ``failure``
    (empty or None for a completed climb); ``planned`` is the planned distance [m]."""
    inclines = sorted({float(c["incline_deg"]) for c in climbs})
    fig, ax = plt.subplots(figsize=(8.5, 1.4 + 0.9 * len(inclines)))
    colours: dict[str, object] = {}
    palette = plt.get_cmap("tab10")
    for row, inc in enumerate(inclines):
        mine = [c for c in climbs if float(c["incline_deg"]) == inc]
        jitter = np.linspace(-0.3, 0.3, len(mine)) if len(mine) > 1 else np.zeros(1)
        for k, c in enumerate(mine):
            reason = (c.get("failure") or "completed").replace("_", " ")
            colour = colours.setdefault(reason, palette(len(colours) % 10))
            ax.plot(float(c["distance_m"] or 0.0), row + jitter[k], "o", c=colour, ms=5)
        done = sum(not c.get("failure") for c in mine)
        ax.text(planned, row, f"  {done}/{len(mine)} completed", va="center", fontsize=8)
    for reason, colour in colours.items():
        ax.plot([], [], "o", c=colour, label=reason)
    ax.axvline(planned, c="k", lw=1, ls="--")
    ax.set_yticks(range(len(inclines)), [f"{inc:g} deg" for inc in inclines])
    ax.set_ylim(len(inclines) - 0.5, -0.5)
    ax.set_xlim(-0.02, planned * 1.25)
    ax.set(xlabel="distance the body rose along the wall [m] (dashed: the planned climb)",
           title="Dynamic climbs on generated rock walls (one dot per wall)")
    ax.legend(fontsize=8, loc="center")
    fig.tight_layout()
    return fig
