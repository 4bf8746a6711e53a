"""The symbolic jumper dynamics against independent references."""

import numpy as np
import pinocchio as pin
import pytest
from scipy.integrate import solve_ivp

from clamber.jumper.model import GRAVITY, jumper_model
from clamber.jumper.morphology import Morphology

CAD = Morphology(lengths=(0.05, 0.1, 0.09, 0.06), masses=(0.01, 0.05, 0.14, 0.06, 0.01),
                 link_mass=(0.004, 0.012, 0.01, 0.006), link_com=(0.02, 0.05, 0.03, 0.02),
                 link_inertia=(2e-6, 8e-6, 6e-6, 3e-6))


def pinocchio_chain(morph: Morphology) -> pin.Model:
    """Prismatic x, prismatic y, four revolute z joints, point masses and link bodies."""
    model = pin.Model()
    model.gravity.linear = np.array([0.0, -GRAVITY, 0.0])
    L1, L2, L3, L4 = morph.lengths
    m1, m2, m3, m4, m5 = morph.masses
    jx = model.addJoint(0, pin.JointModelPX(), pin.SE3.Identity(), "x5")
    jy = model.addJoint(jx, pin.JointModelPY(), pin.SE3.Identity(), "y5")
    parent = jy
    # (link length from the previous joint, mass at this joint, link index of the body after)
    lengths_before = [0.0, L4, L3, L2]
    masses_at = [m5, m4, m3, m2]
    link_after = [3, 2, 1, 0]  # link 4, 3, 2, 1 (0-based) hangs on each revolute
    for i in range(4):
        placement = pin.SE3(np.eye(3), np.array([lengths_before[i], 0.0, 0.0]))
        j = model.addJoint(parent, pin.JointModelRZ(), placement, f"r{i}")
        model.appendBodyToJoint(j, pin.Inertia.FromSphere(masses_at[i], 0.0), pin.SE3.Identity())
        li = link_after[i]
        inertia = pin.Inertia(morph.link_mass[li], np.array([morph.link_com[li], 0, 0]),
                              np.diag([0.0, 0.0, morph.link_inertia[li]]))
        model.appendBodyToJoint(j, inertia, pin.SE3.Identity())
        parent = j
    tip = pin.SE3(np.eye(3), np.array([L1, 0.0, 0.0]))
    model.appendBodyToJoint(parent, pin.Inertia.FromSphere(m1, 0.0), tip)
    return model


@pytest.mark.parametrize("morph", [Morphology.nominal(), CAD], ids=["nominal", "cad"])
def test_mass_matrix_and_bias_match_pinocchio(morph):
    """M(q) and h(q, qd) in the paper's coordinates equal Pinocchio's CRBA and RNEA."""
    model = pinocchio_chain(morph)
    data = model.createData()
    rear = jumper_model("rear_foot")
    p = morph.parameters()
    rng = np.random.default_rng(0)
    for _ in range(20):
        q = rng.uniform(-2, 2, 6)
        qd = rng.uniform(-5, 5, 6)
        M_pin = pin.crba(model, data, q)
        M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
        h_pin = pin.rnea(model, data, q, qd, np.zeros(6))
        np.testing.assert_allclose(np.array(rear.mass_matrix(q, p)), M_pin, atol=1e-12)
        np.testing.assert_allclose(np.array(rear.bias(q, qd, p)).ravel(), h_pin, atol=1e-10)


@pytest.mark.parametrize("base", ["com", "rear_foot"])
def test_mass_matrix_is_symmetric_positive_definite(base):
    """M is symmetric with positive eigenvalues at random configurations."""
    m = jumper_model(base)
    p = CAD.parameters()
    for q in np.random.default_rng(1).uniform(-3, 3, (20, 6)):
        M = np.array(m.mass_matrix(q, p))
        np.testing.assert_allclose(M, M.T, atol=1e-15)
        assert np.linalg.eigvalsh(M).min() > 0


@pytest.mark.parametrize("base", ["com", "rear_foot"])
def test_inverse_dynamics_equals_lagrangian_route(base):
    """The lean projected Newton-Euler residual used by the NLP equals M qdd + h."""
    m = jumper_model(base)
    p = CAD.parameters()
    rng = np.random.default_rng(2)
    for _ in range(10):
        q, qd, qdd = rng.normal(size=(3, 6))
        lhs = np.array(m.inverse_dynamics(q, qd, qdd, p)).ravel()
        rhs = np.array(m.mass_matrix(q, p)) @ qdd + np.array(m.bias(q, qd, p)).ravel()
        np.testing.assert_allclose(lhs, rhs, atol=1e-12)


@pytest.mark.parametrize("base", ["com", "rear_foot"])
def test_free_flight_conserves_energy(base):
    """Unactuated, contact-free motion keeps T + V constant over 0.5 s."""
    m = jumper_model(base)
    p = CAD.parameters()
    q0 = np.array([0.1, 0.2, 1.2, 0.4, -0.6, 0.5])
    qd0 = np.array([0.3, 1.5, 4.0, -6.0, 5.0, 8.0])

    def rhs(_t, x):
        return np.r_[x[6:], m.forward_dynamics(x[:6], x[6:], np.zeros(3), p)]

    res = solve_ivp(rhs, (0, 0.5), np.r_[q0, qd0], method="DOP853", rtol=1e-11, atol=1e-12)
    energies = [sum(float(e) for e in m.energy(x[:6], x[6:], p)) for x in res.y.T]
    assert np.ptp(energies) < 1e-8 * max(1.0, abs(energies[0]))


@pytest.mark.parametrize("base", ["com", "rear_foot"])
def test_contact_jacobians_match_finite_differences(base):
    """J1, J5 and dJ/dt qd agree with central differences of the gripper positions."""
    m = jumper_model(base)
    p = CAD.parameters()
    rng = np.random.default_rng(3)
    eps = 1e-6
    for _ in range(5):
        q, qd = rng.normal(size=(2, 6))
        for col, J, jd in ((0, m.jacobian_front, m.jdot_qd_front),
                           (4, m.jacobian_rear, m.jdot_qd_rear)):
            fd = np.column_stack([
                (np.array(m.points(q + eps * e, p))[:, col]
                 - np.array(m.points(q - eps * e, p))[:, col]) / (2 * eps)
                for e in np.eye(6)])
            np.testing.assert_allclose(np.array(J(q, p)), fd, atol=1e-8)
            Jdot = (np.array(J(q + eps * qd, p)) - np.array(J(q - eps * qd, p))) / (2 * eps)
            np.testing.assert_allclose(np.array(jd(q, qd, p)).ravel(), Jdot @ qd, atol=1e-7)


def test_centre_of_mass_base_is_the_same_robot():
    """Changing base and back is the identity; energies agree in both bases."""
    com, rear = jumper_model("com"), jumper_model("rear_foot")
    p = CAD.parameters()
    rng = np.random.default_rng(4)
    q, qd = rng.normal(size=(2, 6))
    qr, qdr = com.to_rear_foot(q, qd, p)
    q2, qd2 = com.from_rear_foot(qr, qdr, p)
    np.testing.assert_allclose(np.array(q2).ravel(), q, atol=1e-14)
    np.testing.assert_allclose(np.array(qd2).ravel(), qd, atol=1e-14)
    for a, b in zip(com.energy(q, qd, p), rear.energy(qr, qdr, p), strict=True):
        assert abs(float(a) - float(b)) < 1e-14
    np.testing.assert_allclose(np.array(com.com(q, p)).ravel(), q[:2], atol=1e-15)
