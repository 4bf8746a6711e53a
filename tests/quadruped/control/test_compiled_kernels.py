"""Compiled kernels of the loop against NumPy formulas and Pinocchio: the rotation
exponential, the CLIK step, the torque map and the attitude metrics, to round-off; and the
kernels' in-memory fallback. (The QP's fill: test_wrench_problem.py.)"""

import numpy as np
import pinocchio as pin
from hypothesis import given, settings
from hypothesis import strategies as st

from clamber.quadruped.estimation.ekf_kernels import exp3


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-4.0, 4.0), min_size=3, max_size=3),
       st.sampled_from([1.0, 1e-3, 1e-5, 1e-9]))
def test_exp3_equals_pinocchio(v, scale):
    """The compiled rotation exponential equals Pinocchio's ``exp3`` to 1e-14 on rotation
    vectors from 4 rad down to 1e-9 rad (its small-angle series included)."""
    w = np.array(v) * scale
    assert np.allclose(exp3(w), pin.exp3(w), rtol=0, atol=1e-14)


def test_compiled_clik_step_and_torques_equal_numpy():
    """On random leg Jacobians and pose errors, the compiled damped least-squares steps
    equal ``J_w^T solve(J_w J_w^T + d^2 I, e)`` per leg to 1e-10 relative, and the compiled
    torque map equals ``tau_bias - J_i^T F_i`` to 1e-12."""
    from clamber.quadruped.model.statics_kernels import dls_steps, joint_torques

    rng = np.random.default_rng(8)
    w = np.array([1.0, 1.0, 1.0, 0.3, 0.3, 0.3])
    for _ in range(200):
        J = rng.normal(0, 0.2, (4, 6, 5))
        e = rng.normal(0, 0.05, (4, 6))
        d2 = 10.0 ** rng.uniform(-6, -2)
        want = np.array([(w[:, None] * J[i]).T @ np.linalg.solve(
            (w[:, None] * J[i]) @ (w[:, None] * J[i]).T + d2 * np.eye(6), e[i])
            for i in range(4)])
        got = dls_steps(J, e, w, d2)
        assert np.allclose(got, want, rtol=0, atol=1e-10 * np.abs(want).max())
        F, tau_bias = rng.normal(0, 20, 24), rng.normal(0, 2, 20)
        plain = tau_bias - np.concatenate([J[i].T @ F[6 * i:6 * i + 6] for i in range(4)])
        assert np.allclose(joint_torques(tau_bias, J, F), plain, rtol=1e-12, atol=1e-12)


def test_a_kernel_without_a_writable_cache_compiles_in_memory(monkeypatch):
    """Where numba finds no writable cache location (a read-only install without a user
    cache), :func:`clamber.compiled.kernel` still compiles the function, uncached, rather
    than failing at import."""
    from numba.core import caching

    from clamber.compiled import kernel

    monkeypatch.setattr(caching.CacheImpl, "_locator_classes", [])

    def twice(x):
        return 2.0 * x

    compiled = kernel(twice)
    assert compiled(1.5) == 3.0 and compiled._cache.__class__.__name__ == "NullCache"


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-1.0, 1.0), min_size=6, max_size=6),
       st.sampled_from([3.0, 1.0, 1e-3, 1e-7]))
def test_rotation_angle_and_load_ratio_equal_their_numpy_forms(v, scale):
    """The compiled attitude error equals ``|log3(Ra^T Rb)|`` (Pinocchio) to 1e-12 rad from
    3 rad down to 1e-7 rad apart (1e-9 rad between 3 rad and pi), and the planned load
    ratio equals NumPy's
    ``(|w| / box).max()`` exactly."""
    from clamber.attachment.wrench_limits import PAPER_BOX_HALF_WIDTHS
    from clamber.quadruped.trials.metric_kernels import load_ratio, rotation_angle

    Ra = pin.exp3(np.array(v[:3]) * 2.0)
    Rb = Ra @ pin.exp3(np.array(v[3:]) * scale)
    want = np.linalg.norm(pin.log3(Ra.T @ Rb))
    # Near pi the rotation's vector part vanishes and both forms lose digits.
    assert abs(rotation_angle(Ra, Rb) - want) <= (1e-12 if want < 3.0 else 1e-9)
    w = np.array(v * 4) * 37.0
    box = np.tile(PAPER_BOX_HALF_WIDTHS, 4)
    assert load_ratio(w, box) == float((np.abs(w) / box).max())
