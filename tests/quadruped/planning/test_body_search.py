"""The planner's body-pose search: it lowers (never raises) the largest load gauge of the
stance's wrench QP, keeps every leg on its hold and stays within its bounds."""

import numpy as np

from clamber.quadruped.planning.sequence import SequencePlanner
from clamber.quadruped.planning.stance import LANDED_TILT_TOLERANCE, reach
from clamber.quadruped.trials.climb import ClimbSettings
from clamber.quadruped.trials.rock_climb import RockClimbSettings, plan_rock_climb

SETTINGS = RockClimbSettings(climb=ClimbSettings(incline_deg=90.0), distance=0.2)


def _planner(wall, truth, search: bool) -> SequencePlanner:
    return SequencePlanner(wall, SETTINGS.plan, 2, model=truth.model, truth=truth,
                           reorder=True, landing_cone=0.1, seat_rise=0.01, body_search=search)


def test_body_search_lowers_the_largest_gauge_within_reach_and_bounds():
    """Over the first swings on wall 2 at 90 deg: each searched body pose has a largest
    gauge (four legs and the next swing's three) no higher than the pose it started from,
    lower on at least one swing; from it every leg reaches its hold within the attached
    soles' tilt, both QPs balance, it lies within 6 cm of the start in the wall's plane and
    within the standoff offsets along the normal; and the hold chosen is the one chosen
    without the search (the search moves the body only)."""
    wall, truth, _ = plan_rock_climb(SETTINGS, 2)
    plain, searched = _planner(wall, truth, False), _planner(wall, truth, True)
    rule = searched.rule
    calls = []
    refine = rule.refine_body

    def spy(ctx, tops, normals, c, body, q, full, three):
        out = refine(ctx, tops, normals, c, body, q, full, three)
        calls.append((ctx, tops, normals, body, full, three, out))
        return out

    rule.refine_body = spy
    # The first swing starts from the same body in both; later ones do not.
    a, b = plain.next(), searched.next()
    assert a is not None and b is not None
    assert a.leg == b.leg and a.hold.cell == b.hold.cell
    for _ in range(3):
        assert searched.next() is not None
    lowered = 0
    for ctx, tops, normals, body, full, three, (b, q, full2, three2) in calls:
        before = max(full.gauges.max(), three.gauges.max())
        after = max(full2.gauges.max(), three2.gauges.max())
        assert after <= before + 1e-12
        lowered += after < before - 1e-3
        assert full2.stable and three2.stable
        r = reach(rule.rm, b, tops, normals, q)
        assert r.within(LANDED_TILT_TOLERANCE)
        d = body.rotation.T @ (b.translation - body.translation)
        assert np.hypot(d[0], d[1]) <= rule.settings.search_reach + 1e-9
        centre = np.mean([tops[k] for k in tops], axis=0) + ctx.standoff * body.rotation[:, 2]
        dz = (b.translation - centre) @ body.rotation[:, 2]
        offsets = rule.settings.standoff_offsets
        assert min(offsets) - 1e-9 <= dz <= max(offsets) + 1e-9
    assert len(calls) >= 4 and lowered >= 1
