# SPDX-License-Identifier: Apache-2.0
"""The accounting functions against their closed forms, computed here independently: exact
rationals (fractions) for sums and splits, 50-digit decimals for the Kairouz-Oh-Viswanath profile,
and the zCDP conversions' formulas minimised in double precision. Bad inputs raise InvalidArgument
with the library's messages; PrivacyAccountant.charge(list) records all of its charges or none."""

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

import dpselect
from dpselect import PrivacyBound, PrivacyCharge, ReleaseKind

PURE = ReleaseKind.PURE
EM = ReleaseKind.EXPONENTIAL_MECHANISM
APPROXIMATE = ReleaseKind.APPROXIMATE
ULP = 2.0**-52


def kov_delta(k, epsilon, epsilon_total):
    """The exact privacy profile of k epsilon-DP releases (Kairouz, Oh & Viswanath 2015, Thm 3.3),
    to 50 significant digits: E[(1 - e^(epsilon_total - L))_+] for the privacy loss L = (k - 2l)
    epsilon of k-fold randomized response, l ~ Bin(k, 1/(1 + e^epsilon))."""
    with localcontext() as decimal_context:
        decimal_context.prec = 50
        e = Decimal(epsilon)
        p = e.exp() / (1 + e.exp())
        q = 1 - p
        total = Decimal(0)
        for l in range(k + 1):
            loss = (k - 2 * l) * e
            gap = 1 - (Decimal(epsilon_total) - loss).exp()
            if gap > 0:
                total += math.comb(k, l) * p ** (k - l) * q**l * gap
        return total


# ---- composition ------------------------------------------------------------------------------


def test_basic_composition_is_the_sums():
    releases = [PrivacyBound(0.1, 1e-7), PrivacyBound(0.7, 0.0), PrivacyBound(1.3, 2.5e-6), PrivacyBound(1e-3, 1e-9)]
    exact_epsilon = sum(Fraction(r.epsilon) for r in releases)
    exact_delta = sum(Fraction(r.delta) for r in releases)
    for order in (releases, releases[::-1]):
        bound = dpselect.basic_composition(order)
        assert abs(Fraction(bound.epsilon) - exact_epsilon) <= 4 * ULP * exact_epsilon
        assert abs(Fraction(bound.delta) - exact_delta) <= 4 * ULP * exact_delta


@pytest.mark.parametrize("k", [1, 10, 1000, 2**40])
@pytest.mark.parametrize("epsilon,delta,slack", [(0.1, 0.0, 1e-6), (0.01, 1e-9, 1e-5), (1.0, 1e-8, 0.5)])
def test_advanced_composition_is_the_formula(k, epsilon, delta, slack):
    bound = dpselect.advanced_composition(k, PrivacyBound(epsilon, delta), slack)
    with localcontext() as decimal_context:
        decimal_context.prec = 40
        e = Decimal(epsilon)
        # Dwork & Roth 2014, Thm 3.20.
        expected = e * (2 * k * -Decimal(slack).ln()).sqrt() + k * e * (e.exp() - 1)
        expected_delta = k * Decimal(delta) + Decimal(slack)
    assert abs(Decimal(bound.epsilon) - expected) <= Decimal(1e-14) * expected
    assert abs(Decimal(bound.delta) - expected_delta) <= Decimal(1e-15) * expected_delta


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0])
def test_optimal_composition_delta_is_the_exact_profile_rounded_up(epsilon):
    for k in range(1, 21):
        for fraction in (0.0, 1 / 3, 0.7, 1.0, 1.5):
            epsilon_total = k * epsilon * fraction
            exact = kov_delta(k, epsilon, epsilon_total)
            got = Decimal(dpselect.optimal_composition_delta(k, epsilon, epsilon_total))
            where = f"k={k}, epsilon={epsilon}, epsilon_total={epsilon_total}"
            assert got >= exact, where
            assert got <= exact * (1 + Decimal(1e-12)), where


@pytest.mark.parametrize("k", [1, 5, 20])
@pytest.mark.parametrize("epsilon", [0.1, 1.0])
@pytest.mark.parametrize("delta_total", [1e-9, 1e-6, 1e-3, 0.1])
def test_optimal_composition_epsilon_inverts_the_profile(k, epsilon, delta_total):
    got = dpselect.optimal_composition_epsilon(k, epsilon, delta_total)
    # Feasible (never below the exact inverse) ...
    assert kov_delta(k, epsilon, got) <= Decimal(delta_total)
    # ... and the smallest feasible value to a relative 2^-40 (documented), unless 0 already fits.
    if got > 0:
        assert kov_delta(k, epsilon, got * (1 - 2.0**-39)) > Decimal(delta_total)
    else:
        assert kov_delta(k, epsilon, 0.0) <= Decimal(delta_total)


