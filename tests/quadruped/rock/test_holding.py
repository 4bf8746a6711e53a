"""The gripper-surface model: capacity monotone in each geometric quantity."""

import numpy as np
import pytest

from clamber.attachment.wrench_limits import PAPER_BOX_HALF_WIDTHS
from clamber.exceptions import ConfigError
from clamber.quadruped.rock.holding import (
    GripperSurfaceModel,
    hold_limits,
    hold_polytope,
    patch_features,
)
from clamber.quadruped.rock.wall import PAPER_MICRO_RMS, RockWallSpec, generate_wall
from clamber.quadruped.sim.failure import default_wrench_set, scaled_wrench

MODEL = GripperSurfaceModel()


def test_capacity_grows_with_convexity_until_the_clamps_wrap():
    """Every axis's factor is non-decreasing in convexity, strictly increasing on
    (0, full wrap), and the normal pull gains most (the clamps make the attraction)."""
    kappa = np.linspace(-20, 40, 301)
    f = MODEL.capacity_factor(kappa, np.zeros_like(kappa), PAPER_MICRO_RMS)
    assert np.all(np.diff(f, axis=0) >= -1e-15)
    full = 2 * MODEL.wrap_depth / MODEL.footprint_radius**2
    inside = (kappa > 0) & (kappa < full)
    assert np.all(np.diff(f[inside], axis=0) > 0)
    assert f[-1] == pytest.approx(np.ones(6))
    gain = f[-1] / f[0]
    assert np.argmax(gain) == 2


def test_capacity_falls_with_steps_and_rises_with_asperities():
    """The factor is non-increasing in the step under the pad (zero at ``seat_step``) and
    non-decreasing in asperity roughness, saturating at the paper's rock."""
    step = np.linspace(0, 0.02, 201)
    f = MODEL.capacity_factor(np.full_like(step, 5.0), step, PAPER_MICRO_RMS)
    assert np.all(np.diff(f, axis=0) <= 1e-15)
    assert np.all(f[step >= MODEL.seat_step] == 0)
    micro = np.linspace(0, 2 * PAPER_MICRO_RMS, 50)
    g = np.array([MODEL.capacity_factor(5.0, 0.0, m) for m in micro])
    assert np.all(np.diff(g, axis=0) >= 0)
    assert g[-1] == pytest.approx(g[micro >= PAPER_MICRO_RMS][0])


def test_knob_tops_hold_more_than_ledges_and_flats():
    """On a generated wall, dome knob tops hold more normal pull than ledge tops, and more
    than the wall's median patch."""
    wall = generate_wall(90, 3, RockWallSpec(length=1.5, width=1.0))
    feats = patch_features(wall.z, wall.spacing, MODEL)
    fz = MODEL.capacity_factor(feats.convexity, feats.step, wall.micro_rms)[..., 2]
    tops = {True: [], False: []}
    for k in wall.knobs:
        i, j = (int(np.rint((x - grid[0]) / wall.spacing))  # the nearest cell
                for x, grid in ((k.u, wall.u), (k.y, wall.y)))
        tops[k.ledge].append(fz[i, j])
    assert np.median(tops[False]) > np.median(tops[True])
    assert np.median(tops[False]) > np.median(fz)


def test_hold_limits_scale_the_paper_box():
    """The Q-WBC limits on a patch are the paper's box scaled per axis."""
    f = np.array([1.0, 0.5, 0.25, 1.0, 0.0, 0.5])
    lim = hold_limits(f)
    assert lim.contains(PAPER_BOX_HALF_WIDTHS * f)
    assert not lim.contains(PAPER_BOX_HALF_WIDTHS * f * 1.01)
    with pytest.raises(ConfigError):
        hold_limits(np.ones(5))
    with pytest.raises(ConfigError):
        GripperSurfaceModel(wrap_depth=0.0)


@pytest.mark.parametrize("factor", [np.ones(6), np.array([0.55, 0.55, 0.27, 0.46, 0.46, 0.55]),
                                    np.array([0.55, 0.55, 0.27, 0.46, 0.46, 0.55, 0.92]),
                                    np.array([0.3, 0.9, 0.6, 0.2, 0.7, 0.4, 0.35])])
def test_hold_polytope_lies_inside_the_held_set(factor):
    """Every point on the scaled polytope's boundary, in 400 random directions, is held by
    the gripper on that hold: the simulator's exact gauge (an LP on the SPASAS set, pushing
    and pulling scaled apart) is at most 1 there."""
    limits, W = hold_polytope(factor), default_wrench_set()
    rng = np.random.default_rng(7)
    d = rng.normal(size=(400, 6)) * np.array([40, 40, 40, 0.8, 0.8, 1.5])
    w = d / (d @ limits.H.T).max(axis=1)[:, None]
    gauges = [W.exact(scaled_wrench(x, factor)) for x in w]
    assert max(gauges) <= 1.0 + 1e-6
    assert np.median(gauges) > 0.5  # and reaches most of the way to its boundary


def test_hold_polytope_holds_what_the_box_refuses():
    """The box caps a moment at 0.25 N m and a shear at 35 N; the polytope, inside the
    held set, holds twice either alone, so a check on it refuses less than one on the box."""
    f = np.ones(6)
    poly, box = hold_polytope(f), hold_limits(f)
    for axis, load in ((0, 60.0), (1, 60.0), (3, 0.55), (4, 0.55)):
        w = np.zeros(6)
        w[axis] = load
        assert not box.contains(w) and poly.contains(w)
    with pytest.raises(ConfigError):
        hold_polytope(np.zeros(6))
