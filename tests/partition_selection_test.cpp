// SPDX-License-Identifier: Apache-2.0
// The partition selection strategies' keep probabilities: the truncated geometric closed form
// equals the recursion it solves, every strategy meets the per-key DP inequalities it is built on,
// the optimal strategy keeps at least what Laplace thresholding keeps, the thresholds release a
// lone user's key with exactly the per-key delta, and every bad parameter is refused by name.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dpselect/discrete_noise.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/partition_selection.hpp"

namespace {

using dpselect::keep_probability;
using dpselect::partition_keep_rule;
using dpselect::PartitionSelectionParams;
using dpselect::PartitionStrategy;

struct Budget {
  double epsilon;
  double delta;
  std::uint64_t max_partitions;
};

const std::vector<Budget> kBudgets = {{1.0, 1e-5, 1}, {0.1, 1e-8, 1}, {4.0, 1e-3, 1},
                                      {1.0, 1e-5, 5}, {8.0, 1e-10, 40}, {0.5, 0.4, 3}};

PartitionSelectionParams params_of(const Budget& budget, PartitionStrategy strategy) {
  return {budget.epsilon, budget.delta, budget.max_partitions, strategy};
}

TEST(PartitionKeepProbability, TruncatedGeometricEqualsItsRecursion) {
  // Desfontaines et al. 2022, Def. of the optimal strategy: p(0) = 0 and
  // p(n) = min(e^eps p(n - 1) + delta, 1 - e^-eps (1 - p(n - 1) - delta), 1), in long double.
  for (const Budget& budget : kBudgets) {
    const auto params = params_of(budget, PartitionStrategy::truncated_geometric);
    const auto rule = partition_keep_rule(params);
    const long double eps = rule.key_epsilon, delta = rule.key_delta;
    long double p = 0.0L;
    EXPECT_EQ(keep_probability(params, 0), 0.0);
    std::uint64_t first_certain = 0;
    for (std::uint64_t n = 1; n <= rule.always_kept + 5; ++n) {
      p = std::fmin(std::fmin(std::exp(eps) * p + delta, 1.0L - std::exp(-eps) * (1.0L - p - delta)), 1.0L);
      if (p >= 1.0L && first_certain == 0) first_certain = n;
      EXPECT_NEAR(keep_probability(params, n), static_cast<double>(p), 1e-12)
          << "eps " << budget.epsilon << " delta " << budget.delta << " m " << budget.max_partitions << " n " << n;
    }
    EXPECT_EQ(rule.always_kept, first_certain) << "eps " << budget.epsilon << " delta " << budget.delta;
  }
}

TEST(PartitionKeepProbability, TruncatedGeometricAndLaplaceMeetThePerKeyInequalities) {
  // p(n + 1) <= e^eps' p(n) + delta' and 1 - p(n) <= e^eps' (1 - p(n + 1)) + delta', n >= 0.
  for (const auto strategy : {PartitionStrategy::truncated_geometric, PartitionStrategy::laplace_threshold}) {
    for (const Budget& budget : kBudgets) {
      const auto params = params_of(budget, strategy);
      const auto rule = partition_keep_rule(params);
      const double grow = std::exp(rule.key_epsilon), slack = 1e-12;
      for (std::uint64_t n = 0; n < 3000; ++n) {
        const double now = keep_probability(params, n), next = keep_probability(params, n + 1);
        ASSERT_LE(now, next) << "non-decreasing, n " << n;
        ASSERT_LE(next, grow * now + rule.key_delta + slack) << "n " << n << " eps " << budget.epsilon;
        ASSERT_LE(1.0 - now, grow * (1.0 - next) + rule.key_delta + slack) << "n " << n;
      }
    }
  }
}

TEST(PartitionKeepProbability, TheOptimalStrategyKeepsAtLeastWhatLaplaceThresholdingKeeps) {
  // One key per user: Laplace thresholding meets the inequalities at (eps, delta) itself, and the
  // truncated geometric p is the largest that does (Desfontaines et al. 2022, Thm 1).
  for (const Budget& budget : kBudgets) {
    if (budget.max_partitions != 1) continue;
    const auto optimal = params_of(budget, PartitionStrategy::truncated_geometric);
    const auto laplace = params_of(budget, PartitionStrategy::laplace_threshold);
    for (std::uint64_t n = 0; n < 3000; ++n) {
      ASSERT_GE(keep_probability(optimal, n) + 1e-15, keep_probability(laplace, n)) << "n " << n;
    }
  }
}

TEST(PartitionKeepProbability, ThresholdsReleaseALoneUsersKeyWithThePerKeyDelta) {
  for (const Budget& budget : kBudgets) {
    const auto laplace = partition_keep_rule(params_of(budget, PartitionStrategy::laplace_threshold));
    const double m = static_cast<double>(budget.max_partitions);
    EXPECT_DOUBLE_EQ(laplace.noise_scale, m / budget.epsilon);
    EXPECT_NEAR(-std::expm1(m * std::log1p(-laplace.key_delta)), budget.delta, 1e-12 * budget.delta);
    const double laplace_lone = keep_probability(params_of(budget, PartitionStrategy::laplace_threshold), 1);
    EXPECT_LE(laplace_lone, laplace.key_delta) << "from the safe side";
    EXPECT_NEAR(laplace_lone, laplace.key_delta, 1e-12 * laplace.key_delta);
    const auto gaussian_params = params_of(budget, PartitionStrategy::gaussian_threshold);
    const auto gaussian = partition_keep_rule(gaussian_params);
    EXPECT_EQ(gaussian.noise_scale,
              dpselect::discrete::analytic_gaussian_sigma(budget.epsilon, budget.delta / 2.0, std::sqrt(m)));
    EXPECT_NEAR(-std::expm1(m * std::log1p(-gaussian.key_delta)), budget.delta / 2.0, 1e-12 * budget.delta);
    const double lone = keep_probability(gaussian_params, 1);
    EXPECT_LE(lone, gaussian.key_delta) << "from the safe side";
    EXPECT_NEAR(lone, gaussian.key_delta, 1e-9 * gaussian.key_delta);
  }
  // eps 1, delta 1e-5, one key per user: b = 1, T = 1 - ln(2e-5), and a key at T passes half the time.
  const auto laplace = PartitionSelectionParams{1.0, 1e-5, 1, PartitionStrategy::laplace_threshold};
  const auto rule = partition_keep_rule(laplace);
  EXPECT_NEAR(rule.threshold, 1.0 - std::log(2e-5), 1e-12);
  EXPECT_NEAR(keep_probability(laplace, 12), 1.0 - 0.5 * std::exp(-(12.0 - rule.threshold)), 1e-15);
}

TEST(PartitionKeepProbability, BadParametersAreRefusedByName) {
  const auto refused = [](PartitionSelectionParams params, const std::string& message) {
    try {
      (void)keep_probability(params, 3);
      ADD_FAILURE() << "accepted: " << message;
    } catch (const dpselect::InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find(message), std::string::npos) << error.what();
    }
  };
  const PartitionSelectionParams good{1.0, 1e-6, 1, PartitionStrategy::truncated_geometric};
  const double nan = std::nan(""), infinity = HUGE_VAL;
  for (const double epsilon : {0.0, -1.0, nan, infinity}) {
    auto params = good;
    params.epsilon = epsilon;
    refused(params, "epsilon must be finite and > 0");
  }
  for (const double delta : {0.0, 1.0, -0.1, 2.0, nan}) {
    auto params = good;
    params.delta = delta;
    refused(params, "delta must be in (0, 1)");
  }
  auto params = good;
  params.max_partitions = 0;
  refused(params, "max_partitions must be >= 1 (got 0)");
  params = good;
  params.strategy = static_cast<PartitionStrategy>(7);
  refused(params, "strategy must be a PartitionStrategy (got 7)");
  EXPECT_NO_THROW(good.validate());
}

}  // namespace
