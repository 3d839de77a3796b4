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

}  // namespace dpselect::testing
