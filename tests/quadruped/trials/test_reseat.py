"""Re-seating a gripper in place undoes its sole's wind-up: the sole's hinges, turned while
the body moved with the gripper welded, spring back while it is open, and the gripper closes
on the same hold with a relaxed sole."""

import numpy as np

from clamber.quadruped.gaits import ClimbGaitSettings, ClimbPhase
from clamber.quadruped.trials.climb import ClimbSettings, ClimbTrial


class _Traced(ClimbTrial):
    """Records each re-seated sole's hinge deflection [rad] as it opens and as it closes."""

    def __init__(self, *args, **kwargs) -> None:
        self.opened: list[float] = []
        self.closed: list[float] = []
        super().__init__(*args, **kwargs)

    def _hinge(self, leg: str) -> float:
        m, d = self.sim.model, self.sim.data
        return float(np.hypot(*(d.qpos[m.joint(f"{leg}_sole_{a}").qposadr[0]] for a in "xy")))

    def _let_go(self, leg: str) -> None:
        if self.gait.phase is ClimbPhase.RESEAT:
            self.opened.append(self._hinge(leg))
        super()._let_go(leg)

    def _grip(self, leg: str, hold) -> bool:
        if getattr(self, "gait", None) is not None and self.gait.phase is ClimbPhase.RESEAT:
            self.closed.append(self._hinge(leg))
        return super()._grip(leg, hold)


def test_a_re_seat_relaxes_the_sole_it_opens():
    """Two cycles up the vertical wall with Q-WBC: every re-seat finds its sole wound up
    (median above 4 mrad) and closes it relaxed (each below 3 mrad); the climb completes."""
    settings = ClimbSettings(incline_deg=90.0, gait=ClimbGaitSettings(cycles=2),
                             verdict_rerun=False)
    trial = _Traced(settings, seed=1)
    result, _ = trial.run()
    assert result.success, trial.reason
    assert len(trial.opened) == len(trial.closed) == 21
    assert np.median(trial.opened) > 4e-3
    assert max(trial.closed) < 3e-3 and np.median(trial.closed) < np.median(trial.opened) / 5
