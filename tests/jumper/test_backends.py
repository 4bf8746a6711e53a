"""The compiled NLP backend: exact derivatives, same optimum, disk cache, fallback."""

import time

import casadi as ca
import numpy as np
import pytest

from clamber.jumper.formulation import backends
from clamber.jumper.formulation.problem import build_problem
from clamber.jumper.morphology import Morphology
from clamber.jumper.settings import OptimizationSettings
from clamber.jumper.solve import problem_for, refine, solve


@pytest.mark.parametrize("collocation", ["trapezoidal", "hermite-simpson"])
def test_assembled_derivatives_equal_casadi_ad(collocation):
    """Node-by-node Jacobian and Hessian equal CasADi's AD of the whole NLP at a random point."""
    s = OptimizationSettings()
    pr = build_problem((3, 2, 3, 2, 2), collocation, s.safe_region_front.A.shape[0],
                       s.safe_region_rear.A.shape[0])
    fns = pr.nlp_functions()
    rng = np.random.default_rng(0)
    x = rng.normal(size=pr.z.numel())
    p = pr.parameter_vector(Morphology.nominal().parameters(), OptimizationSettings())
    lam = rng.normal(size=pr.g.numel())
    J_ad = ca.Function("j", [pr.z, pr.P], [ca.jacobian(pr.g, pr.z)])(x, p)
    lag = 0.7 * pr.objective + ca.dot(lam, pr.g)
    H_ad = ca.Function("h", [pr.z, pr.P], [ca.triu(ca.hessian(lag, pr.z)[0])])(x, p)
    g, J = fns["nlp_jac_g"](x, p)
    H = fns["nlp_hess_l"](x, p, 0.7, lam)
    np.testing.assert_allclose(np.array(J), np.array(J_ad), atol=1e-11, rtol=0)
    np.testing.assert_allclose(np.array(H), np.array(H_ad), atol=1e-11, rtol=0)
    _, _, grad_x, _ = fns["nlp_grad"](x, p, 0.7, lam)
    grad_f = ca.Function("gf", [pr.z, pr.P], [ca.gradient(pr.objective, pr.z)])(x, p)
    np.testing.assert_allclose(np.array(grad_x).ravel(),
                               np.array(0.7 * grad_f + J_ad.T @ lam).ravel(), atol=1e-11)


def test_compiled_and_reference_reach_the_same_optimum(nominal_coarse):
    """From the same start (the packaged seed) and with the default settings (spined safe
    regions, limit margins), both backends reach the same speed (1e-6 relative) and the
    same active bounds. Solved to 1e-9: at the default 1e-6 each stops within its
    tolerance of the optimum, about 3e-5 apart in speed."""
    assert nominal_coarse.history[-1]["backend"] == backends.resolve("compiled")
    sols = {}
    for backend in ("compiled", "reference"):
        s = OptimizationSettings(backend=backend, tolerance=1e-9)
        sols[backend] = solve(nominal_coarse.morphology, s, "coarse", guess="seed")
        assert sols[backend].status.success
        assert sols[backend].history[-1]["guess"] == "seed"  # no fallback: the same start
        assert sols[backend].history[-1]["backend"] == backends.resolve(backend)
    a, b = sols["compiled"], sols["reference"]
    assert a.speed == pytest.approx(b.speed, rel=1e-6)
    assert a.active_bounds == b.active_bounds


def test_refinement_without_mumps_scaling_keeps_the_optimum(nominal_coarse):
    """Refinement factorizes without MUMPS scaling by default (refine_mumps_scaling 0) and
    reaches the fine optimum of IPOPT's automatic scaling (77) from the nominal robot's
    coarse solution as optimize() makes it (from the seed, default settings, so IPOPT's
    default scaling): the same speed (1e-6 relative) and active bounds, refined to 1e-9.
    (From a coarse solution that differs by rounding the refinement can end on a
    neighbouring optimum with either scaling; see docs/results/jumper_trajopt.md.)"""
    s = OptimizationSettings()
    assert (s.mumps_scaling, s.refine_mumps_scaling) == (77, 0)
    coarse = solve(nominal_coarse.morphology, s, "coarse", guess="seed")
    assert coarse.status.success
    tight = s.with_(tolerance=1e-9)
    fa = refine(coarse, settings=tight)
    fb = refine(coarse, settings=tight.with_(refine_mumps_scaling=77))
    assert fa.status.success and fb.status.success
    assert fa.speed == pytest.approx(fb.speed, rel=1e-6)
    assert fa.active_bounds == fb.active_bounds


