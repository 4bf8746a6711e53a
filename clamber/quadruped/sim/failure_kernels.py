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
def _sole_wrench(ext: np.ndarray, com: np.ndarray, pos: np.ndarray, mat: np.ndarray,
                 b: int, gb: int, s: int, root: int, compliant: bool,
                 out: np.ndarray) -> None:
    """One gripper's sole wrench [f, tau] (6,) into ``out`` from one step's arrays (see
    :func:`sole_wrenches`; the reference of :func:`_sole_wrenches_into`, which forms the
    same numbers without the per-step views)."""
    t0, t1, t2 = ext[b, 0], ext[b, 1], ext[b, 2]
    f0, f1, f2 = ext[b, 3], ext[b, 4], ext[b, 5]
    if compliant:
        t0, t1, t2 = t0 + ext[gb, 0], t1 + ext[gb, 1], t2 + ext[gb, 2]
        f0, f1, f2 = f0 + ext[gb, 3], f1 + ext[gb, 4], f2 + ext[gb, 5]
    r0, r1, r2 = com[root, 0] - pos[s, 0], com[root, 1] - pos[s, 1], com[root, 2] - pos[s, 2]
    # Moment about the sole: tau + r x f.
    t0 = t0 + (r1 * f2 - r2 * f1)
    t1 = t1 + (r2 * f0 - r0 * f2)
    t2 = t2 + (r0 * f1 - r1 * f0)
    # In the site frame: x R (row vectors times the rotation matrix, row-major).
    for c in range(3):
        out[c] = f0 * mat[s, c] + f1 * mat[s, 3 + c] + f2 * mat[s, 6 + c]
        out[3 + c] = t0 * mat[s, c] + t1 * mat[s, 3 + c] + t2 * mat[s, 6 + c]


@kernel
def _sole_wrenches_into_plain(ext: np.ndarray, com: np.ndarray, pos: np.ndarray,
                              mat: np.ndarray, bodies: np.ndarray, grippers: np.ndarray,
                              sites: np.ndarray, roots: np.ndarray, compliant: bool,
                              out: np.ndarray) -> None:
    for j in range(ext.shape[0]):
        for i in range(bodies.shape[0]):
            _sole_wrench(ext[j], com[j], pos[j], mat[j], bodies[i], grippers[i], sites[i],
                         roots[i], compliant, out[j, i])


@kernel
def _sole_wrenches_into(ext: np.ndarray, com: np.ndarray, pos: np.ndarray, mat: np.ndarray,
                        bodies: np.ndarray, grippers: np.ndarray, sites: np.ndarray,
                        roots: np.ndarray, compliant: bool, out: np.ndarray) -> None:
    """:func:`_sole_wrench` of every step and gripper into ``out`` (steps, k, 6), indexed
    in place: a view per step and gripper costs more than the wrench (the same
    expressions, so the same numbers)."""
    for j in range(ext.shape[0]):
        for i in range(bodies.shape[0]):
            b, gb, s, root = bodies[i], grippers[i], sites[i], roots[i]
            t0, t1, t2 = ext[j, b, 0], ext[j, b, 1], ext[j, b, 2]
            f0, f1, f2 = ext[j, b, 3], ext[j, b, 4], ext[j, b, 5]
            if compliant:
                t0, t1, t2 = t0 + ext[j, gb, 0], t1 + ext[j, gb, 1], t2 + ext[j, gb, 2]
                f0, f1, f2 = f0 + ext[j, gb, 3], f1 + ext[j, gb, 4], f2 + ext[j, gb, 5]
            r0 = com[j, root, 0] - pos[j, s, 0]
            r1 = com[j, root, 1] - pos[j, s, 1]
            r2 = com[j, root, 2] - pos[j, s, 2]
            t0 = t0 + (r1 * f2 - r2 * f1)
            t1 = t1 + (r2 * f0 - r0 * f2)
            t2 = t2 + (r0 * f1 - r1 * f0)
            for c in range(3):
                m0, m1, m2 = mat[j, s, c], mat[j, s, 3 + c], mat[j, s, 6 + c]
                out[j, i, c] = f0 * m0 + f1 * m1 + f2 * m2
                out[j, i, 3 + c] = t0 * m0 + t1 * m1 + t2 * m2


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
    out = np.empty((ext.shape[0], bodies.shape[0], 6))
    _sole_wrenches_into(ext, com, pos, mat, bodies, grippers, sites, roots, compliant, out)
    return out


@kernel
def sole_wrenches_plain(ext: np.ndarray, com: np.ndarray, pos: np.ndarray, mat: np.ndarray,
                        bodies: np.ndarray, grippers: np.ndarray, sites: np.ndarray,
                        roots: np.ndarray, compliant: bool) -> np.ndarray:
    """:func:`sole_wrenches` through a view per step and gripper (its reference)."""
    out = np.empty((ext.shape[0], bodies.shape[0], 6))
    _sole_wrenches_into_plain(ext, com, pos, mat, bodies, grippers, sites, roots, compliant,
                              out)
    return out


