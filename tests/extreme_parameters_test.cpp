// SPDX-License-Identifier: Apache-2.0
// Every mechanism at the limits of double: epsilon, sensitivity and delta from the smallest
// denormal to the largest double. Each call either releases a valid answer (an index in range, a
// finite floating-point slack, noisy values that are numbers) or refuses with InvalidArgument
// (or BudgetExceeded) before anything is charged, unless the refusal depends on the data, which
// is charged first as documented. Run under UBSan in the asan-ubsan preset: no conversion of a NaN or
// an infinity to an integer, no overflowing integer arithmetic, at any accepted parameter.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "dpselect/dpselect.hpp"

namespace {

using dpselect::Backend;
using dpselect::Context;
using dpselect::InvalidArgument;

constexpr double kExtremeLimits[] = {std::numeric_limits<double>::denorm_min(),
                              std::numeric_limits<double>::min(),
                              1e-300,
                              1e-12,
                              1.0,
                              700.0,
                              710.0,
                              1e300,
                              std::numeric_limits<double>::max()};
constexpr double kExtremeDeltas[] = {std::numeric_limits<double>::denorm_min(), 1e-300, 1e-9, 0.5, 1.0 - 0x1p-53};

struct ExtremeOutcome {
  int released = 0;
  int refused = 0;
};

// Runs `release` on a fresh context charged to an accountant: either it returns (and `check`
// holds) or it refuses with InvalidArgument and nothing is charged.
template <class Release, class Check>
void extreme_released_or_refused(ExtremeOutcome& outcome, const std::string& label, Release release, Check check) {
  auto accountant = std::make_shared<dpselect::PrivacyAccountant>(
      dpselect::PrivacyBound{std::numeric_limits<double>::max(), 1.0 - 0x1p-53});
  Context context = Context::with_fixed_seed(17);
  context.charge_to(accountant);
  try {
    check(release(context));
    ++outcome.released;
  } catch (const InvalidArgument& error) {
    // A refusal that depends on the data (a utility the scores cannot hold, a slack computed from
    // the utilities) comes after the charge, as documented (context.hpp): refusing before it would
    // depend on the data without paying for it. Every other refusal charges nothing.
    const std::string message = error.what();
    const bool from_the_data = message.find("utilities[") != std::string::npos ||
                               message.find("slack would reach epsilon") != std::string::npos;
    if (!from_the_data) EXPECT_EQ(accountant->release_count(), 0u) << label << ": refused after a charge: " << message;
    ++outcome.refused;
  } catch (const dpselect::BudgetExceeded&) {
    // k picks at the largest epsilon compose to +inf, beyond any budget: refused, nothing recorded.
    EXPECT_EQ(accountant->release_count(), 0u) << label;
    ++outcome.refused;
  }
}

TEST(ExtremeParameters, SelectionReleasesOrRefusesAtEveryLimit) {
  const std::vector<double> utilities = {0.0, 1.0, 2.5, -3.0, 1e6, 7.0, 7.0};
  ExtremeOutcome outcome;
  for (const auto mechanism : {dpselect::Mechanism::exponential, dpselect::Mechanism::permute_and_flip,
                               dpselect::Mechanism::laplace_noisy_max}) {
    for (const double epsilon : kExtremeLimits) {
      for (const double sensitivity : kExtremeLimits) {
        dpselect::SelectionParams params;
        params.mechanism = mechanism;
        params.epsilon = epsilon;
        params.sensitivity = sensitivity;
        params.backend = Backend::Cpu;
        const std::string label = std::string(dpselect::to_string(mechanism)) + " eps " + std::to_string(epsilon) +
                                  " sensitivity " + std::to_string(sensitivity);
        extreme_released_or_refused(
            outcome, label,
            [&](Context& context) { return dpselect::select(context, std::span<const double>(utilities), params); },
            [&](const dpselect::Selection& selection) {
              EXPECT_LT(selection.index, utilities.size()) << label;
              EXPECT_TRUE(std::isfinite(selection.report.slack.epsilon)) << label;
            });
        dpselect::TopKParams top_k;
        top_k.selection = params;
        top_k.selection.mechanism = dpselect::Mechanism::exponential;
        top_k.k = 3;
        extreme_released_or_refused(
            outcome, label + " top-3",
            [&](Context& context) { return dpselect::select_top_k(context, std::span<const double>(utilities), top_k); },
            [&](const dpselect::TopKSelection& selection) {
              EXPECT_EQ(selection.indices.size(), 3u) << label;
              for (const std::uint64_t index : selection.indices) EXPECT_LT(index, utilities.size()) << label;
            });
      }
    }
  }
  EXPECT_GT(outcome.released, 0);
  EXPECT_GT(outcome.refused, 0);
}

TEST(ExtremeParameters, NoiseReleasesOrRefusesAtEveryLimit) {
  ExtremeOutcome outcome;
  for (const auto distribution : {dpselect::NoiseDistribution::laplace, dpselect::NoiseDistribution::gaussian}) {
    for (const double epsilon : kExtremeLimits) {
      for (const double sensitivity : kExtremeLimits) {
        for (const double delta : kExtremeDeltas) {
          if (distribution == dpselect::NoiseDistribution::laplace && delta != kExtremeDeltas[0]) continue;
          dpselect::NoiseVectorParams params;
          params.distribution = distribution;
          params.epsilon = epsilon;
          params.sensitivity = sensitivity;
          params.delta = distribution == dpselect::NoiseDistribution::laplace ? 0.0 : delta;
          params.backend = Backend::Cpu;
          const std::string label = std::string(dpselect::to_string(distribution)) + " eps " +
                                    std::to_string(epsilon) + " sensitivity " + std::to_string(sensitivity) +
                                    " delta " + std::to_string(delta);
          std::vector<double> values = {1.0, -2.0, 0.0, 1e10};
          extreme_released_or_refused(
              outcome, label,
              [&](Context& context) { return dpselect::add_noise(context, std::span<double>(values), params); },
              [&](const dpselect::NoiseVectorReport&) {
                for (const double value : values) EXPECT_FALSE(std::isnan(value)) << label;
              });
        }
      }
    }
  }
  EXPECT_GT(outcome.released, 0);
  EXPECT_GT(outcome.refused, 0);
}

TEST(ExtremeParameters, QuantilesReleaseOrRefuseAtEveryLimit) {
  const std::vector<double> values = {1.0, 2.0, 2.0, 3.5, 9.0, 4.0, 0.5};
  ExtremeOutcome outcome;
  for (const double epsilon : kExtremeLimits) {
    for (const double upper : {1.0, 10.0, 1e300, std::numeric_limits<double>::max()}) {
      dpselect::QuantileParams params;
      params.epsilon = epsilon;
      params.range = dpselect::QuantileRange{0.0, upper};
      params.backend = Backend::Cpu;
      const std::string label = "quantile eps " + std::to_string(epsilon) + " upper " + std::to_string(upper);
      extreme_released_or_refused(
          outcome, label,
          [&](Context& context) {
            const dpselect::QuantileData data(std::span<const double>(values), params.range);
            return dpselect::select_quantile(context, data, 0.5, params);
          },
          [&](const dpselect::QuantileRelease& release) {
            EXPECT_TRUE(release.value >= 0.0 && release.value <= upper) << label;
          });
    }
  }
  EXPECT_GT(outcome.released, 0);
  EXPECT_GT(outcome.refused, 0);
}

}  // namespace
