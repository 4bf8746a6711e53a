"""The KKT system IPOPT factorizes for the jump NLP: its pattern and what factorizing costs.

The linear solver is the floor of a compiled solve (docs/results/jumper_trajopt.md), so its
cost is worth pricing without a solve: :func:`kkt_pattern` reads the Lagrangian
Hessian's and the constraint Jacobian's patterns from the compiled backend's functions,
:func:`augmented` lays them out as IPOPT's augmented system, :func:`factor_counts` counts
a symbolic LDL^T of it (AMD ordering, 1x1 pivots: a lower bound) and
:func:`mumps_analysis` asks MUMPS itself (through IPOPT) for its ordering's estimates.
``benchmarks/bench_kkt_structure.py`` prices couplings with them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass

import casadi as ca
import numpy as np
import scipy.sparse as sp

from clamber.jumper.formulation.problem import JumperProblem
from clamber.jumper.settings import OptimizationSettings


@dataclass(frozen=True)
class KKTPattern:
    """Hessian (both triangles), Jacobian and which constraint rows are inequalities."""

    hessian: sp.csc_matrix
    jacobian: sp.csr_matrix
    inequality: np.ndarray


def _csc(spx: ca.Sparsity) -> sp.csc_matrix:
    r, c = spx.get_triplet()
    return sp.csc_matrix((np.ones(len(r)), (r, c)), shape=spx.shape)


def kkt_pattern(problem: JumperProblem, settings: OptimizationSettings) -> KKTPattern:
    """The NLP's derivative patterns as the compiled backend evaluates them; the
    inequality rows (lower < upper) for these settings."""
    fns = problem.nlp_functions()
    H = _csc(fns["nlp_hess_l"].sparsity_out(0))
    H = ((H + H.T) != 0).astype(float).tocsc()
    J = _csc(fns["nlp_jac_g"].sparsity_out(1)).tocsr()
    lbg, ubg = problem.constraint_bounds(settings)
    return KKTPattern(H, J, lbg < ubg)


def augmented(H: sp.spmatrix, J: sp.spmatrix, inequality: np.ndarray) -> sp.csc_matrix:
    """IPOPT's augmented system pattern [W + D_x, 0, J^T; 0, D_s, -E^T; J, -E, D_c]
    (variables x, a slack s per inequality row, multipliers y; E selects the inequality
    rows), every diagonal included."""
    n, m = H.shape[0], J.shape[0]
    rows = np.flatnonzero(inequality)
    E = sp.csc_matrix((np.ones(rows.size), (rows, np.arange(rows.size))), shape=(m, rows.size))
    K = sp.bmat([[H, None, J.T], [None, sp.eye(rows.size), E.T], [J, E, None]], format="csc")
    K = (K + sp.eye(n + rows.size + m)).tocsc()
    K.data[:] = 1.0
    return K


def factor_counts(K: sp.spmatrix, amd: bool = True) -> dict:
    """Entries of the unit-lower factor L (diagonal included) and operations (the sum of
    squared column counts, MUMPS's convention) of a symbolic LDL^T of the symmetric
    pattern ``K``, with an AMD ordering or in the given order (``amd`` False)."""
    K = sp.coo_matrix(K)
    spx = ca.Sparsity.triplet(K.shape[0], K.shape[1], K.row.tolist(), K.col.tolist())
    Lt, _ = spx.ldl(amd)
    counts = np.diff(np.array(Lt.T.colind())).astype(float)  # below the diagonal
    entries = counts.sum() + K.shape[0]
    upper = int((K.row <= K.col).sum())
    return {"dimension": K.shape[0], "nonzeros_upper": upper, "factor_entries": int(entries),
            "fill_ratio": float(entries / upper),
            "operations": float(np.sum(counts**2 + counts)),
            "max_column": int(counts.max(initial=0))}


def _stand_in_solve(path: str, options: str) -> None:
    """One IPOPT iteration on a stand-in NLP with the patterns saved at ``path`` (run in
    a child process by :func:`mumps_analysis`, whose stdout MUMPS prints to)."""
    data = np.load(path, allow_pickle=False)
    n, m = int(data["n"]), int(data["m"])
    rng = np.random.default_rng(0)
    x = ca.SX.sym("x", n)
    hr, hc = data["h_row"], data["h_col"]
    f = ca.dot(ca.DM(1 + rng.random(hr.size)), x[hr.tolist()] * x[hc.tolist()])
    A = ca.DM(ca.Sparsity(m, n, data["j_colind"].tolist(), data["j_row"].tolist()),
              1 + rng.random(data["j_row"].size))
    opts = {"ipopt.max_iter": 1, "ipopt.mumps_print_level": 2, "print_time": False,
            "ipopt.print_level": 0, "ipopt.sb": "yes", "ipopt.constr_mult_init_max": 0.0,
            **{f"ipopt.{k}": v for k, v in json.loads(options).items()}}
    solver = ca.nlpsol("pattern", "ipopt", {"x": x, "f": f, "g": ca.mtimes(A, x)}, opts)
    lbg = np.where(data["inequality"], -1.0, 0.0)
    solver(x0=0.1 * rng.random(n), lbg=lbg, ubg=-lbg)


_CHILD = "import sys; from clamber.jumper.formulation.kkt import _stand_in_solve as f; " \
         "f(sys.argv[1], sys.argv[2])"


def mumps_analysis(H: sp.spmatrix, J: sp.spmatrix, inequality: np.ndarray,
                   **ipopt_options) -> dict:
    """MUMPS's own analysis of the augmented system of this pattern, through IPOPT.

    A stand-in NLP with these Hessian and Jacobian patterns and random coefficients (the
    ordering and its estimates depend on the pattern) runs one IPOPT iteration with
    MUMPS's statistics printed, in a child process (MUMPS's Fortran output is buffered
    per process); ``ipopt_options`` are added, e.g. ``mumps_pivot_order``. Returns the
    dimension and nonzeros MUMPS got, its estimated entries in the factors (INFOG(20))
    and operations (RINFOG(1)).
    """
    Hu = sp.triu(H).tocoo()
    Jc = sp.csc_matrix(J)
    Jc.sort_indices()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "pattern.npz")
        np.savez(path, n=H.shape[0], m=J.shape[0], h_row=Hu.row, h_col=Hu.col,
                 j_colind=Jc.indptr, j_row=Jc.indices,
                 inequality=np.asarray(inequality, bool))
        text = subprocess.run([sys.executable, "-c", _CHILD, path, json.dumps(ipopt_options)],
                              capture_output=True, text=True, check=True).stdout
    size = re.search(r"JOB, N, NNZ =\s+1\s+(\d+)\s+(\d+)", text)
    est = re.search(r"\(20\) Number of entries in factors \(estim.\)\s+=\s+(\S+)", text)
    ops = re.search(r"RINFOG\(1\) Operations during elimination \(estim\)=\s*(\S+)", text)
    if not (size and est and ops):
        raise RuntimeError("MUMPS printed no analysis statistics")
    out = {"dimension": int(size.group(1)), "nonzeros": int(size.group(2)),
           "factor_entries_estimated": int(est.group(1)),
           "operations_estimated": float(ops.group(1).replace("D", "e"))}
    out["fill_ratio_estimated"] = out["factor_entries_estimated"] / out["nonzeros"]
    return out
