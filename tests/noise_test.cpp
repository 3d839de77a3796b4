// SPDX-License-Identifier: Apache-2.0
// The noise transforms: exact tail mass (deterministic, over the 2^126-point grid of the
// uniform), range at the extreme bit patterns, and the bulk distribution (KS). Also the tail mass
// of a group's largest noise under the group-maximum screen (noise_positions.hpp, docs/group_maximum.md),
// the noise that decides privacy when a trailing candidate wins.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "dpselect/detail/exponential_race.hpp"
#include "dpselect/detail/noise_positions.hpp"
#include "dpselect/detail/screened_scoring.hpp"
#include "dpselect/noise.hpp"
#include "dpselect/types.hpp"

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

// The case that docs/design.md, "Large ranges", warns about: a candidate trailing the best by t
// wins the exact EM only through Gumbel noise above ~t, which has probability 1 - exp(-e^-t)
// (9.4e-14 at t = 30, 4.2e-18 at t = 40). A 32-bit uniform puts zero mass there. Our transform
// must put the exact mass there, to the grid's resolution.
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

// --- A group's largest noise ------------------------------------------------------------------
//
// Under the group-maximum screen a group of 32 candidates draws V (128 bits laid out as above:
// the screen's 16, then the race block's 112) and its leader's noise is
// race_noise(m, race_leader(E_V)) with E_V = exponential(V): the largest of the group's 32
// noises, so it must carry the exact tail of the maximum of 32 i.i.d. noises,
//   Gumbel       P(max > t) = 1 - exp(-32 e^-t)
//   exponential  P(max > t) = 1 - (1 - e^-t)^32
//   Laplace      P(max > t) = 1 - (1 - e^-t / 2)^32.
// Large noise is small E_V, that is V near 1: the upper half (U = 1 - v, v small), where the
// noise decreases in x, so the grid points above t form a prefix. The lower half (E_V >= ln 2,
// T_J >= ln 2 / 32) never comes near these t. V's sign bit is not used by any race transform, so
// each grid point x of the upper half stands for mass 2 * 2^-128 = 2^-127.

using dpselect::Mechanism;

constexpr Mechanism kRaceMechanisms[] = {Mechanism::exponential, Mechanism::permute_and_flip,
                                         Mechanism::laplace_noisy_max};

double group_leader_noise(Mechanism mechanism, const RandomBlock& v_bits) {
  return dpselect::detail::race_noise(mechanism,
                                      dpselect::detail::race_leader(dpselect::noise::exponential(v_bits)));
}

long double exact_group_max_tail(Mechanism mechanism, double t) {
  const long double e = std::exp(-static_cast<long double>(t));
  switch (mechanism) {
    case Mechanism::exponential: return -std::expm1(-32 * e);
    case Mechanism::permute_and_flip: return -std::expm1(32 * std::log1p(-e));
    default: return -std::expm1(32 * std::log1p(-e / 2));
  }
}

// Upper-half grid points whose leader noise exceeds t, with V's fixed-point bits passed through
// `keep` first (all ones: V as drawn; a mask: a mutated, shorter V).
long double group_max_tail_count(Mechanism mechanism, double t, u128 keep = ~u128{0}) {
  return prefix_count([&](u128 x) { return group_leader_noise(mechanism, block_from(false, true, x & keep)) > t; });
}

// Relative error of a count against the exact tail. The tolerance is tail_tolerance of the
// expected count, not of the observed one: an empty tail (count 0) would otherwise be allowed
// any error.
struct TailCheck {
  double relative_error;
  double tolerance;
  bool passes() const { return relative_error <= tolerance; }
};

TailCheck check_group_max_tail(long double count, long double exact) {
  return TailCheck{static_cast<double>(std::fabs((count / kTwoTo127) / exact - 1)), tail_tolerance(exact * kTwoTo127)};
}

