"""The simulated gripper's failure model: exact wrench-set membership and the spine-slip clock."""

import math

import numpy as np
import pytest

from clamber.attachment.wrench_set import WRENCH_SCALE, wrench_gauge
from clamber.exceptions import ConfigError
from clamber.experiments.quadruped import quadruped_trial
from clamber.experiments.study import TrialTask
from clamber.failures import FailureReason
from clamber.quadruped.sim.failure import FailureClock, SpineSlip, default_wrench_set
from clamber.quadruped.sim.grippers import SoleCompliance
from clamber.quadruped.trials.climb import ClimbSettings


@pytest.fixture(scope="module")
def wset():
    return default_wrench_set()


def _boundary_points(wset, n, seed):
    """``n`` wrenches on the boundary of the set, along random scaled directions."""
    u = np.random.default_rng(seed).standard_normal((n, 6)) * WRENCH_SCALE
    g = np.array([wset.exact(x) for x in u])
    return u / g[:, None]


def test_failure_set_equals_the_membership_lp(wset):
    """On random wrenches (many within 3 % of the boundary, inside and out) the fast gauge's
    hold/fail decision equals the wrench-space membership LP (scipy HiGHS)."""
    rng = np.random.default_rng(4)
    b = _boundary_points(wset, 60, 5)
    near = b * rng.uniform(0.97, 1.03, (60, 1))
    wide = rng.standard_normal((200, 6)) * WRENCH_SCALE * rng.uniform(0.2, 6.0, (200, 1))
    w = np.vstack([near, wide])
    reference = wrench_gauge(wset.sets, w)
    ok = np.abs(reference - 1.0) > 1e-6
    assert np.array_equal((wset.gauge(w) <= 1.0)[ok], (reference <= 1.0)[ok])
    assert 20 < np.sum(reference[ok] <= 1.0) < len(w) - 20
    lo, hi = wset.lower(w), wset.upper(w)
    assert np.all(lo <= reference + 1e-6) and np.all(hi >= reference - 1e-6)
    outside = reference > 1.0
    np.testing.assert_allclose(wset.gauge(w)[outside], reference[outside], rtol=1e-5)


def test_combined_load_fails_where_each_axis_holds(wset):
    """A wrench whose every component is within the single-axis capacity can still lie
    outside the set (combined loading): the per-axis box is not the failure set."""
    # Single-axis capacity: the smaller support value along +e_k and -e_k.
    values, _ = wset.sets.support(np.vstack([np.eye(6), -np.eye(6)]))
    ext = np.minimum(values[:6], values[6:])
    corner = 0.9 * ext * np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    assert np.all(np.abs(corner) < ext)
    assert wset.gauge(corner[None])[0] > 1.0


def test_just_inside_holds_and_just_outside_fails(wset):
    """A wrench at 0.99 of the boundary never breaks the gripper; one at 1.02 breaks it after
    ``sqrt(2 d m / F)`` with ``F = |e_f| + |e_tau| / r`` of the excess ``e = w (1 - 1/g)``."""
    slip = SpineSlip()
    dt = 1e-4
    for b in _boundary_points(wset, 4, 9):
        clock = FailureClock(1, wset, slip)
        for _ in range(2000):
            _, failed = clock.advance(np.array([0]), 0.99 * b[None], np.ones((1, 6)), dt)
            assert not failed[0]
        clock = FailureClock(1, wset, slip)
        w = 1.02 * b
        e = w * (1 - 1 / 1.02)
        force = np.linalg.norm(e[:3]) + np.linalg.norm(e[3:]) / slip.spine_radius
        expected = math.sqrt(2 * slip.engagement_depth * slip.mass / force)
        steps = 0
        while True:
            steps += 1
            _, failed = clock.advance(np.array([0]), w[None], np.ones((1, 6)), dt)
            if failed[0]:
                break
            assert steps * dt < 2 * expected + 0.1
        assert steps * dt == pytest.approx(expected, abs=2 * dt + 0.01 * expected)


def test_reseat_and_hold_factor(wset):
    """Back inside the set the slide resets; a hold factor scales the set per axis."""
    clock = FailureClock(1, wset)
    b = _boundary_points(wset, 1, 11)[0]
    clock.advance(np.array([0]), 1.5 * b[None], np.ones((1, 6)), 1e-3)
    assert clock.slide[0] > 0
    clock.advance(np.array([0]), 0.5 * b[None], np.ones((1, 6)), 1e-3)
    assert clock.slide[0] == 0
    g, _ = clock.advance(np.array([0]), 1.5 * b[None], np.full((1, 6), 2.0), 1e-3)
    assert g[0] <= 1.0 and clock.slide[0] == 0
    assert wset.exact(1.5 * b / 2.0) == pytest.approx(0.75, rel=1e-5)
    assert clock.peaks()[0] == pytest.approx(1.5, rel=1e-5)


