// SPDX-License-Identifier: Apache-2.0
// The ledger of charged releases and the best bound on it: basic composition, advanced
// composition, the optimal profile and zCDP each bound the ledger, and the smallest epsilon wins
// (best_bound); fits_budget asks the same of a budget. compose_homogeneous is the best bound for k
// equal releases.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "accounting/accounting_internal.hpp"

namespace dpselect::detail::accounting {

ReleaseLedger homogeneous_ledger(std::uint64_t k, double epsilon, ReleaseKind kind) {
  ReleaseLedger ledger;
  (kind == ReleaseKind::pure ? ledger.pure_count : ledger.exponential_count) = k;
  ledger.one_epsilon = true;
  ledger.shared_epsilon = epsilon;
  return ledger;
}

}  // namespace dpselect::detail::accounting

namespace dpselect {
using namespace detail::accounting;

namespace detail {

void CompensatedSum::add(double value) {
  // Neumaier's variant of Kahan summation: the rounding error of each addition is kept apart.
  const double total = sum + value;
  compensation += std::fabs(sum) >= std::fabs(value) ? (sum - total) + value : (value - total) + sum;
  sum = total;
}

void ReleaseLedger::add(ReleaseKind kind, double epsilon, double delta, std::uint64_t count) {
  const double copies = static_cast<double>(count);  // exact: count <= 2^53
  if (kind == ReleaseKind::approximate) {
    approximate_count += count;
    approximate_epsilon.add(copies * epsilon);
    approximate_delta.add(copies * delta);
    return;
  }
  if (pure_count + exponential_count == 0) {
    shared_epsilon = epsilon;
  } else if (epsilon != shared_epsilon) {
    one_epsilon = false;
  }
  dp_epsilon.add(copies * epsilon);
  if (kind == ReleaseKind::pure) {
    pure_count += count;
    rho.add(copies * (0.5 * epsilon * epsilon));  // Bun & Steinke 2016, Prop 1.4
  } else {
    exponential_count += count;
    rho.add(copies * (0.125 * epsilon * epsilon));  // Cesar & Rogers 2021 (eps-bounded-range)
  }
}

namespace {

// The accountant skips the optimal route beyond this many equal releases: its profile costs
// O(sqrt(k)) terms per evaluation (about 3e4 terms here), and advanced composition and zCDP are
// within a few percent of it at such k. Skipping a route only loosens the bound.
constexpr std::uint64_t kOptimalRouteCountLimit = 10'000'000;

// rho is formed in double (eps^2/2 or eps^2/8, then summed); the accountant inflates it by this
// relative amount, more than the few ulps those operations can lose, before converting it.
constexpr double kRhoHeadroom = 0x1p-50;

// What the routes other than basic composition work with: the delta that approximate releases
// leave, and the epsilon they leave, each stepped down until adding the approximate part back
// cannot round above the budget.
struct Leftover {
  double epsilon;  // may be +inf (no epsilon budget: compose_homogeneous)
  double delta;
};

Leftover leftover(const PrivacyBound& budget, double approximate_epsilon, double approximate_delta) {
  double delta = budget.delta - approximate_delta;
  while (delta > 0.0 && approximate_delta + delta > budget.delta) delta = std::nextafter(delta, 0.0);
  double epsilon = budget.epsilon - approximate_epsilon;
  while (epsilon > 0.0 && std::isfinite(epsilon) && epsilon + approximate_epsilon > budget.epsilon) {
    epsilon = std::nextafter(epsilon, 0.0);
  }
  return {epsilon, delta};
}

// rho of the pure and exponential-mechanism releases (Bun & Steinke Prop 1.4; Cesar & Rogers),
// raised by kRhoHeadroom to cover its rounding. With one shared epsilon it is formed from the
// counts, so k equal charges give exactly what compose_homogeneous computes.
double ledger_rho(const ReleaseLedger& ledger) {
  const double eps = ledger.shared_epsilon;
  const double rho = ledger.one_epsilon ? static_cast<double>(ledger.pure_count) * (0.5 * eps * eps) +
                                              static_cast<double>(ledger.exponential_count) * (0.125 * eps * eps)
                                        : ledger.rho.value();
  return rho * (1.0 + kRhoHeadroom);
}

double ledger_basic_epsilon(const ReleaseLedger& ledger) {
  const std::uint64_t dp_count = ledger.pure_count + ledger.exponential_count;
  return ledger.one_epsilon ? static_cast<double>(dp_count) * ledger.shared_epsilon : ledger.dp_epsilon.value();
}

bool optimal_route_applies(const ReleaseLedger& ledger) {
  const std::uint64_t dp_count = ledger.pure_count + ledger.exponential_count;
  return ledger.one_epsilon && dp_count >= 1 && dp_count <= kOptimalRouteCountLimit;
}

}  // namespace

AccountedBound best_bound(const ReleaseLedger& ledger, const PrivacyBound& budget, ParameterChoice choice) {
  const std::uint64_t dp_count = ledger.pure_count + ledger.exponential_count;
  const double approximate_epsilon = ledger.approximate_epsilon.value();
  const double approximate_delta = ledger.approximate_delta.value();
  // Basic composition over everything (Dwork & Roth Thm 3.16).
  const double dp_basic = ledger_basic_epsilon(ledger);
  AccountedBound best{dp_basic + approximate_epsilon, approximate_delta, CompositionRoute::basic};
  // Past the largest double the other routes' arithmetic overflows (to 0, NaN or -inf) while their
  // true bounds are about the sum too (fits_budget): the sum, infinite, is the answer.
  if (dp_count == 0 || choice == ParameterChoice::adaptive || !std::isfinite(best.epsilon)) return best;

  // The other routes bound the pure and exponential-mechanism releases with whatever delta the
  // approximate ones leave, and add the approximate ones by basic composition.
  const Leftover left = leftover(budget, approximate_epsilon, approximate_delta);
  if (!(left.delta > 0.0)) return best;
  const double delta_used = approximate_delta + left.delta;
  const auto consider = [&](double dp_epsilon, CompositionRoute route) {
    const double epsilon = dp_epsilon + approximate_epsilon;
    if (epsilon < best.epsilon) best = {epsilon, delta_used, route};
  };
  // zCDP: rhos add (Bun & Steinke Lemma 1.7), converted by CKS Cor 13.
  const double zcdp = epsilon_from_zcdp_unchecked(ledger_rho(ledger), left.delta);
  if (ledger.one_epsilon) {
    // Every one of them is shared_epsilon-DP (the exponential mechanism too), so the theorems for
    // k equal eps-DP releases apply. The optimal profile is the tightest of them; advanced
    // composition stands in for it beyond its cost limit.
    const double advanced = advanced_epsilon(dp_count, ledger.shared_epsilon, left.delta);
    if (optimal_route_applies(ledger)) {
      // Start the search from the smallest other bound that the profile accepts; the leftover
      // epsilon is among them, so a release the budget check let in by this route is reported
      // within the budget.
      std::vector<double> hints = {advanced, zcdp, dp_basic, left.epsilon};
      std::sort(hints.begin(), hints.end());
      consider(optimal_epsilon(dp_count, ledger.shared_epsilon, left.delta, hints), CompositionRoute::optimal_homogeneous);
    }
    consider(zcdp, CompositionRoute::zcdp);
    consider(advanced, CompositionRoute::advanced);
  } else {
    consider(zcdp, CompositionRoute::zcdp);
  }
  return best;
}

bool fits_budget(const ReleaseLedger& ledger, const PrivacyBound& budget, ParameterChoice choice) {
  const std::uint64_t dp_count = ledger.pure_count + ledger.exponential_count;
  const double approximate_epsilon = ledger.approximate_epsilon.value();
  const double approximate_delta = ledger.approximate_delta.value();
  if (!(approximate_delta <= budget.delta)) return false;  // every route reports at least this
  const double basic_epsilon = ledger_basic_epsilon(ledger) + approximate_epsilon;
  // A sum past the largest double needs epsilon > 1e289 (counts are below 2^64), where each
  // release's privacy loss is +epsilon with probability ~1 and every route's bound is about the
  // sum too: beyond every finite budget. The routes' own arithmetic overflows to NaN or -inf
  // there, and once let such a charge through while recording nothing (3 releases at epsilon
  // 7e307; found by tests/fuzz/fuzz_parameters).
  if (!std::isfinite(basic_epsilon)) return false;
  if (basic_epsilon <= budget.epsilon) return true;
  if (dp_count == 0 || choice == ParameterChoice::adaptive) return false;
  const Leftover left = leftover(budget, approximate_epsilon, approximate_delta);
  if (!(left.delta > 0.0) || !(left.epsilon >= 0.0)) return false;
  // The cheap routes first; each test below is the very computation best_bound reports, so a
  // route that passes here is reported within the budget there.
  if (ledger.one_epsilon && advanced_epsilon(dp_count, ledger.shared_epsilon, left.delta) <= left.epsilon) return true;
  if (epsilon_from_zcdp_unchecked(ledger_rho(ledger), left.delta) <= left.epsilon) return true;
  if (optimal_route_applies(ledger)) {
    // The profile at the leftover epsilon, one evaluation instead of its inverse.
    if (product_round_up(dp_count, ledger.shared_epsilon) <= left.epsilon) return true;
    return optimal_profile_fits(dp_count, ledger.shared_epsilon, left.epsilon, left.delta);
  }
  return false;
}

}  // namespace detail

AccountedBound compose_homogeneous(std::uint64_t k, double epsilon, ReleaseKind kind, double delta_budget) {
  validate_count("k", k);
  validate_epsilon("epsilon", epsilon);
  validate_pure_kind(kind);
  validate_delta("delta_budget", delta_budget);
  return detail::best_bound(homogeneous_ledger(k, epsilon, kind), {kDoubleInfinity, delta_budget},
                            ParameterChoice::fixed_in_advance);
}

}  // namespace dpselect
