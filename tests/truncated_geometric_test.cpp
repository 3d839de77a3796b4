// SPDX-License-Identifier: Apache-2.0
// The within-interval stage of the bid-interval pricing sampler: every cell boundary of the
// inverted truncated geometric sits within the documented relative error, and the multi-digit
// sampler with rejection has the exact distribution.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "noise/truncated_geometric.hpp"
#include "support/frequencies.hpp"

namespace dpselect::testing {
namespace {

using detail::digit_from_uniform;

// The split uniform of U, given U and 1 - U separately (each exact in long double).
noise::SplitUniform split_of(long double u, long double one_minus_u) {
  if (u < 0.5L) return noise::SplitUniform{static_cast<double>(u), false, false};
  return noise::SplitUniform{static_cast<double>(one_minus_u), true, false};
}

// For each cell boundary s, U just below P(d < s) must give s - 1 and U just above must give s,
// "just" being 2^-31 of the adjacent cell's probability: the boundary is within that relative
// error (the header claims 2^-30 with the derivation; a naive -log(1 - U q) / rate misses this by
// 2^20 and more for small rates).
TEST(TruncatedGeometric, CellBoundariesAreWithinTheStatedRelativeError) {
  constexpr long double kTau = 0x1p-31L;
  const std::vector<double> rates = {0.0, 1e-12, 1e-6, 0x1p-17, 1e-3, 0.1, 0.69, 1.0, 3.0, 10.0, 40.0, 60.0};
  const std::vector<std::uint64_t> sizes = {2, 3, 17, 1000, 65536};
  int checked = 0;
  for (const double rate : rates) {
    for (const std::uint64_t size : sizes) {
      const long double b = rate;
      const long double n = static_cast<long double>(size);
      const long double total = rate == 0.0 ? n : -std::expm1(-b * n);  // normaliser (times 1 - e^-b)
      auto cell = [&](long double s) {                                 // P(d = s)
        return rate == 0.0 ? 1.0L / n : std::exp(-b * s) * -std::expm1(-b) / total;
      };
      auto below = [&](long double s) {  // P(d < s)
        return rate == 0.0 ? s / n : -std::expm1(-b * s) / total;
      };
      auto at_or_above = [&](long double s) {  // P(d >= s), without cancellation
        return rate == 0.0 ? (n - s) / n : std::exp(-b * s) * -std::expm1(-b * (n - s)) / total;
      };
      for (const std::uint64_t boundary : {std::uint64_t{1}, std::uint64_t{2}, size / 2, size - 1}) {
        if (boundary < 1 || boundary >= size) continue;
        const long double s = static_cast<long double>(boundary);
        if (cell(s) < 0x1p-80L) continue;  // inside the bad event's reach: not represented
        const long double step_down = kTau * cell(s - 1);
        const long double step_up = kTau * cell(s);
        const auto lo = split_of(below(s) - step_down, at_or_above(s) + step_down);
        const auto hi = split_of(below(s) + step_up, at_or_above(s) - step_up);
        std::ostringstream where;
        where << "rate " << rate << ", size " << size << ", boundary " << boundary;
        EXPECT_EQ(digit_from_uniform(lo, rate, size), boundary - 1) << where.str();
        EXPECT_EQ(digit_from_uniform(hi, rate, size), boundary) << where.str();
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 150);
}

TEST(TruncatedGeometric, RatesBeyondTheLargestGiveZero) {
  const noise::SplitUniform nearly_one{0x1p-80, true, false};
  EXPECT_EQ(digit_from_uniform(nearly_one, 701.0, 65536), 0u);
  EXPECT_EQ(digit_from_uniform(nearly_one, INFINITY, 65536), 0u);
  EXPECT_EQ(digit_from_uniform(nearly_one, 1.0, 1), 0u);
}

// Frequencies of truncated_geometric over 16 equal bins of [0, length) against the exact bin
// masses (sums of geometric series in long double). The lengths need 2 and 3 digits, and the
// first one makes the rejection step discard about a quarter of the draws.
TEST(TruncatedGeometric, MultiDigitSamplerHasTheExactDistribution) {
  constexpr int kTrials = 20'000;
  constexpr int kBins = 16;
  struct Case {
    double rate;
    std::uint64_t length;
  };
  const PhiloxKey key = PhiloxKey::from_seed(77);
  std::uint64_t stream = 0;
  for (const Case c : {Case{0.0, 100'003}, Case{1e-5, 200'000}, Case{3.0 * 0x1p-40, (std::uint64_t{1} << 40) + 1},
                       Case{0.05, 70'000}}) {
    const long double length = static_cast<long double>(c.length);
    auto mass_below = [&](long double t) {  // sum_{x < t} e^{-rate x}, up to a common factor
      return c.rate == 0.0 ? t : -std::expm1(-static_cast<long double>(c.rate) * t);
    };
    std::vector<long double> exact(kBins);
    std::vector<std::uint64_t> edges(kBins + 1);
    for (int k = 0; k <= kBins; ++k) edges[k] = static_cast<std::uint64_t>(length * k / kBins);
    for (int k = 0; k < kBins; ++k) {
      exact[k] = (mass_below(edges[k + 1]) - mass_below(edges[k])) / mass_below(length);
    }
    std::vector<int> counts(kBins, 0);
    for (int trial = 0; trial < kTrials; ++trial) {
      const std::uint64_t t = detail::truncated_geometric(key, stream++, c.rate, c.length);
      ASSERT_LT(t, c.length);
      int bin = 0;
      while (t >= edges[bin + 1]) ++bin;
      ++counts[bin];
    }
    expect_frequencies_match(counts, exact, kTrials,
                             "rate " + std::to_string(c.rate) + ", length " + std::to_string(c.length));
  }
}

}  // namespace
}  // namespace dpselect::testing
