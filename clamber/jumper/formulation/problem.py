"""Direct-collocation NLP of one periodic jump over the fixed five-phase schedule.

The problem is assembled from named terms (see each ``_term_*`` method), each a list of
constraint rows with symbolic bounds resolved from :class:`OptimizationSettings` at solve
time. Structure (node counts, collocation rule, safe-region row counts) is fixed at build;
everything numeric -- morphology, safe-region normals, torque and speed limits,
clearances, phase-duration bounds, weights -- is an NLP parameter or a bound, so one
build serves every morphology and every setting.

Coordinates are the centre-of-mass base (see :mod:`clamber.jumper.model`), so flight is
exactly ballistic under the trapezoidal rule. Accelerations are decision variables and
the manipulator equation is imposed at every node (no mass-matrix inversion). A catching
gripper is placed on the wall at its impact node; while attached, its pin holds at
position, velocity and acceleration level at every node, made consistent by projecting
each collocation step onto the pin (corrections along J^T, reported by the verifier).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import casadi as ca
import numpy as np

from clamber.jumper.formulation.layout import Layout, node_symbols
from clamber.jumper.model import NQ, NU, jumper_model
from clamber.jumper.morphology import N_PARAMETERS
from clamber.jumper.schedule import PHASES
from clamber.jumper.settings import OptimizationSettings

INF = np.inf
_CONTACT_INDEX = {"front": 0, "rear": 4}  # column of points(): p1 front, p5 rear
#: Typical magnitude of each variable block (per coordinate where a list), SI units.
_SCALES: dict[str, object] = {
    "dt": 0.005, "q": [0.1, 0.1, 1, 1, 1, 1], "qd": [1, 1, 10, 10, 10, 10],
    "qdd": [10, 10, 300, 300, 300, 300], "tau": 0.1, "f_front": 3.0, "f_rear": 3.0,
    "pos_correction_front": 1e-3, "pos_correction_rear": 1e-3,
    "vel_correction_front": 1e-2, "vel_correction_rear": 1e-2,
    "height": 0.1, "front_anchor": 0.1, "impulse_catch_front": 0.05,
    "impulse_settle_rear": 0.05, "impulse_settle_front": 0.05,
}


@dataclass
class Row:
    """A named group of constraint rows with bounds given as numbers or setting keys."""

    name: str
    expr: ca.SX
    lower: object
    upper: object


@dataclass(frozen=True)
class ProblemKey:
    nodes: tuple[int, int, int, int, int]
    collocation: str
    rows_front: int
    rows_rear: int


@dataclass
class JumperProblem:
    """A built NLP: layouts of variables, parameters and constraints, and the IPOPT solver."""

    key: ProblemKey
    variables: Layout
    parameters: Layout
    rows: list[Row]
    row_slices: dict[str, slice]
    w: ca.SX
    z: ca.SX
    scale: np.ndarray
    P: ca.SX
    g: ca.SX
    objective: ca.SX
    diagnostics: ca.Function = field(repr=False)
    build_time_s: float = 0.0  # graph plus every solver built so far [s]
    _solvers: dict = field(default_factory=dict, repr=False)

    @property
    def nodes(self) -> tuple[int, int, int, int, int]:
        return self.key.nodes

    def solver(self, warm: bool, max_iterations: int = 3000,
               tolerance: float = 1e-6) -> ca.Function:
        """IPOPT through CasADi on the scaled variables ``z = w / scale``.

        Built on first use for each (warm, max_iterations, tolerance) and reused.
        Feasibility is always held to 1e-6 in physical units, whatever ``tolerance``.
        """
        key = (warm, max_iterations, tolerance)
        if key not in self._solvers:
            opts = {
                "ipopt.print_level": 0,
                "print_time": False,
                "ipopt.sb": "yes",
                "ipopt.linear_solver": "mumps",
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
            if warm:
                opts.update({
                    "ipopt.mu_init": 1e-3,
                    "ipopt.bound_push": 1e-5,
                    "ipopt.bound_frac": 1e-5,
                })
            nlp = {"x": self.z, "p": self.P, "f": self.objective, "g": self.g}
            t0 = time.perf_counter()
            self._solvers[key] = ca.nlpsol("jumper", "ipopt", nlp, opts)
            self.build_time_s += time.perf_counter() - t0
        return self._solvers[key]

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
        values = {
            "foot_radius": s.foot_radius,
            # Path limits at the nodes carry margins so they hold between nodes too.
            "foot_clearance": s.foot_radius,  # a released foot starts at the wall: no margin
            "motor_radius": s.motor_radius + s.clearance_margin,
            "b_front": s.safe_region_front.b - s.force_margin * _row_norms(s.safe_region_front),
            "b_rear": s.safe_region_rear.b - s.force_margin * _row_norms(s.safe_region_rear),
            "cone_front": np.where(s.safe_region_front.b == 0, 0.0, INF),
            "cone_rear": np.where(s.safe_region_rear.b == 0, 0.0, INF),
            "torque_limit": s.torque_limit,
            "-torque_limit": -s.torque_limit,
            "-catch_approach_speed": -s.catch_approach_speed,
        }
        n = self.g.numel()
        lbg, ubg = np.zeros(n), np.zeros(n)
        for row in self.rows:
            sl = self.row_slices[row.name]
            size = sl.stop - sl.start
            for target, bound in ((lbg, row.lower), (ubg, row.upper)):
                v = values[bound] if isinstance(bound, str) else bound
                v = np.asarray(v, dtype=float).ravel()
                target[sl] = np.resize(v, size)
        return lbg, ubg

    def variable_bounds(self, s: OptimizationSettings) -> tuple[np.ndarray, np.ndarray]:
        lo = self.variables.pack({}, -INF)
        hi = self.variables.pack({}, INF)
        ang = s.joint_angle_limit
        for p, n in zip(PHASES, self.nodes, strict=True):
            pre = f"p{p.index}."
            for tag in ("q",):
                b = self.variables.blocks[pre + tag]
                rows = b.shape[0]
                lo_q = np.tile([-INF, -INF, -INF, -ang, -ang, -ang], rows)
                lo[b.slice] = lo_q
                hi[b.slice] = -lo_q
            b = self.variables.blocks[pre + "qd"]
            w_max = s.joint_speed_limit * (1 - s.speed_margin)
            v = np.tile([-INF, -INF, -INF] + [-w_max] * 3, b.shape[0])
            lo[b.slice], hi[b.slice] = v, -v
            for tag in ("tau", "mid.tau"):
                if pre + tag in self.variables:
                    b = self.variables.blocks[pre + tag]
                    lo[b.slice], hi[b.slice] = -s.torque_limit, s.torque_limit
            b = self.variables.blocks[pre + "dt"]
            lo[b.slice] = s.phase_duration_min[p.index - 1] / n
            hi[b.slice] = s.phase_duration_max[p.index - 1] / n
        b = self.variables.blocks["height"]
        lo[b.slice] = s.min_height_gain
        return lo, hi

    def evaluate(self, x: np.ndarray, params: np.ndarray) -> dict[str, np.ndarray]:
        """Constraint rows by name at a point ``x`` in physical units (for residual checks)."""
        g = np.array(self.diagnostics(np.asarray(x) / self.scale, params)).ravel()
        return {name: g[sl] for name, sl in self.row_slices.items()}


def _row_norms(region) -> np.ndarray:
    """Euclidean norm of each safe-region row (a force margin in [N] per row)."""
    return np.linalg.norm(region.A, axis=1)


def build_problem(nodes: tuple[int, int, int, int, int], collocation: str = "trapezoidal",
                  rows_front: int = 2, rows_rear: int = 2) -> JumperProblem:
    """Assemble the NLP graph (no solver yet; that is built lazily once)."""
    t0 = time.perf_counter()
    key = ProblemKey(tuple(nodes), collocation, rows_front, rows_rear)
    return _Builder(key).build(t0)


class _Builder:
    def __init__(self, key: ProblemKey) -> None:
        self.key = key
        self.model = jumper_model("com")
        self.hs = key.collocation == "hermite-simpson"
        self.var = Layout()
        self.par = Layout()
        self.rows: list[Row] = []

    # ---- variables ----------------------------------------------------------------------
    def _declare(self) -> None:
        for p, N in zip(PHASES, self.key.nodes, strict=True):
            pre = f"p{p.index}."
            n = N + 1
            # One copy of the phase's time step per interval, chained equal: a single
            # shared variable would be a dense column coupling the whole phase, which
            # costs the sparse factorization dearly; the chain keeps the KKT system banded.
            self.var.add(pre + "dt", N)
            self.var.add(pre + "q", n, NQ)
            self.var.add(pre + "qd", n, NQ)
            self.var.add(pre + "qdd", n, NQ)
            self.var.add(pre + "tau", n, NU)
            for c in p.contacts:
                self.var.add(pre + f"f_{c}", n, 2)
                # Projection multipliers keeping the pin exact at nodes 1..N (see _phase_terms).
                self.var.add(pre + f"pos_correction_{c}", N, 2)
                self.var.add(pre + f"vel_correction_{c}", N, 2)
            if self.hs:
                self.var.add(pre + "mid.qdd", N, NQ)
                self.var.add(pre + "mid.tau", N, NU)
                for c in p.contacts:
                    self.var.add(pre + f"mid.f_{c}", N, 2)
        self.var.add("height")  # H: rise of every point per jump [m]
        self.var.add("front_anchor")  # y of the front catch above the rear catch [m]
        self.var.add("impulse_catch_front", 2)  # Lambda_1 at the 3->4 catch [N s]
        self.var.add("impulse_settle_rear", 2)  # Lambda_5 at the 4->5 catch [N s]
        self.var.add("impulse_settle_front", 2)  # the pinned front gripper's share [N s]
        self.par.add("morphology", N_PARAMETERS)
        self.par.add("torque_rate_weight")
        self.par.add("torque_limit")
        self.par.add("motor_slope")
        self.par.add("foot_radius")
        self.par.add("A_front", self.key.rows_front, 2)
        self.par.add("A_rear", self.key.rows_rear, 2)
        # The solver sees z = w / scale, each block scaled to its typical magnitude, so that
        # IPOPT's steps and tolerances mean the same for angles, accelerations and time steps.
        self.scale = self.var.pack({}, 1.0)
        for name, block in self.var.blocks.items():
            tag = name.split(".")[-1] if name.startswith("p") and "." in name else name
            self.scale[block.slice] = np.resize(_SCALES.get(tag, 1.0), block.size)
        self.z = ca.SX.sym("z", self.var.size)
        self.w = self.z * ca.DM(self.scale)
        self.P = ca.SX.sym("P", self.par.size)
        self.mp = self.P[self.par.blocks["morphology"].slice]
        self.A = {
            c: ca.reshape(self.P[self.par.blocks[f"A_{c}"].slice], 2, -1).T
            for c in ("front", "rear")
        }

    def _nodes(self, pidx: int, tag: str) -> list[ca.SX]:
        return node_symbols(self.var, self.w, f"p{pidx}.{tag}")

    def _scalar(self, name: str) -> ca.SX:
        return self.w[self.var.blocks[name].slice]

    def add(self, name: str, expr, lower, upper) -> None:
        self.rows.append(Row(name, ca.vertcat(*expr) if isinstance(expr, list) else expr,
                             lower, upper))

    # ---- kinematic helpers -----------------------------------------------------------
    def foot(self, q, c):
        return self.model.points(q, self.mp)[:, _CONTACT_INDEX[c]]

    def foot_velocity(self, q, qd, c):
        return self.model.contact_jacobian(c)(q, self.mp) @ qd

    # ---- terms ---------------------------------------------------------------------------
    def _term_dynamics(self, q, qd, qdd, tau, forces: dict) -> ca.SX:
        """Manipulator equation M qdd + h = B tau + sum J_i^T f_i at one instant."""
        m = self.model
        rhs = m.B @ tau
        for c, f in forces.items():
            rhs = rhs + m.contact_jacobian(c)(q, self.mp).T @ f
        return m.inverse_dynamics(q, qd, qdd, self.mp) - rhs

    def _term_contact_acceleration(self, q, qd, qdd, c) -> ca.SX:
        """A pinned gripper does not accelerate: J qdd + dJ/dt qd = 0 (index-1 pin).

        Holding the pin at acceleration level at every node fixes each node's contact
        force uniquely (a velocity-level pin under the trapezoidal rule leaves a zigzag
        of forces undetermined, which makes the NLP degenerate).
        """
        m = self.model
        return m.contact_jacobian(c)(q, self.mp) @ qdd + m.contact_jdot_qd(c)(q, qd, self.mp)

    def _phase_terms(self, p) -> None:
        i = p.index
        q, qd, qdd, tau = (self._nodes(i, t) for t in ("q", "qd", "qdd", "tau"))
        f = {c: self._nodes(i, f"f_{c}") for c in p.contacts}
        N = self.key.nodes[i - 1]
        steps = [self._scalar(f"p{i}.dt")[k] for k in range(N)]
        self.add(f"p{i}.uniform_step", [steps[k + 1] - steps[k] for k in range(N - 1)], 0.0, 0.0)
        dyn, acc, safe, clear = [], [], {c: [] for c in p.contacts}, []
        defects = []
        for k in range(N + 1):
            dyn.append(self._term_dynamics(q[k], qd[k], qdd[k], tau[k],
                                           {c: f[c][k] for c in p.contacts}))
            for c in p.contacts:
                acc.append(self._term_contact_acceleration(q[k], qd[k], qdd[k], c))
                safe[c].append(self.A[c] @ f[c][k])
            P = self.model.points(q[k], self.mp)
            clear.append(P[0, 1:4].T)  # shoulder, spine, hip x
        free = [c for c in ("front", "rear") if c not in p.contacts]
        foot_clear = [self.foot(q[k], c)[0] for k in range(N + 1) for c in free]
        if self.hs:
            mqdd, mtau = self._nodes(i, "mid.qdd"), self._nodes(i, "mid.tau")
            mf = {c: self._nodes(i, f"mid.f_{c}") for c in p.contacts}
        # Pins: exact position and velocity at nodes 1..N (node 0 is held by continuity, an
        # impact or periodicity). Pinning at position, velocity and acceleration level over-
        # determines the discrete motion, so each collocation step is projected onto the
        # pin along J^T (Posa et al., 2016): corrections J^T gamma, J^T nu are NLP variables
        # and vanish as the grid is refined; verify.py reports their size.
        anchors = {c: self._anchor(i, c) for c in p.contacts}
        corr_q = [0] * N
        corr_v = [0] * N
        pins = []
        for c in p.contacts:
            gam = self._nodes(i, f"pos_correction_{c}")
            nu = self._nodes(i, f"vel_correction_{c}")
            for k in range(N):
                J = self.model.contact_jacobian(c)(q[k + 1], self.mp)
                corr_q[k] = corr_q[k] + J.T @ gam[k]
                corr_v[k] = corr_v[k] + J.T @ nu[k]
                pins.append(self.foot(q[k + 1], c) - anchors[c])
                pins.append(self.foot_velocity(q[k + 1], qd[k + 1], c))
        if pins:
            self.add(f"p{i}.pin", pins, 0.0, 0.0)
        for k in range(N):
            h = steps[k]
            if not self.hs:
                # Trapezoidal rule on q (velocity) and qd (acceleration).
                defects.append(q[k + 1] - q[k] - 0.5 * h * (qd[k] + qd[k + 1]) - corr_q[k])
                defects.append(qd[k + 1] - qd[k] - 0.5 * h * (qdd[k] + qdd[k + 1]) - corr_v[k])
                continue
            # Hermite-Simpson (separated form): cubic state, midpoint collocation.
            qm = 0.5 * (q[k] + q[k + 1]) + h / 8 * (qd[k] - qd[k + 1])
            qdm = 0.5 * (qd[k] + qd[k + 1]) + h / 8 * (qdd[k] - qdd[k + 1])
            defects.append(q[k + 1] - q[k] - h / 6 * (qd[k] + 4 * qdm + qd[k + 1]) - corr_q[k])
            defects.append(
                qd[k + 1] - qd[k] - h / 6 * (qdd[k] + 4 * mqdd[k] + qdd[k + 1]) - corr_v[k]
            )
            dyn.append(self._term_dynamics(qm, qdm, mqdd[k], mtau[k],
                                           {c: mf[c][k] for c in p.contacts}))
            for c in p.contacts:
                acc.append(self._term_contact_acceleration(qm, qdm, mqdd[k], c))
                safe[c].append(self.A[c] @ mf[c][k])
        self.add(f"p{i}.collocation", defects, 0.0, 0.0)
        self.add(f"p{i}.dynamics", dyn, 0.0, 0.0)
        if acc:
            self.add(f"p{i}.contact_acceleration", acc, 0.0, 0.0)
        for c in p.contacts:
            self.add(f"p{i}.safe_region_{c}", safe[c], -INF, f"b_{c}")
        self.add(f"p{i}.joint_clearance", clear, "motor_radius", INF)
        if foot_clear:
            self.add(f"p{i}.foot_clearance", foot_clear, "foot_clearance", INF)
        # Optional motor line |tau + k w| <= tau_max (k = 0 leaves the plain bound).
        slope = self.P[self.par.blocks["motor_slope"].slice]
        line = [tau[k] + slope * qd[k][3:6] for k in range(N + 1)]
        self.add(f"p{i}.motor_line", line, "-torque_limit", "torque_limit")

    def _anchor(self, i: int, c: str) -> ca.SX:
        """Where gripper ``c`` is pinned during phase ``i`` (rear catch at y = 0)."""
        H = self._scalar("height")
        y_front = self._scalar("front_anchor")
        x = self.P[self.par.blocks["foot_radius"].slice]
        y = {("front", 1): y_front - H, ("rear", 1): -H, ("rear", 2): -H,
             ("front", 4): y_front, ("front", 5): y_front, ("rear", 5): 0.0}[(c, i)]
        return ca.vertcat(x, y)

    def _term_pins(self) -> None:
        """Catching grippers land on the wall (a disc of radius r_foot) at their anchors.

        The rear catch is the vertical gauge (y = 0). A catch also stops the gripper
        (impact term); from then on the pin is held at acceleration level, so later
        positions and velocities follow without constraining anything twice.
        """
        y_front = self._scalar("front_anchor")
        for name, i, c, y in (("front_catch", 4, "front", y_front), ("rear_catch", 5, "rear", 0.0)):
            pos = self.foot(self._nodes(i, "q")[0], c)
            self.add(f"pin.{name}.x", pos[0], "foot_radius", "foot_radius")
            self.add(f"pin.{name}.y", pos[1] - y, 0.0, 0.0)

    def _term_transitions(self) -> None:
        """Continuity across phases; impacts at the two catches."""
        last = {i: self.key.nodes[i - 1] for i in range(1, 6)}
        m = self.model
        for i in range(1, 5):
            qa, qb = self._nodes(i, "q")[last[i]], self._nodes(i + 1, "q")[0]
            ta, tb = self._nodes(i, "tau")[last[i]], self._nodes(i + 1, "tau")[0]
            self.add(f"continuity.q{i}{i + 1}", qb - qa, 0.0, 0.0)
            self.add(f"continuity.tau{i}{i + 1}", tb - ta, 0.0, 0.0)
            vm, vp = self._nodes(i, "qd")[last[i]], self._nodes(i + 1, "qd")[0]
            if i in (1, 2):
                self.add(f"continuity.qd{i}{i + 1}", vp - vm, 0.0, 0.0)
                continue
            q = qb
            # The catching gripper must be moving into the wall, not grazing it, so that a
            # perturbed jump still makes contact (a margin for the real robot).
            catcher = "front" if i == 3 else "rear"
            self.add(f"impact.{'catch_front' if i == 3 else 'catch_rear'}.approach",
                     self.foot_velocity(q, vm, catcher)[0], -INF, "-catch_approach_speed")
            M = m.mass_matrix(q, self.mp)
            J1 = m.jacobian_front(q, self.mp)
            J5 = m.jacobian_rear(q, self.mp)
            if i == 3:  # front gripper catches: M (qd+ - qd-) = J1^T Lambda_1, J1 qd+ = 0
                L1 = self.w[self.var.blocks["impulse_catch_front"].slice]
                self.add("impact.catch_front.momentum", M @ (vp - vm) - J1.T @ L1, 0.0, 0.0)
                self.add("impact.catch_front.stop", J1 @ vp, 0.0, 0.0)
                self.add("impact.catch_front.cone", self.A["front"] @ L1, -INF, "cone_front")
            else:  # rear catches while the front is pinned: both stop
                L5 = self.w[self.var.blocks["impulse_settle_rear"].slice]
                L1b = self.w[self.var.blocks["impulse_settle_front"].slice]
                self.add("impact.catch_rear.momentum",
                         M @ (vp - vm) - J5.T @ L5 - J1.T @ L1b, 0.0, 0.0)
                self.add("impact.catch_rear.stop", ca.vertcat(J5 @ vp, J1 @ vp), 0.0, 0.0)
                self.add("impact.catch_rear.cone", self.A["rear"] @ L5, -INF, "cone_rear")
                self.add("impact.catch_rear.cone_front", self.A["front"] @ L1b, -INF, "cone_front")

    def _term_periodicity(self) -> None:
        """Last state equals first state raised by H (and the same torque)."""
        H = self._scalar("height")
        N5 = self.key.nodes[4]
        q0, qe = self._nodes(1, "q")[0], self._nodes(5, "q")[N5]
        shift = ca.vertcat(0, H, 0, 0, 0, 0)
        self.add("periodic.q", qe - q0 - shift, 0.0, 0.0)
        self.add("periodic.qd", self._nodes(5, "qd")[N5] - self._nodes(1, "qd")[0], 0.0, 0.0)
        self.add("periodic.tau", self._nodes(5, "tau")[N5] - self._nodes(1, "tau")[0], 0.0, 0.0)

    def _objective(self) -> ca.SX:
        """Maximize climbing speed H / T, plus a small penalty on torque changes."""
        H = self._scalar("height")
        period = sum(N * self._scalar(f"p{i}.dt")[0] for i, N in enumerate(self.key.nodes, 1))
        taus = []
        for i in range(1, 6):
            taus.extend(self._nodes(i, "tau"))
        rate = sum(ca.sumsqr(taus[k + 1] - taus[k]) for k in range(len(taus) - 1))
        wt = self.P[self.par.blocks["torque_rate_weight"].slice]
        tl = self.P[self.par.blocks["torque_limit"].slice]
        return -H / period + wt * rate / (tl**2 * len(taus))

    def build(self, t0: float) -> JumperProblem:
        self._declare()
        for p in PHASES:
            self._phase_terms(p)
        self._term_pins()
        self._term_transitions()
        self._term_periodicity()
        exprs, slices, start = [], {}, 0
        for r in self.rows:
            e = ca.vec(r.expr) if r.expr.shape[1] != 1 else r.expr
            exprs.append(e)
            slices[r.name] = slice(start, start + e.numel())
            start += e.numel()
        g = ca.vertcat(*exprs)
        obj = self._objective()
        diag = ca.Function("constraints", [self.z, self.P], [g])
        return JumperProblem(
            key=self.key, variables=self.var, parameters=self.par, rows=self.rows,
            row_slices=slices, w=self.w, z=self.z, scale=self.scale, P=self.P, g=g,
            objective=obj, diagnostics=diag,
            build_time_s=time.perf_counter() - t0,
        )
