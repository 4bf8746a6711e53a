"""Direct-collocation NLP of one periodic jump over the fixed five-phase schedule.

:func:`build_problem` declares the decision variables and stacks the term groups of
:data:`DEFAULT_TERMS` (one module each: :mod:`.dynamics`, :mod:`.contacts`,
:mod:`.impacts`, :mod:`.limits`, :mod:`.periodicity`, :mod:`.objective`), each returning
named constraint rows with their bounds or named costs (see :mod:`.terms` for adding
your own). Structure (node counts, collocation rule, safe-region row counts, the term
groups) is fixed at build; everything numeric -- morphology, safe-region normals, torque
and speed limits, clearances, phase-duration bounds, weights -- is an NLP parameter or a
bound, so one build serves every morphology and every setting.

Coordinates are the centre-of-mass base (see :mod:`clamber.jumper.model`), so flight is
exactly ballistic under the trapezoidal rule. Per-node terms are small CasADi functions
mapped over the nodes, so the graph (and the generated code of the compiled backend,
see :mod:`.backends`) is the size of one node, whatever the grid.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import casadi as ca
import numpy as np

from clamber.exceptions import ConfigError
from clamber.jumper.formulation import backends
from clamber.jumper.formulation.assembly import nlp_functions
from clamber.jumper.formulation.contacts import contacts
from clamber.jumper.formulation.dynamics import dynamics
from clamber.jumper.formulation.impacts import catches, transitions
from clamber.jumper.formulation.layout import Layout
from clamber.jumper.formulation.limits import limits, variable_bounds
from clamber.jumper.formulation.objective import objective
from clamber.jumper.formulation.periodicity import periodicity
from clamber.jumper.formulation.terms import Constraint, Context, Cost, TermGroup
from clamber.jumper.model import NQ, NU, jumper_model
from clamber.jumper.morphology import N_PARAMETERS
from clamber.jumper.schedule import PHASES
from clamber.jumper.settings import OptimizationSettings

#: The longest one IPOPT solve may run [s]: a bound on every solve (IPOPT then stops with
#: its wall-time status, a non-converged result like running out of iterations).
MAX_WALL_TIME_S = 3600.0
#: IPOPT's per-iteration output when clamber's logger shows debug messages (``-v``).
VERBOSE_PRINT_LEVEL = 5

#: The paper's formulation, in stacking order (rows are numbered in this order).
DEFAULT_TERMS: tuple[TermGroup, ...] = (
    dynamics, contacts, limits, catches, transitions, periodicity, objective,
)
#: Typical magnitude of each variable block (per coordinate where a list), SI units.
_SCALES: dict[str, object] = {
    "dt": 0.005, "q": [0.1, 0.1, 1, 1, 1, 1], "qd": [1, 1, 10, 10, 10, 10],
    "qdd": [10, 10, 300, 300, 300, 300], "tau": 0.1, "f_front": 3.0, "f_rear": 3.0,
    "pos_correction_front": 1e-3, "pos_correction_rear": 1e-3,
    "vel_correction_front": 1e-2, "vel_correction_rear": 1e-2,
    "height": 0.1, "front_anchor": 0.1, "impulse_catch_front": 0.05,
    "impulse_settle_rear": 0.05, "impulse_settle_front": 0.05,
}


@dataclass(frozen=True)
class ProblemKey:
    """Everything that fixes the NLP's structure (numbers enter as parameters/bounds)."""

    nodes: tuple[int, int, int, int, int]
    collocation: str
    rows_front: int
    rows_rear: int
    terms: tuple[TermGroup, ...] = DEFAULT_TERMS
    motor_line_rows: bool = True  # False: the torque bounds alone (no motor slope)


