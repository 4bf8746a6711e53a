"""The compiled gripper check against independent oracles: the polytope gauges against their
NumPy formula, the certificate against the wrench-set LP (scipy's HiGHS), the hold factors'
scaling against plain division."""

import numpy as np
import pytest

from clamber.attachment.wrench_set import WRENCH_SCALE, wrench_gauge
from clamber.quadruped.sim import failure_kernels
from clamber.quadruped.sim.failure import FailureClock, default_wrench_set, scaled_wrench


@pytest.fixture(scope="module")
def wset():
    return default_wrench_set()


def _boundary_points(wset, n, seed):
    """``n`` wrenches on the boundary of the set, along random scaled directions."""
    u = np.random.default_rng(seed).standard_normal((n, 6)) * WRENCH_SCALE
    return u / wrench_gauge(wset.sets, u)[:, None]


@pytest.mark.parametrize("planes", ["inner", "cuts"])
def test_polytope_gauge_is_the_largest_plane_value(wset, planes):
    """The compiled gauge of wrenches of every scale (and the zero wrench) is
    ``max(0, max_c planes_c . w)`` evaluated in NumPy, to 1e-12 relative."""
    p = wset._inner_t if planes == "inner" else wset._cuts_t
    rng = np.random.default_rng(7)
    w = rng.normal(size=(300, 6)) * WRENCH_SCALE * 10.0 ** rng.uniform(-6, 6, (300, 1))
    w[0] = 0.0
    want = np.maximum(0.0, (w @ p).max(axis=1))
    got = failure_kernels.polytope_gauges(w, p)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0.0)
    assert got[0] == 0.0 and np.all(got[1:] > 0.0)


def test_the_bracket_contains_the_lp_gauge(wset):
    """The supporting half-spaces' gauge is below and the inner polytope's above the exact
    gauge the LP (HiGHS) measures, on wrenches near the boundary and far from it."""
    rng = np.random.default_rng(4)
    w = np.vstack([_boundary_points(wset, 40, 5) * rng.uniform(0.9, 1.1, (40, 1)),
                   rng.standard_normal((40, 6)) * WRENCH_SCALE * rng.uniform(0.1, 4, (40, 1))])
    exact = wrench_gauge(wset.sets, w)
    lo, hi = wset.lower(w), wset.upper(w)
    assert np.all(lo <= exact * (1 + 1e-7)) and np.all(hi >= exact * (1 - 1e-7))
    assert np.median(lo / exact) > 0.75  # 0.84 on these wrenches


def test_scaling_by_hold_factors_is_division_with_compression_apart():
    """Six factors divide each axis; a seventh divides ``f_z`` instead of the third where
    ``f_z`` pushes (> 0) and leaves pulls to the third."""
    rng = np.random.default_rng(2)
    w = rng.normal(size=(50, 6))
    f6 = rng.uniform(0.5, 2.0, (50, 6))
    f7 = np.hstack([f6, rng.uniform(0.5, 2.0, (50, 1))])
    np.testing.assert_array_equal(scaled_wrench(w, f6), w / f6)
    want = w / f6
    push = w[:, 2] > 0
    want[push, 2] = w[push, 2] / f7[push, 6]
    np.testing.assert_array_equal(scaled_wrench(w, f7), want)
    assert scaled_wrench(w[0], f7[0]).shape == (6,)


def test_certified_steps_are_inside_by_the_lp_and_peaks_stay_below_it(wset):
    """A clock driven by a random walk of three grippers' wrenches drifting from 0.5 to 1.2
    times the boundary: whenever the compiled check certifies a step, every wrench's LP
    gauge is at most 1 and at most the bound it reports; once a wrench is outside by the LP,
    the step is not certified. The peak lower bounds never exceed the largest LP gauge seen."""
    rng = np.random.default_rng(3)
    n = 150
    ramp = np.linspace(0.5, 1.2, n)[:, None, None]
    walk = _boundary_points(wset, 3, 8) * ramp + np.cumsum(
        rng.standard_normal((n, 3, 6)) * WRENCH_SCALE * 0.003, axis=0)
    rows = np.array([0, 2, 3])
    clock = FailureClock(4, wset)
    certified = outside = 0
    highest = np.zeros(4)
    for w in walk:
        ws, g = w.copy(), np.empty(3)
        exact = wrench_gauge(wset.sets, w)
        highest[rows] = np.maximum(highest[rows], exact)
        ok = failure_kernels.certify(ws, rows, *clock.certify_args, g)
        if ok:
            certified += 1
            assert np.all(exact <= 1.0 + 1e-9) and np.all(exact <= g + 1e-7)
            assert np.all(clock.slide[rows] == 0.0)
        if np.any(exact > 1.0 + 1e-7):
            outside += 1
            assert not ok
        if not ok:
            clock.uncertified(rows, w, ws, g, 0.004)
        assert np.all(clock._peak_lo <= highest * (1 + 1e-7))
    assert certified > 30 and outside > 10


