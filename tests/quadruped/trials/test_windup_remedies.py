"""Two ways to wind the welded soles less as the body moves, each against the plain gait in
the simulator: soles landed along the wall's normal (within the cone of their hold's), and
body moves that also turn the body to the attitude the legs' geometry predicts winds them
least (the move's own wind-up, or the moment the soles hold once it ends)."""

import numpy as np
import pinocchio as pin

from clamber.quadruped.gaits import ClimbGaitSettings, ClimbPhase
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.sim.grippers import SoleCompliance
from clamber.quadruped.trials.climb import ClimbSettings, ClimbTrial


def _move_peaks(seed: int, moves: int = 8, **gait) -> tuple[ClimbTrial, list[float]]:
    """50 N m/rad sole, three cycles: each of the first ``moves`` body moves' largest true
    sole-hinge moment [N m] over the welded grippers (the simulator's hinge angles times the
    stiffness)."""
    settings = ClimbSettings(incline_deg=90.0, verdict_rerun=False,
                             sole=SoleCompliance(stiffness=50.0),
                             gait=ClimbGaitSettings(cycles=3, **gait))
    trial = ClimbTrial(settings, seed=seed)
    m, d = trial.sim.model, trial.sim.data
    adr = {g: [m.jnt_qposadr[m.joint(f"{g}_sole_{a}").id] for a in "xy"] for g in LEG_NAMES}
    peaks, peak, was = [], 0.0, None
    while len(peaks) < moves:
        assert trial.step(), trial.reason
        ph = trial.gait.phase
        if ph is ClimbPhase.BODY:
            peak = max([peak] + [float(np.linalg.norm(50.0 * d.qpos[adr[g]]))
                                 for g in trial.sim.grippers.attached])
        elif was is ClimbPhase.BODY:
            peaks.append(peak)
            peak = 0.0
        was = ph
    return trial, peaks


def test_soles_landed_along_the_wall_normal_wind_less_as_the_body_moves():
    """Seed 4 (a rear gripper broke at this stiffness with the lift-off attitude kept): over
    the first eight body moves, soles landed within 0.1 rad of their hold's normal nearest
    the wall's take at most half the median and 0.75 of the largest of the moves' largest
    hinge moments, against the lift-off attitude kept (measured: median 0.23 against 0.71 N m,
    largest 0.56 against 0.97 N m)."""
    _, kept = _move_peaks(4, landing="keep")
    _, landed = _move_peaks(4, landing="body")
    assert np.median(landed) < 0.5 * np.median(kept), (landed, kept)
    assert max(landed) < 0.75 * max(kept), (landed, kept)


def test_turning_the_body_in_its_moves_winds_the_soles_less():
    """Seed 3, over the first eight body moves: the median of the moves' largest hinge
    moments falls by at least a fifth with a 0.05 rad turn allowed (0.50 -> 0.29 N m
    measured), the largest does not grow, and the body turns within the limit."""
    _, level = _move_peaks(3, landing="keep")
    turned, peaks = _move_peaks(3, landing="keep", body_tilt=0.05)
    assert np.median(peaks) < 0.8 * np.median(level), (peaks, level)
    assert max(peaks) <= max(level) + 0.02, (peaks, level)
    assert 0.005 < np.linalg.norm(turned.gait.tilt) <= 0.05 + 1e-9


def test_the_chosen_turn_lowers_the_predicted_wind_up():
    """At the start of the first body move, the turn the trial asks for (one regularised
    Gauss-Newton step on the predicted sole moments) predicts at most 0.7 of the squared
    wind-up of the same move at the wall's attitude."""
    settings = ClimbSettings(incline_deg=90.0, verdict_rerun=False,
                             sole=SoleCompliance(stiffness=50.0),
                             gait=ClimbGaitSettings(cycles=1, body_tilt=0.05, landing="keep"))
    trial = ClimbTrial(settings, seed=0)
    while trial.gait.phase is not ClimbPhase.BODY:
        assert trial.step(), trial.reason
    move = trial.gait.body_to - trial.gait.body_from
    assert np.linalg.norm(move) > 0.03
    tilt = trial._move_tilt(move, np.zeros(3))
    assert np.linalg.norm(tilt) > 1e-3
    def predicted(w: np.ndarray) -> np.ndarray:
        return trial._move_moments(move, pin.exp3(w) @ trial.gait.R)

    level, turned = predicted(np.zeros(3)), predicted(tilt)
    assert np.sum(turned**2) < 0.7 * np.sum(level**2), (turned, level)


