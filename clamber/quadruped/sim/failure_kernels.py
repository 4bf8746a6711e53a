"""The gripper check of one control cycle compiled: the steps' sole wrenches and the settle.

Each control cycle the failure model gathers the attached grippers' rows of five physics
steps' MuJoCo data, shifts and rotates them into sole wrenches and certifies them inside
the wrench set (:meth:`~clamber.quadruped.sim.failure.FailureClock.settle`). In NumPy that
is some 30 calls on 4 x 6 arrays, each mostly dispatch; these kernels do the same
arithmetic in two compiled calls (numba, cached on disk). The NumPy forms stay as the
reference (:func:`~clamber.quadruped.sim.grippers._sole_wrenches`, ``FailureClock.settle``);
the products are summed in another order, so the numbers agree to round-off (about 1e-15
relative), and the decisions (certified inside, a peak raised) are the same but where a
bound lies within round-off of its threshold, which the certificates' 1e-6 margin keeps
away from the LP's decision.
"""

from __future__ import annotations

import numpy as np

from clamber.compiled import kernel


@kernel
def sole_wrenches(ext: np.ndarray, com: np.ndarray, pos: np.ndarray, mat: np.ndarray,
                  bodies: np.ndarray, grippers: np.ndarray, sites: np.ndarray,
                  roots: np.ndarray, compliant: bool) -> np.ndarray:
    """Sole wrenches [f, tau] (steps, k, 6) [N, N m] of the grippers' rows.

    ``ext`` (steps, nbody, 6): MuJoCo's ``cfrc_ext`` ([torque, force] about the subtree
    centre of mass) per step; ``com`` (steps, nbody, 3) ``subtree_com``; ``pos`` (steps,
    nsite, 3) and ``mat`` (steps, nsite, 9) the sites' positions and rotations; the grippers'
    bodies (their pads' when ``compliant``; the gripper bodies are then added), wrench
    sites and root bodies.
    """
    n, k = ext.shape[0], bodies.shape[0]
    out = np.empty((n, k, 6))
    tau = np.empty(3)
    f = np.empty(3)
    r = np.empty(3)
    for j in range(n):
        for i in range(k):
            b, s = bodies[i], sites[i]
            for c in range(3):
                tau[c] = ext[j, b, c]
                f[c] = ext[j, b, 3 + c]
            if compliant:
                gb = grippers[i]
                for c in range(3):
                    tau[c] += ext[j, gb, c]
                    f[c] += ext[j, gb, 3 + c]
            for c in range(3):
                r[c] = com[j, roots[i], c] - pos[j, s, c]
            # Moment about the sole: tau + r x f.
            tau[0] += r[1] * f[2] - r[2] * f[1]
            tau[1] += r[2] * f[0] - r[0] * f[2]
            tau[2] += r[0] * f[1] - r[1] * f[0]
            # In the site frame: x R (row vectors times the rotation matrix, row-major).
            for c in range(3):
                out[j, i, c] = (f[0] * mat[j, s, c] + f[1] * mat[j, s, 3 + c]
                                + f[2] * mat[j, s, 6 + c])
                out[j, i, 3 + c] = (tau[0] * mat[j, s, c] + tau[1] * mat[j, s, 3 + c]
                                    + tau[2] * mat[j, s, 6 + c])
    return out


@kernel
def _gauge_bound(w: np.ndarray, planes_t: np.ndarray) -> float:
    """``max(0, max_c w . planes_t[:, c])``: a polytope's gauge of ``w`` (6,)."""
    best = 0.0
    for c in range(planes_t.shape[1]):
        v = (w[0] * planes_t[0, c] + w[1] * planes_t[1, c] + w[2] * planes_t[2, c]
             + w[3] * planes_t[3, c] + w[4] * planes_t[4, c] + w[5] * planes_t[5, c])
        if v > best:
            best = v
    return best


