"""Fuzzing every command's options: a value outside an option's range, non-finite or not a
number at all exits with rc 2 and one line on stderr, before any work is done."""

import math

from fuzz_harness import assert_refused, examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clamber.jumper.seed import SEED_PATH

FUZZ = settings(max_examples=examples(120), deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])

SEED = str(SEED_PATH)
INT, FLOAT = int, float
#: (command, option, kind, low, high, low_open): every numeric option and its range.
NUMERIC = [
    (["jumper", "optimize"], "--seed", INT, 0, 2**32 - 1, False),
    (["jumper", "optimize"], "--torque-limit", FLOAT, 0, 5, True),
    (["jumper", "optimize"], "--motor-headroom", FLOAT, 0, 0.5, False),
    (["jumper", "optimize"], "--torque-rate-weight", FLOAT, 0, 10, False),
    (["jumper", "codesign"], "--generations", INT, 1, 10_000, False),
    (["jumper", "codesign"], "--popsize", INT, 1, 1000, False),
    (["jumper", "codesign"], "--sigma0", FLOAT, 0, 10, True),
    (["jumper", "codesign"], "--seed", INT, 0, 2**32 - 1, False),
    (["jumper", "codesign"], "--workers", INT, 0, None, False),
    (["jumper", "codesign"], "--max-retries", INT, 0, None, False),
    (["jumper", "codesign"], "--torque-limit", FLOAT, 0, None, True),
    (["jumper", "codesign", "--fitness", "robust"], "--tol-scale", FLOAT, 0, 4, True),
    (["jumper", "optimize", "--robust"], "--tol-scale", FLOAT, 0, 4, True),
    (["jumper", "sweep"], "--samples", INT, 1, 1_000_000, False),
    (["jumper", "sweep"], "--seed", INT, 0, 2**32 - 1, False),
    (["jumper", "sweep"], "--workers", INT, 0, None, False),
    (["jumper", "simulate", SEED], "--jumps", INT, 1, 100, False),
    (["jumper", "simulate", SEED], "--supply-voltage", FLOAT, 0, 48, True),
    (["jumper", "simulate", SEED], "--foot-radius", FLOAT, 0, 0.05, True),
    (["jumper", "robustness", SEED], "--trials", INT, 1, 100_000, False),
    (["jumper", "robustness", SEED], "--jumps", INT, 1, 100, False),
    (["jumper", "robustness", SEED], "--seed", INT, 0, 2**32 - 1, False),
    (["jumper", "robustness", SEED], "--mass-tol", FLOAT, 0, 0.5, False),
    (["jumper", "robustness", SEED], "--length-tol", FLOAT, 0, 0.02, False),
    (["jumper", "robustness", SEED], "--jitter", FLOAT, 0, 0.02, False),
    (["jumper", "robustness", SEED], "--supply-voltage", FLOAT, 0, 48, True),
    (["jumper", "robustness", SEED], "--foot-radius", FLOAT, 0, 0.05, True),
    (["jumper", "robustness", SEED], "--workers", INT, 0, None, False),
    (["jumper", "robustness", SEED], "--max-retries", INT, 0, None, False),
    (["jumper", "robustness", SEED], "--tol-scale", FLOAT, 0, 10, False),
    (["quadruped", "compare"], "--cycles", INT, 1, 1000, False),
    (["quadruped", "compare"], "--trials", INT, 1, 100_000, False),
    (["quadruped", "compare"], "--tune-budget", INT, 1, 1000, False),
    (["quadruped", "compare"], "--sole-stiffness", FLOAT, 0, 1e4, False),
    (["quadruped", "compare"], "--sole-armature", FLOAT, 0, 1, False),
    (["quadruped", "compare"], "--physics-dt", FLOAT, 1e-4, 0.02, False),
    (["jumper", "export", SEED], "--supply-voltage", FLOAT, 0, 48, True),
    (["quadruped", "climb"], "--incline", FLOAT, 0, 180, False),
    (["quadruped", "climb"], "--cycles", INT, 1, 1000, False),
    (["quadruped", "climb"], "--rate", FLOAT, 1, 1000, False),
    (["quadruped", "climb"], "--physics-dt", FLOAT, 1e-4, 0.02, False),
    (["quadruped", "climb"], "--sole-stiffness", FLOAT, 0, 1e4, False),
    (["quadruped", "climb"], "--swing-retries", INT, 0, 5, False),
    (["quadruped", "climb"], "--wound-limit", FLOAT, 0, 10, False),
    (["quadruped", "climb"], "--wound-share", FLOAT, 0, 2, False),
    (["quadruped", "climb"], "--body-tilt", FLOAT, 0, 0.15, False),
    (["quadruped", "climb"], "--capacity-margin", FLOAT, 0, 1, True),
    (["quadruped", "climb"], "--stall-raises", INT, 0, 5, False),
    (["quadruped", "climb"], "--trials", INT, 1, 100_000, False),
    (["quadruped", "climb"], "--seed", INT, 0, 2**32 - 1, False),
    (["quadruped", "climb"], "--workers", INT, 0, None, False),
    (["quadruped", "trot"], "--cycles", INT, 1, 1000, False),
    (["quadruped", "trot"], "--level-gain", FLOAT, 0, 100, False),
    (["quadruped", "trot"], "--trials", INT, 1, 100_000, False),
    (["quadruped", "wall"], "--seed", INT, 0, 2**32 - 1, False),
    (["quadruped", "wall"], "--incline", FLOAT, 0, 135, False),
    (["quadruped", "holds"], "--inclines", FLOAT, 0, 135, False),
    (["quadruped", "holds"], "--distance", FLOAT, 0, 10, True),
    (["quadruped", "climb"], "--distance", FLOAT, 0, 10, True),
    (["quadruped", "holds"], "--trials", INT, 1, 100_000, False),
    (["quadruped", "holds"], "--seed", INT, 0, 2**32 - 1, False),
]
#: Options with a fixed set of values.
CHOICES = [
    (["jumper", "optimize"], "--resolution"), (["jumper", "optimize"], "--guess"),
    (["jumper", "optimize"], "--collocation"), (["jumper", "codesign"], "--fitness"),
    (["jumper", "safe-region"], "--unit"), (["quadruped", "climb"], "--controller"),
    (["quadruped", "climb"], "--state"), (["quadruped", "trot"], "--terrain"),
    (["quadruped", "trot"], "--feet"), (["quadruped", "compare"], "--state"),
    (["quadruped", "compare"], "--scenarios"),
    (["quadruped", "holds"], "--rules"), (["quadruped", "holds"], "--grasp"),
    (["quadruped", "trot"], "--estimator"), (["quadruped", "trot"], "--contacts"),
]
VALID_CHOICES = {"coarse", "fine", "seed", "deterministic", "random", "trapezoidal",
                 "hermite-simpson", "kg", "N", "qwbc", "clik", "vmc", "estimate", "true",
                 "flat", "gravel", "grass", "mud", "stone", "all", "gripper", "rubber", "both",
                 "planner", "nearest", "instant", "winch", "rubber_flat", "anchor", "odometry",
                 "torque", "fused", "schedule", "truth"}


