// SPDX-License-Identifier: Apache-2.0
// Exact discrete samplers (CKS 2020 Algorithms 1-3) against exact probabilities.
//
// Frequencies use tests/support/frequencies.hpp: |count - T p| <= 5.5 sqrt(T p (1-p)) + 1 per
// outcome, a false failure probability of at most ~1.1e-6 per comparison; this file makes 42
// comparisons (about 5e-5 in all for a correct sampler), with fixed seeds, so the outcome is
// deterministic.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "dpselect/discrete_noise.hpp"
#include "dpselect/errors.hpp"
#include "support/expect_invalid.hpp"
#include "support/frequencies.hpp"

namespace dpselect::discrete {
namespace {

using dpselect::testing::expect_frequencies_match;
using dpselect::testing::expect_invalid_message;

constexpr int kTrials = 100000;

// Counts of x in buckets: x < lo, lo, lo + 1, ..., hi, x > hi.
template <class Sample>
std::vector<int> bucket_counts(int lo, int hi, std::uint64_t seed, Sample sample) {
  std::vector<int> counts(hi - lo + 3, 0);
  for (int i = 0; i < kTrials; ++i) {
    CounterBits bits = CounterBits::for_item(PhiloxKey::from_seed(seed), 7, i);
    const std::int64_t x = sample(bits);
    const std::int64_t slot = x < lo ? 0 : x > hi ? hi - lo + 2 : x - lo + 1;
    ++counts[slot];
  }
  return counts;
}

// Exact bucket probabilities of the pmf proportional to weight(k) (summed over |k| <= 400).
template <class Weight>
std::vector<long double> bucket_exact(int lo, int hi, Weight weight) {
  std::vector<long double> exact(hi - lo + 3, 0.0L);
  long double total = 0;
  for (int k = -400; k <= 400; ++k) {
    const long double w = weight(k);
    total += w;
    exact[k < lo ? 0 : k > hi ? hi - lo + 2 : k - lo + 1] += w;
  }
  for (long double& p : exact) p /= total;
  return exact;
}

TEST(DiscreteGaussian, PmfSigmaSquaredOneMatchesExactValues) {
  const auto exact = bucket_exact(-2, 2, [](int k) { return std::exp(-0.5L * k * k); });
  // tests/reference/gaussian_references.py (mpmath): P[0] = 0.39894227826686170558,
  // P[1] = 0.24197072322446060973, P[2] = 0.053990966224305284818.
  EXPECT_NEAR(static_cast<double>(exact[3]), 0.39894227826686170558, 1e-15);
  EXPECT_NEAR(static_cast<double>(exact[4]), 0.24197072322446060973, 1e-15);
  EXPECT_NEAR(static_cast<double>(exact[5]), 0.053990966224305284818, 1e-15);
  // The smallest bucket (|x| >= 3, 0.0044 per side) is resolved: T p = 443, tolerance 117.
  ASSERT_LT(dpselect::testing::frequency_tolerance(kTrials, 0.0044), kTrials * 0.0044);
  const auto counts = bucket_counts(-2, 2, 11, [](CounterBits& b) { return discrete_gaussian(b, 1, 1); });
  expect_frequencies_match(counts, exact, kTrials, "discrete Gaussian sigma^2 = 1");
}

TEST(DiscreteGaussian, PmfSigmaSquaredNineQuarters) {
  const auto exact = bucket_exact(-3, 3, [](int k) { return std::exp(-k * k / 4.5L); });
  const auto counts = bucket_counts(-3, 3, 12, [](CounterBits& b) { return discrete_gaussian(b, 9, 4); });
  expect_frequencies_match(counts, exact, kTrials, "discrete Gaussian sigma^2 = 9/4");
}

TEST(DiscreteLaplace, PmfMatchesClosedFormForScaleOneAndThreeHalves) {
  for (const auto& scale : {std::pair<std::uint64_t, std::uint64_t>{1, 1}, {3, 2}}) {
    // Named copies, not a structured binding: clang before 16 cannot capture bindings in a lambda.
    const std::uint64_t num = scale.first;
    const std::uint64_t den = scale.second;
    const long double t = static_cast<long double>(num) / den;
    // Closed form: P[x] = (1 - e^{-1/t}) / (1 + e^{-1/t}) e^{-|x|/t}.
    const long double q = std::exp(-1 / t);
    const auto exact = bucket_exact(-3, 3, [&](int k) { return std::exp(-std::abs(k) / t); });
    EXPECT_NEAR(static_cast<double>(exact[4]), static_cast<double>((1 - q) / (1 + q)), 1e-15);
    const auto counts = bucket_counts(-3, 3, 13 + num, [&](CounterBits& b) { return discrete_laplace(b, num, den); });
    expect_frequencies_match(counts, exact, kTrials, "discrete Laplace t = " + std::to_string(num) + "/" + std::to_string(den));
  }
}

TEST(BernoulliExp, FrequenciesMatchExpMinusGamma) {
  struct Case { std::uint64_t n, d; };
  for (const Case c : {Case{1, 2}, Case{1, 1}, Case{7, 3}, Case{5, 1}}) {
    const double p = std::exp(-static_cast<double>(c.n) / c.d);
    int hits = 0;
    for (int i = 0; i < kTrials; ++i) {
      CounterBits bits = CounterBits::for_item(PhiloxKey::from_seed(21), c.n * 100 + c.d, i);
      hits += bernoulli_exp(bits, c.n, c.d) ? 1 : 0;
    }
    expect_frequencies_match({hits, kTrials - hits}, {p, 1 - p}, kTrials,
                             "Bernoulli(exp(-" + std::to_string(c.n) + "/" + std::to_string(c.d) + "))");
  }
  CounterBits bits{};
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(bernoulli_exp(bits, 0, 3));  // exp(0) = 1 exactly
}

TEST(DiscreteNoise, SameItemSameValueWhateverTheOrder) {
  const PhiloxKey key = PhiloxKey::from_seed(0xD15C);
  std::vector<std::int64_t> forward;
  for (std::uint64_t i = 0; i < 64; ++i) {
    CounterBits bits = CounterBits::for_item(key, 3, i);
    forward.push_back(discrete_gaussian(bits, 1000, 7));
  }
  for (std::uint64_t i = 64; i-- > 0;) {
    CounterBits bits = CounterBits::for_item(key, 3, i);
    EXPECT_EQ(discrete_gaussian(bits, 1000, 7), forward[i]) << "item " << i;
  }
  CounterBits other_stream = CounterBits::for_item(key, 4, 0);
  CounterBits same = CounterBits::for_item(key, 3, 0);
  EXPECT_NE(other_stream.next64(), same.next64());
}

TEST(DiscreteNoise, ItemRangesAreDisjointAndBounded) {
  const PhiloxKey key = PhiloxKey::from_seed(5);
  for (const std::uint64_t i : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{12345}, kItemLimit - 2}) {
    const CounterBits a = CounterBits::for_item(key, 0, i);
    const CounterBits b = CounterBits::for_item(key, 0, i + 1);
    EXPECT_EQ(a.next_position + a.blocks_left, b.next_position);
    EXPECT_EQ(a.blocks_left, std::uint64_t{1} << kItemPositionBits);
  }
  // A sample reads only its own range: words come from philox_block(key, stream, position).
  CounterBits bits = CounterBits::for_item(key, 9, 2);
  const RandomBlock first = philox_block(key, 9, 2 * (std::uint64_t{1} << 20));
  for (int w = 0; w < 4; ++w) EXPECT_EQ(bits.next32(), first.word[w]);
  // Past the last block the source throws instead of reading item 3's positions.
  bits.blocks_left = 0;
  EXPECT_THROW(bits.next32(), RandomnessExhausted);
}

TEST(DiscreteNoise, BlocksPerSampleAreFewSoTheItemBudgetIsAmple) {
  // Backs the "4-7 blocks on average" in discrete_noise.hpp (measured: 4.1 to 6.8).
  for (const auto& [num, den] : {std::pair<std::uint64_t, std::uint64_t>{1, 16}, {1, 1}, {100, 1},
                                 {1000000, 1}, {kMaxRationalPart, 1}}) {
    std::uint64_t blocks = 0;
    constexpr int kSamples = 20000;
    for (int i = 0; i < kSamples; ++i) {
      CounterBits bits = CounterBits::for_item(PhiloxKey::from_seed(8), 1, i);
      discrete_gaussian(bits, num, den);
      blocks += (std::uint64_t{1} << kItemPositionBits) - bits.blocks_left;
    }
    const double mean = static_cast<double>(blocks) / kSamples;
    RecordProperty("mean_blocks_" + std::to_string(num) + "_" + std::to_string(den), std::to_string(mean));
    EXPECT_LT(mean, 8.0) << "sigma^2 = " << num << "/" << den;
  }
}

TEST(DiscreteNoise, BadParametersNameTheParameterAndValue) {
  CounterBits bits{};
  expect_invalid_message([&] { uniform_below(bits, 0); }, {"m", "(got 0)"});
  expect_invalid_message([&] { bernoulli_exp(bits, kMaxRationalPart + 1, 1); }, {"n", "2^32", "(got 4294967297)"});
  expect_invalid_message([&] { bernoulli_exp(bits, 1, 0); }, {"d", "(got 0)"});
  expect_invalid_message([&] { bernoulli_exp(bits, 1, kMaxRationalPart + 1); }, {"d", "(got 4294967297)"});
  for (const std::uint64_t bad : {std::uint64_t{0}, kMaxRationalPart + 1, ~std::uint64_t{0}}) {
    const std::string got = "(got " + std::to_string(bad) + ")";
    expect_invalid_message([&] { discrete_laplace(bits, bad, 1); }, {"scale_num", got});
    expect_invalid_message([&] { discrete_laplace(bits, 1, bad); }, {"scale_den", got});
    expect_invalid_message([&] { discrete_gaussian(bits, bad, 1); }, {"sigma2_num", got});
    expect_invalid_message([&] { discrete_gaussian(bits, 1, bad); }, {"sigma2_den", got});
  }
  expect_invalid_message([&] { CounterBits::for_item(PhiloxKey{}, 0, kItemLimit); },
                         {"item", "(got 17592186044416)"});
}

}  // namespace
}  // namespace dpselect::discrete