def test_optimal_composition_epsilon_without_delta_is_k_epsilon_rounded_up():
    for k, epsilon in ((3, 0.1), (7, 0.3), (1000, 0.01)):
        got = dpselect.optimal_composition_epsilon(k, epsilon, 0.0)
        exact = k * Fraction(epsilon)
        assert exact <= Fraction(got) <= exact * (1 + Fraction(ULP))


# ---- zCDP -------------------------------------------------------------------------------------


def cks_log_delta(rho, epsilon, alpha):
    """ln of the bound of Canonne, Kamath & Steinke 2020, Cor 13, at one alpha > 1:
    exp((alpha-1)(alpha rho - epsilon)) / (alpha-1) (1-1/alpha)^alpha."""
    return (alpha - 1) * (alpha * rho - epsilon) - math.log(alpha - 1) + alpha * math.log1p(-1 / alpha)


def cks_epsilon(rho, delta, alpha):
    """The same conversion solved for epsilon at one alpha > 1."""
    return alpha * rho + (math.log(1 / delta) + (alpha - 1) * math.log1p(-1 / alpha) - math.log(alpha)) / (alpha - 1)


def cks_best_alpha(rho, epsilon):
    """The minimiser of cks_log_delta: its derivative in alpha, (2 alpha - 1) rho - epsilon +
    ln(1 - 1/alpha), increases from -inf to +inf (the second derivative is 2 rho + 1/(alpha (alpha - 1))
    > 0), so bisection finds its root."""
    low, high = 1.0, 2.0
    while (2 * high - 1) * rho - epsilon + math.log1p(-1 / high) < 0:
        high *= 2
    for _ in range(200):
        middle = (low + high) / 2
        if (2 * middle - 1) * rho - epsilon + math.log1p(-1 / middle) < 0:
            low = middle
        else:
            high = middle
    return high


ALPHAS = [1 + 10.0**e for e in (-4, -2, -1, -0.5, 0, 0.5, 1, 2)]


def test_zcdp_of_pure_and_of_the_exponential_mechanism():
    for epsilon in (1e-3, 0.1, 0.7, 3.0):
        assert abs(Fraction(dpselect.zcdp_of_pure(epsilon)) - Fraction(epsilon) ** 2 / 2) <= ULP * Fraction(epsilon) ** 2
        assert abs(Fraction(dpselect.zcdp_of_exponential_mechanism(epsilon)) - Fraction(epsilon) ** 2 / 8) <= (
            ULP * Fraction(epsilon) ** 2
        )


@pytest.mark.parametrize("rho,epsilon", [(0.01, 0.5), (0.1, 1.0), (1.0, 5.0), (0.005, 0.1), (2.0, 0.0)])
def test_delta_from_zcdp_is_the_infimum_of_the_cks_bound(rho, epsilon):
    got = dpselect.delta_from_zcdp(rho, epsilon)
    log_total_variation = 0.5 * math.log(-math.expm1(-rho))
    log_infimum = min(cks_log_delta(rho, epsilon, cks_best_alpha(rho, epsilon)), log_total_variation)
    assert got > 0
    # An infimum: never above the bound at any alpha (nor the total-variation cap) ...
    for alpha in ALPHAS:
        assert math.log(got) <= cks_log_delta(rho, epsilon, alpha) + 1e-12
    assert math.log(got) <= log_total_variation + 1e-15
    # ... and equal to the minimum (the double-precision evaluation here is good to ~1e-13).
    assert math.log(got) == pytest.approx(log_infimum, abs=1e-10)


def test_delta_from_zcdp_is_monotone():
    rhos = [0.001, 0.01, 0.1, 1.0]
    epsilons = [0.0, 0.1, 0.5, 1.0, 3.0]
    for rho in rhos:
        deltas = [dpselect.delta_from_zcdp(rho, e) for e in epsilons]
        assert all(a >= b for a, b in zip(deltas, deltas[1:])), (rho, deltas)
    for epsilon in epsilons:
        deltas = [dpselect.delta_from_zcdp(r, epsilon) for r in rhos]
        assert all(a <= b for a, b in zip(deltas, deltas[1:])), (epsilon, deltas)