@kernel
def _gauge_bound_plain(w: np.ndarray, planes_t: np.ndarray) -> float:
    """``max(0, max_c w . planes_t[:, c])``: a polytope's gauge of ``w`` (6,), one plane
    after the other (the reference of :func:`_gauge_bound`)."""
    best = 0.0
    for c in range(planes_t.shape[1]):
        v = (w[0] * planes_t[0, c] + w[1] * planes_t[1, c] + w[2] * planes_t[2, c]
             + w[3] * planes_t[3, c] + w[4] * planes_t[4, c] + w[5] * planes_t[5, c])
        if v > best:
            best = v
    return best


#: Running maxima :func:`_gauge_bound` keeps side by side.
_LANES = 4


@kernel
def _gauge_bound(w0: float, w1: float, w2: float, w3: float, w4: float, w5: float,
                 planes_t: np.ndarray, scratch: np.ndarray) -> float:
    """:func:`_gauge_bound_plain`'s number of the wrench ``(w0, ..., w5)``, in two passes
    the compiler vectorises: every plane's product into ``scratch`` (at least as long as
    the planes; each product formed as there, the same six products summed left to right),
    then four running maxima combined. A strict ``>`` from ``+0.0`` keeps the first of
    equal values and passes over NaN in either order, so the maximum is the same number
    bit for bit. The wrench comes as six numbers: a view per call costs more than the
    149 planes of the inner polytope."""
    m = planes_t.shape[1]
    p0, p1, p2 = planes_t[0], planes_t[1], planes_t[2]
    p3, p4, p5 = planes_t[3], planes_t[4], planes_t[5]
    for c in range(m):
        scratch[c] = (w0 * p0[c] + w1 * p1[c] + w2 * p2[c]
                      + w3 * p3[c] + w4 * p4[c] + w5 * p5[c])
    return _largest(scratch, m)


@kernel
def _largest(values: np.ndarray, m: int) -> float:
    """``max(0, values[:m])`` in four running maxima, combined (see :func:`_gauge_bound`)."""
    b0 = b1 = b2 = b3 = 0.0
    c = 0
    while c + _LANES <= m:
        v0, v1, v2, v3 = values[c], values[c + 1], values[c + 2], values[c + 3]
        b0 = v0 if v0 > b0 else b0
        b1 = v1 if v1 > b1 else b1
        b2 = v2 if v2 > b2 else b2
        b3 = v3 if v3 > b3 else b3
        c += _LANES
    while c < m:
        v = values[c]
        b0 = v if v > b0 else b0
        c += 1
    best = b0
    best = b1 if b1 > best else best
    best = b2 if b2 > best else best
    return b3 if b3 > best else best


@kernel
def _step_gauges(ws: np.ndarray, j: int, planes_t: np.ndarray, scratch: np.ndarray,
                 out: np.ndarray) -> None:
    """:func:`_gauge_bound` of every wrench ``ws[j, i]`` (k of them) into ``out[i]``, four
    wrenches per pass over the planes (``scratch`` (4, m)): the planes are read once for
    four (the supporting half-spaces, 1136 of them, do not fit the nearest cache). Each
    product is formed as there, so every gauge is the same number; a pass with fewer than
    four wrenches fills the rest with zeros and ignores them."""
    m, k = planes_t.shape[1], ws.shape[1]
    p0, p1, p2 = planes_t[0], planes_t[1], planes_t[2]
    p3, p4, p5 = planes_t[3], planes_t[4], planes_t[5]
    s0, s1, s2, s3 = scratch[0], scratch[1], scratch[2], scratch[3]
    a = np.zeros((4, 6))
    for i0 in range(0, k, 4):
        n = min(4, k - i0)
        for r in range(4):
            for c in range(6):
                a[r, c] = ws[j, i0 + r, c] if r < n else 0.0
        a0, a1, a2, a3, a4, a5 = a[0, 0], a[0, 1], a[0, 2], a[0, 3], a[0, 4], a[0, 5]
        b0, b1, b2, b3, b4, b5 = a[1, 0], a[1, 1], a[1, 2], a[1, 3], a[1, 4], a[1, 5]
        c0, c1, c2, c3, c4, c5 = a[2, 0], a[2, 1], a[2, 2], a[2, 3], a[2, 4], a[2, 5]
        d0, d1, d2, d3, d4, d5 = a[3, 0], a[3, 1], a[3, 2], a[3, 3], a[3, 4], a[3, 5]
        for c in range(m):
            q0, q1, q2, q3, q4, q5 = p0[c], p1[c], p2[c], p3[c], p4[c], p5[c]
            s0[c] = a0 * q0 + a1 * q1 + a2 * q2 + a3 * q3 + a4 * q4 + a5 * q5
            s1[c] = b0 * q0 + b1 * q1 + b2 * q2 + b3 * q3 + b4 * q4 + b5 * q5
            s2[c] = c0 * q0 + c1 * q1 + c2 * q2 + c3 * q3 + c4 * q4 + c5 * q5
            s3[c] = d0 * q0 + d1 * q1 + d2 * q2 + d3 * q3 + d4 * q4 + d5 * q5
        for r in range(n):
            out[i0 + r] = _largest(scratch[r], m)


