"""MuJoCo's instability warnings turned into an error: an unstable simulation is no result.

MuJoCo reports a diverging simulation ("Nan, Inf or huge value in QACC ... The simulation
is unstable") through its user warning hook, resets the state and carries on, so a
run with absurd inputs (a 1 km gripper) would otherwise end as an ordinary failed jump.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from clamber.exceptions import ClamberError

T = TypeVar("T")


class UnstableSimulation(ClamberError):
    """MuJoCo warned during a simulation (diverging accelerations, contact overflow)."""


@contextmanager
def caught_mujoco_warnings() -> Iterator[list[str]]:
    """Collect MuJoCo's warnings raised inside the block (the previous hook is restored)."""
    import mujoco

    previous = mujoco.get_mju_user_warning()
    caught: list[str] = []
    mujoco.set_mju_user_warning(caught.append)
    try:
        yield caught
    finally:
        mujoco.set_mju_user_warning(previous)


def without_warnings(run: Callable[[], T], what: str = "simulation") -> T:
    """``run()``, raising :class:`UnstableSimulation` if MuJoCo warned meanwhile."""
    with caught_mujoco_warnings() as caught:
        result = run()
    if caught:
        raise UnstableSimulation(f"the {what} is unstable, MuJoCo warned: {caught[0].strip()} "
                                 "(check the gripper radius, masses and lengths)")
    return result
