// SPDX-License-Identifier: Apache-2.0
// gaussian_delta, analytic_gaussian_sigma (Balle & Wang 2018) and discrete_gaussian_delta
// (CKS 2020 Thm 7). Reference values come from an independent mpmath evaluation at 50 digits:
//   python3 tests/reference/gaussian_references.py
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <limits>

#include "dpselect/discrete_noise.hpp"
#include "support/expect_invalid.hpp"

namespace dpselect::discrete {
namespace {

using dpselect::testing::expect_invalid_message;

struct SigmaCase {
  double epsilon, delta, reference;  // reference: gaussian_references.py, l2_sensitivity 1
};
constexpr SigmaCase kSigmaCases[] = {
    {0.1, 1e-5, 30.749566131977448472}, {0.5, 1e-6, 8.0576184807250442744},
    {1.0, 1e-5, 3.7306316348159418139}, {3.0, 1e-9, 1.9437242635119693061},
    {10.0, 1e-6, 0.54108683181836598221}};

TEST(AnalyticGaussian, SigmaIsTheSmallestSafeValue) {
  for (const SigmaCase& c : kSigmaCases) {
    for (const double l2 : {1.0, 0.25, 3.0}) {
      const double sigma = analytic_gaussian_sigma(c.epsilon, c.delta, l2);
      EXPECT_LE(gaussian_delta(sigma, l2, c.epsilon), c.delta) << c.epsilon << " " << c.delta;
      EXPECT_GT(gaussian_delta(sigma * (1 - 1e-9), l2, c.epsilon), c.delta) << c.epsilon << " " << c.delta;
    }
  }
}

TEST(AnalyticGaussian, SigmaMatchesIndependentReference) {
  for (const SigmaCase& c : kSigmaCases) {
    const double sigma = analytic_gaussian_sigma(c.epsilon, c.delta, 1.0);
    EXPECT_NEAR(sigma / c.reference, 1.0, 1e-12) << "epsilon " << c.epsilon << ", delta " << c.delta;
    // Safe side: never below the exact root by more than the evaluation's rounding.
    EXPECT_GE(sigma, c.reference * (1 - 1e-14));
  }
}

TEST(AnalyticGaussian, BeatsTheClassicalBoundBelowEpsilonOne) {
  for (const double epsilon : {0.05, 0.3, 0.9}) {
    for (const double delta : {1e-3, 1e-6, 1e-10}) {
      // Dwork & Roth Thm A.1: sigma = sqrt(2 ln(1.25/delta)) Delta / epsilon, valid for epsilon < 1.
      const double classical = std::sqrt(2 * std::log(1.25 / delta)) / epsilon;
      EXPECT_LT(analytic_gaussian_sigma(epsilon, delta, 1.0), classical) << epsilon << " " << delta;
    }
  }
}

TEST(AnalyticGaussian, LargeEpsilonStillCalibrates) {
  for (const double epsilon : {20.0, 100.0, 1000.0}) {
    const double sigma = analytic_gaussian_sigma(epsilon, 1e-6, 1.0);
    EXPECT_GT(sigma, 0.0);
    EXPECT_LE(gaussian_delta(sigma, 1.0, epsilon), 1e-6);
    EXPECT_GT(gaussian_delta(sigma * (1 - 1e-9), 1.0, epsilon), 1e-6);
  }
}

TEST(AnalyticGaussian, TinyEpsilonApproachesTheZeroEpsilonLimit) {
  // At epsilon = 0, delta = P[|N(0,1)| < Delta/(2 sigma)] ~ Delta / (sqrt(2 pi) sigma) for small delta.
  const double sigma = analytic_gaussian_sigma(1e-300, 1e-10, 1.0);
  EXPECT_NEAR(sigma * 1e-10 * std::sqrt(2 * M_PI), 1.0, 1e-6);
}

TEST(DiscreteGaussianDelta, CloseToButNotEqualTheContinuousDelta) {
  struct Case {
    double sigma, discrete_reference, continuous_reference;  // gaussian_references.py
  };
  const Case cases[] = {{1, 0.1413513394056219081, 0.1269367375066439458},
                        {2, 0.0072487768459525779496, 0.0068295949831145753842},
                        {5, 1.8293360248727801503e-8, 1.7546333318962326948e-8}};
  for (const Case& c : cases) {
    const double discrete = discrete_gaussian_delta(c.sigma, 1, 1.0);
    const double continuous = gaussian_delta(c.sigma, 1.0, 1.0);
    char shown[96];
    std::snprintf(shown, sizeof shown, "discrete %.10g continuous %.10g", discrete, continuous);
    RecordProperty("sigma_" + std::to_string(static_cast<int>(c.sigma)), shown);
    EXPECT_GE(discrete, 0.0);
    EXPECT_LE(discrete, 1.0);
    EXPECT_GE(continuous, 0.0);
    EXPECT_LE(continuous, 1.0);
    // Rounded up: at or just above the exact values.
    EXPECT_GE(discrete, c.discrete_reference);
    EXPECT_NEAR(discrete / c.discrete_reference, 1.0, 1e-13);
    EXPECT_GE(continuous, c.continuous_reference);
    EXPECT_NEAR(continuous / c.continuous_reference, 1.0, 1e-13);
    // The discrete Gaussian's delta is larger here, within 12% of the continuous one.
    EXPECT_NE(discrete, continuous);
    EXPECT_NEAR(discrete / continuous, 1.0, 0.12) << "sigma " << c.sigma;
  }
}

// At a huge epsilon both tails are empty and delta is the truncation bound alone, 2 e^-80
// (1 + sigma); the normalizer once summed 2.7e7 terms here for seconds (tests/fuzz/fuzz_parameters).
TEST(DiscreteGaussianDelta, HugeEpsilonLeavesOnlyTheTruncationBound) {
  const double delta = discrete_gaussian_delta(0.1, 2, 9007199254740993.0);
  EXPECT_GT(delta, 0.0);
  EXPECT_LE(delta, 2 * std::exp(-80.0) * 1.1 * (1 + 1e-12));
}

TEST(GaussianCalibration, BadParametersNameTheParameterAndValue) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const double bad : {0.0, -1.0, nan, inf}) {
    const std::string got = "(got " + std::string(std::isnan(bad) ? "nan" : bad == inf ? "inf" : bad == 0 ? "0" : "-1") + ")";
    expect_invalid_message([&] { gaussian_delta(bad, 1, 1); }, {"sigma", got});
    expect_invalid_message([&] { gaussian_delta(1, bad, 1); }, {"l2_sensitivity", got});
    expect_invalid_message([&] { gaussian_delta(1, 1, bad); }, {"epsilon", got});
    expect_invalid_message([&] { analytic_gaussian_sigma(bad, 1e-5, 1); }, {"epsilon", got});
    expect_invalid_message([&] { analytic_gaussian_sigma(1, 1e-5, bad); }, {"l2_sensitivity", got});
    expect_invalid_message([&] { analytic_gaussian_sigma(1, bad, 1); }, {"delta", got});
    expect_invalid_message([&] { discrete_gaussian_delta(bad, 1, 1); }, {"sigma", got});
    expect_invalid_message([&] { discrete_gaussian_delta(1, 1, bad); }, {"epsilon", got});
  }
  expect_invalid_message([&] { analytic_gaussian_sigma(1, 1.0, 1); }, {"delta", "(got 1)"});
  expect_invalid_message([&] { discrete_gaussian_delta(2e6, 1, 1); }, {"sigma", "(got 2e+06)"});
  expect_invalid_message([&] { discrete_gaussian_delta(1, 0, 1); }, {"sensitivity", "(got 0)"});
  expect_invalid_message([&] { discrete_gaussian_delta(1, -3, 1); }, {"sensitivity", "(got -3)"});
  // Too many pmf terms: sigma sqrt(2 (epsilon + 80)) beyond 2^25.
  expect_invalid_message([&] { discrete_gaussian_delta(1e6, 1, 1e6); }, {"sigma * sqrt", "2^25"});
  // A sigma beyond the double range (about 0.4 l2_sensitivity / delta as epsilon -> 0).
  expect_invalid_message([&] { analytic_gaussian_sigma(1e-300, 1e-10, 1e300); }, {"l2_sensitivity", "(got 1e+300)"});
}

}  // namespace
}  // namespace dpselect::discrete