@pytest.mark.parametrize("rho,delta", [(0.01, 1e-6), (0.1, 1e-9), (1.0, 1e-5), (0.05, 0.01)])
def test_epsilon_from_zcdp_tight_is_the_smallest_epsilon(rho, delta):
    got = dpselect.epsilon_from_zcdp_tight(rho, delta)
    plain = dpselect.epsilon_from_zcdp(rho, delta)
    # Bun & Steinke 2016: rho + 2 sqrt(rho ln(1/delta)).
    assert plain == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / delta)), rel=1e-15)
    assert 0 < got <= plain
    for alpha in ALPHAS:
        assert got <= cks_epsilon(rho, delta, alpha) * (1 + 1e-12)
    # Feasible for delta_from_zcdp, and a slightly smaller epsilon is not.
    assert dpselect.delta_from_zcdp(rho, got) <= delta * (1 + 1e-9)
    assert dpselect.delta_from_zcdp(rho, got * (1 - 1e-6)) > delta


def test_epsilon_from_zcdp_tight_is_zero_above_the_total_variation():
    rho = 0.01
    assert dpselect.epsilon_from_zcdp_tight(rho, math.sqrt(-math.expm1(-rho)) * 1.01) == 0.0


# ---- the best bound for k equal releases ----------------------------------------------------


def test_compose_homogeneous_for_one_release_is_the_kov_closed_form():
    # k = 1: delta = p (1 - e^(eps_g - eps)), so eps_g = eps + ln(1 - delta/p), p = 1/(1 + e^-eps).
    bound = dpselect.compose_homogeneous(1, 0.5, PURE, 1e-6)
    p = 1 / (1 + math.exp(-0.5))
    assert bound.route == dpselect.CompositionRoute.OPTIMAL_HOMOGENEOUS
    assert bound.epsilon == pytest.approx(0.5 + math.log1p(-1e-6 / p), rel=1e-12)
    assert bound.delta == 1e-6


def test_compose_homogeneous_without_delta_is_basic():
    bound = dpselect.compose_homogeneous(30, 0.1, EM, 0.0)
    assert bound.route == dpselect.CompositionRoute.BASIC
    # Rounded to nearest, as documented for basic composition.
    assert abs(Fraction(bound.epsilon) - 30 * Fraction(0.1)) <= 30 * Fraction(0.1) * Fraction(ULP)
    assert bound.delta == 0.0


@pytest.mark.parametrize("k,epsilon,kind", [(10, 0.1, PURE), (200, 0.05, PURE), (10_000, 0.01, EM), (50, 1.0, EM)])
def test_compose_homogeneous_is_the_best_route(k, epsilon, kind):
    delta = 1e-6
    bound = dpselect.compose_homogeneous(k, epsilon, kind, delta)
    rho = k * (dpselect.zcdp_of_pure(epsilon) if kind == PURE else dpselect.zcdp_of_exponential_mechanism(epsilon))
    routes = {
        dpselect.CompositionRoute.BASIC: float(k * Fraction(epsilon)),
        dpselect.CompositionRoute.ADVANCED: dpselect.advanced_composition(k, PrivacyBound(epsilon), delta).epsilon,
        dpselect.CompositionRoute.OPTIMAL_HOMOGENEOUS: dpselect.optimal_composition_epsilon(k, epsilon, delta),
        dpselect.CompositionRoute.ZCDP: dpselect.epsilon_from_zcdp_tight(rho, delta),
    }
    best = min(routes.values())
    assert bound.epsilon == pytest.approx(routes[bound.route], rel=1e-12)
    assert bound.epsilon == pytest.approx(best, rel=1e-12)
    assert bound.delta == (0.0 if bound.route == dpselect.CompositionRoute.BASIC else delta)


# ---- splitting a budget ----------------------------------------------------------------------


@pytest.mark.parametrize("epsilon_total,k", [(1.0, 3), (1.0, 7), (0.3, 10), (2.5, 1000), (1.0, 2**53)])
def test_split_evenly_sums_to_at_most_the_total(epsilon_total, k):
    share = dpselect.split_evenly(epsilon_total, k)
    exact = k * Fraction(share)
    assert exact <= Fraction(epsilon_total)
    assert exact >= Fraction(epsilon_total) * (1 - Fraction(2) ** -49)
    if k <= 1000:
        running = 0.0
        for _ in range(k):
            running += share
        assert running <= epsilon_total


