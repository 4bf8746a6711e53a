"""Figures say what they show: discrete phases, labelled panels, the safe region in frame,
tear-offs marked."""

import dataclasses

import matplotlib.pyplot as plt
import numpy as np

from clamber.jumper.seed import seed_solution
from clamber.jumper.sim.simulate import simulate
from clamber.report.jumper import plot_forces
from clamber.report.simulation import plot_forces as plot_sim_forces
from clamber.report.simulation import plot_tracking


def test_optimized_forces_use_one_colour_per_phase_and_name_the_grippers():
    """forces.png: no continuous colour bar; a legend entry per attached phase; front and
    rear panels titled."""
    fig = plot_forces(seed_solution())
    assert len(fig.axes) == 4  # a colour bar would add axes
    labels = fig.axes[1].get_legend_handles_labels()[1]
    assert "safe region" in labels and any(lb.startswith("phase ") for lb in labels)
    titles = " ".join(ax.get_title() for ax in fig.axes)
    assert "front gripper" in titles and "rear gripper" in titles
    plt.close(fig)


def test_simulated_forces_are_framed_by_the_safe_region_not_the_impacts():
    """sim_forces.png: the axes stay within a few load caps even when impacts are far
    larger; the samples beyond the frame are counted on the panel."""
    sol = seed_solution()
    res = simulate(sol, jumps=1)
    fx = res.column("fx_front")
    peak = float(np.nanmax(np.abs(fx)))
    fig = plot_sim_forces(res, sol)
    cap = float(sol.settings.safe_region_front.b.max())
    lim = fig.axes[0].get_xlim()[1]
    assert lim <= max(8.0, 1.3 * cap, 1.2 * float(np.nanmax(np.abs(sol.f_front)))) + 1e-9
    if peak > lim:
        assert any("beyond the frame" in t.get_text() for t in fig.axes[0].texts)
    plt.close(fig)


def test_tracking_marks_a_tear_off():
    """sim_tracking.png draws a labelled line at every tear-off event."""
    sol = seed_solution()
    res = simulate(sol, jumps=1)
    torn = dataclasses.replace(res, events=[*res.events, (0.1, "front", "tear")])
    fig = plot_tracking(torn, sol)
    assert "tear-off" in fig.axes[0].get_legend_handles_labels()[1]
    plt.close(fig)
