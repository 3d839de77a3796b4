// SPDX-License-Identifier: Apache-2.0
// Comparing selection frequencies with exact probabilities.
//
// Tolerance: an outcome with exact probability p over T independent releases must satisfy
// |count - T p| <= 5.5 sqrt(T p (1 - p)) + 1. For a normal count that fails with probability
// 3.8e-8; for a small p (T p ~ 9, a skewed binomial) the exact binomial tail is up to 1.1e-6
// per comparison. A file making fewer than 400 comparisons therefore fails a correct sampler
// with probability about 1e-5 over the choice of seed; the seeds are fixed, so the outcome is
// deterministic.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace dpselect::testing {

// The release counts of the statistical tests, divided by 4 in the simt build (tests/simt), where
// every release runs the kernels thread by thread on one CPU core: the one factor by which the simt
// build scales a test down. The tolerances below follow the count given them; with 5,000 releases
// in place of 20,000, T p ~ 9 becomes T p ~ 2.25, where the exact binomial tail of one comparison
// is up to 7.2e-6 instead of 1.0e-6 (the seeds are fixed, so each outcome is still deterministic).
#if defined(DPSELECT_SIMT)
inline constexpr int kStatisticalTrialDivisor = 4;
#else
inline constexpr int kStatisticalTrialDivisor = 1;
#endif
constexpr int statistical_trials(int trials) { return trials / kStatisticalTrialDivisor; }

inline double frequency_tolerance(int trials, double p) {
  return 5.5 * std::sqrt(trials * p * (1 - p)) + 1;
}

inline void expect_frequencies_match(const std::vector<int>& counts, const std::vector<long double>& exact,
                                     int trials, const std::string& what) {
  ASSERT_EQ(counts.size(), exact.size());
  for (std::size_t r = 0; r < exact.size(); ++r) {
    const double p = static_cast<double>(exact[r]);
    EXPECT_NEAR(counts[r], trials * p, frequency_tolerance(trials, p))
        << what << ", candidate " << r << ", exact p = " << p;
  }
}

// The upper 1e-6 quantile of the chi-square distribution with df = 1, 2, ..., 12 degrees of
// freedom (computed from the regularized incomplete gamma function).
inline constexpr double kChiSquareUpper1e6[] = {23.93, 27.63, 30.66, 33.38, 35.89, 38.26,
                                                40.52, 42.70, 44.81, 46.86, 48.87, 50.83};

// Groups of `trials` independent coins each, group g's of probability p[g], kept[g] of them won:
// groups with trials p (1 - p) >= 25 enter the statistic sum (kept - T p)^2 / (T p (1 - p)),
// refused above the chi-square's upper 1e-6 quantile (the normal approximation of each binomial);
// the others are compared one by one within frequency_tolerance (binomial tail <= 1.1e-6 each),
// and a group with p = 1 must win every coin. At least `min_degrees` groups must enter the
// statistic (at most 12).
inline void expect_binomial_groups(const std::vector<int>& kept, const std::vector<double>& p, int trials,
                                   int min_degrees, const std::string& where) {
  ASSERT_EQ(kept.size(), p.size());
  const double t = trials;
  double chi_square = 0.0;
  int degrees = 0;
  for (std::size_t g = 0; g < p.size(); ++g) {
    if (p[g] == 1.0) {
      EXPECT_EQ(kept[g], trials) << where << ", group " << g;
    } else if (t * p[g] * (1.0 - p[g]) >= 25.0) {
      chi_square += (kept[g] - t * p[g]) * (kept[g] - t * p[g]) / (t * p[g] * (1.0 - p[g]));
      ++degrees;
    } else {
      EXPECT_NEAR(kept[g], t * p[g], frequency_tolerance(trials, p[g])) << where << ", group " << g << " p " << p[g];
    }
  }
  ASSERT_GE(degrees, min_degrees) << where << ": the statistic covers the rise of p";
  ASSERT_LE(degrees, 12) << where;
  EXPECT_LT(chi_square, kChiSquareUpper1e6[degrees - 1]) << where << ", " << degrees << " groups";
}

}  // namespace dpselect::testing
