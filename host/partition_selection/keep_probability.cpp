// SPDX-License-Identifier: Apache-2.0
// The keep probabilities of the partition selection strategies (sources in
// <dpselect/partition_selection.hpp>).
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

#include "dpselect/discrete_noise.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/partition_selection.hpp"
#include "engine/validation.hpp"

namespace dpselect {
namespace {

// 1 - (1 - delta)^(1 / m), without cancellation: the per-key delta of m independent keys whose
// union fails with probability delta.
double independent_key_delta(double delta, std::uint64_t max_partitions) {
  return -std::expm1(std::log1p(-delta) / static_cast<double>(max_partitions));
}

// P(Z > z) for Z ~ N(0, 1).
double normal_upper_tail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

// The smallest double z with P(Z > z) <= tail, by bisection over the doubles: from the safe side
// (a threshold 1 + sigma z at least as high as the exact one releases a lone user's key with
// probability at most tail).
double normal_upper_quantile(double tail) {
  double low = -40.0, high = 40.0;  // P(Z > 40) underflows to 0 below every tail in (0, 1)
  while (true) {
    const double middle = low + (high - low) / 2.0;
    if (middle <= low || middle >= high) return high;
    (normal_upper_tail(middle) <= tail ? high : low) = middle;
  }
}

double laplace_keep(const PartitionKeepRule& rule, std::uint64_t users) {
  if (users == 0) return 0.0;
  // P(n + Lap(b) > T).
  const double gap = rule.threshold - static_cast<double>(users);
  return gap >= 0.0 ? 0.5 * std::exp(-gap / rule.noise_scale) : 1.0 - 0.5 * std::exp(gap / rule.noise_scale);
}

double gaussian_keep(const PartitionKeepRule& rule, std::uint64_t users) {
  if (users == 0) return 0.0;
  // P(n + N(0, sigma^2) > T).
  return normal_upper_tail((rule.threshold - static_cast<double>(users)) / rule.noise_scale);
}

// The threshold raised by ulps until a lone user's key passes with probability at most delta',
// as the keep probability computes it: rounding never spends more than delta'.
// The computed threshold is within a few ulps of the exact one: a handful of steps.
template <class Keep>
void raise_threshold_to_key_delta(PartitionKeepRule& rule, Keep keep) {
  for (int step = 0; keep(rule, 1) > rule.key_delta; ++step) {
    if (step == 1024) throw std::logic_error("dpselect: partition threshold did not converge (please report)");
    rule.threshold = std::nextafter(rule.threshold, HUGE_VAL);
  }
}

PartitionKeepRule truncated_geometric_rule(const PartitionSelectionParams& params) {
  // Desfontaines, Voss, Gipson & Mandayam 2022, Thm 1, per key at eps / m and delta / m (basic
  // composition over a user's m keys, Dwork & Roth 2014, Thm 3.16).
  PartitionKeepRule rule;
  const double m = static_cast<double>(params.max_partitions);
  rule.key_epsilon = params.epsilon / m;
  rule.key_delta = params.delta / m;
  const double eps = rule.key_epsilon, delta = rule.key_delta;
  // n1: the last n at which p(n) = e^eps p(n - 1) + delta binds (the geometric part).
  const double n1 = 1.0 + std::floor(std::log1p(std::tanh(eps / 2.0) * (1.0 / delta - 1.0)) / eps);
  const double p1 = delta * std::expm1(n1 * eps) / std::expm1(eps);
  // n2: after it p(n) = 1; before it 1 - p(n) = e^-eps (1 - p(n - 1) - delta) binds.
  const double n2 = n1 + std::floor(std::log1p(std::expm1(eps) / delta * (1.0 - p1)) / eps);
  rule.always_kept = n2 + 1.0 >= 0x1p64 ? std::numeric_limits<std::uint64_t>::max()
                                        : static_cast<std::uint64_t>(n2) + 1;
  rule.geometric_until = n1;
  return rule;
}

double truncated_geometric_keep(const PartitionKeepRule& rule, std::uint64_t users) {
  if (users == 0) return 0.0;
  if (users >= rule.always_kept) return 1.0;
  const double eps = rule.key_epsilon, delta = rule.key_delta, n1 = rule.geometric_until;
  const double n = static_cast<double>(users);
  if (n <= n1) return std::fmin(delta * std::expm1(n * eps) / std::expm1(eps), 1.0);
  const double p1 = delta * std::expm1(n1 * eps) / std::expm1(eps);
  const double fixed_point = delta / std::expm1(eps);
  // 1 - p(n) + d = e^{-(n - n1) eps} (1 - p1 + d), d = delta / (e^eps - 1): the recursion's fixed point.
  return std::fmin(1.0 + fixed_point - std::exp(-(n - n1) * eps) * (1.0 - p1 + fixed_point), 1.0);
}

PartitionKeepRule laplace_rule(const PartitionSelectionParams& params) {
  // Korolova et al. 2009; Wilson et al. 2020: Lap(m / eps) on counts of L1 sensitivity m, and a
  // threshold a lone user's key passes with probability delta' = 1 - (1 - delta)^(1/m).
  PartitionKeepRule rule;
  rule.noise_scale = static_cast<double>(params.max_partitions) / params.epsilon;
  if (!std::isfinite(rule.noise_scale)) {
    detail::throw_invalid("epsilon", "large enough that the Laplace scale max_partitions / epsilon is finite",
                          params.epsilon);
  }
  rule.key_epsilon = 1.0 / rule.noise_scale;
  rule.key_delta = independent_key_delta(params.delta, params.max_partitions);
  // P(1 + Lap(b) > T) = delta'.
  rule.threshold = rule.key_delta <= 0.5 ? 1.0 - rule.noise_scale * std::log(2.0 * rule.key_delta)
                                         : 1.0 + rule.noise_scale * std::log(2.0 * (1.0 - rule.key_delta));
  raise_threshold_to_key_delta(rule, laplace_keep);
  return rule;
}

PartitionKeepRule gaussian_rule(const PartitionSelectionParams& params) {
  // Wilson et al. 2020: half of delta for the Gaussian noise (analytic sigma, Balle & Wang 2018,
  // L2 sensitivity sqrt(m)), half for the threshold a lone user's key passes.
  PartitionKeepRule rule;
  const double half_delta = params.delta / 2.0;
  rule.noise_scale = discrete::analytic_gaussian_sigma(params.epsilon, half_delta,
                                                       std::sqrt(static_cast<double>(params.max_partitions)));
  rule.key_epsilon = params.epsilon;
  rule.key_delta = independent_key_delta(half_delta, params.max_partitions);
  rule.threshold = 1.0 + rule.noise_scale * normal_upper_quantile(rule.key_delta);
  raise_threshold_to_key_delta(rule, gaussian_keep);
  return rule;
}

}  // namespace

std::string_view to_string(PartitionStrategy strategy) {
  switch (strategy) {
    case PartitionStrategy::truncated_geometric:
      return "truncated-geometric";
    case PartitionStrategy::laplace_threshold:
      return "laplace";
    case PartitionStrategy::gaussian_threshold:
      return "gaussian";
  }
  return "unknown";
}

void PartitionSelectionParams::validate() const {
  detail::validate_positive_finite("epsilon", epsilon);
  if (!(delta > 0.0 && delta < 1.0)) {
    detail::throw_invalid("delta", "in (0, 1): with delta = 0 a key only one user holds could never be released, "
                                   "and so no key could",
                          delta);
  }
  if (max_partitions == 0) throw InvalidArgument("dpselect: max_partitions must be >= 1 (got 0)");
  switch (strategy) {
    case PartitionStrategy::truncated_geometric:
    case PartitionStrategy::laplace_threshold:
    case PartitionStrategy::gaussian_threshold:
      return;
  }
  throw InvalidArgument("dpselect: strategy must be a PartitionStrategy (got " +
                        std::to_string(static_cast<int>(strategy)) + ")");
}

PartitionKeepRule partition_keep_rule(const PartitionSelectionParams& params) {
  params.validate();
  switch (params.strategy) {
    case PartitionStrategy::truncated_geometric:
      return truncated_geometric_rule(params);
    case PartitionStrategy::laplace_threshold:
      return laplace_rule(params);
    case PartitionStrategy::gaussian_threshold:
      return gaussian_rule(params);
  }
  return {};  // unreachable: validate() refuses other values
}

double keep_probability(const PartitionKeepRule& rule, PartitionStrategy strategy, std::uint64_t users) {
  switch (strategy) {
    case PartitionStrategy::truncated_geometric:
      return truncated_geometric_keep(rule, users);
    case PartitionStrategy::laplace_threshold:
      return laplace_keep(rule, users);
    case PartitionStrategy::gaussian_threshold:
      return gaussian_keep(rule, users);
  }
  return 0.0;
}

double keep_probability(const PartitionSelectionParams& params, std::uint64_t users) {
  return keep_probability(partition_keep_rule(params), params.strategy, users);
}

}  // namespace dpselect
