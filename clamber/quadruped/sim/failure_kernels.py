"""The gripper failure check of every physics step, compiled: the sole wrenches from MuJoCo's
data bracketed by polytope gauges (:mod:`.failure`) in one call, a tenth of NumPy's cost
(``benchmarks/bench_sim_kernels.py``); only what they cannot certify goes to the LP."""

from __future__ import annotations

import numpy as np

from clamber.compiled import kernel


@kernel
def sole_wrenches(ext: np.ndarray, com: np.ndarray, pos: np.ndarray, mat: np.ndarray,
                  index: np.ndarray, compliant: bool, out: np.ndarray) -> None:
    """Sole wrenches [f, tau] (k, 6) [N, N m] of the rock on the grippers into ``out``, in
    the wrench sites' frames, from MuJoCo's ``cfrc_ext`` (``ext``, about the root's
    ``subtree_com``, ``com``), the sites' ``pos`` and ``mat``. ``index`` (4+, k): per
    gripper the welded body (its pad when ``compliant``, the gripper body's wrench then
    added), the gripper body, the wrench site and the root body.
    """
    for i in range(out.shape[0]):
        b, gb, s, root = index[0, i], index[1, i], index[2, i], index[3, i]
        t = ext[b, 0:3].copy()
        f = ext[b, 3:6].copy()
        if compliant:
            t += ext[gb, 0:3]
            f += ext[gb, 3:6]
        r = com[root] - pos[s]
        t[0] += r[1] * f[2] - r[2] * f[1]
        t[1] += r[2] * f[0] - r[0] * f[2]
        t[2] += r[0] * f[1] - r[1] * f[0]
        R = mat[s].reshape(3, 3)
        for c in range(3):
            out[i, c] = R[0, c] * f[0] + R[1, c] * f[1] + R[2, c] * f[2]
            out[i, 3 + c] = R[0, c] * t[0] + R[1, c] * t[1] + R[2, c] * t[2]


@kernel
def scale_into(w: np.ndarray, factor: np.ndarray, out: np.ndarray) -> None:
    """Wrenches ``w`` (n, 6) over their holds' capacity ``factor`` (n, 6) or (n, 7) into
    ``out`` (n, 6): per axis, and ``f_z`` over the seventh factor where it pushes
    (``f_z > 0``; see :func:`.failure.scaled_wrench`)."""
    seven = factor.shape[1] == 7
    for i in range(w.shape[0]):
        for c in range(6):
            out[i, c] = w[i, c] / factor[i, c]
        if seven and w[i, 2] > 0.0:
            out[i, 2] = w[i, 2] / factor[i, 6]


@kernel
def gauge(w: np.ndarray, planes_t: np.ndarray) -> float:
    """Gauge of the wrench ``w`` (6,) in the polytope ``planes_t.T @ w <= 1`` (``planes_t``
    (6, m)): ``max(0, max_c planes_t[:, c] . w)``."""
    best = 0.0
    for c in range(planes_t.shape[1]):
        v = 0.0
        for r in range(6):
            v += w[r] * planes_t[r, c]
        best = max(best, v)
    return best


@kernel
def polytope_gauges(w: np.ndarray, planes_t: np.ndarray) -> np.ndarray:
    """:func:`gauge` of each wrench ``w`` (n, 6), (n,)."""
    out = np.empty(w.shape[0])
    for i in range(w.shape[0]):
        out[i] = gauge(w[i], planes_t)
    return out


@kernel
def certify(ws: np.ndarray, rows: np.ndarray, inner_t: np.ndarray, cuts_t: np.ndarray,
            certified: float, lower_margin: float, ref_wrench: np.ndarray,
            ref_gauge: np.ndarray, peak_lo: np.ndarray, peak_wrench: np.ndarray,
            lo_wrench: np.ndarray, lo_gauge: np.ndarray, slide: np.ndarray,
            speed: np.ndarray, g: np.ndarray) -> bool:
    """:meth:`~.failure.FailureClock.advance` where every wrench is certified inside its
    set: True, the clocks updated in place; else False, with only the inner polytope's
    gauges in ``g`` (k,) and the clocks untouched.

    ``ws`` (k, 6): the wrenches over their holds' factors, at ``rows`` of the clock. A
    wrench is certified by its inner gauge (``inner_t``) at most 1, or by the sublinearity
    bound from ``ref_wrench``, ``ref_gauge`` at most ``certified``. Each peak lower bound
    (``peak_lo``, ``cuts_t``) is formed only where the sublinear bound from ``lo_wrench``,
    ``lo_gauge`` could exceed the peak less ``lower_margin``.
    """
    k = ws.shape[0]
    d = np.empty(6)
    for i in range(k):
        g[i] = gauge(ws[i], inner_t)
    for i in range(k):
        if g[i] > 1.0:
            row = rows[i]
            for c in range(6):
                d[c] = ws[i, c] - ref_wrench[row, c]
            bound = ref_gauge[row] + gauge(d, inner_t)
            if bound > certified:
                return False
            g[i] = bound
    for i in range(k):
        row = rows[i]
        slide[row] = 0.0
        speed[row] = 0.0
        if g[i] <= peak_lo[row]:
            continue  # the lower bound is below the upper one: no peak to raise
        for c in range(6):
            d[c] = ws[i, c] - lo_wrench[row, c]
        if lo_gauge[row] + gauge(d, inner_t) <= peak_lo[row] - lower_margin:
            continue
        lo = gauge(ws[i], cuts_t)
        lo_wrench[row] = ws[i]
        lo_gauge[row] = lo
        if lo > peak_lo[row]:
            peak_lo[row] = lo
            peak_wrench[row] = ws[i]
    return True


@kernel
def check_step(ext: np.ndarray, com: np.ndarray, pos: np.ndarray, mat: np.ndarray,
               index: np.ndarray, compliant: bool, factor: np.ndarray, w: np.ndarray,
               ws: np.ndarray, g: np.ndarray, inner_t: np.ndarray, cuts_t: np.ndarray,
               certified: float, lower_margin: float, ref_wrench: np.ndarray,
               ref_gauge: np.ndarray, peak_lo: np.ndarray, peak_wrench: np.ndarray,
               lo_wrench: np.ndarray, lo_gauge: np.ndarray, slide: np.ndarray,
               speed: np.ndarray, gauges: np.ndarray) -> bool:
    """:func:`sole_wrenches` into ``w``, :func:`scale_into` ``ws`` and :func:`certify` in
    one call (``index[4]``: the clock rows; the gauges also into ``gauges[rows]`` when
    certified)."""
    sole_wrenches(ext, com, pos, mat, index, compliant, w)
    scale_into(w, factor, ws)
    rows = index[4]
    if not certify(ws, rows, inner_t, cuts_t, certified, lower_margin, ref_wrench, ref_gauge,
                   peak_lo, peak_wrench, lo_wrench, lo_gauge, slide, speed, g):
        return False
    for i in range(rows.shape[0]):
        gauges[rows[i]] = g[i]
    return True
