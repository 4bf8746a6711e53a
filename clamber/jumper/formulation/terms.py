"""The term-group interface: what a formulation term sees and what it returns.

A *term group* is any callable ``group(ctx) -> iterable of Constraint | Cost``. It reads
the decision variables and parameters through the :class:`Context` (named, never by
index stride) and returns named constraint rows with their bounds, or cost terms that
are added to the objective. :func:`clamber.jumper.formulation.problem.build_problem`
stacks the groups in order; the default formulation is
:data:`clamber.jumper.formulation.problem.DEFAULT_TERMS`.

A user term, e.g. a soft preference for a straight spine and a hard hip range::

    import casadi as ca
    from clamber.jumper.formulation import Constraint, Cost, DEFAULT_TERMS

    def spine_terms(ctx):
        spine = ca.horzcat(*(ctx.nodes(i, "q")[4, :] for i in ctx.phases))
        hip = ca.horzcat(*(ctx.nodes(i, "q")[3, :] for i in ctx.phases))
        return [Cost("straight_spine", 1e-3 * ca.sumsqr(spine)),
                Constraint("hip_range", ca.vec(hip), -1.0, 1.0)]   # [rad]

    sol = solve(morphology, settings, "coarse", terms=DEFAULT_TERMS + (spine_terms,))

Bounds are numbers, arrays (one per row, or one node's rows, repeated for every node)
or functions of the :class:`~clamber.jumper.settings.OptimizationSettings`, evaluated at
every solve, so one build serves every setting. Terms add rows and costs, never
variables, so solutions of any term set share the variable layout (and interpolate onto
each other). Nonlinear per-node expressions go through :meth:`Context.map` (a small
function mapped over the nodes) so the compiled backend differentiates them node by
node. A new term set is a new structure: the compiled backend generates and compiles its
code once (about half a minute), so ``backend="reference"`` suits quick experiments.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import casadi as ca
import numpy as np

from clamber.exceptions import ConfigError
from clamber.jumper.formulation.layout import Layout
from clamber.jumper.model import JumperModel
from clamber.jumper.schedule import PHASES
from clamber.jumper.settings import OptimizationSettings

#: A bound: a number, one value per row, or a function of the settings giving either.
Bound = float | np.ndarray | Callable[[OptimizationSettings], float | np.ndarray]


@dataclass(frozen=True)
class Constraint:
    """Named constraint rows ``lower <= expr <= upper`` (``expr`` is flattened column-wise)."""

    name: str
    expr: ca.MX
    lower: Bound
    upper: Bound

    def resolve(self, settings: OptimizationSettings, size: int) -> tuple[np.ndarray, np.ndarray]:
        """Numeric (lower, upper) arrays of ``size`` rows for these settings."""
        out = []
        for bound in (self.lower, self.upper):
            value = bound(settings) if callable(bound) else bound
            value = np.asarray(value, dtype=float).ravel()
            if value.size == 0 or size % value.size:
                raise ConfigError(f"rows {self.name!r}: {value.size} bounds for {size} rows")
            out.append(np.resize(value, size))  # one node's bounds repeat for every node
        return out[0], out[1]


@dataclass(frozen=True)
class Cost:
    """A named scalar added to the objective (which is minimized), in units of m/s."""

    name: str
    expr: ca.MX


TermGroup = Callable[["Context"], Iterable[Constraint | Cost]]


@dataclass(frozen=True)
class NodeCall:
    """One function mapped over nodes: ``output = fn.map(count)(*args)``.

    ``output`` is a stand-in symbol the terms use; the problem substitutes the mapped call
    (reference backend) or differentiates it node by node (compiled backend).
    """

    fn: ca.Function
    count: int
    args: tuple[ca.MX, ...]
    shared: tuple[int, ...]
    output: ca.MX

    def expression(self) -> ca.MX:
        mapped = self.fn.map(f"{self.fn.name()}_{self.count}", "serial", self.count,
                             list(self.shared), [])
        return mapped(*self.args)


@dataclass(frozen=True)
class Context:
    """Symbolic views of one NLP for term groups.

    ``w`` is the decision vector in physical units (SI); every block is reached by name.
    Node blocks are (dimension x nodes) matrices: column k is node k of the phase.
    """

    model: JumperModel
    variables: Layout
    parameters: Layout
    nodes_per_phase: tuple[int, int, int, int, int]
    hermite_simpson: bool
    w: ca.MX
    P: ca.MX
    calls: list[NodeCall] = field(default_factory=list)
    #: False: the motor-line rows are left out (they repeat the torque bounds when the
    #: motor slope is 0, see ``OptimizationSettings.drop_duplicate_rows``).
    motor_line_rows: bool = True

    @property
    def phases(self) -> tuple[int, ...]:
        """Phase indices 1..5 (see :data:`clamber.jumper.schedule.PHASES`)."""
        return tuple(p.index for p in PHASES)

    def intervals(self, phase: int) -> int:
        """Number of collocation intervals N of a phase (it has N + 1 nodes)."""
        return self.nodes_per_phase[phase - 1]

    def nodes(self, phase: int, name: str) -> ca.MX:
        """Block ``p{phase}.{name}`` as a (dimension x count) matrix, one column per node."""
        b = self.variables.blocks[f"p{phase}.{name}"]
        count, dim = b.shape if len(b.shape) == 2 else (b.shape[0], 1)
        return ca.reshape(self.w[b.slice], dim, count)

    def has(self, phase: int, name: str) -> bool:
        return f"p{phase}.{name}" in self.variables

    def steps(self, phase: int) -> ca.MX:
        """The phase's time step copies, a (1 x N) row [s]."""
        return self.nodes(phase, "dt")

    def variable(self, name: str) -> ca.MX:
        """A global decision block (height, front_anchor, impulses) as a column."""
        return self.w[self.variables.blocks[name].slice]

    def parameter(self, name: str) -> ca.MX:
        """An NLP parameter block as a column (morphology, torque_limit, foot_radius ...)."""
        return self.P[self.parameters.blocks[name].slice]

    @property
    def morphology(self) -> ca.MX:
        return self.parameter("morphology")

    def safe_region(self, gripper: str) -> ca.MX:
        """Normals A (rows x 2) of the gripper's safe region A f <= b."""
        a = self.parameter(f"A_{gripper}")
        return ca.reshape(a, 2, -1).T


    def map(self, fn: ca.Function, count: int, *args: ca.MX) -> ca.MX:
        """``fn`` (one output) applied column by column to ``count`` nodes.

        Arguments with one column where ``fn`` expects one are shared by every node (the
        morphology, a limit). One small function mapped over the nodes keeps the graph
        and the generated code the size of one node, whatever the grid.
        """
        if fn.n_out() != 1:
            raise ConfigError(f"{fn.name()}: a node function has one output")
        shared = tuple(i for i, a in enumerate(args)
                       if count > 1 and a.shape == fn.sparsity_in(i).shape)
        out = ca.MX.sym(f"{fn.name()}_{len(self.calls)}", fn.size1_out(0),
                        fn.size2_out(0) * count)
        self.calls.append(NodeCall(fn, count, tuple(args), shared, out))
        return out
