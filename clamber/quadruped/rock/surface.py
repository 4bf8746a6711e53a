r"""Band-limited fractional-Brownian surfaces by spectral synthesis, with a stated spectrum.

The isotropic PSD is the self-affine model of rock, flat below the roll-off ``q_0``:

.. math::

    C(q) = K \, q^{-\beta}, \quad \beta = 2 (1 + H), \qquad q_0 \le q \le q_{Nyquist}

(``q`` [cycles/m], ``H`` the Hurst exponent). Seeded white noise is filtered by ``sqrt(C)``
on the periodic grid and scaled to the stated RMS height, which fixes ``K``;
:meth:`RoughnessSpectrum.band_rms` gives what the law puts into a band finer than the grid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from clamber import _validate as check
from clamber.exceptions import ConfigError


@dataclass(frozen=True)
class RoughnessSpectrum:
    """A power-law PSD: Hurst exponent ``hurst`` (0, 1), RMS height ``rms`` [m] of the drawn
    band, roll-off wavelength ``rolloff`` [m] above which the PSD is flat."""

    hurst: float = 0.8
    rms: float = 0.005
    rolloff: float = 0.4

    def __post_init__(self) -> None:
        check.number("roughness", "hurst", self.hurst, low=0.0, high=1.0, low_open=True,
                     high_open=True)
        check.numeric_fields(self, "roughness", strict=True, names=("rms", "rolloff"))

    @property
    def exponent(self) -> float:
        """PSD exponent ``beta = 2 (1 + H)``: ``C(q) ~ q^-beta``."""
        return 2.0 * (1.0 + self.hurst)

    def shape(self, q: np.ndarray) -> np.ndarray:
        """Unscaled PSD ``q^-beta`` (flat below the roll-off, zero at ``q = 0``)."""
        q = np.asarray(q, dtype=float)
        q0 = 1.0 / self.rolloff
        out = np.maximum(q, q0) ** (-self.exponent)
        return np.where(q > 0, out, 0.0)

    def level(self, shape: tuple[int, int], spacing: float) -> float:
        """``K`` such that the drawn band of a grid has variance ``rms^2`` (the variance on a
        periodic grid of ``n`` cells of side ``dx`` is ``sum_k C(q_k) / (n dx^2)``)."""
        q = _wavenumbers(shape, spacing)
        dq2 = 1.0 / (q.size * spacing**2)
        return self.rms**2 / float(np.sum(self.shape(q)) * dq2)

    def band_rms(self, level: float, wavelengths: tuple[float, float]) -> float:
        """RMS height [m] of the power law's band between two wavelengths [m] (any order):
        ``sqrt(2 pi K (q_a^-2H - q_b^-2H) / 2H)``."""
        lo, hi = sorted(wavelengths)
        if lo <= 0:
            raise ConfigError(f"wavelengths must be > 0, got {wavelengths}")
        qa, qb = 1.0 / hi, 1.0 / lo
        two_h = 2.0 * self.hurst
        return math.sqrt(2.0 * math.pi * level * (qa**-two_h - qb**-two_h) / two_h)


def _wavenumbers(shape: tuple[int, int], spacing: float) -> np.ndarray:
    """Radial wavenumber |q| [cycles/m] of each FFT bin of a grid."""
    qu = np.fft.fftfreq(shape[0], d=spacing)
    qy = np.fft.fftfreq(shape[1], d=spacing)
    return np.hypot(qu[:, None], qy[None, :])


def fbm_surface(spectrum: RoughnessSpectrum, shape: tuple[int, int], spacing: float,
                rng: np.random.Generator) -> np.ndarray:
    """Heights (n_u, n_y) [m] with zero mean and exactly ``spectrum.rms`` RMS."""
    if min(shape) < 8 or not (spacing > 0 and math.isfinite(spacing)):
        raise ConfigError(f"surface grid must be at least 8 x 8 with spacing > 0, "
                          f"got {shape}, {spacing}")
    q = _wavenumbers(shape, spacing)
    z = np.fft.ifft2(np.fft.fft2(rng.standard_normal(shape)) * np.sqrt(spectrum.shape(q))).real
    z -= z.mean()
    return z * (spectrum.rms / max(float(z.std()), 1e-300))


def radial_psd(z: np.ndarray, spacing: float, n_bins: int = 30
               ) -> tuple[np.ndarray, np.ndarray]:
    """Radially averaged periodogram of a periodic surface in log-spaced bins: bin centres
    [cycles/m] and PSD (normalised as in :meth:`RoughnessSpectrum.level`)."""
    n = z.size
    dq2 = 1.0 / (n * spacing**2)
    P = np.abs(np.fft.fft2(z - z.mean())) ** 2 / n**2 / dq2
    q = _wavenumbers(z.shape, spacing)
    q_lo, q_hi = 1.0 / (max(z.shape) * spacing), 0.5 / spacing
    edges = np.geomspace(q_lo, q_hi, n_bins + 1)
    idx = np.digitize(q.ravel(), edges) - 1
    ok = (idx >= 0) & (idx < n_bins)
    counts = np.bincount(idx[ok], minlength=n_bins)
    sums = np.bincount(idx[ok], weights=P.ravel()[ok], minlength=n_bins)
    keep = counts > 0
    centres = np.sqrt(edges[:-1] * edges[1:])
    return centres[keep], sums[keep] / counts[keep]
