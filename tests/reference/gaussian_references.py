#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reference values for tests/discrete_calibration_test.cpp and discrete_noise_test.cpp,
computed independently of the C++ code with mpmath at 50 digits.

Run:  python3 tests/reference/gaussian_references.py        (needs mpmath)

  analytic sigma: Balle & Wang 2018 Thm 8, delta(sigma) = Phi(D/(2s) - eps s/D)
                  - e^eps Phi(-D/(2s) - eps s/D), solved for delta(sigma) = delta by bisection.
  discrete delta: Canonne, Kamath & Steinke 2020 Thm 7, delta = P[Z > eps s^2/D - D/2]
                  - e^eps P[Z > eps s^2/D + D/2], Z ~ N_Z(0, s^2), pmf summed to |k| <= 60 s + 60.
  pmf:            discrete Gaussian sigma^2 = 1: P[k] = e^{-k^2/2} / sum_j e^{-j^2/2}.
"""
from mpmath import mp, mpf, erfc, exp, sqrt, nsum, inf, floor

mp.dps = 50


def phi(x):
    return erfc(-x / sqrt(2)) / 2


def gaussian_delta(s, d, e):
    s, d, e = mpf(s), mpf(d), mpf(e)
    return phi(d / (2 * s) - e * s / d) - exp(e) * phi(-d / (2 * s) - e * s / d)


def analytic_sigma(e, delta, d=1.0):
    # delta(sigma) is decreasing; bracket, then bisect to 50 digits.
    lo, hi = mpf('1e-6'), mpf(1)
    while gaussian_delta(hi, d, e) > delta:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if gaussian_delta(mid, d, e) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def discrete_delta(s, d, e):
    s, e = mpf(s), mpf(e)
    k_max = int(60 * s + 60)
    w = lambda k: exp(-mpf(k) ** 2 / (2 * s * s))
    norm = sum(w(k) for k in range(-k_max, k_max + 1))
    x1 = e * s * s / d - mpf(d) / 2
    x2 = e * s * s / d + mpf(d) / 2
    a = sum(w(k) for k in range(int(floor(x1)) + 1, k_max + 1)) / norm
    b = sum(w(k) for k in range(int(floor(x2)) + 1, k_max + 1)) / norm
    return a - exp(e) * b


if __name__ == '__main__':
    for e, delta in [(0.1, 1e-5), (0.5, 1e-6), (1.0, 1e-5), (3.0, 1e-9), (10.0, 1e-6)]:
        print(f'analytic_gaussian_sigma(eps={e}, delta={delta}, D=1) = {mp.nstr(analytic_sigma(e, delta), 20)}')
    for s in [1, 2, 5]:
        print(f'sigma={s} eps=1 D=1: discrete delta = {mp.nstr(discrete_delta(s, 1, 1), 20)}, '
              f'gaussian delta = {mp.nstr(gaussian_delta(s, 1, 1), 20)}')
    norm = nsum(lambda k: exp(-k * k / 2), [-inf, inf])
    for k in range(0, 3):
        print(f'discrete Gaussian sigma^2=1: P[{k}] = {mp.nstr(exp(-mpf(k) ** 2 / 2) / norm, 20)}')
