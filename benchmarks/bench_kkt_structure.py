"""Where the fill of the jump NLP's KKT factorization comes from (symbolic, no solve).

Builds the pattern of the augmented system IPOPT hands to MUMPS (Lagrangian Hessian,
slacks of the inequality rows, constraint Jacobian, every diagonal) from the compiled
backend's functions, and counts the entries of an LDL^T factor (CasADi's symbolic LDL,
AMD ordering, 1x1 pivots: a lower bound on what MUMPS stores, which also delays pivots)
and the operations of its elimination (sum of squared column counts), and MUMPS's own
analysis of the same pattern (see :mod:`clamber.jumper.formulation.kkt`). The same for
variants of the pattern says which coupling costs what:
- as built;
- without the global columns (height, front anchor, impulses);
- without the objective's coupling of the height with every phase's time step;
- without the periodicity rows (the ring that ties the last node to the first);
- without all three (a pure chain of stages);
- without the motor-line rows (``drop_duplicate_rows``);
- the height and front anchor lifted into per-node copies (and the period a running
  clock), variables and rows in stage order: the stage-wise reformulation's pattern;
- stage-wise natural order (every variable and row sorted by its node), no AMD.
The variants are not solvable problems, they price the couplings.
Prints one JSON object on its last line.
    python benchmarks/bench_kkt_structure.py [--resolution coarse|fine]
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np
import scipy.sparse as sp

from clamber.jumper.formulation.kkt import augmented, factor_counts, kkt_pattern, mumps_analysis
from clamber.jumper.formulation.problem import JumperProblem
from clamber.jumper.schedule import PHASES, RESOLUTIONS
from clamber.jumper.settings import OptimizationSettings
from clamber.jumper.solve import problem_for

GLOBALS = ("height", "front_anchor", "impulse_catch_front", "impulse_settle_rear",
           "impulse_settle_front")


def variable_stages(pr: JumperProblem) -> np.ndarray:
    """Node index (time order over the whole jump) of every decision variable; -1 global."""
    stage = np.full(pr.variables.size, -1.0)
    offset = 0
    for p, N in zip(PHASES, pr.nodes, strict=True):
        for name, b in pr.variables.blocks.items():
            if not name.startswith(f"p{p.index}."):
                continue
            count = b.shape[0]
            per = b.size // count
            node = np.repeat(np.arange(count), per)
            if name.endswith("dt") or "correction" in name or ".mid." in name:
                node = node + (1 if "correction" in name else 0.5)
            stage[b.slice] = offset + node
        offset += N + 1
    return stage


def stage_order(pr: JumperProblem, J: sp.spmatrix, ineq: np.ndarray) -> np.ndarray:
    """A permutation of the augmented system sorting variables, slacks and multipliers by
    node (each row at the latest node it touches), the global variables last."""
    st = variable_stages(pr)
    m = J.shape[0]
    Jc = J.tocsr()
    row_stage = np.array([st[Jc.indices[Jc.indptr[i]:Jc.indptr[i + 1]]].max()
                          if Jc.indptr[i + 1] > Jc.indptr[i] else 0.0 for i in range(m)])
    big = st.max() + 1
    key_x = np.where(st < 0, big, st)
    rows_d = np.flatnonzero(ineq)
    key = np.concatenate([key_x, row_stage[rows_d] + 0.25, row_stage + 0.3])
    return np.argsort(key, kind="stable")


def lifted(pr: JumperProblem, H: sp.spmatrix, J: sp.spmatrix, ineq: np.ndarray,
           clock: bool) -> tuple[sp.csr_matrix, sp.csr_matrix, np.ndarray]:
    """The pattern of the stage-wise reformulation, without writing its NLP: height and
    front anchor lifted into one copy per node (chained equal, each row using its node's
    copy), and with ``clock`` the period as a running state T_{k+1} = T_k + dt_k so the
    objective -H/T reads the last node's copies only. Variables and rows sorted by node.
    """
    st = variable_stages(pr)
    node = np.floor(np.where(st < 0, 0, st)).astype(int)
    S = int(node.max()) + 1
    n, m = H.shape[0], J.shape[0]
    lift = [pr.variables.blocks[k].start for k in ("height", "front_anchor")]
    col_of = {c: n + i * S + np.arange(S) for i, c in enumerate(lift)}
    n2 = n + len(lift) * S
    T = n2 + np.arange(S) if clock else None
    n2 += S if clock else 0
    Jr = J.tocsr()
    row_node = np.array([node[Jr.indices[Jr.indptr[i]:Jr.indptr[i + 1]]][
        st[Jr.indices[Jr.indptr[i]:Jr.indptr[i + 1]]] >= 0].max(initial=0) for i in range(m)])
    Jc = J.tocoo()
    rows, cols = list(Jc.row), list(Jc.col)
    for k, (r, c) in enumerate(zip(Jc.row, Jc.col, strict=True)):
        if c in col_of:
            cols[k] = col_of[c][row_node[r]]
    m2 = m
    for c in lift:  # copy_{k+1} - copy_k = 0
        for k in range(S - 1):
            rows += [m2, m2]
            cols += [col_of[c][k], col_of[c][k + 1]]
            m2 += 1
    dt_first = [pr.variables.blocks[f"p{p.index}.dt"].start for p in PHASES]
    if clock:  # T_{k+1} - T_k - dt_k = 0 (dt_k: the interval's step, none across phases)
        dt_at = {}
        for p in PHASES:
            b = pr.variables.blocks[f"p{p.index}.dt"]
            for j in range(b.start, b.stop if hasattr(b, "stop") else b.start + b.size):
                dt_at[node[j]] = j
        for k in range(S - 1):
            rows += [m2, m2] + ([m2] if k in dt_at else [])
            cols += [T[k], T[k + 1]] + ([dt_at[k]] if k in dt_at else [])
            m2 += 1
    J2 = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(m2, n2))
    # Hessian: the objective's (height, dt_first) block moves to (H_last, T_last)
    Hc = sp.triu(H).tocoo()
    hr, hc = [], []
    obj = {lift[0], *dt_first}
    for a, b in zip(Hc.row, Hc.col, strict=True):
        if clock and a in obj and b in obj:
            continue
        if a in col_of:
            a = col_of[a][node[b]] if b not in col_of else col_of[a][S - 1]
        if b in col_of:
            b = col_of[b][node[a] if a < n else S - 1]
        hr.append(a)
        hc.append(b)
    if clock:
        hr += [col_of[lift[0]][S - 1], T[S - 1], col_of[lift[0]][S - 1]]
        hc += [T[S - 1], T[S - 1], col_of[lift[0]][S - 1]]
    Hu = sp.csr_matrix((np.ones(len(hr)), (hr, hc)), shape=(n2, n2))
    H2 = ((Hu + Hu.T) != 0).astype(float)
    ineq2 = np.concatenate([ineq, np.zeros(m2 - m, bool)])
    # stage-wise order of the variables and the rows
    st2 = np.concatenate([np.where(st < 0, S, st), *[np.arange(S) for _ in lift],
                          np.arange(S) if clock else []])
    px = np.argsort(st2, kind="stable")
    J2 = J2.tocsr()
    r_key = np.array([st2[J2.indices[J2.indptr[i]:J2.indptr[i + 1]]].max()
                      for i in range(m2)])
    pr_ = np.argsort(r_key, kind="stable")
    return H2[px][:, px].tocsc(), J2[pr_][:, px].tocsr(), ineq2[pr_]


def analyse(resolution: str, mumps: bool = True) -> dict:
    s = OptimizationSettings()
    pr = problem_for(RESOLUTIONS[resolution], s)
    parts = kkt_pattern(pr, s)
    H, J, ineq = parts.hessian, parts.jacobian, parts.inequality
    n = H.shape[0]
    glob = np.zeros(n, bool)
    for name in GLOBALS:
        glob[pr.variables.blocks[name].slice] = True
    periodic = np.zeros(J.shape[0], bool)
    for name, sl in pr.row_slices.items():
        if name.startswith("periodic."):
            periodic[sl] = True
    # the objective -H / T: its Hessian couples the height with every phase's first dt
    dt_first = [pr.variables.blocks[f"p{p.index}.dt"].start for p in PHASES]
    obj_idx = np.array([pr.variables.blocks["height"].start, *dt_first])

    motor = np.zeros(J.shape[0], bool)
    for name, sl in pr.row_slices.items():
        if name.endswith(".motor_line"):
            motor[sl] = True

    def without(drop_cols=None, drop_rows=None, drop_objective=False):
        Hh = H.tolil(copy=True)
        if drop_objective:
            for a in obj_idx:
                for b in obj_idx:
                    if a != b:
                        Hh[a, b] = 0
        Hh = Hh.tocsc()
        Hh.eliminate_zeros()
        keep_c = ~drop_cols if drop_cols is not None else np.ones(n, bool)
        keep_r = ~drop_rows if drop_rows is not None else np.ones(J.shape[0], bool)
        Jj = J.tocsr()[:, keep_c]
        keep_r &= np.diff(Jj.indptr) > 0  # rows on dropped columns only go too
        return Hh[keep_c][:, keep_c], Jj[keep_r], ineq[keep_r]

    variants = {
        "as_built": without(),
        "no_global_columns": without(drop_cols=glob),
        "no_objective_coupling": without(drop_objective=True),
        "no_periodicity": without(drop_rows=periodic),
        "chain": without(drop_cols=glob, drop_rows=periodic, drop_objective=True),
        "no_motor_line_rows": without(drop_rows=motor),
        "lifted_globals": lifted(pr, H, J, ineq, clock=False),
        "lifted_globals_and_clock": lifted(pr, H, J, ineq, clock=True),
    }
    out: dict = {"resolution": resolution, "variables": n, "rows": J.shape[0],
                 "inequality_rows": int(ineq.sum())}
    for name, parts in variants.items():
        out[name] = factor_counts(augmented(*parts))
        if mumps:
            out[name]["mumps"] = mumps_analysis(*parts)
    K = augmented(*variants["as_built"])
    perm = stage_order(pr, J, ineq)
    out["stage_order_no_amd"] = factor_counts(K[perm][:, perm].tocsc(), amd=False)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resolution", default="coarse", choices=sorted(RESOLUTIONS))
    args = ap.parse_args()
    res = analyse(args.resolution)
    for k, v in res.items():
        if isinstance(v, dict):
            print(f"{k:24s} dim {v['dimension']:5d} nnz {v['nonzeros_upper']:6d} factor "
                  f"{v['factor_entries']:7d} ({v['fill_ratio']:.1f}x) ops {v['operations']:.2e}"
                  f" max col {v['max_column']}", file=sys.stderr)
            if "mumps" in v:
                mu = v["mumps"]
                print(f"{'':24s} MUMPS: dim {mu['dimension']} nnz {mu['nonzeros']} factor "
                      f"{mu['factor_entries_estimated']} ({mu['fill_ratio_estimated']:.1f}x) "
                      f"ops {mu['operations_estimated']:.2e}", file=sys.stderr)
    print(json.dumps({"benchmark": "kkt_structure", **res}))


if __name__ == "__main__":
    main()
