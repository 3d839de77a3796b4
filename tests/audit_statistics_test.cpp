// SPDX-License-Identifier: Apache-2.0
// The auditor's statistics: Clopper-Pearson bounds and the privacy-loss lower bounds.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dpselect/audit.hpp"
#include "dpselect/errors.hpp"

namespace dpselect::audit {
namespace {

TEST(AuditStatistics, IncompleteBetaClosedForms) {
  // I_x(1, 1) = x; I_x(a, 1) = x^a; I_x(1, b) = 1 - (1 - x)^b; I_x(2, 2) = 3x^2 - 2x^3.
  for (const long double x : {0.001L, 0.1L, 0.5L, 0.9L, 0.999L}) {
    EXPECT_NEAR(static_cast<double>(regularized_incomplete_beta(x, 1, 1)), static_cast<double>(x), 1e-15);
    EXPECT_NEAR(static_cast<double>(regularized_incomplete_beta(x, 7, 1)), static_cast<double>(std::pow(x, 7.0L)),
                1e-15);
    EXPECT_NEAR(static_cast<double>(regularized_incomplete_beta(x, 1, 5)),
                static_cast<double>(1 - std::pow(1 - x, 5.0L)), 1e-15);
    EXPECT_NEAR(static_cast<double>(regularized_incomplete_beta(x, 2, 2)), static_cast<double>(3 * x * x - 2 * x * x * x),
                1e-15);
  }
}

TEST(AuditStatistics, ClopperPearsonKnownValues) {
  // 0 of n: upper = 1 - alpha^(1/n); n of n: lower = alpha^(1/n) (closed forms).
  const Interval none = clopper_pearson(0, 10, 0.025);
  EXPECT_EQ(none.lower, 0.0);
  EXPECT_NEAR(none.upper, 1 - std::pow(0.025, 0.1), 1e-11);
  const Interval all = clopper_pearson(10, 10, 0.025);
  EXPECT_NEAR(all.lower, std::pow(0.025, 0.1), 1e-11);
  EXPECT_EQ(all.upper, 1.0);
  // 5 of 10 at 95%: (0.187086, 0.812914) (standard tables; symmetric).
  const Interval half = clopper_pearson(5, 10, 0.025);
  EXPECT_NEAR(half.lower, 0.1870860, 1e-6);
  EXPECT_NEAR(half.upper, 0.8129140, 1e-6);
  EXPECT_NEAR(half.lower + half.upper, 1.0, 1e-10);
  // Large n: close to the normal approximation p -/+ z sqrt(p(1-p)/n), z = 1.959964.
  const Interval big = clopper_pearson(500'000, 1'000'000, 0.025);
  EXPECT_NEAR(big.lower, 0.5 - 1.959964 * 0.0005, 2e-6);
  EXPECT_NEAR(big.upper, 0.5 + 1.959964 * 0.0005, 2e-6);
  // Coverage is on the safe side: the bounds contain the point estimate.
  const Interval rare = clopper_pearson(3, 100'000'000, 1e-6);
  EXPECT_LT(rare.lower, 3e-8);
  EXPECT_GT(rare.upper, 3e-8);
}

TEST(AuditStatistics, ClopperPearsonBadInput) {
  EXPECT_THROW(clopper_pearson(0, 0, 0.05), InvalidArgument);
  EXPECT_THROW(clopper_pearson(11, 10, 0.05), InvalidArgument);
  EXPECT_THROW(clopper_pearson(1, 10, 0.0), InvalidArgument);
  EXPECT_THROW(clopper_pearson(1, 10, 0.6), InvalidArgument);
}

TEST(AuditStatistics, EpsilonAndDeltaLowerBounds) {
  // An event with true probabilities 0.6 vs 0.2 (ratio 3, ln 3 = 1.0986) counted exactly at
  // 10^6 runs: the bound is just below ln 3 and above ln 3 - 0.02.
  const std::vector<EventCounts> events = {{7, 600'000, 200'000}, {8, 400'000, 800'000}};
  const Bounds b = privacy_loss_bounds(events, 1'000'000, 0.95, 1.0);
  EXPECT_LT(b.epsilon_lower, std::log(3.0));
  EXPECT_GT(b.epsilon_lower, std::log(3.0) - 0.02);
  EXPECT_EQ(b.worst_epsilon.event, 7);
  EXPECT_TRUE(b.worst_epsilon.d_over_d_prime);
  // delta at claimed eps = 1: 0.6 - e * 0.2 = 0.0563 (minus the sampling margin).
  EXPECT_LT(b.delta_lower, 0.6 - std::exp(1.0) * 0.2);
  EXPECT_GT(b.delta_lower, 0.6 - std::exp(1.0) * 0.2 - 0.005);
  // Equal counts show no loss.
  const Bounds none = privacy_loss_bounds({{1, 5000, 5000}}, 10'000, 0.95, 0.0);
  EXPECT_EQ(none.epsilon_lower, 0.0);
  EXPECT_EQ(none.delta_lower, 0.0);
  EXPECT_THROW(privacy_loss_bounds(events, 0, 0.95, 1.0), InvalidArgument);
  EXPECT_THROW(privacy_loss_bounds(events, 1'000'000, 1.0, 1.0), InvalidArgument);
  EXPECT_THROW(privacy_loss_bounds(events, 100, 0.95, 1.0), InvalidArgument);
  EXPECT_THROW(privacy_loss_bounds(events, 1'000'000, 0.95, -1.0), InvalidArgument);
}

}  // namespace
}  // namespace dpselect::audit
