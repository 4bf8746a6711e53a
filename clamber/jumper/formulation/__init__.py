"""The jump's NLP as named term groups (dynamics, contacts, impacts, limits, periodicity,
objective) stacked by :mod:`.problem`; add your own with :mod:`.terms`."""

from clamber.jumper.formulation.problem import DEFAULT_TERMS, JumperProblem, build_problem
from clamber.jumper.formulation.terms import Constraint, Context, Cost, TermGroup

__all__ = ["DEFAULT_TERMS", "Constraint", "Context", "Cost", "JumperProblem", "TermGroup",
           "build_problem"]
