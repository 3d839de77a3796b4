// SPDX-License-Identifier: Apache-2.0
// The keep probabilities of the partition selection strategies (sources in
// <dpselect/partition_selection.hpp>).
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "dpselect/discrete_noise.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/partition_selection.hpp"
#include "validation/validation.hpp"
#include "partition_selection/partition_passes.hpp"

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

// log(1 + e^x) without overflow.
double log1p_exp(double x) { return x > 0.0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

// The smallest per-key delta a rule takes. The truncated geometric rule: with delta / m >= 1e-300
// every e^{(n - 1) eps} it computes below its cut n1 is at most about 1e300, a finite double. The
// weighted rounds: their thresholds' normal tails stay normal doubles.
constexpr double kSmallestKeyDelta = 1e-300;

// delta (e^{n eps} - 1) / (e^eps - 1), the geometric part of the rule for n <= n1. Where e^{n eps}
// exceeds every double (eps above 18 with a small delta, or above 709.78) it is written as
// delta e^{(n - 1) eps} (1 - e^{-n eps}) / (1 - e^-eps), which has no ratio of two infinities and
// is delta at n = 1.
double geometric_part(double delta, double eps, double n) {
  if (n == 1.0) return delta;  // exactly: delta g / g can round above delta
  const double growth = std::expm1(n * eps);
  // The ratio first: delta times a growth of 1e-300 would underflow.
  if (std::isfinite(growth)) return delta * (growth / std::expm1(eps));
  return delta * (std::exp((n - 1.0) * eps) * (-std::expm1(-n * eps)) / (-std::expm1(-eps)));
}

PartitionKeepRule truncated_geometric_rule(const PartitionSelectionParams& params) {
  // Desfontaines, Voss, Gipson & Mandayam 2022, Thm 1, per key at eps / m and delta / m (basic
  // composition over a user's m keys, Dwork & Roth 2014, Thm 3.16).
  PartitionKeepRule rule;
  const double m = static_cast<double>(params.max_partitions);
  rule.key_epsilon = params.epsilon / m;
  rule.key_delta = params.delta / m;
  const double eps = rule.key_epsilon, delta = rule.key_delta;
  if (!(eps > 0.0)) {
    // Per key it would round to 0 (a tiny epsilon over many keys): no rule exists.
    detail::throw_invalid("epsilon", "large enough that epsilon / max_partitions stays above 0", params.epsilon);
  }
  if (!(delta >= kSmallestKeyDelta)) {
    detail::throw_invalid("delta", "at least 1e-300 times max_partitions, so that the truncated geometric rule "
                                   "is computed without overflow",
                          params.delta);
  }
  // In log space, so that neither 1 / delta nor e^eps overflows (delta of 1e-320, eps of 710):
  // n1, the last n at which p(n) = e^eps p(n - 1) + delta binds (the geometric part), is
  // 1 + floor(log(1 + tanh(eps / 2) (1 / delta - 1)) / eps).
  const double log_x = std::log(std::tanh(eps / 2.0)) + std::log1p(-delta) - std::log(delta);
  const double n1 = 1.0 + std::floor(log1p_exp(log_x) / eps);
  const double p1 = std::fmin(geometric_part(delta, eps, n1), 1.0);
  // n2: after it p(n) = 1; before it 1 - p(n) = e^-eps (1 - p(n - 1) - delta) binds:
  // n1 + floor(log(1 + (e^eps - 1) / delta (1 - p1)) / eps).
  const double log_y = eps + std::log(-std::expm1(-eps)) - std::log(delta) + std::log1p(-p1);
  const double n2 = n1 + std::floor(log1p_exp(log_y) / eps);
  rule.always_kept = !(n2 + 1.0 < 0x1p64) ? std::numeric_limits<std::uint64_t>::max()
                                           : static_cast<std::uint64_t>(n2) + 1;
  rule.geometric_until = n1;
  return rule;
}

double truncated_geometric_keep(const PartitionKeepRule& rule, std::uint64_t users) {
  if (users == 0) return 0.0;
  if (users >= rule.always_kept) return 1.0;
  const double eps = rule.key_epsilon, delta = rule.key_delta, n1 = rule.geometric_until;
  const double n = static_cast<double>(users);
  if (n <= n1) return std::fmin(geometric_part(delta, eps, n), 1.0);
  const double p1 = std::fmin(geometric_part(delta, eps, n1), 1.0);
  // 1 - p(n) + d = e^{-k eps} (1 - p1 + d), k = n - n1, d = delta / (e^eps - 1) the recursion's fixed
  // point; written as 1 - p(n) = (1 - p1) e^{-k eps} + delta (e^{-k eps} - 1) / (e^eps - 1), without
  // d itself, which at a tiny eps (d of 1e300) would cancel every digit of 1 - p(n).
  const double k = n - n1;
  const double missed = (1.0 - p1) * std::exp(-k * eps) + delta * (std::expm1(-k * eps) / std::expm1(eps));
  return std::fmin(std::fmax(1.0 - missed, 0.0), 1.0);
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

// The weighted rounds' threshold rho for sigma and delta_i: the least with which every t <= m keys
// of weight 1/sqrt(t) (a user's keys nobody else holds) all stay below it with probability at
// least 1 - delta_i, each key passing with weighted_keep_probability as the passes compute it.
double weighted_threshold(double sigma, double round_delta, std::uint64_t max_partitions) {
  double threshold = -HUGE_VAL;
  for (std::uint64_t t = 1; t <= max_partitions; ++t) {
    // Gopi et al. 2020 (Weighted Gaussian): rho >= 1/sqrt(t) + sigma Phi^-1((1 - delta_i)^(1/t)).
    const double tail = independent_key_delta(round_delta, t);
    threshold = std::fmax(threshold, 1.0 / std::sqrt(static_cast<double>(t)) + sigma * normal_upper_quantile(tail));
  }
  // Raised by ulps until the computed probabilities meet delta_i at every t.
  const auto exceeds_delta = [&](double rho) {
    const WeightedRound round{1.0, sigma, rho, round_delta};
    for (std::uint64_t t = 1; t <= max_partitions; ++t) {
      const double p = weighted_keep_probability(round, 1.0 / std::sqrt(static_cast<double>(t)));
      if (-std::expm1(static_cast<double>(t) * std::log1p(-p)) > round_delta) return true;
    }
    return false;
  };
  for (int step = 0; exceeds_delta(threshold); ++step) {
    if (step == 1024) throw std::logic_error("dpselect: weighted threshold did not converge (please report)");
    threshold = std::nextafter(threshold, HUGE_VAL);
  }
  return threshold;
}

PartitionKeepRule weighted_rule(const PartitionSelectionParams& params) {
  PartitionKeepRule rule;
  const double half_delta = params.delta / 2.0;
  // Gopi et al. 2020: half of delta for the Gaussian noise on weights of L2 sensitivity 1 (analytic
  // sigma, Balle & Wang 2018), half for the threshold.
  const double sigma = discrete::analytic_gaussian_sigma(params.epsilon, half_delta, 1.0);
  rule.key_epsilon = params.epsilon;
  rule.key_delta = half_delta;
  rule.noise_scale = sigma;
  const std::uint32_t rounds = params.strategy == PartitionStrategy::dp_sips ? params.rounds : 1;
  // Swanberg et al. 2023: round i of R gets f_i proportional to ratio^(R - 1 - i); sigma_i = sigma /
  // sqrt(f_i) composes to sigma (Dong, Roth & Su 2022, Cor. 3.3), delta_i = f_i delta / 2 adds up.
  std::vector<double> shares(rounds);
  double total = 0.0;
  for (std::uint32_t i = 0; i < rounds; ++i) {
    shares[i] = std::pow(params.round_budget_ratio, static_cast<double>(rounds - 1 - i));
    total += shares[i];
  }
  double spent_delta = 0.0;
  for (std::uint32_t i = 0; i < rounds; ++i) {
    WeightedRound round;
    round.budget_share = shares[i] / total;
    round.noise_scale = rounds == 1 ? sigma : sigma / std::sqrt(round.budget_share);
    // The last round takes what the others left of delta / 2, so that the sum never exceeds it.
    round.key_delta = i + 1 == rounds ? half_delta - spent_delta : half_delta * round.budget_share;
    spent_delta += round.key_delta;
    if (!(independent_key_delta(round.key_delta, params.max_partitions) >= kSmallestKeyDelta)) {
      // Below it the threshold's normal tails leave the doubles and its search cannot settle.
      detail::throw_invalid("delta", "large enough that each round's share of delta / 2 over max_partitions keys is "
                                     "at least 1e-300 (fewer rounds or a round_budget_ratio nearer 1 help)",
                            params.delta);
    }
    round.threshold = weighted_threshold(round.noise_scale, round.key_delta, params.max_partitions);
    rule.rounds.push_back(round);
  }
  if (rounds == 1) rule.threshold = rule.rounds[0].threshold;
  if (params.strategy == PartitionStrategy::policy_gaussian) {
    // Gopi et al. 2020 (Policy Gaussian): Gamma = rho + alpha sigma.
    rule.policy_cutoff = rule.threshold + params.policy_cutoff_sigmas * sigma;
    if (!std::isfinite(rule.policy_cutoff)) {
      detail::throw_invalid("policy_cutoff_sigmas", "small enough that the cutoff rho + policy_cutoff_sigmas sigma is "
                                                    "finite",
                            params.policy_cutoff_sigmas);
    }
  }
  return rule;
}

// The keep probability of a key whose `users` users hold nothing else (keep_probability).
double weighted_lone_users_keep(const PartitionKeepRule& rule, PartitionStrategy strategy, std::uint64_t users) {
  if (users == 0) return 0.0;
  double weight = static_cast<double>(users);
  if (strategy == PartitionStrategy::policy_gaussian) weight = std::fmin(weight, rule.policy_cutoff);
  // Each round's coin is independent: the key stays out of every round with the product, summed
  // in log space (1 - (1 - p) would round a p of 1e-10 by 1e-7 of itself).
  double log_missed = 0.0;
  for (const WeightedRound& round : rule.rounds) log_missed += std::log1p(-weighted_keep_probability(round, weight));
  return -std::expm1(log_missed);
}

}  // namespace

bool is_weighted(PartitionStrategy strategy) {
  return strategy == PartitionStrategy::weighted_gaussian || strategy == PartitionStrategy::policy_gaussian ||
         strategy == PartitionStrategy::dp_sips;
}

double weighted_keep_probability(const WeightedRound& round, double weight) {
  if (!(weight > 0.0)) return 0.0;
  // P(w + N(0, sigma^2) > rho).
  return normal_upper_tail((round.threshold - weight) / round.noise_scale);
}

std::string_view to_string(PartitionStrategy strategy) {
  switch (strategy) {
    case PartitionStrategy::truncated_geometric:
      return "truncated-geometric";
    case PartitionStrategy::laplace_threshold:
      return "laplace";
    case PartitionStrategy::gaussian_threshold:
      return "gaussian";
    case PartitionStrategy::weighted_gaussian:
      return "weighted-gaussian";
    case PartitionStrategy::policy_gaussian:
      return "policy-gaussian";
    case PartitionStrategy::dp_sips:
      return "dp-sips";
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
  if (rounds == 0 || rounds > kMaxPartitionRounds) {
    throw InvalidArgument("dpselect: rounds must be in [1, " + std::to_string(kMaxPartitionRounds) + "] (got " +
                          std::to_string(rounds) + ")");
  }
  if (!(round_budget_ratio > 0.0 && round_budget_ratio <= 1.0)) {
    detail::throw_invalid("round_budget_ratio", "in (0, 1]", round_budget_ratio);
  }
  if (!(std::isfinite(policy_cutoff_sigmas) && policy_cutoff_sigmas >= 0.0)) {
    detail::throw_invalid("policy_cutoff_sigmas", "finite and >= 0", policy_cutoff_sigmas);
  }
  if (pre_threshold == 0) throw InvalidArgument("dpselect: pre_threshold must be >= 1 (got 0; 1 sets no minimum)");
  switch (strategy) {
    case PartitionStrategy::truncated_geometric:
    case PartitionStrategy::laplace_threshold:
    case PartitionStrategy::gaussian_threshold:
      return;
    case PartitionStrategy::weighted_gaussian:
    case PartitionStrategy::policy_gaussian:
    case PartitionStrategy::dp_sips:
      if (max_partitions > kMaxWeightedPartitions) {
        throw InvalidArgument("dpselect: max_partitions must be <= " + std::to_string(kMaxWeightedPartitions) +
                              " for the " + std::string(to_string(strategy)) + " strategy (got " +
                              std::to_string(max_partitions) + ")");
      }
      if (pre_threshold != 1) {
        throw InvalidArgument("dpselect: pre_threshold must be 1 for the " + std::string(to_string(strategy)) +
                              " strategy, whose weights are not counts (got " + std::to_string(pre_threshold) +
                              "); the count strategies take a minimum");
      }
      if (backend != Backend::Auto && backend != Backend::Cpu) {
        throw InvalidArgument("dpselect: backend must be Auto or Cpu for the " + std::string(to_string(strategy)) +
                              " strategy, which runs on the CPU (got " +
                              (backend == Backend::Gpu ? std::string("Gpu") : std::to_string(static_cast<int>(backend))) +
                              ")");
      }
      return;
  }
  throw InvalidArgument("dpselect: strategy must be a PartitionStrategy (got " +
                        std::to_string(static_cast<int>(strategy)) + ")");
}

double detail::partition_delta_float(const PartitionSelectionParams& params, const PartitionKeepRule& rule) {
  const double m = static_cast<double>(params.max_partitions);
  switch (params.strategy) {
    case PartitionStrategy::truncated_geometric:
    case PartitionStrategy::laplace_threshold:
      // Each key's two inequalities lose at most e^eps' 2^-53 (PartitionSelectionReport).
      return m * std::exp(rule.key_epsilon) * 0x1p-53;
    case PartitionStrategy::gaussian_threshold:
      // The user's keys move by at most m 2^-53 in total variation on either side.
      return (1.0 + std::exp(params.epsilon)) * m * 0x1p-53;
    default:
      return 0.0;  // exact coins (weighted_passes.cpp)
  }
}

namespace {

PartitionKeepRule rule_of_strategy(const PartitionSelectionParams& params) {
  switch (params.strategy) {
    case PartitionStrategy::truncated_geometric:
      return truncated_geometric_rule(params);
    case PartitionStrategy::laplace_threshold:
      return laplace_rule(params);
    case PartitionStrategy::gaussian_threshold:
      return gaussian_rule(params);
    case PartitionStrategy::weighted_gaussian:
    case PartitionStrategy::policy_gaussian:
    case PartitionStrategy::dp_sips:
      return weighted_rule(params);
  }
  return {};  // unreachable: validate() refuses other values
}

}  // namespace

PartitionKeepRule partition_keep_rule(const PartitionSelectionParams& params) {
  params.validate();
  PartitionKeepRule rule = rule_of_strategy(params);
  rule.pre_threshold = params.pre_threshold;
  // A release whose total delta reaches 1 guarantees nothing: refused before anything is charged.
  const double delta_float = detail::partition_delta_float(params, rule);
  if (!(params.delta + delta_float < 1.0)) {
    throw InvalidArgument("dpselect: epsilon and max_partitions must leave the total delta below 1 (got epsilon " +
                          detail::format_value(params.epsilon) + " and max_partitions " +
                          std::to_string(params.max_partitions) + ": delta " + detail::format_value(params.delta) +
                          " plus the keep probabilities' rounding, delta_float " + detail::format_value(delta_float) +
                          ")");
  }
  return rule;
}

double keep_probability(const PartitionKeepRule& rule, PartitionStrategy strategy, std::uint64_t users) {
  // The public minimum: kept as a key of users - pre_threshold + 1 users (the shift of
  // PartitionSelectionParams::pre_threshold, which keeps every strategy's guarantee).
  if (users < rule.pre_threshold) return 0.0;
  users -= rule.pre_threshold - 1;
  switch (strategy) {
    case PartitionStrategy::truncated_geometric:
      return truncated_geometric_keep(rule, users);
    case PartitionStrategy::laplace_threshold:
      return laplace_keep(rule, users);
    case PartitionStrategy::gaussian_threshold:
      return gaussian_keep(rule, users);
    case PartitionStrategy::weighted_gaussian:
    case PartitionStrategy::policy_gaussian:
    case PartitionStrategy::dp_sips:
      return weighted_lone_users_keep(rule, strategy, users);
  }
  return 0.0;
}

double keep_probability(const PartitionSelectionParams& params, std::uint64_t users) {
  return keep_probability(partition_keep_rule(params), params.strategy, users);
}

}  // namespace dpselect
