"""On a plane wall the robot senses how far each holding sole has wound (its gripper's turn
since the weld, from the estimate and the encoders): it re-seats the most wound gripper
first after a body move, and pauses a body move to re-seat a gripper wound past the
limit. The soles keep their lift-off attitude here (``landing="keep"``), which winds them
more than landing them along the wall's normal does, so the sensing is checked on large
moments."""

import numpy as np

from clamber.quadruped.gaits import ClimbGaitSettings, ClimbPhase
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.sim.grippers import SoleCompliance
from clamber.quadruped.trials.climb import ClimbSettings, ClimbTrial


def test_the_most_wound_sole_is_re_seated_first_and_the_sensed_wind_up_is_the_simulated():
    """Two-cycle Q-WBC climb, seed 1, through its first three body moves: the sensed moment
    matches the simulator's hinge deflections since the weld times the stiffness within
    0.12 N m (0.095 measured; the largest exceeds 0.2 N m, and the deflection a sole is
    welded with, from the press onto its hold, is not sensed), and the first gripper re-seated after
    each move is the one whose hinges the simulator finds most wound, or within 0.1 N m of
    it."""
    settings = ClimbSettings(incline_deg=90.0, verdict_rerun=False,
                             gait=ClimbGaitSettings(cycles=2, reseat_order="wound",
                                                    landing="keep"))
    trial = ClimbTrial(settings, seed=1)
    m, d = trial.sim.model, trial.sim.data
    adr = {g: [m.jnt_qposadr[m.joint(f"{g}_sole_{a}").id] for a in "xy"] for g in LEG_NAMES}
    k = settings.sole.stiffness

    def true_moment(g: str) -> float:
        return float(np.linalg.norm(k * d.qpos[adr[g]]))

    sensed, true, firsts = [], [], []
    was, welded, at_weld = None, {}, {}
    while trial.gait.step_no < 3:
        assert trial.step(), trial.reason
        for g, attitude in trial.seated.items():
            if welded.get(g) is not attitude:
                welded[g], at_weld[g] = attitude, k * d.qpos[adr[g]]
        ph = trial.gait.phase
        if ph is ClimbPhase.BODY and trial.k % 5 == 0:
            for g, w in trial.wound_moments(trial.seen).items():
                sensed.append(w[3:5])
                true.append(k * d.qpos[adr[g]] - at_weld[g])
        if ph is ClimbPhase.RESEAT and was is ClimbPhase.BODY:
            moments = {g: true_moment(g) for g in LEG_NAMES}
            firsts.append((trial.gait.reseating[0], moments))
        was = ph
    sensed, true = np.array(sensed), np.array(true)
    worst = np.abs(true).max()
    assert worst > 0.2 and len(true) > 20
    assert np.abs(sensed - true).max() < 0.12
    assert len(firsts) == 3
    for first, moments in firsts:
        assert moments[first] > max(moments.values()) - 0.1, (first, moments)


def _first_move_peaks(wound_limit: float) -> tuple[ClimbTrial, dict[str, float]]:
    """Seed 3 with the 50 N m/rad sole through its first body move: the trial and each
    sole's largest true hinge moment [N m] while the body moved."""
    settings = ClimbSettings(incline_deg=90.0, verdict_rerun=False,
                             sole=SoleCompliance(stiffness=50.0),
                             gait=ClimbGaitSettings(cycles=2, wound_limit=wound_limit,
                                                    landing="keep"))
    trial = ClimbTrial(settings, seed=3)
    m, d = trial.sim.model, trial.sim.data
    adr = {g: [m.jnt_qposadr[m.joint(f"{g}_sole_{a}").id] for a in "xy"] for g in LEG_NAMES}
    peaks = dict.fromkeys(LEG_NAMES, 0.0)
    while trial.gait.step_no < 1:
        assert trial.step(), trial.reason
        if trial.gait.phase is ClimbPhase.BODY:
            for g in trial.sim.grippers.attached:
                peaks[g] = max(peaks[g], float(np.linalg.norm(50.0 * d.qpos[adr[g]])))
    return trial, peaks


def test_a_body_move_pauses_to_re_seat_the_soles_it_winds_past_the_limit():
    """Seed 3, 50 N m/rad sole, first body move: without the pause the move winds a sole's
    hinges past 0.7 N m (0.76 measured); with it (at 0.6 N m) the move pauses,
    re-seats and goes on, and every sole stays 0.15 N m below that and below the limit plus
    the sensing error (0.7 N m; 0.54 measured)."""
    plain, free = _first_move_peaks(0.0)
    paused, held = _first_move_peaks(0.6)
    assert plain.gait.moves_paused == 0 and paused.gait.moves_paused >= 1
    assert max(free.values()) > 0.7, free
    assert max(held.values()) < min(0.7, max(free.values()) - 0.15), (held, free)
    bands = [name for _, _, name, _ in paused.gait.bands]
    first = bands.index("body")
    assert bands[first + 1] == "reseat" and "body" in bands[first + 2:]
