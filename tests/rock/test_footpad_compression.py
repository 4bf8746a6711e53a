"""Compression on a gripper is borne by its footpad: its capacity on a rock patch is lowered
by the seat alone, pull by spines, seat and wrap (``footpad_push``)."""

import numpy as np
import pytest

from clamber.attachment.wrench_limits import PAPER_BOX_HALF_WIDTHS
from clamber.quadruped.rock.holding import GripperSurfaceModel, hold_limits, push_factor
from clamber.quadruped.rock.wall import PAPER_MICRO_RMS
from clamber.quadruped.sim.failure import default_wrench_set, scaled_wrench

PUSH = GripperSurfaceModel(footpad_push=True)
SCALED = GripperSurfaceModel()


def test_compression_factor_is_the_seat_alone():
    """With ``footpad_push`` the seventh factor is the seat share at every convexity and
    asperity roughness, and the six axes' factors are those of the model without it."""
    kappa = np.linspace(-20, 40, 31)[:, None] * np.ones((1, 11))
    step = np.linspace(0, 0.01, 11)[None, :] * np.ones((31, 1))
    for micro in (0.2 * PAPER_MICRO_RMS, PAPER_MICRO_RMS):
        f7 = PUSH.capacity_factor(kappa, step, micro)
        f6 = SCALED.capacity_factor(kappa, step, micro)
        assert f7.shape == (31, 11, 7) and f6.shape == (31, 11, 6)
        np.testing.assert_array_equal(f7[..., :6], f6)
        np.testing.assert_allclose(f7[..., 6], np.clip(1 - step / PUSH.seat_step, 0, 1))
        np.testing.assert_array_equal(push_factor(f7), f7[..., 6])
        np.testing.assert_array_equal(push_factor(f6), f6[..., 2])


def test_hold_limits_bound_compression_by_its_own_factor():
    """The Q-WBC box on a patch of seven factors reaches ``+62 N`` times the compression
    factor along ``f_z`` and ``-62 N`` times the pull factor; six factors keep it symmetric."""
    f = np.array([0.6, 0.6, 0.25, 0.5, 0.5, 0.6, 0.9])
    lim = hold_limits(f)
    z = np.eye(6)[2]
    assert lim.contains(62.0 * 0.9 * z) and not lim.contains(62.0 * 0.91 * z)
    assert lim.contains(-62.0 * 0.25 * z) and not lim.contains(-62.0 * 0.26 * z)
    sym = hold_limits(f[:6])
    assert sym.contains(62.0 * 0.25 * z) and not sym.contains(62.0 * 0.26 * z)
    assert lim.contains(PAPER_BOX_HALF_WIDTHS * f[:6] * np.array([1, 1, -1, 1, 1, 1]))


def test_truth_scales_push_and_pull_separately():
    """In the failure check, a pushing wrench's ``f_z`` is divided by the compression factor
    and a pulling one's by the pull factor; with six factors both by the ``f_z`` factor. A
    50 N push with 10 N of shear breaks a hold of pull factor 0.3 when compression is
    scaled like pull (50/0.3 N is past the set's 144 N of compression), and is held when
    the footpad bears it (factor 1)."""
    f6 = np.array([0.6, 0.6, 0.3, 0.5, 0.5, 0.6])
    f7 = np.append(f6, 1.0)
    push = np.array([10.0, 0.0, 50.0, 0.0, 0.0, 0.0])
    pull = push * np.array([1, 1, -1, 1, 1, 1])
    np.testing.assert_allclose(scaled_wrench(push, f7), push / np.append(f6[:2], [1, 0.5, 0.5, 0.6]))
    np.testing.assert_allclose(scaled_wrench(pull, f7), pull / f6)
    np.testing.assert_allclose(scaled_wrench(push, f6), push / f6)
    both = np.vstack([push, pull])
    np.testing.assert_allclose(scaled_wrench(both, np.vstack([f7, f7])),
                               np.vstack([scaled_wrench(push, f7), scaled_wrench(pull, f7)]))
    ws = default_wrench_set()
    assert ws.exact(scaled_wrench(push, f6)) > 1.0
    assert ws.exact(scaled_wrench(push, f7)) < 1.0
    assert ws.exact(scaled_wrench(pull, f7)) == pytest.approx(ws.exact(pull / f6))