@dataclass
class JumperProblem:
    """A built NLP: layouts of variables, parameters and constraint rows, and its solvers."""

    key: ProblemKey
    variables: Layout
    parameters: Layout
    rows: list[Constraint]
    costs: list[Cost]
    row_slices: dict[str, slice]
    z: ca.MX
    scale: np.ndarray
    P: ca.MX
    g: ca.MX
    objective: ca.MX
    diagnostics: ca.Function = field(repr=False)
    build_time_s: float = 0.0  # graph plus every solver built so far [s]
    _solvers: dict = field(default_factory=dict, repr=False)
    _library: dict = field(default_factory=dict, repr=False)
    _stand_ins: tuple = field(default=(), repr=False)

    @property
    def nodes(self) -> tuple[int, int, int, int, int]:
        return self.key.nodes

    def backend_used(self, backend: str) -> str:
        """The backend that ``backend`` resolves to here ('compiled' needs a C compiler)."""
        return backends.resolve(backend)

    def solver(self, warm: bool, max_iterations: int = 3000, tolerance: float = 1e-6,
               backend: str = "compiled", warm_bound_push: float = 1e-2,
               mumps_scaling: int = 77, fast_steps: bool = False) -> ca.Function:
        """IPOPT through CasADi on the scaled variables ``z = w / scale``.

        Built on first use for each (warm, max_iterations, tolerance, backend,
        warm_bound_push, mumps_scaling, fast_steps) and reused; the compiled NLP functions are built
        once per problem (and cached on disk across processes). Feasibility is always held
        to 1e-6 in physical units.
        """
        used = backends.resolve(backend)
        verbose = logging.getLogger("clamber").isEnabledFor(logging.DEBUG)
        key = (warm, max_iterations, tolerance, used, warm_bound_push if warm else None,
               mumps_scaling, fast_steps, verbose)
        if key not in self._solvers:
            opts = self.ipopt_options(warm, max_iterations, tolerance, warm_bound_push,
                                      mumps_scaling, fast_steps, verbose)
            self._solvers[key] = self.build_solver(opts, used)
        return self._solvers[key]

    @staticmethod
    def ipopt_options(warm: bool, max_iterations: int = 3000, tolerance: float = 1e-6,
                      warm_bound_push: float = 1e-2, mumps_scaling: int = 77,
                      fast_steps: bool = False, verbose: bool = False) -> dict:
        """The IPOPT options of :meth:`solver` (CasADi's ``ipopt.`` prefix); ``verbose``:
        IPOPT prints its iterations."""
        opts = {
            "ipopt.print_level": VERBOSE_PRINT_LEVEL if verbose else 0,
            "print_time": False,
            "ipopt.sb": "yes",
            "ipopt.max_wall_time": MAX_WALL_TIME_S,
            "ipopt.linear_solver": "mumps",
            # MUMPS's own scaling of each KKT matrix: IPOPT's default 77 (automatic),
            # or 0 (none), 1.5x faster for refinement (OptimizationSettings.mumps_scaling).
            "ipopt.mumps_scaling": mumps_scaling,
            "ipopt.max_iter": max_iterations,
            # Climbing speed is O(1) m/s while the residuals are O(1) too: weighting the
            # objective 10x keeps IPOPT from collapsing to a feasible standstill first
            # (measured: 290 -> 170 iterations for the nominal coarse solve).
            "ipopt.obj_scaling_factor": 10.0,
            "ipopt.tol": tolerance,
            "ipopt.constr_viol_tol": 1e-6,
            "ipopt.acceptable_tol": 1e-4,
            "ipopt.acceptable_iter": 10,
        }
        if fast_steps:
            # One backsolve per step, no residual check (OptimizationSettings
            # .fast_step_computation): fewer backsolves per iteration.
            opts["ipopt.fast_step_computation"] = "yes"
        if warm:
            # A start near the optimum: a small barrier parameter, and the start kept
            # close to its bounds (warm_bound_push; 1e-2 cut the coarse iterations
            # by 30 % against 1e-5, see docs/results/jumper_trajopt.md).
            opts.update({
                "ipopt.mu_init": 1e-3,
                "ipopt.bound_push": warm_bound_push,
                "ipopt.bound_frac": warm_bound_push,
            })
        return opts

    def build_solver(self, opts: dict, backend: str = "compiled") -> ca.Function:
        """A new IPOPT instance with these options (not cached: :meth:`solver` caches);
        for diagnostics with extra options, e.g. IPOPT's timing statistics."""
        used = backends.resolve(backend)
        t0 = time.perf_counter()
        nlp = {"x": self.z, "p": self.P, "f": self.objective, "g": self.g}
        if used == "compiled":
            if "path" not in self._library:
                self._library["path"] = backends.compiled_library(nlp, self.nlp_functions)
            solver = ca.nlpsol("jumper", "ipopt", str(self._library["path"]), opts)
        else:
            solver = backends.reference_solver(nlp, opts)
        self.build_time_s += time.perf_counter() - t0
        return solver

    def nlp_functions(self) -> dict[str, ca.Function]:
        """IPOPT's functions with node-by-node derivatives (see :mod:`.assembly`)."""
        g, f, calls = self._stand_ins
        return nlp_functions(self.z, self.P, f, g, calls)

    # ---- numeric data for a solve ------------------------------------------------------
    def parameter_vector(self, morph_params: np.ndarray, s: OptimizationSettings) -> np.ndarray:
        k = s.torque_limit / s.no_load_speed if s.no_load_speed > 0 else 0.0
        return self.parameters.pack({
            "morphology": morph_params,
            "torque_rate_weight": [s.torque_rate_weight],
            "torque_limit": [s.torque_limit],
            "motor_slope": [k],
            "foot_radius": [s.foot_radius],
            "A_front": s.safe_region_front.A,
            "A_rear": s.safe_region_rear.A,
        })

    def constraint_bounds(self, s: OptimizationSettings) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds of every constraint row for these settings."""
        n = self.g.numel()
        lbg, ubg = np.zeros(n), np.zeros(n)
        for row in self.rows:
            sl = self.row_slices[row.name]
            lbg[sl], ubg[sl] = row.resolve(s, sl.stop - sl.start)
        return lbg, ubg

    def variable_bounds(self, s: OptimizationSettings) -> tuple[np.ndarray, np.ndarray]:
        """Simple bounds on the decision vector (see :func:`.limits.variable_bounds`)."""
        return variable_bounds(self.variables, self.nodes, s)

    def evaluate(self, x: np.ndarray, params: np.ndarray) -> dict[str, np.ndarray]:
        """Constraint rows by name at a point ``x`` in physical units (for residual checks)."""
        g = np.array(self.diagnostics(np.asarray(x) / self.scale, params)).ravel()
        return {name: g[sl] for name, sl in self.row_slices.items()}


def declare_variables(nodes: tuple[int, ...], hermite_simpson: bool) -> Layout:
    """The decision vector's named blocks (physical units; see ``_SCALES`` for magnitudes)."""
    var = Layout()
    for p, N in zip(PHASES, nodes, strict=True):
        pre = f"p{p.index}."
        n = N + 1
        var.add(pre + "dt", N)  # one copy per interval, chained equal (see .dynamics)
        var.add(pre + "q", n, NQ)
        var.add(pre + "qd", n, NQ)
        var.add(pre + "qdd", n, NQ)
        var.add(pre + "tau", n, NU)
        for c in p.contacts:
            var.add(pre + f"f_{c}", n, 2)
            # Projection multipliers keeping the pin exact at nodes 1..N (see .dynamics).
            var.add(pre + f"pos_correction_{c}", N, 2)
            var.add(pre + f"vel_correction_{c}", N, 2)
        if hermite_simpson:
            var.add(pre + "mid.qdd", N, NQ)
            var.add(pre + "mid.tau", N, NU)
            for c in p.contacts:
                var.add(pre + f"mid.f_{c}", N, 2)
    var.add("height")  # H: rise of every point per jump [m]
    var.add("front_anchor")  # y of the front catch above the rear catch [m]
    var.add("impulse_catch_front", 2)  # Lambda_1 at the 3->4 catch [N s]
    var.add("impulse_settle_rear", 2)  # Lambda_5 at the 4->5 catch [N s]
    var.add("impulse_settle_front", 2)  # the pinned front gripper's share [N s]
    return var