@kernel
def polytope_gauges(w: np.ndarray, planes_t: np.ndarray) -> np.ndarray:
    """Gauges (n,) of wrenches ``w`` (n, 6) for the polytope ``planes_t.T @ w <= 1``
    (``planes_t`` (6, m)): ``max(0, max_c w . planes_t[:, c])``; every gauge bound of the
    failure model goes through here, so the per-step and per-cycle checks use the same
    arithmetic."""
    out = np.empty(w.shape[0])
    scratch = np.empty(planes_t.shape[1])
    for i in range(w.shape[0]):
        out[i] = _gauge_bound(w[i, 0], w[i, 1], w[i, 2], w[i, 3], w[i, 4], w[i, 5], planes_t,
                              scratch)
    return out


@kernel
def step_gauges(ws: np.ndarray, planes_t: np.ndarray) -> np.ndarray:
    """Gauges (steps, k) of the wrenches ``ws`` (steps, k, 6) for the polytope
    ``planes_t.T @ w <= 1``, a step's wrenches together (as the settle forms lower bounds):
    :func:`polytope_gauges`' numbers."""
    out = np.empty((ws.shape[0], ws.shape[1]))
    scratch = np.empty((4, planes_t.shape[1]))
    for j in range(ws.shape[0]):
        _step_gauges(ws, j, planes_t, scratch, out[j])
    return out


@kernel
def polytope_gauges_plain(w: np.ndarray, planes_t: np.ndarray) -> np.ndarray:
    """:func:`polytope_gauges` one plane after the other (its reference)."""
    out = np.empty(w.shape[0])
    for i in range(w.shape[0]):
        out[i] = _gauge_bound_plain(w[i], planes_t)
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
    scratch = np.empty(max(inner_t.shape[1], cuts_t.shape[1]))
    g = np.empty((n, k))
    any_above = False
    for j in range(n):
        for i in range(k):
            g[j, i] = _gauge_bound(ws[j, i, 0], ws[j, i, 1], ws[j, i, 2], ws[j, i, 3],
                                   ws[j, i, 4], ws[j, i, 5], inner_t, scratch)
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
                    bound = ref_gauge[row] + _gauge_bound(d[0], d[1], d[2], d[3], d[4], d[5],
                                                          inner_t, scratch)
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
                bound = lo_gauge[row] + _gauge_bound(d[0], d[1], d[2], d[3], d[4], d[5],
                                                     inner_t, scratch)
                if bound > peak[i] - lower_margin:
                    possible[j, i] = True
                    anything = True
    if not anything:
        return True
    scratch4 = np.empty((4, cuts_t.shape[1]))
    los = np.empty(k)
    for j in range(n):
        form = False
        raise_ = False
        for i in range(k):
            form = form or possible[j, i]
            raise_ = raise_ or g[j, i] > peak[i]
        if form and raise_:
            _step_gauges(ws, j, cuts_t, scratch4, los)
            for i in range(k):
                row = rows[i]
                lo = los[i]
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


@kernel
def _scaled_into(w: np.ndarray, factor: np.ndarray, ws: np.ndarray) -> None:
    """:func:`~clamber.quadruped.sim.failure.scaled_wrench` of ``w`` (steps, k, 6) by
    ``factor`` (k, 6) or (k, 7) into ``ws``: each wrench over its factors, ``f_z`` over the
    seventh where it pushes (the same divisions)."""
    seven = factor.shape[1] == 7
    for j in range(w.shape[0]):
        for i in range(w.shape[1]):
            for c in range(6):
                ws[j, i, c] = w[j, i, c] / factor[i, c]
            if seven and w[j, i, 2] > 0.0:
                ws[j, i, 2] = w[j, i, 2] / factor[i, 6]


@kernel
def settle_recorded(ext: np.ndarray, com: np.ndarray, pos: np.ndarray, mat: np.ndarray,
                    bodies: np.ndarray, grippers: np.ndarray, sites: np.ndarray,
                    roots: np.ndarray, compliant: bool, factor: np.ndarray, w: np.ndarray,
                    rows: np.ndarray, inner_t: np.ndarray, cuts_t: np.ndarray,
                    certified: float, lower_margin: float, ref_wrench: np.ndarray,
                    ref_gauge: np.ndarray, peak_lo: np.ndarray, peak_wrench: np.ndarray,
                    lo_wrench: np.ndarray, lo_gauge: np.ndarray, slide: np.ndarray,
                    speed: np.ndarray, gauges: np.ndarray) -> bool:
    """One control period's gripper check in one call: the sole wrenches of the recorded
    steps (:func:`sole_wrenches`' arguments) into ``w`` (steps, k, 6), scaled by the holds'
    ``factor`` and settled (:func:`settle`'s arguments and result): the same functions on
    the same numbers as the three calls they replace."""
    _sole_wrenches_into(ext, com, pos, mat, bodies, grippers, sites, roots, compliant, w)
    ws = np.empty_like(w)
    _scaled_into(w, factor, ws)
    return settle(ws, rows, inner_t, cuts_t, certified, lower_margin, ref_wrench, ref_gauge,
                  peak_lo, peak_wrench, lo_wrench, lo_gauge, slide, speed, gauges)