def test_split_by_weights_is_proportional_and_within_the_total():
    weights = [1.0, 2.0, 3.0, 0.125, 10.0]
    shares = dpselect.split_by_weights(1.0, weights)
    assert len(shares) == len(weights)
    ratios = [s / w for s, w in zip(shares, weights)]
    assert max(ratios) <= min(ratios) * (1 + 4 * ULP)
    exact = sum(Fraction(s) for s in shares)
    assert Fraction(1) * (1 - Fraction(2) ** -49) <= exact <= 1
    assert sum(shares) <= 1.0 and sum(shares[::-1]) <= 1.0
    assert dpselect.split_by_weights(1.0, np.array(weights)) == shares


@pytest.mark.parametrize("k,target_epsilon,target_delta,kind", [(100, 1.0, 1e-6, EM), (20, 2.0, 1e-5, PURE),
                                                                 (1000, 1.0, 0.0, PURE)])
def test_per_release_epsilon_fills_the_budget_and_the_accountant_accepts_it(k, target_epsilon, target_delta, kind):
    each = dpselect.per_release_epsilon(k, target_epsilon, target_delta, kind)
    bound = dpselect.compose_homogeneous(k, each, kind, target_delta)
    assert bound.epsilon <= target_epsilon
    assert bound.epsilon > target_epsilon * (1 - 1e-9)
    if target_delta == 0.0:
        assert each == dpselect.split_evenly(target_epsilon, k)
    accountant = dpselect.PrivacyAccountant(PrivacyBound(target_epsilon, target_delta))
    accountant.charge([PrivacyCharge(kind, each, count=k)])
    assert accountant.release_count == k
    with pytest.raises(dpselect.BudgetExceeded):
        accountant.charge(kind, each)
    assert accountant.release_count == k


def test_release_kind_of_each_mechanism():
    assert dpselect.release_kind(dpselect.Mechanism.EXPONENTIAL) == EM
    assert dpselect.release_kind(dpselect.Mechanism.PERMUTE_AND_FLIP) == PURE
    assert dpselect.release_kind(dpselect.Mechanism.LAPLACE_NOISY_MAX) == PURE


# ---- charges -----------------------------------------------------------------------------------


def test_privacy_charge_fields_and_repr():
    charge = PrivacyCharge(APPROXIMATE, 0.05, 1e-7, count=2)
    assert (charge.kind, charge.epsilon, charge.delta, charge.count) == (APPROXIMATE, 0.05, 1e-7, 2)
    assert repr(charge) == "PrivacyCharge(kind=approximate, epsilon=0.05, delta=1e-07, count=2)"
    assert repr(PrivacyCharge(PURE, 0.5)) == "PrivacyCharge(kind=pure, epsilon=0.5, delta=0.0, count=1)"


def test_charging_a_list_records_everything_or_nothing():
    together = dpselect.PrivacyAccountant(PrivacyBound(1.0, 1e-6))
    one_by_one = dpselect.PrivacyAccountant(PrivacyBound(1.0, 1e-6))
    together.charge([PrivacyCharge(EM, 0.01, count=30), PrivacyCharge(APPROXIMATE, 0.05, 1e-7, 2)])
    for _ in range(30):
        one_by_one.charge(EM, 0.01)
    for _ in range(2):
        one_by_one.charge(APPROXIMATE, 0.05, 1e-7)
    assert together.release_count == 32
    assert together.spent().epsilon == pytest.approx(one_by_one.spent().epsilon, abs=1e-15)
    assert together.spent().route == one_by_one.spent().route
    spent = together.spent().epsilon

    # One entry over budget refuses them all.
    with pytest.raises(dpselect.BudgetExceeded, match="beyond the budget .*nothing was recorded"):
        together.charge([PrivacyCharge(PURE, 0.01), PrivacyCharge(PURE, 0.9)])
    # Bad entries are named by index (a single entry by its field alone); nothing is recorded.
    bad_lists = [
        ([PrivacyCharge(PURE, 0.01), PrivacyCharge(PURE, -1.0)], r"charges\[1\]\.epsilon must be finite and > 0 \(got -1\)"),
        ([PrivacyCharge(PURE, 0.01, count=0), PrivacyCharge(PURE, 0.01)], r"charges\[0\]\.count .*\(got 0\)"),
        ([PrivacyCharge(PURE, 0.01, 1e-9), PrivacyCharge(PURE, 0.01)], r"charges\[0\]\.delta .*\(got 1e-09\)"),
        ([PrivacyCharge(PURE, 0.01, count=0)], r"^dpselect: count must be in \[1, 2\^53\] \(got 0\)"),
    ]
    for charges, message in bad_lists:
        with pytest.raises(dpselect.InvalidArgument, match=message):
            together.charge(charges)
    together.charge([])
    assert together.release_count == 32
    assert together.spent().epsilon == spent