def test_a_start_out_of_reach_along_the_wall_normal_starts_along_the_hold_normals():
    """Seed 8003: the left front leg cannot reach its start hold with the sole along the
    wall's normal (6 mm short), so the trial starts it along the holds' normals as the
    paper's gait does, instead of recording an infeasible start."""
    from clamber.exceptions import InfeasibleStart
    from clamber.quadruped.model.robot_model import RobotModel
    from clamber.quadruped.model.windup import landing_normal
    from clamber.quadruped.trials.stance import initial_joints

    settings = ClimbSettings(incline_deg=90.0, verdict_rerun=False,
                             sole=SoleCompliance(stiffness=50.0),
                             gait=ClimbGaitSettings(cycles=5))
    assert settings.gait.landing == "body"
    trial = ClimbTrial(settings, seed=8003)
    holds, R = trial.layout.holds, trial.R
    tops = {g: holds[g][0].top for g in LEG_NAMES}
    landed = {g: landing_normal(holds[g][0].normal, R[:, 2], 0.1) for g in LEG_NAMES}
    try:
        initial_joints(RobotModel(trial.sim_robot), trial.body0, tops, landed, lift=0.001)
    except InfeasibleStart as e:
        assert "LF" in str(e)
    else:
        raise AssertionError("the wall's normal was in reach: the fallback went untested")
    assert set(trial.held) == set(LEG_NAMES)


def _move_ends(seed: int, moves: int, predict: bool = False, **gait) -> dict[str, np.ndarray]:
    """50 N m/rad sole, three cycles, no re-seats (the wind-up stays): per body move, the true
    sole-hinge moments (moves, 4, 2) [N m] at its end (``end``; hinge angles times the
    stiffness, the sign :meth:`ClimbTrial.wound_moments` senses) and, with ``predict``, at
    its start (``start``) and those :meth:`ClimbTrial._held_moments` predicts there for the
    move's end (``predicted``) and for no move (``now``)."""
    k = 50.0
    settings = ClimbSettings(incline_deg=90.0, verdict_rerun=False,
                             sole=SoleCompliance(stiffness=k),
                             gait=ClimbGaitSettings(cycles=3, reseat_every=0, landing="keep",
                                                    **gait))
    trial = ClimbTrial(settings, seed=seed)
    m, d = trial.sim.model, trial.sim.data
    adr = [[m.jnt_qposadr[m.joint(f"{g}_sole_{a}").id] for a in "xy"] for g in LEG_NAMES]
    out: dict[str, list] = {"end": [], "start": [], "predicted": [], "now": []}
    was = None
    while len(out["end"]) < moves:
        assert trial.step(), trial.reason
        ph = trial.gait.phase
        if predict and ph is ClimbPhase.BODY and was is not ClimbPhase.BODY:
            move = trial.gait.body_to - trial.gait.body_from
            out["predicted"].append(trial._held_moments(move, trial.gait.R).reshape(4, 2))
            out["now"].append(trial._held_moments(0.0 * move, trial.gait.R).reshape(4, 2))
            out["start"].append(np.array([k * d.qpos[a] for a in adr]))
        elif was is ClimbPhase.BODY and ph is not ClimbPhase.BODY:
            out["end"].append(np.array([k * d.qpos[a] for a in adr]))
        was = ph
    return {key: np.array(v) for key, v in out.items()}


def test_the_predicted_change_of_the_held_moments_follows_the_simulated_hinges():
    """Seeds 3 and 4, four body moves each with the earlier moves' wind-up still held: the
    change of the held moments a move makes, predicted at its start from the estimate and
    the encoders, correlates with the change of the simulated hinges' moments by at least
    0.5 (measured 0.93 and 0.62; the rigid legs it assumes overstate the hinges' share,
    slope 0.74 and 0.53), and the moments at the start plus that change leave less of the
    moments at the end unexplained than the start alone (0.09 against 0.38, 0.43 against
    0.47)."""
    for seed in (3, 4):
        r = _move_ends(seed, 4, predict=True)
        change, true = r["predicted"] - r["now"], r["end"] - r["start"]
        corr = np.sum(change * true) / np.sqrt(np.sum(change**2) * np.sum(true**2))
        assert corr > 0.5, (seed, corr)
        assert np.sum((r["start"] + change - r["end"]) ** 2) < np.sum(true**2), seed


def test_turning_for_the_held_moment_leaves_the_soles_less_wound():
    """Seed 4, seven body moves without re-seats, 0.05 rad of turn allowed: turning for the
    least moment held at the move's end (earlier moves' wind-up included) leaves the
    median of the moves' largest held moments at most 0.9 of turning for the least wind-up
    each move adds (measured 0.61 against 0.78 N m)."""
    def peaks(goal: str) -> list[float]:
        ends = _move_ends(4, 7, body_tilt=0.05, tilt_goal=goal)["end"]
        return [float(np.linalg.norm(e, axis=1).max()) for e in ends]

    held, added = peaks("held"), peaks("move")
    assert np.median(held) < 0.9 * np.median(added), (held, added)