def declare_parameters(rows_front: int, rows_rear: int) -> Layout:
    par = Layout()
    par.add("morphology", N_PARAMETERS)
    par.add("torque_rate_weight")
    par.add("torque_limit")
    par.add("motor_slope")
    par.add("foot_radius")
    par.add("A_front", rows_front, 2)
    par.add("A_rear", rows_rear, 2)
    return par


def build_problem(nodes: tuple[int, int, int, int, int], collocation: str = "trapezoidal",
                  rows_front: int = 2, rows_rear: int = 2,
                  terms: Sequence[TermGroup] = DEFAULT_TERMS,
                  motor_line_rows: bool = True) -> JumperProblem:
    """Assemble the NLP graph from the term groups (solvers are built lazily, once).

    ``motor_line_rows`` False leaves the motor-line rows out (:func:`.limits.limits`):
    only for a zero motor slope, where they repeat the torque bounds.
    """
    t0 = time.perf_counter()
    key = ProblemKey(tuple(nodes), collocation, rows_front, rows_rear, tuple(terms),
                     motor_line_rows)
    hs = collocation == "hermite-simpson"
    var = declare_variables(key.nodes, hs)
    par = declare_parameters(rows_front, rows_rear)
    # The solver sees z = w / scale, each block scaled to its typical magnitude, so that
    # IPOPT's steps and tolerances mean the same for angles, accelerations and time steps.
    scale = var.pack({}, 1.0)
    for name, block in var.blocks.items():
        tag = name.split(".")[-1] if name.startswith("p") and "." in name else name
        scale[block.slice] = np.resize(_SCALES.get(tag, 1.0), block.size)
    z = ca.MX.sym("z", var.size)
    P = ca.MX.sym("P", par.size)
    ctx = Context(model=jumper_model("com"), variables=var, parameters=par,
                  nodes_per_phase=key.nodes, hermite_simpson=hs, w=z * ca.DM(scale), P=P,
                  motor_line_rows=motor_line_rows)
    rows: list[Constraint] = []
    costs: list[Cost] = []
    for group in key.terms:
        for term in group(ctx):
            if isinstance(term, Constraint):
                rows.append(term)
            elif isinstance(term, Cost):
                costs.append(term)
            else:
                raise ConfigError(f"term group {getattr(group, '__name__', group)!r} returned "
                                  f"{type(term).__name__}; expected Constraint or Cost")
    exprs, slices, start = [], {}, 0
    for r in rows:
        if r.name in slices:
            raise ConfigError(f"constraint rows {r.name!r} declared twice")
        e = ca.vec(r.expr)
        exprs.append(e)
        slices[r.name] = slice(start, start + e.numel())
        start += e.numel()
    for c in costs:
        if c.expr.numel() != 1:
            raise ConfigError(f"cost {c.name!r} must be a scalar, got shape {c.expr.shape}")
    g_stand_in = ca.vertcat(*exprs)
    f_stand_in = sum((c.expr for c in costs), ca.MX(0))
    # The terms wrote mapped node functions as stand-in symbols; put the calls in.
    g, obj = ca.substitute([g_stand_in, f_stand_in], [c.output for c in ctx.calls],
                           [c.expression() for c in ctx.calls])
    return JumperProblem(
        key=key, variables=var, parameters=par, rows=rows, costs=costs, row_slices=slices,
        z=z, scale=scale, P=P, g=g, objective=obj,
        diagnostics=ca.Function("constraints", [z, P], [g]),
        build_time_s=time.perf_counter() - t0,
        _stand_ins=(g_stand_in, f_stand_in, list(ctx.calls)),
    )
