// SPDX-License-Identifier: Apache-2.0
// Splitting a budget: evenly or by weights under basic composition, and per_release_epsilon, the
// largest epsilon whose k releases the accountant lets in and reports within the target.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "accounting/accounting_internal.hpp"
#include "accounting/calibration_cache.hpp"
#include "dpselect/errors.hpp"
#include "validation/validation.hpp"

namespace dpselect {
using namespace detail::accounting;

namespace {

// Shares from the splitting functions sum to at most total * (1 - 2^-50): summing a few dozen
// ulps' worth of rounding, in any order, then cannot cross the total.
constexpr double kSplitHeadroom = 0x1p-50;

}  // namespace

double split_evenly(double epsilon_total, std::uint64_t k) {
  validate_epsilon("epsilon_total", epsilon_total);
  validate_count("k", k);
  const double cap = epsilon_total * (1.0 - kSplitHeadroom);
  const double count = static_cast<double>(k);
  double share = cap / count;
  // fma gives the sign of the exact k * share - cap: step down until the exact product fits.
  while (share > 0.0 && std::fma(count, share, -cap) > 0.0) share = std::nextafter(share, 0.0);
  if (!(share > 0.0)) detail::throw_invalid("epsilon_total", "large enough that epsilon_total / k is a positive double", epsilon_total);
  return share;
}

std::vector<double> split_by_weights(double epsilon_total, std::span<const double> weights) {
  validate_epsilon("epsilon_total", epsilon_total);
  if (weights.empty()) throw InvalidArgument("dpselect: weights must hold at least one weight (got size 0)");
  double largest = 0.0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    detail::validate_positive_finite("weights[" + std::to_string(i) + "]", weights[i]);
    largest = std::max(largest, weights[i]);
  }
  // Normalize by the largest weight first so the total cannot overflow.
  detail::CompensatedSum normalized_total;
  for (const double weight : weights) normalized_total.add(weight / largest);
  const double total_weight = normalized_total.value();
  double cap = epsilon_total * (1.0 - kSplitHeadroom);
  std::vector<double> shares(weights.size());
  for (int attempt = 0; attempt < 64; ++attempt) {
    detail::CompensatedSum sum;
    for (std::size_t i = 0; i < weights.size(); ++i) {
      shares[i] = cap * ((weights[i] / largest) / total_weight);
      if (!(shares[i] > 0.0)) {
        detail::throw_invalid("weights[" + std::to_string(i) + "]",
                              "large enough next to the largest weight that its share is a positive double", weights[i]);
      }
      sum.add(shares[i]);
    }
    // Each share is within a few ulps of its exact value, so the sum is within a few ulps of cap;
    // the headroom below epsilon_total absorbs that. Shrink further in the (unseen) other case.
    if (sum.value() <= epsilon_total * (1.0 - kSplitHeadroom / 2)) return shares;
    cap *= 1.0 - kSplitHeadroom;
  }
  // A denormal total: its shares round up past it and the headroom cannot shrink them (3 * 2^-1074
  // over weights {1, 1} gave two shares of 2 * 2^-1074; found in review of the fuzz invariants).
  detail::throw_invalid("epsilon_total", "large enough that its shares do not round past it", epsilon_total);
}

namespace {
double search_per_release_epsilon(std::uint64_t k, double target_epsilon, double target_delta, ReleaseKind kind);
}  // namespace

double per_release_epsilon(std::uint64_t k, double target_epsilon, double target_delta, ReleaseKind kind) {
  validate_count("k", k);
  validate_epsilon("target_epsilon", target_epsilon);
  validate_delta("target_delta", target_delta);
  validate_pure_kind(kind);
  // A deterministic search of milliseconds that callers repeat per release (m quantiles under
  // zCDP, say): memoized.
  static detail::CalibrationCache<std::tuple<std::uint64_t, double, double, ReleaseKind>, double> cache;
  return cache.get({k, target_epsilon, target_delta, kind},
                   [&] { return search_per_release_epsilon(k, target_epsilon, target_delta, kind); });
}

namespace {

double search_per_release_epsilon(std::uint64_t k, double target_epsilon, double target_delta, ReleaseKind kind) {
  const PrivacyBound target{target_epsilon, target_delta};
  // The accountant's own budget check: k charges at this epsilon are let in.
  const auto fits = [&](double epsilon) {
    return detail::fits_budget(homogeneous_ledger(k, epsilon, kind), target, ParameterChoice::fixed_in_advance);
  };
  // And the bound it then reports (compose_homogeneous) is within the target too.
  const auto reported_within = [&](double epsilon) {
    const AccountedBound bound = detail::best_bound(homogeneous_ledger(k, epsilon, kind), {kDoubleInfinity, target_delta},
                                                    ParameterChoice::fixed_in_advance);
    return bound.epsilon <= target_epsilon && bound.delta <= target_delta;
  };
  // The even split fits by basic composition (k * share <= target exactly, so the rounded product
  // does too). Double until a per-release epsilon does not fit, then bisect.
  const double even = split_evenly(target_epsilon, k);
  double low = even;
  double high = 2.0 * low;
  while (std::isfinite(high) && fits(high)) {
    low = high;
    high *= 2.0;
  }
  while (high - low > kInverseTolerance * low) {
    const double mid = low + (high - low) / 2;
    if (!(mid > low && mid < high)) break;
    (fits(mid) ? low : high) = mid;
  }
  // The inverse inside compose_homogeneous stops within a relative 2^-40 of the exact bound, so at
  // the very edge it may report a hair above the target: step down until both agree.
  for (int step = 0; step < 64 && low > even; ++step) {
    if (fits(low) && reported_within(low)) return low;
    low = std::max(even, low * (1.0 - 0x1p-38));
  }
  return even;
}

}  // namespace

}  // namespace dpselect
