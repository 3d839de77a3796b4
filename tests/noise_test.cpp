// The noise transforms: exact tail mass (deterministic, over the 2^126-point grid of the
// uniform), range at the extreme bit patterns, and the bulk distribution (KS).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "dpselect/noise.hpp"

namespace {

using u128 = unsigned __int128;
using dpselect::RandomBlock;

RandomBlock block_from(bool sign, bool upper, u128 x) {
  return RandomBlock{{(static_cast<std::uint32_t>(sign) << 31) | (static_cast<std::uint32_t>(upper) << 30) |
                          static_cast<std::uint32_t>((x >> 96) & 0x3FFFFFFFu),
                      static_cast<std::uint32_t>(x >> 64), static_cast<std::uint32_t>(x >> 32),
                      static_cast<std::uint32_t>(x)}};
}

// Number of grid points x in [0, 2^126) with exceeds(x) true, for a predicate that holds on a
// prefix [0, boundary) (noise decreasing in x on the chosen half).
long double prefix_count(const std::function<bool(u128)>& exceeds) {
  u128 lo = 0;
  u128 hi = u128{1} << 126;  // first x known (or assumed) not to exceed
  while (lo < hi) {
    const u128 mid = lo + (hi - lo) / 2;
    if (exceeds(mid)) lo = mid + 1; else hi = mid;
  }
  return static_cast<long double>(lo);
}

constexpr long double kTwoTo127 = 0x1p127L;

// The case DESIGN.md §4 warns about: a candidate trailing the best by t wins the exact EM only
// through Gumbel noise above ~t, which has probability 1 - exp(-e^-t) (9.4e-14 at t = 30,
// 4.2e-18 at t = 40). A 32-bit uniform puts zero mass there. Our transform must put the exact
// mass there, to the grid's resolution.
TEST(NoiseTails, GumbelUpperTailMassIsExact) {
  for (const double t : {30.0, 40.0, 60.0}) {
    const long double count = prefix_count([&](u128 x) {
      return dpselect::noise::gumbel(block_from(false, true, x)) > t;
    });
    const long double discrete = count / kTwoTo127;  // the upper half has probability 1/2
    const long double exact = -std::expm1(-std::exp(-static_cast<long double>(t)));
    EXPECT_NEAR(static_cast<double>(discrete / exact), 1.0, 0x1p-30) << "t = " << t;
    // The lower half never reaches the upper tail: its largest value, at the largest v, is
    // -ln(ln 2) = 0.3665.
    EXPECT_LT(dpselect::noise::gumbel(block_from(false, false, (u128{1} << 126) - 1)), 0.36652);
  }
}

// Below v = 2^-88 (E > 61) the grid, not the double arithmetic, limits resolution: there the
// mass may be off by the grid's relative step, 1 / count.
double tail_tolerance(long double count) { return std::max(0x1p-30, static_cast<double>(2 / count)); }

TEST(NoiseTails, ExponentialAndLaplaceUpperTailMassIsExact) {
  for (const double t : {30.0, 40.0, 60.0, 80.0}) {
    const long double exact = std::exp(-static_cast<long double>(t));
    const long double exponential_count = prefix_count([&](u128 x) {
      return dpselect::noise::exponential(block_from(false, false, x)) > t;
    });
    EXPECT_NEAR(static_cast<double>((exponential_count / kTwoTo127) / exact), 1.0,
                tail_tolerance(exponential_count)) << t;
    // Laplace: positive sign (1/2) and the lower half (1/2): P(L > t) = e^-t / 2.
    const long double laplace_count = prefix_count([&](u128 x) {
      return dpselect::noise::laplace(block_from(false, false, x)) > t;
    });
    EXPECT_NEAR(static_cast<double>((laplace_count / (2 * kTwoTo127)) / (exact / 2)), 1.0,
                tail_tolerance(laplace_count)) << t;
    const long double negative_count = prefix_count([&](u128 x) {
      return dpselect::noise::laplace(block_from(true, false, x)) < -t;
    });
    EXPECT_EQ(negative_count, laplace_count);
  }
}

TEST(NoiseRange, ExtremeBitPatternsStayFiniteAndInRange) {
  const u128 largest = (u128{1} << 126) - 1;
  for (const bool sign : {false, true}) {
    for (const bool upper : {false, true}) {
      for (const u128 x : {u128{0}, u128{1}, largest, largest / 2}) {
        const RandomBlock bits = block_from(sign, upper, x);
        const dpselect::noise::SplitUniform u = dpselect::noise::split_uniform(bits);
        EXPECT_GT(u.v, 0.0);
        EXPECT_LE(u.v, 0.5);
        const double uniform = dpselect::noise::uniform_open(bits);
        EXPECT_GT(uniform, 0.0);
        EXPECT_LT(uniform, 1.0);
        for (const double n : {dpselect::noise::gumbel(bits), dpselect::noise::exponential(bits),
                               dpselect::noise::laplace(bits)}) {
          EXPECT_TRUE(std::isfinite(n));
          EXPECT_LE(std::fabs(n), dpselect::noise::kMaxAbsNoise);
        }
      }
    }
  }
  EXPECT_EQ(dpselect::noise::split_uniform(block_from(false, false, 0)).v, 0x1p-128);
}

// Kolmogorov-Smirnov against the exact CDF on 10^6 draws from one stream. Critical value at
// alpha = 1e-6: sqrt(ln(2/alpha) / (2n)) = 0.002692 (asymptotic Kolmogorov distribution), so a
// correct sampler fails with probability about 1e-6 per test.
double ks_statistic(std::vector<double> draws, const std::function<long double(double)>& cdf) {
  std::sort(draws.begin(), draws.end());
  const double n = static_cast<double>(draws.size());
  double d = 0.0;
  for (std::size_t i = 0; i < draws.size(); ++i) {
    const double f = static_cast<double>(cdf(draws[i]));
    d = std::max({d, f - i / n, (i + 1) / n - f});
  }
  return d;
}

std::vector<double> draws_of(double (*transform)(const RandomBlock&), std::uint64_t stream) {
  std::vector<double> draws(1'000'000);
  const dpselect::PhiloxKey key = dpselect::PhiloxKey::from_seed(0x5eed);
  for (std::size_t i = 0; i < draws.size(); ++i) draws[i] = transform(dpselect::philox_block(key, stream, i));
  return draws;
}

constexpr double kKsCritical = 0.002692;

TEST(NoiseDistribution, KolmogorovSmirnov) {
  using dpselect::noise::exponential;
  using dpselect::noise::gumbel;
  using dpselect::noise::laplace;
  using dpselect::noise::uniform_open;
  EXPECT_LT(ks_statistic(draws_of(&gumbel, 1), [](double x) { return std::exp(-std::exp(-static_cast<long double>(x))); }), kKsCritical);
  EXPECT_LT(ks_statistic(draws_of(&exponential, 2), [](double x) { return -std::expm1(-static_cast<long double>(x)); }), kKsCritical);
  EXPECT_LT(ks_statistic(draws_of(&laplace, 3), [](double x) {
              const long double y = x;
              return y < 0 ? 0.5L * std::exp(y) : 1.0L - 0.5L * std::exp(-y);
            }), kKsCritical);
  EXPECT_LT(ks_statistic(draws_of(&uniform_open, 4), [](double x) { return static_cast<long double>(x); }), kKsCritical);
}

}  // namespace