def test_certify_changes_nothing_when_it_does_not_certify(wset):
    """A step with one wrench outside the set returns False and leaves every clock array
    as it was."""
    clock = FailureClock(2, wset)
    b = _boundary_points(wset, 2, 1)
    w = np.vstack([0.5 * b[0], 1.5 * b[1]])
    before = [np.copy(a) for a in clock.certify_args if isinstance(a, np.ndarray)]
    assert not failure_kernels.certify(w, np.array([0, 1]), *clock.certify_args, np.empty(2))
    after = [a for a in clock.certify_args if isinstance(a, np.ndarray)]
    assert all(np.array_equal(x, y) for x, y in zip(before, after, strict=True))


@pytest.mark.parametrize("compliant", [True, False])
def test_sole_wrenches_are_the_shifted_rotated_external_wrenches(compliant):
    """On random MuJoCo-shaped arrays the sole wrenches are ``[R^T f, R^T (tau + r x f)]``
    with ``[tau, f]`` the body's ``cfrc_ext`` row (plus the gripper body's when compliant),
    ``r`` from the site to the root's subtree centre of mass and ``R`` the site's rotation,
    formed with NumPy's cross product (to 1e-12 relative)."""
    rng = np.random.default_rng(3)
    nbody, nsite = 26, 9
    ext = rng.normal(size=(nbody, 6)) * 10.0 ** rng.integers(-3, 3, (nbody, 1))
    com, pos = rng.normal(size=(nbody, 3)), rng.normal(size=(nsite, 3))
    mat = np.array([np.linalg.qr(rng.normal(size=(3, 3)))[0].ravel() for _ in range(nsite)])
    index = np.array([[4, 9, 14, 19], [3, 8, 13, 18], [1, 3, 5, 7], [1, 1, 2, 2],
                      [0, 1, 2, 3]], dtype=np.int64)
    out = np.empty((4, 6))
    failure_kernels.sole_wrenches(ext, com, pos, mat, index, compliant, out)
    for i, (b, gb, s, root, _) in enumerate(index.T):
        e = ext[b] + (ext[gb] if compliant else 0.0)
        tau, f = e[:3], e[3:]
        R = mat[s].reshape(3, 3)
        want = np.concatenate([R.T @ f, R.T @ (tau + np.cross(com[root] - pos[s], f))])
        np.testing.assert_allclose(out[i], want, rtol=1e-12, atol=1e-12 * np.abs(e).max())


def test_skipping_lower_bounds_never_changes_a_peak(wset):
    """The certificate skips forming a lower bound where a sublinearity bound shows it
    cannot raise the peak: along 1500 steps of three grippers' loads rising, falling and
    rising past earlier peaks (all inside the inner polytope), the peaks and peak wrenches
    are the same, exactly, as when every lower bound is formed (infinite skip margin), and
    the peaks are the largest supporting half-space gauges of the walk (NumPy formula)."""
    rng = np.random.default_rng(9)
    base = rng.standard_normal((3, 6)) * WRENCH_SCALE
    base /= wset.upper(base)[:, None]  # on the inner polytope's boundary
    level = 0.3 + 0.5 * np.abs(np.sin(np.linspace(0, 7, 1500)))
    walk = base[None] * level[:, None, None] + np.cumsum(
        rng.standard_normal((1500, 3, 6)) * WRENCH_SCALE * 1e-4, axis=0)
    rows = np.array([0, 1, 3])
    peaks = []
    for margin in (1e-9, np.inf):
        clock = FailureClock(4, wset)
        args = list(clock.certify_args)
        args[3] = margin
        for w in walk:
            assert failure_kernels.certify(w.copy(), rows, *args, np.empty(3))
        peaks.append((clock._peak_lo.copy(), clock._peak_wrench.copy()))
    assert np.array_equal(peaks[0][0], peaks[1][0])
    assert np.array_equal(peaks[0][1], peaks[1][1])
    lower = np.maximum(0.0, (walk @ wset._cuts_t).max(axis=2)).max(axis=0)
    np.testing.assert_allclose(peaks[0][0][rows], lower, rtol=1e-12)