def _is_number(text: str, kind) -> bool:
    try:
        kind(text)
    except ValueError:
        return False
    return True


NOT_FINITE = st.sampled_from(["nan", "NaN", "inf", "-inf", "+Infinity", "1e400", "-1e999"])
JUNK = st.text(min_size=1, max_size=12).filter(lambda s: not s.startswith("-"))


@st.composite
def bad_numeric(draw):
    """A command, one of its numeric options and a value that option must refuse."""
    cmd, opt, kind, low, high, low_open = draw(st.sampled_from(NUMERIC))
    below = (st.integers(max_value=low - 1 if not low_open else low) if kind is INT
             else st.floats(max_value=low, exclude_max=not low_open, allow_nan=False,
                            allow_infinity=False))
    options = [NOT_FINITE, JUNK.filter(lambda s: not _is_number(s, kind)), below.map(repr)]
    if high is not None:
        options.append((st.integers(min_value=high + 1) if kind is INT else
                        st.floats(min_value=high, exclude_min=True, allow_nan=False,
                                  allow_infinity=False)).map(repr))
    if kind is INT:
        options.append(st.floats(allow_nan=False).filter(lambda x: x != int(x)
                                                         if math.isfinite(x) else True)
                       .map(repr))
    value = draw(st.one_of(options))
    return [*cmd, f"{opt}={value}"]


@FUZZ
@given(bad_numeric())
def test_numeric_options_refuse_what_they_cannot_use(argv):
    """Any out-of-range, non-finite or non-numeric value: rc 2, one line, no work done."""
    assert_refused(argv)


@settings(max_examples=examples(40), deadline=None)
@given(st.sampled_from(CHOICES), st.text(max_size=10).filter(lambda s: s not in VALID_CHOICES))
def test_choice_options_refuse_unknown_values(cmd_opt, value):
    """A value outside an option's choices: rc 2, one line."""
    cmd, opt = cmd_opt
    assert_refused([*cmd, f"{opt}={value}"])