TEST(GroupMaximumTails, LeaderNoiseHasTheExactTailOfTheMaximumOf32) {
  for (const Mechanism mechanism : kRaceMechanisms) {
    // From the bulk of the tail (t = 5: mass 0.19) to t = 80, where it holds about 10^5 grid
    // points (v near 2^-110) and the tolerance grows to 2 / count. The small t hold the race
    // transforms to their accuracy at race times from about 10^-3 to 10^-10 (an 1 - e^-T that
    // lost its relative accuracy there would move the mass by far more than 2^-30); the large t
    // hold V to its tail resolution.
    for (const double t : {5.0, 10.0, 20.0, 30.0, 40.0, 60.0, 80.0}) {
      const long double exact = exact_group_max_tail(mechanism, t);
      const TailCheck check = check_group_max_tail(group_max_tail_count(mechanism, t), exact);
      EXPECT_TRUE(check.passes()) << "mechanism " << static_cast<int>(mechanism) << " t = " << t
                                  << ": relative error " << check.relative_error << ", tolerance " << check.tolerance;
    }
    // The lower half's largest noise, at v = 1/2 (E_V = ln 2): -ln(ln 2 / 32) = 3.83 for Gumbel,
    // about the same for the other two.
    EXPECT_LT(group_leader_noise(mechanism, block_from(false, false, (u128{1} << 126) - 1)), 4.0);
  }
}

TEST(GroupMaximumTails, RaceBitsReassembleV) {
  // The tails above are counted on V's 128 bits; the engine assembles them from the screen (top
  // 16) and the race block (the next 112), whose last 16 bits (J and unused) must not leak in.
  const dpselect::PhiloxKey key = dpselect::PhiloxKey::from_seed(0x7a11);
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const RandomBlock v = dpselect::philox_block(key, 5, i);
    const std::uint32_t junk = dpselect::philox_block(key, 6, i).word[0] & 0xFFFFu;
    const RandomBlock race_block{{(v.word[0] << 16) | (v.word[1] >> 16), (v.word[1] << 16) | (v.word[2] >> 16),
                                  (v.word[2] << 16) | (v.word[3] >> 16), (v.word[3] << 16) | junk}};
    const RandomBlock got = dpselect::detail::race_bits(v.word[0] >> 16, race_block);
    for (int w = 0; w < 4; ++w) ASSERT_EQ(got.word[w], v.word[w]) << "draw " << i << " word " << w;
  }
}

TEST(GroupMaximumTails, AThirtyTwoBitVFailsTheTailCheck) {
  // The check must be able to fail. V cut to its top 32 bits (sign, half, 30 bits of X), the
  // other 96 bits zero: the first grid step of the upper half jumps from v = 2^-128 to 2^-31,
  // which puts mass 2^-31 on noise near 88 and none between about 25 and 88. The same cut with
  // the dropped bits at the middle of their range (v = (X + 1/2) 2^-31 at 32-bit resolution):
  // no mass at all beyond about 25. Both are off at t = 40 by at least the whole tail mass,
  // 2^30 times the tolerance.
  const u128 top_32_bits_of_v = ~((u128{1} << 96) - 1);
  for (const Mechanism mechanism : kRaceMechanisms) {
    const long double exact = exact_group_max_tail(mechanism, 40.0);
    ASSERT_TRUE(check_group_max_tail(group_max_tail_count(mechanism, 40.0), exact).passes());
    const TailCheck zeroed = check_group_max_tail(group_max_tail_count(mechanism, 40.0, top_32_bits_of_v), exact);
    EXPECT_FALSE(zeroed.passes()) << static_cast<int>(mechanism);
    EXPECT_GT(zeroed.relative_error, 1e6) << static_cast<int>(mechanism);
    const long double centred_count = prefix_count([&](u128 x) {
      return group_leader_noise(mechanism, block_from(false, true, (x & top_32_bits_of_v) | (u128{1} << 95))) > 40.0;
    });
    EXPECT_EQ(centred_count, 0.0L) << static_cast<int>(mechanism);
    const TailCheck centred = check_group_max_tail(centred_count, exact);
    EXPECT_FALSE(centred.passes()) << static_cast<int>(mechanism);
    EXPECT_EQ(centred.relative_error, 1.0) << static_cast<int>(mechanism);
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
