"""The demo's landing check: a design's robust optimum played with closed-loop catching."""

from clamber.experiments.landing_check import check_landing
from clamber.jumper.morphology import Morphology


def test_landing_check_counts_ready_jumps_of_the_robust_optimum():
    """The check re-optimizes with the robust options (release force bounded), plays the
    one-jump trials and the climbs on the same seeds, and its expected speed is the planned
    speed times the fraction of climb jumps landed ready before a failure."""
    c = check_landing("nominal", Morphology.nominal(), trials=3, jumps=2, resolution="coarse")
    assert c.solution.status.success
    assert c.solution.settings.release_force_max == 0.5
    assert c.solution.settings.phase_duration_min[3] >= 0.1
    good = sum(t.metrics["ready_jumps"] for t in c.climbs.trials)
    assert c.expected_speed == c.solution.speed * good / 6
    s = c.summary()
    assert s["trials"] == 3 and s["climb_jumps"] == 2
    assert s["ready_rate"] == sum(t.metrics["first_ready"] for t in c.one_jump.trials) / 3