@pytest.mark.parametrize("name", ["mumps_scaling", "refine_mumps_scaling"])
@pytest.mark.parametrize("value", [-1, 2, 77.0, True, "none"])
def test_unknown_mumps_scaling_is_rejected(name, value):
    """A MUMPS scaling outside IPOPT's integer choices (0, 1, 3, 4, 7, 8, 77) is a
    ConfigError naming the setting."""
    from clamber.exceptions import ConfigError

    with pytest.raises(ConfigError, match=name):
        OptimizationSettings(**{name: value})


def test_warm_cache_is_loaded_without_compiling(nominal_coarse, monkeypatch):
    """A second build of the same structure loads the cached library: no code, no compiler."""
    if backends.resolve("compiled") != "compiled":
        pytest.skip("no C compiler here")
    first = problem_for(nominal_coarse.nodes, nominal_coarse.settings)
    first.solver(True, backend="compiled")
    t0 = time.perf_counter()
    s = nominal_coarse.settings
    fresh = build_problem(first.nodes, s.collocation, s.safe_region_front.A.shape[0],
                          s.safe_region_rear.A.shape[0])

    def no_codegen():
        raise AssertionError("generated code again")

    monkeypatch.setattr(backends.subprocess, "run", lambda *a, **k: no_codegen())
    nlp = {"x": fresh.z, "p": fresh.P, "f": fresh.objective, "g": fresh.g}
    path = backends.compiled_library(nlp, no_codegen)
    assert path == first._library["path"]
    ca.nlpsol("again", "ipopt", str(path), {"ipopt.print_level": 0, "print_time": False,
                                            "ipopt.sb": "yes"})
    assert time.perf_counter() - t0 < 5.0  # graph + hash + load; ~0.5 s unloaded


def test_without_a_compiler_the_reference_backend_runs(monkeypatch, capsys):
    """A missing $CC selects the reference backend, announced in one line on stderr."""
    monkeypatch.setenv("CC", "/nonexistent/bin/cc")
    backends._say_fallback.cache_clear()
    assert backends.resolve("compiled") == "reference"
    assert backends.resolve("compiled") == "reference"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "reference" in err[0] and "compiler" in err[0]
    assert backends.resolve("reference") == "reference"


def test_unknown_backend_is_rejected():
    """A backend name outside ('compiled', 'reference') is a ConfigError."""
    from clamber.exceptions import ConfigError

    with pytest.raises(ConfigError):
        OptimizationSettings(backend="gpu")
    with pytest.raises(ConfigError):
        backends.resolve("gpu")


def test_fast_steps_without_mumps_scaling_keep_the_optimum(nominal_coarse):
    """The co-design fitness's IPOPT options (no MUMPS scaling, fast steps: one backsolve
    per step without a residual check) reach the default options' optimum from the same
    start (the packaged seed), solved to 1e-9: the same speed (1e-6 relative) and the same
    active bounds."""
    s = OptimizationSettings(tolerance=1e-9)
    fitness_options = s.with_(mumps_scaling=0, fast_step_computation=True)
    a = solve(nominal_coarse.morphology, s, "coarse", guess="seed")
    b = solve(nominal_coarse.morphology, fitness_options, "coarse", guess="seed")
    assert a.status.success and b.status.success
    assert b.history[-1]["guess"] == "seed"
    assert b.speed == pytest.approx(a.speed, rel=1e-6)
    assert b.active_bounds == a.active_bounds


def test_fast_steps_reach_ipopt_and_the_record():
    """fast_step_computation sets IPOPT's option of that name (absent by default), is kept
    in a settings record only when on (older records still read) and round-trips."""
    from clamber.jumper.formulation.problem import JumperProblem

    assert "ipopt.fast_step_computation" not in JumperProblem.ipopt_options(True)
    assert JumperProblem.ipopt_options(True, fast_steps=True)[
        "ipopt.fast_step_computation"] == "yes"
    off, on = OptimizationSettings(), OptimizationSettings(fast_step_computation=True)
    assert "fast_step_computation" not in off.to_dict()
    assert on.to_dict()["fast_step_computation"] is True
    assert OptimizationSettings.from_dict(on.to_dict()).fast_step_computation is True
    assert OptimizationSettings.from_dict(off.to_dict()).fast_step_computation is False


@pytest.mark.parametrize("value", [1, 0, "yes", None])
def test_fast_step_computation_must_be_a_bool(value):
    """fast_step_computation takes True or False only; anything else is a ConfigError."""
    from clamber.exceptions import ConfigError

    with pytest.raises(ConfigError, match="fast_step_computation"):
        OptimizationSettings(fast_step_computation=value)
