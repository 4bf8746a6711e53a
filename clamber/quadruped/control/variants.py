"""The controllers of the comparison by name, with their tunable gains and ablations.

Each of the three controllers exposes three gains (:data:`GAINS`), each a multiple of the
default its class was written with, so that one tuning procedure
(:mod:`clamber.experiments.quadruped_tuning`) treats them alike.

Ablations (untuned, run with the tuned gains of their parent): Q-WBC without gripper limits
(a box 10^4 times the paper's), without its weights (unit weights: a newton costs what a
newton metre costs), without the unloading ramp, without the joint-torque rows; VMC with the
unweighted pseudo-inverse and no unloading (``vmc-plain``); CLIK without integral action or
feed-forward (``clik-plain``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from clamber import _validate as check
from clamber.attachment.wrench_limits import PAPER_BOX_HALF_WIDTHS, WrenchLimits
from clamber.exceptions import ConfigError

if TYPE_CHECKING:  # the names above are needed by the CLI without the dynamics stack
    from clamber.quadruped.control.controllers import Controller
    from clamber.quadruped.model.robot_model import RobotModel

#: Tunable gains of each controller and their default values (multiplied by the gains).
GAINS = {
    "qwbc": {"body_kp": 40.0, "body_kd": 12.0, "clik_gain": 0.5},
    "vmc": {"stiffness": 1.0, "damping": 1.0, "clik_gain": 0.5},
    "clik": {"clik_gain": 0.5, "integral_gain": 0.5, "rotation_weight": 0.3},
}
#: Ablations: name -> parent controller whose gains they use.
ABLATIONS = {"qwbc-nolimits": "qwbc", "qwbc-noweights": "qwbc", "qwbc-noramp": "qwbc",
             "qwbc-notorque": "qwbc", "vmc-plain": "vmc", "clik-plain": "clik"}
#: Every controller name :func:`make_controller` accepts.
CONTROLLER_NAMES = (*GAINS, *ABLATIONS)


def parent(name: str) -> str:
    """The tuned controller whose gains ``name`` uses."""
    check_name(name)
    return ABLATIONS.get(name, name)


def check_name(name: str) -> None:
    if name not in CONTROLLER_NAMES:
        raise ConfigError(f"unknown controller {name!r}; controllers are "
                          f"{', '.join(CONTROLLER_NAMES)}")


def gain_values(name: str, gains: tuple[tuple[str, float], ...] = ()) -> dict[str, float]:
    """Absolute gain values of controller ``name`` from multipliers ``gains``
    (``(gain, multiplier)`` pairs; missing gains keep their defaults)."""
    base = GAINS[parent(name)]
    mult = dict(gains)
    unknown = set(mult) - set(base)
    if unknown:
        raise ConfigError(f"unknown gains {sorted(unknown)} for {name}; gains are "
                          f"{', '.join(base)}")
    for k, v in mult.items():
        check.positive("gains", k, v)
    return {k: v * mult.get(k, 1.0) for k, v in base.items()}


def make_controller(name: str, rm: RobotModel,
                    gains: tuple[tuple[str, float], ...] = (),
                    control_period: float = 0.02, attitude_integral: float = 0.0
                    ) -> Controller:
    """Controller ``name`` (a key of ``CONTROLLER_NAMES``) with gain multipliers ``gains``;
    ``attitude_integral`` [1/s] adds integral action on the body's attitude to Q-WBC and VMC
    (CLIK has its own on the whole pose, ``integral_gain``)."""
    from clamber.quadruped.control.controllers import (
        BodyPD,
        CLIKController,
        QWBCController,
        VMCController,
    )
    from clamber.quadruped.control.wbc_problem import QWBCWeights

    g = gain_values(name, gains)
    clik = min(1.0, g.get("clik_gain", 0.5))
    if parent(name) == "qwbc":
        kw = {}
        if name == "qwbc-nolimits":
            kw["limits"] = WrenchLimits.box(PAPER_BOX_HALF_WIDTHS * 1e4)
        if name == "qwbc-noweights":
            kw["weights"] = QWBCWeights(w2=np.ones(6), w3=0.1 * np.ones(6))
        pd = BodyPD(kp=np.full(6, g["body_kp"]), kd=np.full(6, g["body_kd"]))
        return QWBCController(rm, pd=pd, clik_gain=clik, ramp=name != "qwbc-noramp",
                              torque_rows=name != "qwbc-notorque",
                              attitude_integral=attitude_integral,
                              control_period=control_period, **kw)
    if parent(name) == "vmc":
        plain = {"axis_weights": None, "unload": False} if name == "vmc-plain" else {}
        vmc = VMCController(rm, clik_gain=clik, attitude_integral=attitude_integral,
                            control_period=control_period, **plain)
        vmc.k, vmc.d = vmc.k * g["stiffness"], vmc.d * g["damping"]
        return vmc
    ctrl = CLIKController(rm, integral_gain=0.0 if name == "clik-plain" else g["integral_gain"],
                          gravity_feedforward=name != "clik-plain",
                          control_period=control_period, clik_gain=clik)
    ctrl.clik.w[3:] = g["rotation_weight"]
    return ctrl
