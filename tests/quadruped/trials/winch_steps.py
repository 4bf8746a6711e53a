"""Shared by the rock-climb tests: step a trial until its winch starts an action."""


def step_until_winch(trial, action: str, limit: float = 40.0):
    """Step ``trial`` until the winch works on ``action`` ("release" or "grasp"); its pending
    (leg, action, hold, report). Fails past ``limit`` [s] or if the trial ends first."""
    while trial.step():
        if trial.pending is not None and trial.pending[1] == action:
            return trial.pending
        assert trial.k * trial.dt < limit, f"no {action} within {limit} s"
    raise AssertionError(f"trial ended before a {action}: {trial.reason}")