# ---- bad input -------------------------------------------------------------------------------

NAN, INF = float("nan"), float("inf")
BAD_POSITIVES = [(0.0, "(got 0)"), (-1.0, "(got -1)"), (NAN, "(got nan)"), (INF, "(got inf)"), (-INF, "(got -inf)")]
BAD_NON_NEGATIVES = [(-1.0, "(got -1)"), (NAN, "(got nan)"), (INF, "(got inf)"), (-INF, "(got -inf)")]
BAD_DELTAS = [(-1e-9, "(got -1e-09)"), (1.0, "(got 1)"), (1.5, "(got 1.5)"), (NAN, "(got nan)"), (INF, "(got inf)"),
              (-INF, "(got -inf)")]
BAD_OPEN_DELTAS = [(0.0, "(got 0)"), (-1e-9, "(got -1e-09)"), (1.0, "(got 1)"), (NAN, "(got nan)")]


def raises_invalid(call, *parts):
    with pytest.raises(dpselect.InvalidArgument) as caught:
        call()
    for part in parts:
        assert part in str(caught.value), (part, str(caught.value))


@pytest.mark.parametrize("bad,got", BAD_POSITIVES)
def test_epsilons_must_be_positive_and_finite(bad, got):
    raises_invalid(lambda: dpselect.basic_composition([PrivacyBound(0.1), PrivacyBound(bad)]),
                   "releases[1].epsilon", "finite and > 0", got)
    raises_invalid(lambda: dpselect.advanced_composition(10, PrivacyBound(bad), 1e-6), "per_release.epsilon", got)
    raises_invalid(lambda: dpselect.optimal_composition_delta(10, bad, 1.0), "epsilon", got)
    raises_invalid(lambda: dpselect.optimal_composition_epsilon(10, bad, 1e-6), "epsilon", got)
    raises_invalid(lambda: dpselect.zcdp_of_pure(bad), "epsilon", got)
    raises_invalid(lambda: dpselect.zcdp_of_exponential_mechanism(bad), "epsilon", got)
    raises_invalid(lambda: dpselect.delta_from_zcdp(bad, 1.0), "rho", got)
    raises_invalid(lambda: dpselect.epsilon_from_zcdp_tight(bad, 1e-6), "rho", got)
    raises_invalid(lambda: dpselect.compose_homogeneous(10, bad, PURE, 1e-6), "epsilon", got)
    raises_invalid(lambda: dpselect.split_evenly(bad, 3), "epsilon_total", got)
    raises_invalid(lambda: dpselect.split_by_weights(bad, [1.0]), "epsilon_total", got)
    raises_invalid(lambda: dpselect.split_by_weights(1.0, [1.0, bad]), "weights[1]", got)
    raises_invalid(lambda: dpselect.per_release_epsilon(10, bad, 1e-6, PURE), "target_epsilon", got)
    accountant = dpselect.PrivacyAccountant(PrivacyBound(1.0, 1e-6))
    for kind in (PURE, EM, APPROXIMATE):
        raises_invalid(lambda: accountant.charge([PrivacyCharge(kind, bad)]), "epsilon", got)
    assert accountant.release_count == 0


@pytest.mark.parametrize("bad,got", BAD_NON_NEGATIVES)
def test_epsilon_totals_must_be_non_negative_and_finite(bad, got):
    raises_invalid(lambda: dpselect.optimal_composition_delta(10, 0.1, bad), "epsilon_total", "finite and >= 0", got)
    raises_invalid(lambda: dpselect.delta_from_zcdp(1.0, bad), "epsilon", "finite and >= 0", got)


def test_zero_epsilon_totals_are_allowed():
    assert dpselect.optimal_composition_delta(10, 0.1, 0.0) > 0.0  # the total variation distance
    assert dpselect.delta_from_zcdp(1.0, 0.0) > 0.0


