"""Exact NLP derivatives assembled node by node (for the compiled backend).

Left to itself, CasADi differentiates the whole mapped graph by seeding colour groups of
columns through every node function (forward-over-reverse for the Hessian): correct, but
the generated code holds 64-direction derivative copies of every function (23 MB, minutes
to compile) and is no faster than the SX virtual machine. Here each mapped node function
``y_k = F(x_k)`` is differentiated where it is small: its local Jacobian and the Hessian
of ``mu_k^T F`` in its local inputs ``x_k`` are SX functions mapped over the nodes, and
the global matrices are constant sparse products

    J_g = dG/dz + sum_j E_j blockdiag(J_F) D_j,
    H_L = d2/dz2 (lam_f f + lam^T G) + sum_j D_j^T blockdiag(H_F(E_j^T lam)) D_j,

where ``G(z, Y)`` is the constraint vector written with stand-in symbols ``Y_j`` for the
mapped outputs, ``E_j = dG/dY_j`` and ``D_j = dx/dz`` (the local inputs' selection of the
decision vector). This is exact when ``x`` is affine in ``z`` and ``G`` affine in ``Y``
with constant coefficients (checked; any call that fails the checks is inlined and
differentiated by CasADi as before).
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca

from clamber.jumper.formulation.terms import NodeCall


@dataclass(frozen=True)
class _Structured:
    call: NodeCall
    local: ca.MX  # (n_local x count) stacked per-node inputs, affine in z
    params: list  # remaining inputs (not depending on z), in the order of ``jac``
    D: ca.DM  # d vec(local) / dz
    jac: ca.Function  # (x_local, *params) -> J_F (n_out x n_local)
    hess: ca.Function  # (x_local, *params, mu) -> H of mu^T F (n_local x n_local)


def _constant(expr: ca.MX, symbols: list[ca.MX]) -> ca.DM | None:
    """``expr`` as a numeric matrix if it depends on none of ``symbols``, else None."""
    if any(ca.depends_on(expr, s) for s in symbols if s.numel()):
        return None
    return ca.Function("constant", [], [expr])()["o0"]


def _local_functions(call: NodeCall, z: ca.MX, made: dict):
    """Split ``call``'s arguments into per-node local inputs (depending on z) and the rest;
    the local derivative functions, shared by every call of the same layout (``made``)."""
    fn = call.fn
    if any(fn.size2_in(i) != 1 for i in range(fn.n_in())):
        return None
    local, params, xs, inputs, sym_params = [], [], [], [], []
    for i, a in enumerate(call.args):
        if ca.depends_on(a, z):
            local.append(ca.repmat(a, 1, call.count) if i in call.shared else a)
            xs.append(fn.size1_in(i))
            inputs.append(("x", len(xs) - 1))
        else:
            params.append(a)
            sym_params.append(ca.SX.sym(fn.name_in(i), fn.sparsity_in(i)))
            inputs.append(("p", len(sym_params) - 1))
    layout = (fn.name(), tuple(inputs))
    if layout in made:
        return ca.vertcat(*local), params, *made[layout]
    xl = ca.SX.sym("x", sum(xs))
    pieces = ca.vertsplit(xl, [0, *list(_cumsum(xs))])
    args = [pieces[k] if kind == "x" else sym_params[k] for kind, k in inputs]
    out = fn(*args)
    mu = ca.SX.sym("mu", fn.size1_out(0))
    J = ca.jacobian(out, xl)
    H, _ = ca.hessian(ca.dot(mu, out), xl)
    jac = ca.Function(f"{fn.name()}_jac", [xl, *sym_params], [J], {"cse": True})
    hess = ca.Function(f"{fn.name()}_hess", [xl, *sym_params, mu], [H], {"cse": True})
    made[layout] = (jac, hess)
    return ca.vertcat(*local), params, jac, hess


def _cumsum(sizes: list[int]):
    total = 0
    for s in sizes:
        total += s
        yield total


def _mapped(fn: ca.Function, count: int, args: list[ca.MX]) -> ca.MX:
    shared = [i for i, a in enumerate(args)
              if count > 1 and a.shape == fn.sparsity_in(i).shape]
    return fn.map(f"{fn.name()}_{count}", "serial", count, shared, [])(*args)


def _assemble(rest: ca.MX, pieces: list[tuple[ca.MX, ca.DM, ca.Sparsity, int, ca.DM]],
              upper: bool) -> ca.MX:
    """``rest + sum_j L_j blockdiag(B_j) R_j`` (then its upper triangle if ``upper``) as
    one constant sparse matrix times the stacked nonzeros of ``rest`` and every ``B_j``.

    ``pieces`` are (B_j mapped output, L_j, block pattern, count, R_j). The assembly
    matrix is found once, symbolically (every entry is linear in the nonzeros), so the
    evaluation is a single sparse product instead of chains of sparse intermediates.
    """
    v_rest = ca.SX.sym("rest", rest.nnz())
    total = ca.SX(rest.sparsity(), v_rest)
    symbols, values = [v_rest], [rest.nz[:]]
    for mapped, L, block, count, R in pieces:
        v = ca.SX.sym("block", block.nnz() * count)
        blocks = ca.SX(ca.diagcat(*([block] * count)), v)
        total = total + ca.mtimes([ca.SX(L), blocks, ca.SX(R)])
        symbols.append(v)
        values.append(mapped.nz[:])
    if upper:
        total = ca.triu(total)
    v_all = ca.vertcat(*symbols)
    S = ca.evalf(ca.jacobian(total.nz[:], v_all))
    return ca.MX(total.sparsity(), ca.mtimes(ca.MX(ca.sparsify(S)), ca.vertcat(*values)))


def nlp_functions(z: ca.MX, P: ca.MX, f: ca.MX, g: ca.MX,
                  calls: list[NodeCall]) -> dict[str, ca.Function]:
    """The functions IPOPT calls (CasADi's names and signatures), derivatives assembled."""
    Ys = [c.output for c in calls]
    structured, inlined, made = [], [], {}
    for c in calls:
        parts = _local_functions(c, z, made)
        D = None
        if parts is not None:
            D = _constant(ca.jacobian(ca.vec(parts[0]), z), [z, P, *Ys])
        if D is None:
            inlined.append(c)
        else:
            structured.append(_Structured(c, parts[0], parts[1], D, parts[2], parts[3]))
    # f uses the mapped calls through their full expressions (costs are small and few).
    every = [c.output for c in calls], [c.expression() for c in calls]
    f_full = ca.substitute([f], *every)[0]
    if inlined:
        g = ca.substitute([g], [c.output for c in inlined], [c.expression() for c in inlined])[0]
    E = {}
    for s in list(structured):
        Ej = _constant(ca.jacobian(g, s.call.output), [z, P, *Ys])
        if Ej is None:  # not affine in this call's output: inline it too
            structured.remove(s)
            g = ca.substitute([g], [s.call.output], [s.call.expression()])[0]
        else:
            E[id(s)] = Ej
    lam_f, lam_g = ca.MX.sym("lam_f"), ca.MX.sym("lam_g", g.numel())
    J_rest = ca.jacobian(g, z)
    H_rest, _ = ca.hessian(lam_f * f_full + ca.dot(lam_g, g), z)
    jac_pieces, hess_pieces = [], []
    for s in structured:
        c, Ej, count = s.call, E[id(s)], s.call.count
        J_F = _mapped(s.jac, count, [s.local, *s.params])
        jac_pieces.append((J_F, Ej, s.jac.sparsity_out(0), count, s.D))
        mu = ca.reshape(ca.mtimes(ca.MX(Ej.T), lam_g), c.fn.size1_out(0), count)
        H_F = _mapped(s.hess, count, [s.local, *s.params, mu])
        hess_pieces.append((H_F, s.D.T, s.hess.sparsity_out(0), count, s.D))
    J = _assemble(J_rest, jac_pieces, upper=False)
    H = _assemble(H_rest, hess_pieces, upper=True)
    # Put the mapped calls back in everywhere (G, J and H may still hold stand-ins).
    live = [c for c in calls if c not in inlined]
    g_full, J, H = ca.substitute([g, J, H], [c.output for c in live],
                                 [c.expression() for c in live])
    gamma = lam_f * f_full + ca.dot(lam_g, g_full)
    x, p = ["x", "p"], ["x", "p", "lam_f", "lam_g"]
    return {
        "nlp": ca.Function("nlp", [z, P], [f_full, g_full], x, ["f", "g"]),
        "nlp_f": ca.Function("nlp_f", [z, P], [f_full], x, ["f"]),
        "nlp_g": ca.Function("nlp_g", [z, P], [g_full], x, ["g"]),
        "nlp_grad_f": ca.Function("nlp_grad_f", [z, P], [f_full, ca.gradient(f_full, z)], x,
                                  ["f", "grad_f_x"]),
        "nlp_jac_g": ca.Function("nlp_jac_g", [z, P], [g_full, J], x, ["g", "jac_g_x"]),
        "nlp_hess_l": ca.Function("nlp_hess_l", [z, P, lam_f, lam_g], [H], p,
                                  ["triu_hess_gamma_x_x"]),
        "nlp_grad": ca.Function("nlp_grad", [z, P, lam_f, lam_g],
                                [f_full, g_full, ca.gradient(gamma, z), ca.gradient(gamma, P)],
                                p, ["f", "g", "grad_gamma_x", "grad_gamma_p"]),
    }