@kernel
def polytope_gauges(w: np.ndarray, planes_t: np.ndarray) -> np.ndarray:
    """Gauges (n,) of wrenches ``w`` (n, 6) for the polytope ``planes_t.T @ w <= 1``
    (``planes_t`` (6, m)): ``max(0, max_c w . planes_t[:, c])``; every gauge bound of the
    failure model goes through here, so the per-step and per-cycle checks use the same
    arithmetic."""
    out = np.empty(w.shape[0])
    for i in range(w.shape[0]):
        out[i] = _gauge_bound(w[i], planes_t)
    return out


@kernel
def settle(ws: np.ndarray, rows: np.ndarray, inner_t: np.ndarray, cuts_t: np.ndarray,
           certified: float, lower_margin: float, ref_wrench: np.ndarray,
           ref_gauge: np.ndarray, peak_lo: np.ndarray, peak_wrench: np.ndarray,
           lo_wrench: np.ndarray, lo_gauge: np.ndarray, slide: np.ndarray, speed: np.ndarray,
           gauges: np.ndarray) -> bool:
    """:meth:`~clamber.quadruped.sim.failure.FailureClock.settle` over the steps' wrenches
    ``ws`` (steps, k, 6) of the grippers ``rows``, already scaled by their holds' factors
    (:func:`~clamber.quadruped.sim.failure.scaled_wrench`).

    ``inner_t`` (6, n) and ``cuts_t`` (6, m) are the inner polytope's and the supporting
    half-spaces' normals (wrench units); the other arrays are the clock's state, per gripper,
    updated in place (the gauges into ``gauges[rows]``) if every wrench is certified inside
    its set, in which case True is returned; else nothing changes and False is returned.
    """
    n, k = ws.shape[0], ws.shape[1]
    g = np.empty((n, k))
    any_above = False
    for j in range(n):
        for i in range(k):
            g[j, i] = _gauge_bound(ws[j, i], inner_t)
            if g[j, i] > 1.0:
                any_above = True
    last = np.empty(k)
    for i in range(k):
        last[i] = g[n - 1, i]
    if any_above:
        d = np.empty(6)
        for j in range(n):
            for i in range(k):
                if g[j, i] > 1.0:
                    row = rows[i]
                    for c in range(6):
                        d[c] = ws[j, i, c] - ref_wrench[row, c]
                    bound = ref_gauge[row] + _gauge_bound(d, inner_t)
                    if bound > certified:
                        return False
                    if j == n - 1:
                        last[i] = bound
    peak = np.empty(k)
    for i in range(k):
        slide[rows[i]] = 0.0
        speed[rows[i]] = 0.0
        peak[i] = peak_lo[rows[i]]
        gauges[rows[i]] = last[i]
    # A step's lower bounds are formed only where they could raise a peak (see settle).
    possible = np.zeros((n, k), dtype=np.bool_)
    d = np.empty(6)
    anything = False
    for j in range(n):
        for i in range(k):
            if g[j, i] > peak[i]:
                row = rows[i]
                for c in range(6):
                    d[c] = ws[j, i, c] - lo_wrench[row, c]
                if lo_gauge[row] + _gauge_bound(d, inner_t) > peak[i] - lower_margin:
                    possible[j, i] = True
                    anything = True
    if not anything:
        return True
    for j in range(n):
        form = False
        raise_ = False
        for i in range(k):
            form = form or possible[j, i]
            raise_ = raise_ or g[j, i] > peak[i]
        if form and raise_:
            for i in range(k):
                row = rows[i]
                lo = _gauge_bound(ws[j, i], cuts_t)
                for c in range(6):
                    lo_wrench[row, c] = ws[j, i, c]
                lo_gauge[row] = lo
                if lo > peak[i]:
                    peak[i] = lo
                    for c in range(6):
                        peak_wrench[row, c] = ws[j, i, c]
    for i in range(k):
        peak_lo[rows[i]] = peak[i]
    return True