@pytest.mark.parametrize("bad,got", BAD_DELTAS)
def test_deltas_must_lie_in_zero_one(bad, got):
    raises_invalid(lambda: dpselect.basic_composition([PrivacyBound(0.1, bad)]), "releases[0].delta", "in [0, 1)", got)
    raises_invalid(lambda: dpselect.advanced_composition(10, PrivacyBound(0.1, bad), 1e-6), "per_release.delta", got)
    raises_invalid(lambda: dpselect.optimal_composition_epsilon(10, 0.1, bad), "delta_total", got)
    raises_invalid(lambda: dpselect.compose_homogeneous(10, 0.1, PURE, bad), "delta_budget", got)
    raises_invalid(lambda: dpselect.per_release_epsilon(10, 1.0, bad, PURE), "target_delta", got)
    accountant = dpselect.PrivacyAccountant(PrivacyBound(1.0, 1e-6))
    raises_invalid(lambda: accountant.charge([PrivacyCharge(APPROXIMATE, 0.1, bad)]),
                   "delta", "in [0, 1)", got)
    assert accountant.release_count == 0


@pytest.mark.parametrize("bad,got", BAD_OPEN_DELTAS)
def test_open_deltas_must_lie_strictly_inside_zero_one(bad, got):
    raises_invalid(lambda: dpselect.advanced_composition(10, PrivacyBound(0.1), bad), "delta_slack", "in (0, 1)", got)
    raises_invalid(lambda: dpselect.epsilon_from_zcdp_tight(1.0, bad), "delta", "in (0, 1)", got)


def test_pure_and_exponential_mechanism_charges_carry_no_delta():
    accountant = dpselect.PrivacyAccountant(PrivacyBound(1.0, 1e-6))
    for kind in (PURE, EM):
        raises_invalid(lambda: accountant.charge([PrivacyCharge(kind, 0.1, 1e-9)]),
                       "delta", "0 for a pure or exponential-mechanism release", "(got 1e-09)")
    assert accountant.release_count == 0


@pytest.mark.parametrize("k", [0, 2**53 + 1])
def test_counts_must_be_between_one_and_2_to_53(k):
    got = f"(got {k})"
    raises_invalid(lambda: dpselect.advanced_composition(k, PrivacyBound(0.1), 1e-6), "k must be in [1, 2^53]", got)
    raises_invalid(lambda: dpselect.optimal_composition_delta(k, 0.1, 1.0), "k must be in [1, 2^53]", got)
    raises_invalid(lambda: dpselect.optimal_composition_epsilon(k, 0.1, 1e-6), "k must be in [1, 2^53]", got)
    raises_invalid(lambda: dpselect.compose_homogeneous(k, 0.1, PURE, 1e-6), "k must be", got)
    raises_invalid(lambda: dpselect.split_evenly(1.0, k), "k must be", got)
    raises_invalid(lambda: dpselect.per_release_epsilon(k, 1.0, 1e-6, PURE), "k must be", got)


def test_negative_counts_and_wrong_types_raise_type_error():
    with pytest.raises(TypeError, match="split_evenly"):
        dpselect.split_evenly(1.0, -3)
    with pytest.raises(TypeError, match="basic_composition"):
        dpselect.basic_composition([(0.1, 0.0)])
    with pytest.raises(TypeError, match="charge"):
        dpselect.PrivacyAccountant(PrivacyBound(1.0)).charge([(PURE, 0.1)])


def test_empty_lists_kinds_and_tiny_shares():
    raises_invalid(lambda: dpselect.basic_composition([]), "releases", "(got size 0)")
    raises_invalid(lambda: dpselect.split_by_weights(1.0, []), "weights", "(got size 0)")
    raises_invalid(lambda: dpselect.per_release_epsilon(10, 1.0, 1e-6, APPROXIMATE),
                   "kind must be pure or exponential_mechanism", "(got approximate)")
    raises_invalid(lambda: dpselect.compose_homogeneous(10, 0.1, APPROXIMATE, 1e-6),
                   "kind must be pure or exponential_mechanism")
    raises_invalid(lambda: dpselect.split_by_weights(1.0, [1e308, 1e-300]), "weights[1]", "(got 1e-300)")
    raises_invalid(lambda: dpselect.split_evenly(5e-324, 3), "epsilon_total", "(got 5e-324)")
