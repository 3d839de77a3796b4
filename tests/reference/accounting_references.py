#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reference values for tests/accounting_test.cpp, computed independently of the C++ code.

Run:  python3 tests/reference/accounting_references.py            (needs mpmath; pip install mpmath)
      python3 tests/reference/accounting_references.py --cross-check   (also needs dp-accounting)

Everything is evaluated with mpmath at 60 significant digits from the exact binary values of the
double inputs (mpf(float) is exact), and printed to 20 digits. Sources of the formulas:
  KOV:   Kairouz, Oh & Viswanath 2015, Thm 3.3 (the exact privacy profile of k eps-DP mechanisms),
         summed term by term, and again as P[Bin(k,q) <= L] - e^eps_g P[Bin(k,p) <= L] through the
         regularized incomplete beta function (an independent formula for the same number).
  CKS:   Canonne, Kamath & Steinke 2020, Cor 13: delta = inf_alpha exp((alpha-1)(alpha rho - eps))
         / (alpha-1) (1-1/alpha)^alpha, and the same solved for eps; the infimum is found by solving
         d/dalpha = 0 with mpmath.findroot.
  DRV:   Dwork & Roth Thm 3.20 (advanced composition).
With --cross-check the script also evaluates Google's dp_accounting package: its RDP
compute_epsilon (which implements the same CKS Prop 12 conversion over a list of orders) and its
PLD accountant (pessimistic discretization of the worst-case eps-DP mechanism, composed k times).
"""
import sys
from mpmath import mp, mpf, exp, log, expm1, log1p, sqrt, binomial, betainc, findroot, diff, loggamma

mp.dps = 60


def kov_delta_terms(k, eps, eps_g):
    eps, eps_g = mpf(eps), mpf(eps_g)
    p = 1 / (1 + exp(-eps))
    q = 1 - p
    total = mpf(0)
    # Terms more than 45 standard deviations below the binomial mean k q are below e^-1000 of the
    # largest one (Chernoff), far beneath 60 digits: start there.
    first = max(0, int(k * q - 45 * sqrt(k * p * q)) - 1)
    # C(k,l) p^(k-l) q^l, updated term by term (exact recurrence at 60 digits).
    weight = binomial(k, first) * p ** (k - first) * q ** first
    for l in range(first, k + 1):
        if (k - 2 * l) * eps <= eps_g:
            break
        total += weight * (-expm1(eps_g - (k - 2 * l) * eps))
        weight = weight * (k - l) / (l + 1) * q / p
    return total


def kov_delta_cdf(k, eps, eps_g):
    """The same number as P[X <= L] - e^eps_g P[Y <= L], X ~ Bin(k,q), Y ~ Bin(k,p)."""
    eps, eps_g = mpf(eps), mpf(eps_g)
    p = 1 / (1 + exp(-eps))
    q = 1 - p
    L = -1
    while (k - 2 * (L + 1)) * eps > eps_g:
        L += 1
    if L < 0:
        return mpf(0)
    # P[Bin(k, s) <= L] = I_{1-s}(k-L, L+1)
    cdf_q = betainc(k - L, L + 1, 0, 1 - q, regularized=True)
    cdf_p = betainc(k - L, L + 1, 0, 1 - p, regularized=True)
    return cdf_q - exp(eps_g) * cdf_p


def kov_delta_loggamma(k, eps, eps_g):
    """The term sum again, each term from loggamma (no recurrence): a second, independent evaluation."""
    eps, eps_g = mpf(eps), mpf(eps_g)
    log_p = -log1p(exp(-eps))
    log_q = -eps + log_p
    p, q = exp(log_p), exp(log_q)
    first = max(0, int(k * q - 45 * sqrt(k * p * q)) - 1)
    total = mpf(0)
    for l in range(first, k + 1):
        if (k - 2 * l) * eps <= eps_g:
            break
        log_binomial = loggamma(k + 1) - loggamma(l + 1) - loggamma(k - l + 1) + (k - l) * log_p + l * log_q
        total += exp(log_binomial) * (-expm1(eps_g - (k - 2 * l) * eps))
    return total


def kov_epsilon(k, eps, delta):
    """The eps_g with delta(eps_g) = delta, by bisection on [0, k eps] (delta(eps_g) is continuous
    and strictly decreasing there, with kinks where terms enter, which defeat secant methods):
    70 halvings leave a bracket of k eps 2^-70, printed as its upper end."""
    if kov_delta_terms(k, eps, 0) <= delta:
        return mpf(0)
    lo, hi = mpf(0), mpf(k) * mpf(eps)
    for _ in range(70):
        mid = (lo + hi) / 2
        if kov_delta_terms(k, eps, mid) <= mpf(delta):
            hi = mid
        else:
            lo = mid
    return hi


def cks_epsilon(rho, delta):
    rho, delta = mpf(rho), mpf(delta)
    f = lambda a: (1 + a) * rho + (log(1 / delta) + a * log(a / (1 + a)) - log(1 + a)) / a  # a = alpha - 1
    a0 = sqrt(log(1 / delta) / rho)
    a = findroot(lambda x: diff(f, x), a0)
    return f(a), a


def cks_delta(rho, eps):
    rho, eps = mpf(rho), mpf(eps)
    g = lambda a: a * ((1 + a) * rho - eps) - log(a) + (1 + a) * log(a / (1 + a))  # ln delta(a)
    a0 = max((eps - rho) / (2 * rho), mpf('0.01'))
    a = findroot(lambda x: diff(g, x), a0)
    return exp(g(a)), a


def advanced(k, eps, delta_slack):
    eps, d = mpf(eps), mpf(delta_slack)
    return eps * sqrt(2 * k * log(1 / d)) + k * eps * expm1(eps)


def show(label, value):
    print(f"{label:60s} {mp.nstr(value, 20)}")


def main():
    print("# KOV delta(k, eps, eps_g): term sum | incomplete-beta form (k <= 1000) or loggamma terms")
    for k, eps, eps_g in [(1, 0.5, 0.0), (2, 0.5, 0.0), (2, 0.5, 0.25), (3, 0.5, 0.5), (3, 0.5, 0.0),
                          (10, 0.1, 0.3), (10, 1.0, 2.0), (10, 1.0, 9.5), (10, 0.1, 0.0),
                          (1000, 0.1, 5.0), (1000, 0.01, 0.5), (100000, 0.01, 10.0),
                          (1000000, 0.01, 100.0), (1000000, 0.001, 5.0)]:
        show(f"kov_delta k={k} eps={eps} eps_g={eps_g}", kov_delta_terms(k, eps, eps_g))
        if k <= 1000:
            show("    (beta form)", kov_delta_cdf(k, eps, eps_g))
        else:
            show("    (loggamma terms)", kov_delta_loggamma(k, eps, eps_g))
    print("# KOV epsilon(k, eps, delta)")
    for k, eps, delta in [(1, 0.5, 1e-3), (10, 0.1, 1e-6), (50, 0.1, 1e-6), (1000, 0.1, 1e-6), (1000, 0.01, 1e-10),
                          (100000, 0.01, 1e-6), (1000000, 0.001, 1e-9)]:
        show(f"kov_epsilon k={k} eps={eps} delta={delta}", kov_epsilon(k, eps, delta))
    print("# CKS epsilon(rho, delta) (and the optimal alpha - 1)")
    for rho, delta in [(0.5, 1e-6), (1.0, 1e-6), (0.01, 1e-10), (5.0, 1e-5), (1e-4, 1e-8), (2.5, 0.01)]:
        e, a = cks_epsilon(rho, delta)
        show(f"cks_epsilon rho={rho} delta={delta}", e)
        show("    alpha - 1", a)
    print("# CKS delta(rho, eps)")
    for rho, eps in [(0.5, 4.0), (1.0, 5.0), (0.01, 1.0), (0.125, 2.0)]:
        d, a = cks_delta(rho, eps)
        show(f"cks_delta rho={rho} eps={eps}", d)
    print("# advanced composition epsilon(k, eps, delta')")
    for k, eps, d in [(100, 0.1, 1e-6), (1000, 0.01, 1e-9), (1, 1.0, 0.5)]:
        show(f"advanced k={k} eps={eps} delta'={d}", advanced(k, eps, d))

    if "--cross-check" in sys.argv:
        import numpy as np
        from dp_accounting.rdp import rdp_privacy_accountant as rdp
        from dp_accounting.pld import privacy_loss_distribution as pld
        from dp_accounting.pld import common
        print("# dp_accounting RDP compute_epsilon, orders 1.01..10^6 (a valid bound >= the infimum)")
        orders = np.concatenate([np.linspace(1.01, 10, 2000), np.geomspace(10, 1e6, 4000)])
        for rho, delta in [(0.5, 1e-6), (1.0, 1e-6), (0.01, 1e-10), (5.0, 1e-5), (1e-4, 1e-8), (2.5, 0.01)]:
            eps, order = rdp.compute_epsilon(orders, orders * rho, delta)
            print(f"dp_accounting cks rho={rho} delta={delta}: {eps:.15g} (alpha {order:.6g})")
        print("# dp_accounting PLD of k eps-DP worst-case mechanisms (pessimistic, interval 1e-4)")
        for k, eps, eps_g in [(10, 0.1, 0.3), (10, 1.0, 2.0), (1000, 0.1, 5.0)]:
            one = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(eps, 0.0),
                                              value_discretization_interval=1e-4)
            composed = one.self_compose(k)
            print(f"dp_accounting pld k={k} eps={eps} eps_g={eps_g}: {composed.get_delta_for_epsilon(eps_g):.15g}")


if __name__ == "__main__":
    main()
