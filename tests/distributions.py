"""Exact pmfs and a chi-square test for the discrete samplers, shared by
tests/test_random_kernels_host.py and benchmarks/probes/random_probe.py (which puts this
folder on sys.path).  scipy.stats where it is installed, else closed forms."""
from __future__ import annotations

import math

import numpy as np

try:
    from scipy import stats as _stats
except ImportError:  # pragma: no cover - scipy is optional
    _stats = None


def _log_choose(n, k):
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def hypergeom_pmf(k, good, bad, sample):
    if _stats is not None:
        return _stats.hypergeom.pmf(k, good + bad, good, sample)
    return np.array([math.exp(_log_choose(good, j) + _log_choose(bad, sample - j) -
                              _log_choose(good + bad, sample))
                     if max(0, sample - bad) <= j <= min(good, sample) else 0.0 for j in k])


def logseries_pmf(k, p):
    """For k >= 1 (the callers mask k = 0)."""
    if _stats is not None:
        return _stats.logser.pmf(k, p)
    k = np.asarray(k, np.float64)
    return -np.power(p, k) / (k * math.log1p(-p))


def zipf_pmf(k, a):
    """For k >= 1 (the callers mask k = 0)."""
    if _stats is not None:
        return _stats.zipf.pmf(k, a)
    big = 10_000  # zeta(a) by Euler-Maclaurin after `big` terms
    zeta = (np.sum(np.arange(1, big + 1, dtype=np.float64) ** -a) + big ** (1 - a) / (a - 1)
            - big ** -a / 2 + a * big ** (-a - 1) / 12)
    return np.asarray(k, np.float64) ** -a / zeta


def at_least_1(pmf):
    """pmf(k) for k >= 1 and 0 at k = 0 (logseries and zipf start at 1)."""
    return lambda k: np.where(k >= 1, pmf(np.maximum(k, 1)), 0.0)


def chi2_stat(x, pmf, kmax):
    """(statistic, degrees of freedom) of the draws x against pmf over 0..kmax, the mass
    above kmax in the last bin; neighbouring bins merged until each expects >= 5."""
    n = x.size
    counts = np.bincount(np.minimum(x, kmax + 1), minlength=kmax + 2).astype(np.float64)
    expect = n * np.asarray(pmf(np.arange(kmax + 1)), np.float64)
    expect = np.append(expect, max(n - expect.sum(), 0.0))
    obs_bins, exp_bins, o, e = [], [], 0.0, 0.0
    for ci, ei in zip(counts, expect):
        o, e = o + ci, e + ei
        if e >= 5:
            obs_bins.append(o), exp_bins.append(e)
            o = e = 0.0
    if exp_bins:
        obs_bins[-1] += o
        exp_bins[-1] += e
    obs_bins, exp_bins = np.array(obs_bins), np.array(exp_bins)
    return float(np.sum((obs_bins - exp_bins) ** 2 / exp_bins)), max(len(exp_bins) - 1, 1)


def chi2_limit(dof):
    """The 99.99% point of chi-square with ``dof`` degrees of freedom plus 3 (Wilson-
    Hilferty, within a percent of the exact quantile from 3 degrees of freedom)."""
    z = 3.72  # the 99.99% normal quantile
    return dof * (1 - 2 / (9 * dof) + z * math.sqrt(2 / (9 * dof))) ** 3 + 3


def chi2_ok(x, pmf, kmax):
    """Whether the statistic is below ``chi2_limit`` (the seeds are fixed), and a message."""
    stat, dof = chi2_stat(x, pmf, kmax)
    limit = chi2_limit(dof)
    return stat < limit, f"chi2 {stat:.1f} on {dof} dof, limit {limit:.1f}"
