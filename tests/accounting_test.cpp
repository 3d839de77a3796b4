// SPDX-License-Identifier: Apache-2.0
// Privacy accounting: composition theorems against independently computed references, the
// accountant's budget (refusals record nothing, concurrent charges add up, never below the optimal
// composition), splitting round trips, and every bad input.
//
// References: unless a closed form is derived next to it, each constant below is a line printed by
//   python3 tests/reference/accounting_references.py --cross-check
// (mpmath 1.3 at 60 digits from the exact binary value of each double input; the script's header
// names the formulas and their sources, and evaluates each profile value a second, independent
// way: the incomplete-beta form for k <= 1000, per-term loggamma for larger k, agreeing to all 20
// printed digits). Its --cross-check part runs Google's dp_accounting 0.4.x as a third opinion:
// its RDP conversion (the same CKS Prop 12 over a grid of orders) gives values at or just above
// ours, and its PLD accountant reproduces the KOV values to 1e-13.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "dpselect/accounting.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/top_k.hpp"
#include "support/expect_invalid.hpp"

namespace dpselect::testing {
namespace {


// An upper bound that is also tight: exact <= value <= exact (1 + relative). `exact` is the
// reference rounded to the nearest double; a value that is >= the exact real is >= that too.
void expect_tight_upper_bound(double value, double exact, double relative, const std::string& what) {
  EXPECT_GE(value, exact) << what << ": below the exact value";
  EXPECT_LE(value, exact * (1.0 + relative)) << what << ": looser than " << relative << " relative";
}

// p = e^eps / (1 + e^eps), randomized response's probability of the truth (KOV Thm 3.3).
long double truth_probability(long double epsilon) { return 1.0L / (1.0L + std::exp(-epsilon)); }

// ---- basic and advanced composition ---------------------------------------------------------

TEST(BasicComposition, SumsEpsilonsAndDeltas) {
  const std::vector<PrivacyBound> releases = {{0.1, 1e-6}, {0.2, 0.0}, {0.7, 2e-6}};
  const PrivacyBound total = basic_composition(releases);
  // Dwork & Roth 2014, Thm 3.16: 0.1 + 0.2 + 0.7 and 1e-6 + 2e-6, each within an ulp.
  EXPECT_NEAR(total.epsilon, 1.0, 2.3e-16);
  EXPECT_NEAR(total.delta, 3e-6, 3e-6 * 2.3e-16);
}

TEST(BasicComposition, CompensatedSumOfAMillionSmallEpsilons) {
  // The exact sum of 10^6 copies of the double nearest 1e-6 (9.99999999999999954748e-7) is
  // 0.999999999999999954748; a plain running sum would be off by about 1e-10.
  const std::vector<PrivacyBound> releases(1'000'000, PrivacyBound{1e-6, 1e-12});
  const PrivacyBound total = basic_composition(releases);
  EXPECT_NEAR(total.epsilon, 0.999999999999999954748, 2.3e-16);
  EXPECT_NEAR(total.delta, 1e-6, 1e-6 * 2.3e-16);
}

TEST(BasicComposition, OrderDoesNotMatter) {
  std::vector<PrivacyBound> releases;
  for (int i = 1; i <= 1000; ++i) releases.push_back({1.0 / i, 1e-9 / i});
  const PrivacyBound forward = basic_composition(releases);
  const std::vector<PrivacyBound> reversed(releases.rbegin(), releases.rend());
  const PrivacyBound backward = basic_composition(reversed);
  EXPECT_EQ(forward.epsilon, backward.epsilon);
  EXPECT_EQ(forward.delta, backward.delta);
  // The harmonic number H_1000 = 7.4854708605503449127 (mpmath.harmonic(1000)); each 1.0 / i is
  // within half an ulp of 1/i, which moves the sum by less than 1e-15.
  EXPECT_NEAR(forward.epsilon, 7.4854708605503449127, 2e-15);
}

TEST(AdvancedComposition, MatchesDworkRothTheorem320) {
  // ref: advanced k=100 eps=0.1 delta'=1e-06  6.3082309505134086469
  const PrivacyBound bound = advanced_composition(100, {0.1, 1e-8}, 1e-6);
  EXPECT_NEAR(bound.epsilon, 6.3082309505134086469, 6.3 * 1e-15);
  EXPECT_NEAR(bound.delta, 100 * 1e-8 + 1e-6, 1e-21);  // k delta + delta'
  // ref: advanced k=1000 eps=0.01 delta'=1e-09  2.1363437981662141583
  const PrivacyBound many = advanced_composition(1000, {0.01, 0.0}, 1e-9);
  EXPECT_NEAR(many.epsilon, 2.1363437981662141583, 2.2 * 1e-15);
  EXPECT_EQ(many.delta, 1e-9);
  // ref: advanced k=1 eps=1.0 delta'=0.5  2.8956918509745199264 (worse than eps itself: true, useless)
  EXPECT_NEAR(advanced_composition(1, {1.0, 0.0}, 0.5).epsilon, 2.8956918509745199264, 3e-15);
}

// ---- optimal composition (Kairouz, Oh & Viswanath 2015, Thm 3.3) ----------------------------

TEST(OptimalComposition, ClosedFormsForOneTwoAndThreeReleases) {
  for (const double eps : {0.01, 0.5, 1.0, 3.0}) {
    const long double p = truth_probability(eps);
    // k = 1 and k = 2 at eps_g = 0: only l = 0 counts for k = 2 (l = 1 has (k - 2l) eps = 0), so
    // delta = p^2 (1 - e^(-2 eps)) = p^2 - q^2 = p - q = tanh(eps/2); for k = 1, p (1 - e^-eps)
    // = p - q as well: the total variation distance of randomized response.
    const double tv = static_cast<double>(std::tanh(0.5L * eps));
    EXPECT_NEAR(optimal_composition_delta(1, eps, 0.0), tv, tv * 1e-14) << eps;
    EXPECT_NEAR(optimal_composition_delta(2, eps, 0.0), tv, tv * 1e-14) << eps;
    // k = 2, 0 <= eps_g < 2 eps: delta = p^2 (1 - e^(eps_g - 2 eps)).
    const double eps_g = 1.3 * eps;
    const double two = static_cast<double>(p * p * -std::expm1(static_cast<long double>(eps_g) - 2.0L * eps));
    EXPECT_NEAR(optimal_composition_delta(2, eps, eps_g), two, two * 1e-14) << eps;
    // k = 3, eps_g = eps: l = 0 only, delta = p^3 (1 - e^(-2 eps)) = p (p - q) = p tanh(eps/2).
    const double three = static_cast<double>(p * std::tanh(0.5L * eps));
    EXPECT_NEAR(optimal_composition_delta(3, eps, eps), three, three * 1e-14) << eps;
    // From k eps on nothing is lost: delta = 0 (3.0 * eps may round below the exact 3 eps, where
    // delta is positive and tiny, so step a little above it).
    EXPECT_EQ(optimal_composition_delta(3, eps, 3.0 * eps * (1.0 + 1e-15)), 0.0);
    // k = 1 inverted: p (1 - e^(eps_g - eps)) = delta gives eps_g = eps + ln(1 - delta/p).
    const double one = static_cast<double>(eps + std::log1p(-1e-3L / p));
    EXPECT_NEAR(optimal_composition_epsilon(1, eps, 1e-3), one, one * 2e-12) << eps;
  }
}

struct ProfileCase {
  std::uint64_t k;
  double epsilon;
  double epsilon_total;
  double exact_delta;
};

TEST(OptimalComposition, ProfileIsAnUpperBoundWithin1e12OfTheReference) {
  const ProfileCase cases[] = {
      {1, 0.5, 0.0, 0.24491866240370912928},         // ref: kov_delta k=1 eps=0.5 eps_g=0.0
      {2, 0.5, 0.25, 0.20443454391297122453},        // ref: kov_delta k=2 eps=0.5 eps_g=0.25
      {3, 0.5, 0.5, 0.1524519067986655865},          // ref: kov_delta k=3 eps=0.5 eps_g=0.5
      {3, 0.5, 0.0, 0.3600322521083506104},          // ref: kov_delta k=3 eps=0.5 eps_g=0.0
      {10, 0.1, 0.3, 0.035097126129787821581},       // ref: kov_delta k=10 eps=0.1 eps_g=0.3
      {10, 1.0, 2.0, 0.68953677154620001872},        // ref: kov_delta k=10 eps=1.0 eps_g=2.0
      {10, 1.0, 9.5, 0.017156657217397768393},       // ref: kov_delta k=10 eps=1.0 eps_g=9.5
      {10, 0.1, 0.0, 0.12253622356149267187},        // ref: kov_delta k=10 eps=0.1 eps_g=0.0
      {1000, 0.1, 5.0, 0.38299561563153145633},      // ref: kov_delta k=1000 eps=0.1 eps_g=5.0
      {1000, 0.01, 0.5, 0.0097537604568250028867},   // ref: kov_delta k=1000 eps=0.01 eps_g=0.5
      {100000, 0.01, 10.0, 0.033774876853513009082},  // ref: kov_delta k=100000 eps=0.01 eps_g=10.0
      {1000000, 0.01, 100.0, 1.8781317688387360578e-7},  // ref: kov_delta k=1000000 eps=0.01 eps_g=100.0
      {1000000, 0.001, 5.0, 5.7933454162624212741e-7},   // ref: kov_delta k=1000000 eps=0.001 eps_g=5.0
  };
  for (const ProfileCase& c : cases) {
    expect_tight_upper_bound(optimal_composition_delta(c.k, c.epsilon, c.epsilon_total), c.exact_delta, 1e-12,
                             "delta k=" + std::to_string(c.k) + " eps=" + std::to_string(c.epsilon) +
                                 " eps_g=" + std::to_string(c.epsilon_total));
  }
}

TEST(OptimalComposition, ProfileBoundaryTermsDoNotInflateTheBound) {
  // eps_g = 50 eps exactly (in decimal; the doubles differ by 1e-17): the last positive term of the
  // k = 1000 sum sits right at the boundary, where 1 - e^x ~ |x| ~ 1e-17. An absolute error bound
  // for x would inflate delta by percents here; the reference is 0.0097537604568250028867
  // (ref: kov_delta k=1000 eps=0.01 eps_g=0.5).
  expect_tight_upper_bound(optimal_composition_delta(1000, 0.01, 0.5), 0.0097537604568250028867, 1e-13, "boundary");
}

TEST(OptimalComposition, ProfileFallsAsEpsilonTotalGrows) {
  double previous = 1.0;
  for (double eps_g = 0.0; eps_g <= 12.0; eps_g += 0.25) {
    const double delta = optimal_composition_delta(100, 0.1, eps_g);
    EXPECT_LE(delta, previous) << eps_g;
    previous = delta;
  }
  EXPECT_EQ(previous, 0.0);  // eps_g = 12 > k eps = 10
}

struct InverseCase {
  std::uint64_t k;
  double epsilon;
  double delta;
  double exact_epsilon;
};

TEST(OptimalComposition, InverseIsAnUpperBoundWithin1e12AndRoundTrips) {
  const InverseCase cases[] = {
      {1, 0.5, 1e-3, 0.49839217748611945695},        // ref: kov_epsilon k=1 eps=0.5 delta=0.001
      {10, 0.1, 1e-6, 0.99937090572175878025},       // ref: kov_epsilon k=10 eps=0.1 delta=1e-06
      {50, 0.1, 1e-6, 3.1729027340191898434},        // ref: kov_epsilon k=50 eps=0.1 delta=1e-06
      {1000, 0.1, 1e-6, 19.34467144799304504},       // ref: kov_epsilon k=1000 eps=0.1 delta=1e-06
      {1000, 0.01, 1e-10, 1.9031384401181209903},    // ref: kov_epsilon k=1000 eps=0.01 delta=1e-10
      {100000, 0.01, 1e-6, 19.422821957816954196},   // ref: kov_epsilon k=100000 eps=0.01 delta=1e-06
      {1000000, 0.001, 1e-9, 6.1739121189990771002},  // ref: kov_epsilon k=1000000 eps=0.001 delta=1e-09
  };
  for (const InverseCase& c : cases) {
    const std::string what = "k=" + std::to_string(c.k) + " eps=" + std::to_string(c.epsilon);
    const double epsilon_total = optimal_composition_epsilon(c.k, c.epsilon, c.delta);
    // The search stops within a relative 2^-40 (9.1e-13) of the exact value, on the feasible side.
    expect_tight_upper_bound(epsilon_total, c.exact_epsilon, 1e-12, what);
    EXPECT_LE(optimal_composition_delta(c.k, c.epsilon, epsilon_total), c.delta) << what;
    // It beats the other theorems for the same releases.
    EXPECT_LE(epsilon_total, advanced_composition(c.k, {c.epsilon, 0.0}, c.delta).epsilon) << what;
    EXPECT_LE(epsilon_total, c.k * c.epsilon) << what;
  }
  // delta = 0: nothing better than k eps.
  EXPECT_EQ(optimal_composition_epsilon(7, 0.25, 0.0), 1.75);
  // A delta above the total variation distance tanh(eps/2) = 0.2449 needs no epsilon at all.
  EXPECT_EQ(optimal_composition_epsilon(1, 0.5, 0.25), 0.0);
}

// ---- zCDP -----------------------------------------------------------------------------------

TEST(Zcdp, RhoOfPureAndExponentialMechanismReleases) {
  EXPECT_EQ(zcdp_of_pure(1.0), 0.5);                     // Bun & Steinke Prop 1.4: eps^2 / 2
  EXPECT_EQ(zcdp_of_exponential_mechanism(1.0), 0.125);  // Cesar & Rogers: eps^2 / 8
  EXPECT_EQ(zcdp_of_exponential_mechanism(0.5), 0.03125);
}

struct ZcdpCase {
  double rho;
  double delta;
  double exact_epsilon;
  double dp_accounting_epsilon;  // Google's grid of orders: a valid bound, at or above the infimum
};

TEST(Zcdp, TightEpsilonMatchesCanonneKamathSteinkeCorollary13) {
  const ZcdpCase cases[] = {
      // ref: cks_epsilon rho=... delta=...; dp_accounting cks rho=... delta=...
      {0.5, 1e-6, 5.2215344445301690534, 5.22153447028293},
      {1.0, 1e-6, 7.7662166253117207493, 7.76621666406228},
      {0.01, 1e-10, 0.86432118572417292425, 0.864321392900195},
      {5.0, 1e-5, 19.047259552325184092, 19.0472640648213},
      {1e-4, 1e-8, 0.068127026023615376286, 0.0681270289690752},
      {2.5, 0.01, 8.0719977133746953443, 8.07199772909696},
  };
  for (const ZcdpCase& c : cases) {
    const std::string what = "rho=" + std::to_string(c.rho) + " delta=" + std::to_string(c.delta);
    const double tight = epsilon_from_zcdp_tight(c.rho, c.delta);
    expect_tight_upper_bound(tight, c.exact_epsilon, 1e-13, what);
    EXPECT_LE(tight, c.dp_accounting_epsilon) << what;
    // Never worse than Bun & Steinke's rho + 2 sqrt(rho ln(1/delta)) (top_k.hpp).
    EXPECT_LT(tight, epsilon_from_zcdp(c.rho, c.delta)) << what;
  }
}

TEST(Zcdp, DeltaMatchesCorollary13AndInvertsTheEpsilon) {
  struct Case {
    double rho, epsilon, exact_delta;
  };
  const Case cases[] = {
      {0.5, 4.0, 0.00019579541695772159729},   // ref: cks_delta rho=0.5 eps=4.0
      {1.0, 5.0, 0.0026120345066204870031},    // ref: cks_delta rho=1.0 eps=5.0
      {0.01, 1.0, 1.6641139773879954372e-13},  // ref: cks_delta rho=0.01 eps=1.0
      {0.125, 2.0, 0.000039485085566836721595},  // ref: cks_delta rho=0.125 eps=2.0
  };
  for (const Case& c : cases) {
    expect_tight_upper_bound(delta_from_zcdp(c.rho, c.epsilon), c.exact_delta, 1e-13,
                             "rho=" + std::to_string(c.rho) + " eps=" + std::to_string(c.epsilon));
  }
  // Both directions solve the same equation, each rounded conservatively.
  for (const double rho : {1e-3, 0.1, 1.0, 10.0}) {
    for (const double delta : {1e-3, 1e-6, 1e-12}) {
      const double epsilon = epsilon_from_zcdp_tight(rho, delta);
      EXPECT_LE(delta_from_zcdp(rho, epsilon), delta * (1.0 + 1e-12)) << rho << " " << delta;
    }
  }
}

TEST(Zcdp, TotalVariationMakesEpsilonZeroForLargeDelta) {
  // Bretagnolle-Huber: TV <= sqrt(1 - e^-rho) = sqrt(1 - e^-0.01) = 0.0998; any delta above it
  // needs epsilon 0, and delta(0) never exceeds it.
  EXPECT_EQ(epsilon_from_zcdp_tight(0.01, 0.1), 0.0);
  EXPECT_GT(epsilon_from_zcdp_tight(0.01, 0.01), 0.0);
  EXPECT_LE(delta_from_zcdp(0.01, 0.0), 0.099834);
}

// ---- the floor: no valid bound for general eps-DP releases lies below KOV ----------------------

TEST(OptimalComposition, EveryRouteStaysAboveTheOptimalFloor) {
  // KOV Thm 3.3 is attained by k-fold randomized response, which is eps-DP, so every valid bound
  // for k eps-DP releases is >= the profile's inverse; the computed inverse is within 1e-12 above
  // the exact one (previous tests), so bounds must be >= it (1 - 1e-12). The exponential
  // mechanism is eps-bounded-range: randomized response at eps/2 is too (its loss is +-eps/2), so
  // its floor is the profile at eps/2, and its zCDP bound may lie below the profile at eps.
  int exponential_mechanism_below_pure_floor = 0;
  for (const std::uint64_t k : {1u, 2u, 3u, 10u, 100u, 1000u}) {
    for (const double eps : {0.01, 0.1, 0.5, 1.0, 3.0}) {
      for (const double delta : {1e-3, 1e-6, 1e-10}) {
        const std::string what = "k=" + std::to_string(k) + " eps=" + std::to_string(eps) + " delta=" + std::to_string(delta);
        const double floor = optimal_composition_epsilon(k, eps, delta) * (1.0 - 1e-12);
        const double zcdp = epsilon_from_zcdp_tight(k * zcdp_of_pure(eps), delta);
        EXPECT_GE(zcdp, floor) << what;
        EXPECT_GE(advanced_composition(k, {eps, 0.0}, delta).epsilon, floor) << what;
        const AccountedBound pure = compose_homogeneous(k, eps, ReleaseKind::pure, delta);
        EXPECT_GE(pure.epsilon, floor) << what;
        EXPECT_LE(pure.delta, delta) << what;
        const AccountedBound em = compose_homogeneous(k, eps, ReleaseKind::exponential_mechanism, delta);
        EXPECT_GE(em.epsilon, optimal_composition_epsilon(k, eps / 2, delta) * (1.0 - 1e-12)) << what;
        EXPECT_LE(em.epsilon, pure.epsilon * (1.0 + 1e-12)) << what;  // the same routes plus a smaller rho
        if (em.epsilon < floor) ++exponential_mechanism_below_pure_floor;
      }
    }
  }
  // The bounded-range advantage is real, e.g. k = 1000, eps = 0.1, delta = 1e-6: zCDP gives 8.85
  // where the floor for eps-DP is 19.34.
  EXPECT_GT(exponential_mechanism_below_pure_floor, 10);
}

TEST(ComposeHomogeneous, PicksTheSmallestRoute) {
  // 1000 pure releases at 0.1, delta 1e-6: the optimal profile, 19.34467144799304504 (ref:
  // kov_epsilon k=1000 eps=0.1 delta=1e-06), against basic 100, advanced 27.1 and zCDP 20.6.
  const AccountedBound pure = compose_homogeneous(1000, 0.1, ReleaseKind::pure, 1e-6);
  EXPECT_EQ(pure.route, CompositionRoute::optimal_homogeneous);
  expect_tight_upper_bound(pure.epsilon, 19.34467144799304504, 1e-12, "pure k=1000");
  EXPECT_EQ(pure.delta, 1e-6);
  // The same as exponential-mechanism releases: rho = 1000 * 0.01 / 8 = 1.25, CKS at 1e-6.
  const AccountedBound em = compose_homogeneous(1000, 0.1, ReleaseKind::exponential_mechanism, 1e-6);
  EXPECT_EQ(em.route, CompositionRoute::zcdp);
  EXPECT_NEAR(em.epsilon, epsilon_from_zcdp_tight(1.25, 1e-6), 1e-12);
  // Without delta only basic composition applies.
  const AccountedBound none = compose_homogeneous(1000, 0.1, ReleaseKind::pure, 0.0);
  EXPECT_EQ(none.route, CompositionRoute::basic);
  EXPECT_DOUBLE_EQ(none.epsilon, 100.0);
  EXPECT_EQ(none.delta, 0.0);
  // One release: basic (eps, 0) unless delta buys something: for k = 1 the profile gives
  // eps + ln(1 - delta/p) < eps.
  EXPECT_EQ(compose_homogeneous(1, 0.5, ReleaseKind::pure, 1e-6).route, CompositionRoute::optimal_homogeneous);
}

// ---- the accountant -------------------------------------------------------------------------

// Several charges at once (a top-k release, a matrix of rows) are recorded together or not at
// all, and count copies charge exactly like count single charges.
TEST(PrivacyAccountant, ChargesTogetherAllOrNothing) {
  PrivacyAccountant together({1.0, 1e-6});
  PrivacyAccountant one_by_one({1.0, 1e-6});
  const std::vector<PrivacyCharge> charges = {{ReleaseKind::exponential_mechanism, 0.01, 0.0, 30},
                                              {ReleaseKind::approximate, 0.05, 1e-7, 2}};
  together.charge(charges);
  for (int i = 0; i < 30; ++i) one_by_one.charge(ReleaseKind::exponential_mechanism, 0.01);
  for (int i = 0; i < 2; ++i) one_by_one.charge(ReleaseKind::approximate, 0.05, 1e-7);
  EXPECT_EQ(together.release_count(), 32u);
  EXPECT_NEAR(together.spent().epsilon, one_by_one.spent().epsilon, 1e-15);
  EXPECT_EQ(together.spent().route, one_by_one.spent().route);
  // One entry over budget refuses them all.
  const std::vector<PrivacyCharge> over = {{ReleaseKind::pure, 0.01, 0.0, 1}, {ReleaseKind::pure, 0.9, 0.0, 1}};
  EXPECT_THROW(together.charge(over), BudgetExceeded);
  EXPECT_EQ(together.release_count(), 32u);
  // Bad entries are named by index; nothing is recorded.
  const std::vector<PrivacyCharge> bad_epsilon = {{ReleaseKind::pure, 0.01, 0.0, 1}, {ReleaseKind::pure, -1.0, 0.0, 1}};
  expect_invalid_message([&] { together.charge(bad_epsilon); }, {"charges[1].epsilon", "-1"});
  const std::vector<PrivacyCharge> bad_count = {{ReleaseKind::pure, 0.01, 0.0, 0}, {ReleaseKind::pure, 0.01, 0.0, 1}};
  expect_invalid_message([&] { together.charge(bad_count); }, {"charges[0].count", "0"});
  const std::vector<PrivacyCharge> bad_delta = {{ReleaseKind::pure, 0.01, 1e-9, 1}, {ReleaseKind::pure, 0.01, 0.0, 1}};
  expect_invalid_message([&] { together.charge(bad_delta); }, {"charges[0].delta", "1e-09"});
  const PrivacyCharge single_bad{ReleaseKind::pure, 0.01, 0.0, 0};
  expect_invalid_message([&] { together.charge(std::span(&single_bad, 1)); }, {"count", "0"});
  EXPECT_EQ(together.release_count(), 32u);
  together.charge(std::span<const PrivacyCharge>());  // nothing to charge
  EXPECT_EQ(together.release_count(), 32u);
}

// Epsilons whose sum overflows a double are over any budget, whatever the route; the routes'
// arithmetic once overflowed to NaN there and let such a charge through with nothing recorded
// (3 rows at epsilon 7e307 released under a budget of 0.01; found by tests/fuzz/fuzz_parameters).
TEST(PrivacyAccountant, ChargesWhoseSumOverflowsAreRefused) {
  for (const ParameterChoice choice : {ParameterChoice::fixed_in_advance, ParameterChoice::adaptive}) {
    for (const double budget : {0.01, 1e300}) {
      PrivacyAccountant accountant({budget, 1e-6}, choice);
      const std::vector<PrivacyCharge> three = {{ReleaseKind::pure, 7.1222e307, 0.0, 3}};
      EXPECT_THROW(accountant.charge(three), BudgetExceeded);
      accountant.charge(ReleaseKind::pure, budget / 4);
      for (int i = 0; i < 3; ++i) {
        EXPECT_THROW(accountant.charge(ReleaseKind::exponential_mechanism, std::numeric_limits<double>::max()),
                     BudgetExceeded);
      }
      EXPECT_EQ(accountant.release_count(), 1u);
      EXPECT_LE(accountant.spent().epsilon, budget / 4);
    }
  }
  // What composition reports for them: not a small number.
  EXPECT_EQ(compose_homogeneous(3, 7.1222e307, ReleaseKind::pure, 1e-6).epsilon, std::numeric_limits<double>::infinity());
}

TEST(PrivacyAccountant, StartsEmptyAndReportsTheBestRoute) {
  PrivacyAccountant accountant({1.0, 1e-6});
  EXPECT_EQ(accountant.spent().epsilon, 0.0);
  EXPECT_EQ(accountant.spent().delta, 0.0);
  EXPECT_EQ(accountant.release_count(), 0u);
  accountant.charge(ReleaseKind::pure, 0.5);
  // k = 1: eps + ln(1 - delta/p) with p = 1/(1 + e^-0.5) (KOV, closed form above).
  const long double p = truth_probability(0.5L);
  AccountedBound spent = accountant.spent();
  EXPECT_EQ(spent.route, CompositionRoute::optimal_homogeneous);
  EXPECT_NEAR(spent.epsilon, static_cast<double>(0.5L + std::log1p(-1e-6L / p)), 1e-12);
  EXPECT_EQ(spent.delta, 1e-6);
  accountant.charge(ReleaseKind::pure, 0.5);
  // k = 2 below 2 eps: p^2 (1 - e^(eps_g - 1)) = delta, eps_g = 1 + ln(1 - delta/p^2) < 1: fits.
  spent = accountant.spent();
  EXPECT_NEAR(spent.epsilon, static_cast<double>(1.0L + std::log1p(-1e-6L / (p * p))), 1e-12);
  EXPECT_LE(spent.epsilon, 1.0);
  EXPECT_EQ(accountant.release_count(), 2u);
  // A third needs about 1.5.
  EXPECT_THROW(accountant.charge(ReleaseKind::pure, 0.5), BudgetExceeded);
  EXPECT_EQ(accountant.release_count(), 2u);
  EXPECT_EQ(accountant.spent().epsilon, spent.epsilon);
}

TEST(PrivacyAccountant, RefusalRecordsNothing) {
  PrivacyAccountant refused({2.0, 1e-6});
  PrivacyAccountant clean({2.0, 1e-6});
  for (PrivacyAccountant* accountant : {&refused, &clean}) {
    accountant->charge(ReleaseKind::approximate, 0.3, 4e-7);
    accountant->charge(ReleaseKind::exponential_mechanism, 0.4);
  }
  // Over in epsilon, over in delta (4e-7 + 7e-7 > 1e-6), and over by an exponential-mechanism
  // epsilon that would also break the shared epsilon: each refused, and the message says why.
  try {
    refused.charge(ReleaseKind::pure, 1.5);
    ADD_FAILURE() << "no exception";
  } catch (const BudgetExceeded& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("beyond the budget (epsilon 2, delta 1e-06)"), std::string::npos) << message;
    EXPECT_NE(message.find("nothing was recorded"), std::string::npos) << message;
  }
  EXPECT_THROW(refused.charge(ReleaseKind::approximate, 0.01, 7e-7), BudgetExceeded);
  EXPECT_THROW(refused.charge(ReleaseKind::exponential_mechanism, 1.9), BudgetExceeded);
  for (PrivacyAccountant* accountant : {&refused, &clean}) {
    accountant->charge(ReleaseKind::exponential_mechanism, 0.4);
    accountant->charge(ReleaseKind::approximate, 0.1, 1e-7);
  }
  const AccountedBound a = refused.spent();
  const AccountedBound b = clean.spent();
  EXPECT_EQ(a.epsilon, b.epsilon);
  EXPECT_EQ(a.delta, b.delta);
  EXPECT_EQ(a.route, b.route);
  EXPECT_EQ(refused.release_count(), 4u);
}

TEST(PrivacyAccountant, SpentStaysWithinTheBudgetAtTheEdge) {
  // Charge until refused, for each kind and a few budgets: every accepted state reports a bound
  // within the budget (the budget check and the reported bound are the same computations).
  for (const ReleaseKind kind : {ReleaseKind::pure, ReleaseKind::exponential_mechanism}) {
    for (const double eps : {0.05, 0.3}) {
      PrivacyAccountant accountant({3.0, 1e-6});
      int accepted = 0;
      for (; accepted < 100'000; ++accepted) {
        try {
          accountant.charge(kind, eps);
        } catch (const BudgetExceeded&) {
          break;
        }
        const AccountedBound spent = accountant.spent();
        ASSERT_LE(spent.epsilon, 3.0);
        ASSERT_LE(spent.delta, 1e-6);
      }
      EXPECT_GE(accepted, static_cast<int>(std::floor(3.0 / eps + 1e-9))) << "never worse than basic composition";
      // And the count matches the per-release split for that count: one more would not fit.
      const AccountedBound at_limit = compose_homogeneous(accepted, eps, kind, 1e-6);
      const AccountedBound beyond = compose_homogeneous(accepted + 1, eps, kind, 1e-6);
      EXPECT_LE(at_limit.epsilon, 3.0);
      EXPECT_GT(beyond.epsilon, 3.0);
    }
  }
}

TEST(PrivacyAccountant, MixedReleasesAddApproximateOnesByBasicComposition) {
  PrivacyAccountant accountant({5.0, 1e-5});
  accountant.charge(ReleaseKind::approximate, 0.5, 2e-6);
  for (int i = 0; i < 10; ++i) accountant.charge(ReleaseKind::pure, 0.3);
  // 10 pure releases at 0.3 by the optimal profile with the 8e-6 of delta left, plus 0.5.
  const AccountedBound spent = accountant.spent();
  EXPECT_EQ(spent.route, CompositionRoute::optimal_homogeneous);
  EXPECT_NEAR(spent.epsilon, 0.5 + optimal_composition_epsilon(10, 0.3, 8e-6), 1e-12);
  EXPECT_LT(spent.epsilon, 3.5);  // basic
  EXPECT_LE(spent.delta, 1e-5);
  EXPECT_NEAR(spent.delta, 1e-5, 1e-20);

  // Different epsilons: only zCDP (and basic). rho = 50 (0.2^2/2) + 50 (0.1^2/8) = 1.0625.
  PrivacyAccountant mixed({20.0, 1e-6});
  for (int i = 0; i < 50; ++i) {
    mixed.charge(ReleaseKind::pure, 0.2);
    mixed.charge(ReleaseKind::exponential_mechanism, 0.1);
  }
  const AccountedBound zcdp = mixed.spent();
  EXPECT_EQ(zcdp.route, CompositionRoute::zcdp);
  EXPECT_NEAR(zcdp.epsilon, epsilon_from_zcdp_tight(1.0625, 1e-6), 1e-12);
}

TEST(PrivacyAccountant, AdaptiveParametersUseBasicCompositionOnly) {
  PrivacyAccountant accountant({2.0, 1e-6}, ParameterChoice::adaptive);
  for (int i = 0; i < 20; ++i) accountant.charge(ReleaseKind::exponential_mechanism, 0.1);
  const AccountedBound spent = accountant.spent();
  EXPECT_EQ(spent.route, CompositionRoute::basic);
  EXPECT_NEAR(spent.epsilon, 2.0, 1e-15);
  EXPECT_EQ(spent.delta, 0.0);
  EXPECT_THROW(accountant.charge(ReleaseKind::exponential_mechanism, 0.1), BudgetExceeded);
}

TEST(PrivacyAccountant, ConcurrentChargesAddUp) {
  // 8 threads x 200 exponential-mechanism charges at 0.001: the same ledger as 1600 charges from
  // one thread, so the same bound as compose_homogeneous(1600, ...).
  PrivacyAccountant accountant({100.0, 1e-6});
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&accountant] {
      for (int i = 0; i < 200; ++i) accountant.charge(ReleaseKind::exponential_mechanism, 0.001);
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(accountant.release_count(), 1600u);
  const AccountedBound expected = compose_homogeneous(1600, 0.001, ReleaseKind::exponential_mechanism, 1e-6);
  const AccountedBound spent = accountant.spent();
  EXPECT_NEAR(spent.epsilon, expected.epsilon, expected.epsilon * 1e-12);
  EXPECT_EQ(spent.delta, expected.delta);
  EXPECT_EQ(spent.route, expected.route);

  // Approximate releases from 4 threads: 1000 x (0.002, 1e-9) sum to (2, 1e-6) within ulps.
  PrivacyAccountant approximate({3.0, 2e-6});
  threads.clear();
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&approximate] {
      for (int i = 0; i < 250; ++i) approximate.charge(ReleaseKind::approximate, 0.002, 1e-9);
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_NEAR(approximate.spent().epsilon, 2.0, 4.5e-16);
  EXPECT_NEAR(approximate.spent().delta, 1e-6, 1e-6 * 4.5e-16);
}

TEST(PrivacyAccountant, ConcurrentChargesAtTheEdgeLetExactlyTheBudgetIn) {
  // Budget (1, 0): only basic composition, 100 x 0.01 = 1 (fl(100 * 0.01) = 1) fits and 101 does
  // not. 8 threads race 50 charges each: exactly 100 succeed, whatever the interleaving.
  PrivacyAccountant accountant({1.0, 0.0});
  std::atomic<int> accepted{0};
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        try {
          accountant.charge(ReleaseKind::pure, 0.01);
          ++accepted;
        } catch (const BudgetExceeded&) {
          ++refused;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(accepted.load(), 100);
  EXPECT_EQ(refused.load(), 300);
  EXPECT_EQ(accountant.release_count(), 100u);
  EXPECT_EQ(accountant.spent().epsilon, 1.0);
}

TEST(PrivacyAccountant, NeverReportsBelowTheOptimalFloor) {
  // ref: kov_epsilon k=1000 eps=0.1 delta=1e-06  19.34467144799304504
  PrivacyAccountant accountant({25.0, 1e-6});
  for (int i = 0; i < 1000; ++i) accountant.charge(ReleaseKind::pure, 0.1);
  EXPECT_GE(accountant.spent().epsilon, 19.34467144799304504);
  // ref: kov_epsilon k=50 eps=0.1 delta=1e-06  3.1729027340191898434
  PrivacyAccountant fifty({25.0, 1e-6});
  for (int i = 0; i < 50; ++i) fifty.charge(ReleaseKind::pure, 0.1);
  EXPECT_GE(fifty.spent().epsilon, 3.1729027340191898434);
  // Exponential-mechanism releases: the floor is the profile at eps/2 (k=1000, eps=0.05: 8.28);
  // zCDP reports 8.85, below the eps-DP floor but above its own.
  PrivacyAccountant em({25.0, 1e-6});
  for (int i = 0; i < 1000; ++i) em.charge(ReleaseKind::exponential_mechanism, 0.1);
  EXPECT_GE(em.spent().epsilon, optimal_composition_epsilon(1000, 0.05, 1e-6) * (1.0 - 1e-12));
  EXPECT_LT(em.spent().epsilon, 19.34467144799304504);
}

// ---- splitting ------------------------------------------------------------------------------

TEST(Splitting, EvenSharesSumToAtMostTheTotal) {
  for (const double total : {1.0, 0.3, 2.7, 1e-5}) {
    for (const std::uint64_t k : {1u, 3u, 7u, 10u, 1000u, 100'000u}) {
      const double share = split_evenly(total, k);
      std::vector<PrivacyBound> releases(k, PrivacyBound{share, 0.0});
      const double sum = basic_composition(releases).epsilon;
      EXPECT_LE(sum, total) << total << " / " << k;
      EXPECT_GE(sum, total * (1.0 - 1e-14)) << total << " / " << k;
    }
  }
  // The accountant takes all k shares, in any order (they are equal), and not one more.
  PrivacyAccountant accountant({0.3, 0.0});
  const double share = split_evenly(0.3, 3);
  for (int i = 0; i < 3; ++i) accountant.charge(ReleaseKind::pure, share);
  EXPECT_THROW(accountant.charge(ReleaseKind::pure, share), BudgetExceeded);
}

TEST(Splitting, WeightedSharesAreProportionalAndFitInAnyOrder) {
  const std::vector<double> weights = {1.0, 2.0, 3.0, 4.0, 0.5};
  const std::vector<double> shares = split_by_weights(1.0, weights);
  ASSERT_EQ(shares.size(), weights.size());
  for (std::size_t i = 0; i < weights.size(); ++i) {
    EXPECT_NEAR(shares[i], weights[i] / 10.5, 1e-15) << i;  // 1.0 * w_i / sum w
  }
  for (const bool reverse : {false, true}) {
    PrivacyAccountant accountant({1.0, 0.0});
    for (std::size_t i = 0; i < shares.size(); ++i) {
      accountant.charge(ReleaseKind::pure, shares[reverse ? shares.size() - 1 - i : i]);
    }
    EXPECT_LE(accountant.spent().epsilon, 1.0);
    EXPECT_GE(accountant.spent().epsilon, 1.0 - 1e-14);
  }
  // Huge weights do not overflow.
  const std::vector<double> huge = split_by_weights(2.0, std::vector<double>{1e308, 1e308});
  EXPECT_NEAR(huge[0], 1.0, 1e-15);
  EXPECT_NEAR(huge[1], 1.0, 1e-15);
  EXPECT_LE(huge[0] + huge[1], 2.0);
  // A denormal total whose shares round up past it is refused, not split into more than itself.
  const double tiny_total = 3 * std::numeric_limits<double>::denorm_min();
  expect_invalid_message([&] { split_by_weights(tiny_total, std::vector<double>{1.0, 1.0}); },
                         {"epsilon_total", "round past it", "1.5e-323"});
}

struct PerReleaseCase {
  std::uint64_t k;
  double epsilon;
  double delta;
  ReleaseKind kind;
};

TEST(Splitting, PerReleaseEpsilonRoundTripsThroughCompositionAndTheAccountant) {
  const PerReleaseCase cases[] = {
      {1, 1.0, 1e-6, ReleaseKind::exponential_mechanism}, {10, 1.0, 1e-6, ReleaseKind::pure},
      {100, 1.0, 1e-6, ReleaseKind::exponential_mechanism}, {1000, 2.0, 1e-8, ReleaseKind::pure},
      {1000, 1.0, 0.0, ReleaseKind::pure},                  {300, 5.0, 1e-5, ReleaseKind::exponential_mechanism},
  };
  for (const PerReleaseCase& c : cases) {
    const std::string what = "k=" + std::to_string(c.k) + " eps=" + std::to_string(c.epsilon) +
                             " delta=" + std::to_string(c.delta) + " " + std::string(to_string(c.kind));
    const double each = per_release_epsilon(c.k, c.epsilon, c.delta, c.kind);
    EXPECT_GE(each, split_evenly(c.epsilon, c.k)) << what;
    // Fed back to the composition functions: within the target...
    const AccountedBound bound = compose_homogeneous(c.k, each, c.kind, c.delta);
    EXPECT_LE(bound.epsilon, c.epsilon) << what;
    EXPECT_LE(bound.delta, c.delta) << what;
    // ... and the largest such (within the 2^-40 search tolerance, checked at 1e-9).
    EXPECT_GT(compose_homogeneous(c.k, each * (1.0 + 1e-9), c.kind, c.delta).epsilon, c.epsilon) << what;
    // The accountant takes k charges and refuses the next.
    PrivacyAccountant accountant({c.epsilon, c.delta});
    for (std::uint64_t i = 0; i < c.k; ++i) accountant.charge(c.kind, each);
    EXPECT_LE(accountant.spent().epsilon, c.epsilon) << what;
    EXPECT_THROW(accountant.charge(c.kind, each), BudgetExceeded) << what;
  }
  // Without delta the even split is all there is.
  EXPECT_EQ(per_release_epsilon(1000, 1.0, 0.0, ReleaseKind::pure), split_evenly(1.0, 1000));
}

TEST(Splitting, PerReleaseEpsilonForAMillionReleases) {
  // k = 10^6 exponential-mechanism releases in (10, 1e-6): zCDP wins (rho = k eps^2/8).
  const double each = per_release_epsilon(1'000'000, 10.0, 1e-6, ReleaseKind::exponential_mechanism);
  const AccountedBound bound = compose_homogeneous(1'000'000, each, ReleaseKind::exponential_mechanism, 1e-6);
  EXPECT_LE(bound.epsilon, 10.0);
  EXPECT_GT(bound.epsilon, 10.0 * (1.0 - 1e-9));
  EXPECT_GT(each, 3.0 * split_evenly(10.0, 1'000'000));  // far better than 10/k
}

// ---- bad input ------------------------------------------------------------------------------

struct BadValue {
  double value;
  const char* text;
};
const BadValue kBadPositives[] = {
    {0.0, "(got 0)"}, {-1.0, "(got -1)"}, {kNaN, "(got nan)"}, {kInf, "(got inf)"}, {-kInf, "(got -inf)"}};
const BadValue kBadNonNegatives[] = {{-1.0, "(got -1)"}, {kNaN, "(got nan)"}, {kInf, "(got inf)"}, {-kInf, "(got -inf)"}};
const BadValue kBadDeltas[] = {{-1e-9, "(got -1e-09)"}, {1.0, "(got 1)"}, {1.5, "(got 1.5)"},
                               {kNaN, "(got nan)"},     {kInf, "(got inf)"}, {-kInf, "(got -inf)"}};
const BadValue kBadOpenDeltas[] = {{0.0, "(got 0)"}, {-1e-9, "(got -1e-09)"}, {1.0, "(got 1)"}, {kNaN, "(got nan)"}};

TEST(AccountingBadInput, EpsilonsMustBePositiveAndFinite) {
  for (const BadValue& bad : kBadPositives) {
    expect_invalid_message([&] { basic_composition(std::vector<PrivacyBound>{{0.1, 0.0}, {bad.value, 0.0}}); },
                           {"releases[1].epsilon", "finite and > 0", bad.text});
    expect_invalid_message([&] { advanced_composition(10, {bad.value, 0.0}, 1e-6); }, {"per_release.epsilon", bad.text});
    expect_invalid_message([&] { optimal_composition_delta(10, bad.value, 1.0); }, {"epsilon", bad.text});
    expect_invalid_message([&] { optimal_composition_epsilon(10, bad.value, 1e-6); }, {"epsilon", bad.text});
    expect_invalid_message([&] { zcdp_of_pure(bad.value); }, {"epsilon", bad.text});
    expect_invalid_message([&] { zcdp_of_exponential_mechanism(bad.value); }, {"epsilon", bad.text});
    expect_invalid_message([&] { delta_from_zcdp(bad.value, 1.0); }, {"rho", bad.text});
    expect_invalid_message([&] { epsilon_from_zcdp_tight(bad.value, 1e-6); }, {"rho", bad.text});
    expect_invalid_message([&] { compose_homogeneous(10, bad.value, ReleaseKind::pure, 1e-6); }, {"epsilon", bad.text});
    expect_invalid_message([&] { split_evenly(bad.value, 3); }, {"epsilon_total", bad.text});
    expect_invalid_message([&] { split_by_weights(bad.value, std::vector<double>{1.0}); }, {"epsilon_total", bad.text});
    expect_invalid_message([&] { split_by_weights(1.0, std::vector<double>{1.0, bad.value}); }, {"weights[1]", bad.text});
    expect_invalid_message([&] { per_release_epsilon(10, bad.value, 1e-6, ReleaseKind::pure); }, {"target_epsilon", bad.text});
    expect_invalid_message([&] { PrivacyAccountant({bad.value, 1e-6}); }, {"budget.epsilon", bad.text});
    PrivacyAccountant accountant({1.0, 1e-6});
    for (const ReleaseKind kind : {ReleaseKind::pure, ReleaseKind::exponential_mechanism, ReleaseKind::approximate}) {
      expect_invalid_message([&] { accountant.charge(kind, bad.value); }, {"epsilon", bad.text});
    }
    EXPECT_EQ(accountant.release_count(), 0u);
  }
}

TEST(AccountingBadInput, EpsilonTotalsMustBeNonNegativeAndFinite) {
  for (const BadValue& bad : kBadNonNegatives) {
    expect_invalid_message([&] { optimal_composition_delta(10, 0.1, bad.value); }, {"epsilon_total", "finite and >= 0", bad.text});
    expect_invalid_message([&] { delta_from_zcdp(1.0, bad.value); }, {"epsilon", "finite and >= 0", bad.text});
  }
  EXPECT_GT(optimal_composition_delta(10, 0.1, 0.0), 0.0);  // 0 is allowed: total variation
  EXPECT_GT(delta_from_zcdp(1.0, 0.0), 0.0);
}

TEST(AccountingBadInput, DeltasMustLieInZeroOne) {
  for (const BadValue& bad : kBadDeltas) {
    expect_invalid_message([&] { basic_composition(std::vector<PrivacyBound>{{0.1, bad.value}}); },
                           {"releases[0].delta", "in [0, 1)", bad.text});
    expect_invalid_message([&] { advanced_composition(10, {0.1, bad.value}, 1e-6); }, {"per_release.delta", bad.text});
    expect_invalid_message([&] { optimal_composition_epsilon(10, 0.1, bad.value); }, {"delta_total", bad.text});
    expect_invalid_message([&] { compose_homogeneous(10, 0.1, ReleaseKind::pure, bad.value); }, {"delta_budget", bad.text});
    expect_invalid_message([&] { per_release_epsilon(10, 1.0, bad.value, ReleaseKind::pure); }, {"target_delta", bad.text});
    expect_invalid_message([&] { PrivacyAccountant({1.0, bad.value}); }, {"budget.delta", bad.text});
    PrivacyAccountant accountant({1.0, 1e-6});
    expect_invalid_message([&] { accountant.charge(ReleaseKind::approximate, 0.1, bad.value); }, {"delta", "in [0, 1)", bad.text});
    EXPECT_EQ(accountant.release_count(), 0u);
  }
  for (const BadValue& bad : kBadOpenDeltas) {
    expect_invalid_message([&] { advanced_composition(10, {0.1, 0.0}, bad.value); }, {"delta_slack", "in (0, 1)", bad.text});
    expect_invalid_message([&] { epsilon_from_zcdp_tight(1.0, bad.value); }, {"delta", "in (0, 1)", bad.text});
  }
  // Pure and exponential-mechanism releases carry no delta.
  PrivacyAccountant accountant({1.0, 1e-6});
  for (const ReleaseKind kind : {ReleaseKind::pure, ReleaseKind::exponential_mechanism}) {
    expect_invalid_message([&] { accountant.charge(kind, 0.1, 1e-9); },
                           {"delta", "0 for a pure or exponential-mechanism release", "(got 1e-09)"});
  }
  EXPECT_EQ(accountant.release_count(), 0u);
}

TEST(AccountingBadInput, CountsMustBeBetweenOneAnd2To53) {
  const std::uint64_t too_many = (std::uint64_t{1} << 53) + 1;
  for (const std::uint64_t k : {std::uint64_t{0}, too_many}) {
    const std::string got = "(got " + std::to_string(k) + ")";
    expect_invalid_message([&] { advanced_composition(k, {0.1, 0.0}, 1e-6); }, {"k must be in [1, 2^53]", got});
    expect_invalid_message([&] { optimal_composition_delta(k, 0.1, 1.0); }, {"k must be in [1, 2^53]", got});
    expect_invalid_message([&] { optimal_composition_epsilon(k, 0.1, 1e-6); }, {"k must be in [1, 2^53]", got});
    expect_invalid_message([&] { compose_homogeneous(k, 0.1, ReleaseKind::pure, 1e-6); }, {"k must be", got});
    expect_invalid_message([&] { split_evenly(1.0, k); }, {"k must be", got});
    expect_invalid_message([&] { per_release_epsilon(k, 1.0, 1e-6, ReleaseKind::pure); }, {"k must be", got});
  }
  expect_invalid_message([&] { basic_composition({}); }, {"releases", "(got size 0)"});
  expect_invalid_message([&] { split_by_weights(1.0, {}); }, {"weights", "(got size 0)"});
}

TEST(AccountingBadInput, KindsAndTinyShares) {
  expect_invalid_message([&] { per_release_epsilon(10, 1.0, 1e-6, ReleaseKind::approximate); },
                         {"kind must be pure or exponential_mechanism", "(got approximate)"});
  expect_invalid_message([&] { compose_homogeneous(10, 0.1, ReleaseKind::approximate, 1e-6); },
                         {"kind must be pure or exponential_mechanism"});
  PrivacyAccountant accountant({1.0, 1e-6});
  expect_invalid_message([&] { accountant.charge(static_cast<ReleaseKind>(7), 0.1); }, {"kind", "(got 7)"});
  expect_invalid_message([&] { PrivacyAccountant({1.0, 1e-6}, static_cast<ParameterChoice>(5)); }, {"choice", "(got 5)"});
  // A weight whose share underflows, and a total too small to split.
  expect_invalid_message([&] { split_by_weights(1.0, std::vector<double>{1e308, 1e-300}); }, {"weights[1]", "(got 1e-300)"});
  expect_invalid_message([&] { split_evenly(5e-324, 3); }, {"epsilon_total", "(got 5e-324)"});
}

}  // namespace
}  // namespace dpselect::testing