def test_slip_parameters_are_checked():
    """Non-positive slip parameters are rejected with a ConfigError."""
    with pytest.raises(ConfigError):
        SpineSlip(engagement_depth=0.0)


def test_sublinearity_certificate_bounds_the_gauge_from_above(wset):
    """For random pairs of wrenches the certificate ``g(w0) + g_inner(w - w0)`` (exact
    gauge of a reference plus the inner polytope's gauge of the difference) is never below
    the exact gauge of ``w``: it can only certify wrenches that are inside."""
    rng = np.random.default_rng(11)
    w0 = _boundary_points(wset, 40, 12) * rng.uniform(0.3, 1.2, (40, 1))
    w = w0 + rng.standard_normal((40, 6)) * WRENCH_SCALE * rng.uniform(0.001, 0.3, (40, 1))
    g0 = np.array([wset.exact(x) for x in w0])
    bound = g0 + wset.upper(w - w0)
    exact = np.array([wset.exact(x) for x in w])
    assert np.all(bound >= exact - 1e-9)
    assert np.any(bound < 1.0) and np.any(exact > 1.0)


def test_certified_clock_decides_as_the_lp_clock(wset, monkeypatch):
    """Two failure clocks driven by the same random walk of wrenches drifting outward,
    from 0.85 to 1.1 times the boundary, one with the sublinearity certificate and one that
    measures every wrench the inner
    polytope leaves undecided by LP, leave the same slides, speeds, failures and peaks,
    bit for bit; the certified one solves fewer than half as many LPs."""
    import clamber.quadruped.sim.failure as failure

    rng = np.random.default_rng(3)
    ramp = np.linspace(0.85, 1.1, 400)[:, None, None]
    walk = _boundary_points(wset, 3, 8) * ramp + np.cumsum(
        rng.standard_normal((400, 3, 6)) * WRENCH_SCALE * 0.002, axis=0)
    rows, factor = np.array([0, 2, 3]), np.ones((3, 6))

    def drive():
        clock = FailureClock(4, wset)
        lps = wset.lp_count
        out = []
        for w in walk:
            _, failed = clock.advance(rows, w, factor, 0.004)
            out.append((clock.slide.copy(), clock.speed.copy(), failed))
        return out, clock.peaks(), wset.lp_count - lps

    certified, peaks, n_certified = drive()
    monkeypatch.setattr(failure, "CERTIFIED", -1.0)
    measured, peaks_lp, n_measured = drive()
    assert all(np.array_equal(a, b) for x, y in zip(certified, measured, strict=True)
               for a, b in zip(x, y, strict=True))
    assert np.array_equal(peaks, peaks_lp)
    assert any(f.any() for _, _, f in certified) and peaks.max() > 1.0
    assert n_certified < n_measured / 2


def test_a_gripper_outside_its_set_breaks_off_unless_unbreakable():
    """Plain CLIK on the vertical wall (seed 1) overloads a gripper at its first release: the
    climb ends with that gripper broken off, its peak load (LP-exact above 1) over 1 and the
    break's gauge over 1. Made unbreakable, the same overload leaves every gripper attached
    while its spines slide (peak over 1, no break event)."""
    from clamber.quadruped.trials.climb import ClimbSettings, ClimbTrial

    def run(breakable):
        trial = ClimbTrial(ClimbSettings(controller="clik-plain", incline_deg=90.0,
                                         breakable=breakable), 1, time_limit=8.0)
        while trial.step():
            pass
        return trial.result(), trial.sim.grippers

    result, grippers = run(True)
    breaks = [e for e in grippers.events if e.kind == "break"]
    assert "broke off" in result.reason and len(breaks) >= 1
    assert grippers.peak_loads()[breaks[0].leg] > 1.0
    assert float(breaks[0].detail.split()[1].rstrip(",")) > 1.0
    result, grippers = run(False)
    assert not any(e.kind == "break" for e in grippers.events)
    assert max(grippers.peak_loads().values()) > 1.0


def test_a_diverging_climb_is_an_unstable_trial(wset):
    """A sole hinge far too stiff for the physics step (1e9 N m/rad, no armature) makes
    MuJoCo diverge in the first steps: the climb trial fails with the reason UNSTABLE
    (naming MuJoCo's warning) instead of ending as a normal outcome."""
    stiff = SoleCompliance(stiffness=1e9, damping=0.3, armature=0.0)
    out = quadruped_trial(TrialTask(0, 0, 0, ClimbSettings(sole=stiff)))
    assert not out.success and out.failure is FailureReason.UNSTABLE
    assert "BADQACC" in out.detail
