"""Generated rock walls: the stated spectrum, determinism, local geometry, the MuJoCo field."""

import json
import math

import mujoco
import numpy as np
import pytest
from scipy.integrate import quad
from scipy.interpolate import RegularGridInterpolator

from clamber.cli import main
from clamber.exceptions import ConfigError
from clamber.quadruped.rock.mjcf import add_rock_wall, hfield_bytes, wall_mjcf
from clamber.quadruped.rock.surface import RoughnessSpectrum, fbm_surface, radial_psd
from clamber.quadruped.rock.wall import RockWallSpec, generate_wall, surface_features


@pytest.mark.parametrize("hurst", [0.5, 0.8])
def test_generated_spectrum_has_the_stated_exponent_and_rms(hurst):
    """The radially averaged PSD of a drawn surface falls as q^-2(1+H) (log-log slope within
    0.15) in the power-law band, its level matches K q^-beta within 30 %, and its RMS is the
    stated one."""
    spec = RoughnessSpectrum(hurst=hurst, rms=0.01, rolloff=0.5)
    dx, shape = 0.01, (256, 256)
    z = fbm_surface(spec, shape, dx, np.random.default_rng(4))
    assert z.std() == pytest.approx(spec.rms, rel=1e-9)
    assert abs(z.mean()) < 1e-12
    q, C = radial_psd(z, dx, n_bins=40)
    band = (q > 2.5 / spec.rolloff) & (q < 0.4 / dx)
    slope = np.polyfit(np.log(q[band]), np.log(C[band]), 1)[0]
    assert slope == pytest.approx(-spec.exponent, abs=0.15)
    ratio = C[band] / (spec.level(shape, dx) * spec.shape(q[band]))
    assert np.exp(np.mean(np.log(ratio))) == pytest.approx(1.0, abs=0.3)


def test_band_rms_integrates_the_power_law():
    """The asperity-band RMS equals sqrt of the numerically integrated 2-D PSD
    (2 pi int q C(q) dq) over the band."""
    spec = RoughnessSpectrum(hurst=0.7)
    K = 3e-9
    lo, hi = 1e-3, 1e-2
    var = quad(lambda q: 2 * math.pi * q * K * q ** (-spec.exponent), 1 / hi, 1 / lo)[0]
    assert spec.band_rms(K, (lo, hi)) == pytest.approx(math.sqrt(var), rel=1e-6)


def test_same_seed_same_wall_other_seed_other_wall():
    """A wall is a pure function of (incline, seed, spec): same seed, identical heights."""
    small = RockWallSpec(length=0.6, width=0.4)
    a, b = generate_wall(90, 5, small), generate_wall(90, 5, small)
    c = generate_wall(90, 6, small)
    assert np.array_equal(a.z, b.z) and a.knobs == b.knobs
    assert not np.allclose(a.z, c.z)


def test_wall_frame_follows_the_incline():
    """At 90 deg the wall normal is horizontal (-x), at 110 deg it points down: overhang."""
    small = RockWallSpec(length=0.6, width=0.4)
    assert generate_wall(90, 0, small).rotation[:, 2] == pytest.approx([-1, 0, 0], abs=1e-12)
    assert generate_wall(110, 0, small).rotation[2, 2] < -0.3
    with pytest.raises(ConfigError):
        generate_wall(150, 0, small)


def test_features_recover_an_analytic_patch():
    """On z = s u - kappa/2 (u^2 + y^2) the fit returns convexity kappa, the normal of the
    slope s at the centre and no step; a 1 cm step under the pad gives a step of mm size."""
    dx = 0.005
    o = np.arange(-40, 41) * dx
    U, Y = np.meshgrid(o, o, indexing="ij")
    kappa, s = 12.0, 0.2
    f = surface_features(s * U - 0.5 * kappa * (U**2 + Y**2), dx, 0.06)
    c = (40, 40)
    assert f.convexity[c] == pytest.approx(kappa, rel=1e-6)
    n = np.array([-s, 0.0, 1.0]) / math.hypot(s, 1.0)
    assert f.normal[c] == pytest.approx(n, abs=1e-9)
    assert f.step[c] < 1e-9
    stepped = surface_features(np.where(U > 0.01, 0.01, 0.0), dx, 0.035)
    assert stepped.step[c] > 1.5e-3


@pytest.mark.parametrize("incline", [70.0, 90.0, 110.0])
def test_mujoco_height_field_matches_the_wall(incline):
    """Rays cast along -n onto the compiled height field hit the wall's interpolated
    height within 1 mm (MuJoCo's triangles vs bilinear interpolation)."""
    wall = generate_wall(incline, 2, RockWallSpec(length=1.0, width=0.6))
    spec = mujoco.MjSpec()
    add_rock_wall(spec, wall)
    m = spec.compile()
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    rng = np.random.default_rng(0)
    geom = np.zeros(1, np.int32)
    for _ in range(20):
        u, y = rng.uniform(0.1, 0.9), rng.uniform(-0.25, 0.25)
        dist = mujoco.mj_ray(m, d, wall.to_world(u, y, 0.5), -wall.rotation[:, 2], None, 1,
                             -1, geom)
        height = RegularGridInterpolator((wall.u, wall.y), wall.z)((u, y))
        assert 0.5 - dist == pytest.approx(float(height), abs=1e-3)


def test_mjcf_asset_loads_with_its_height_field(tmp_path):
    """The standalone MJCF plus binary elevations compile to one field of the wall's grid."""
    wall = generate_wall(90, 1, RockWallSpec(length=0.6, width=0.4))
    (tmp_path / "w.bin").write_bytes(hfield_bytes(wall))
    (tmp_path / "w.xml").write_text(wall_mjcf(wall, "w.bin"))
    m = mujoco.MjModel.from_xml_path(str(tmp_path / "w.xml"))
    assert (m.hfield_ncol[0], m.hfield_nrow[0]) == wall.z.shape
    assert m.hfield_size[0][2] == pytest.approx(wall.z.max() - wall.z.min())


def test_wall_command_writes_asset_and_figure(tmp_path, capsys):
    """`clamber quadruped wall --seed N --out DIR` writes the MJCF, the field and a PNG."""
    rc = main(["quadruped", "wall", "--seed", "4", "--out", str(tmp_path), "--json"])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    for key in ("mjcf", "hfield", "figure"):
        assert (tmp_path / summary[key].split("/")[-1]).is_file()
    assert summary["psd_exponent"] == pytest.approx(3.6)
