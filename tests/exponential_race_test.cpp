// SPDX-License-Identifier: Apache-2.0
// The exponential race of the group-maximum screen (exponential_race.hpp, docs/group_maximum.md):
// 1 - e^-t and the three noises of a race time against long double, and the joint law of a
// group's uniforms U_j = e^-T_j built from (V, J, W_j) as the design draws them.
//
// Statistical thresholds: every test below has a false-failure probability of at most 1e-6 for
// a correct construction (chi-square quantiles computed for the stated degrees of freedom; the
// Kolmogorov-Smirnov bound uses P(D_n > d) <= 2 exp(-2 n d^2)), and the seeds are fixed, so a
// pass is reproducible.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "dpselect/detail/exponential_race.hpp"
#include "dpselect/noise.hpp"
#include "dpselect/philox.hpp"

namespace {

using namespace dpselect;
using detail::one_minus_exp_minus;

double ulp_of(long double exact) {
  const double rounded = static_cast<double>(exact);
  return std::nextafter(rounded, INFINITY) - rounded;
}

TEST(ExponentialRace, OneMinusExpMinusIsAccurateRelativeToItsResult) {
  // Log-spaced over [2^-60, 2^6] and linear over [0, 2] (both sides of the t = 1/2 switch).
  double worst_ulps = 0.0;
  const int n = 400000;
  for (int i = 0; i <= n; ++i) {
    for (const double t : {std::ldexp(1.0, -60) * std::pow(2.0, 66.0 * i / n), 2.0 * i / n}) {
      if (t == 0.0) continue;
      const long double exact = -std::expm1(-static_cast<long double>(t));
      const double got = one_minus_exp_minus(t);
      worst_ulps = std::max(worst_ulps, static_cast<double>(std::fabs(got - exact) / ulp_of(exact)));
    }
  }
  EXPECT_LT(worst_ulps, 4.0);
  EXPECT_EQ(one_minus_exp_minus(0x1p-60), 0x1p-60);  // 1 - e^-t = t to within far less than an ulp
  EXPECT_EQ(one_minus_exp_minus(0.0), 0.0);
  EXPECT_EQ(one_minus_exp_minus(800.0), 1.0);
}

TEST(ExponentialRace, OneMinusExpMinusDecreasesByNoMoreThanRounding) {
  // A dense walk across the switch at 1/2 and the small end. Rounding makes any evaluated
  // function wobble by an ulp; the screen's bounds carry a margin far above it (noise_positions.hpp's
  // kScreenMargin, 2^-20), so what matters is that nothing drops by more, as a jump at the
  // switch or a wrong series term would.
  double worst_drop_ulps = 0.0;
  for (const double start : {0.5 - 1e-9, 1e-300, 0.25}) {
    double t = start;
    double previous = one_minus_exp_minus(t);
    for (int i = 0; i < 200000; ++i) {
      t = std::nextafter(t, INFINITY);
      const double value = one_minus_exp_minus(t);
      if (value < previous) worst_drop_ulps = std::max(worst_drop_ulps, (previous - value) / ulp_of(value));
      previous = value;
    }
  }
  EXPECT_LE(worst_drop_ulps, 2.0);
}

TEST(ExponentialRace, NoisesOfARaceTimeMatchLongDouble) {
  // Absolute error of each noise over t in [2^-130, 100]: the error budget of the design note
  // (every transform within 2^-39 of the exact one) with a wide margin for the arithmetic alone.
  double worst_gumbel = 0.0;
  double worst_exponential = 0.0;
  double worst_laplace = 0.0;
  const int n = 200000;
  for (int i = 0; i <= n; ++i) {
    const double t = std::ldexp(1.0, -130) * std::pow(2.0, (130.0 + std::log2(100.0)) * i / n);
    const long double lt = t;
    const long double one_minus = -std::expm1(-lt);
    worst_gumbel = std::max(worst_gumbel, static_cast<double>(std::fabs(detail::gumbel_from_race(t) + std::log(lt))));
    worst_exponential = std::max(
        worst_exponential, static_cast<double>(std::fabs(detail::exponential_from_race(t) + std::log(one_minus))));
    const long double laplace = lt < std::log(2.0L) ? -std::log(2.0L * one_minus) : std::log(2.0L) - lt;
    worst_laplace = std::max(worst_laplace, static_cast<double>(std::fabs(detail::laplace_from_race(t) - laplace)));
  }
  EXPECT_LT(worst_gumbel, 0x1p-45);
  EXPECT_LT(worst_exponential, 0x1p-45);
  EXPECT_LT(worst_laplace, 0x1p-45);
}

TEST(ExponentialRace, LaplaceIsContinuousAcrossItsTwoForms) {
  const double below = std::nextafter(detail::kRaceLn2, 0.0);
  EXPECT_NEAR(detail::laplace_from_race(below), detail::laplace_from_race(detail::kRaceLn2), 0x1p-50);
  EXPECT_LT(std::fabs(detail::laplace_from_race(detail::kRaceLn2)), 0x1p-50);
}

// ---- the joint law of a group ---------------------------------------------------------------

constexpr int kGroup = 32;
constexpr int kGroups = 40000;

// One group's uniforms U_j = e^-T_j in long double, drawn as the design draws them: E_V from the
// block at position 3g of stream 1, J from 5 bits of the block at 3g + 1, and each E'_j from a
// block of its own on stream 2.
std::array<long double, kGroup> group_uniforms(const PhiloxKey& key, std::uint64_t g) {
  const RandomBlock v_block = philox_block(key, 1, 3 * g);
  const unsigned leader = philox_block(key, 1, 3 * g + 1).word[3] % kGroup;
  const double e_v = noise::exponential(v_block);
  std::array<long double, kGroup> u{};
  for (int j = 0; j < kGroup; ++j) {
    const double t =
        j == static_cast<int>(leader)
            ? detail::race_leader(e_v)
            : detail::race_follower(e_v, noise::exponential(philox_block(key, 2, g * kGroup + static_cast<unsigned>(j))));
    u[static_cast<std::size_t>(j)] = std::exp(-static_cast<long double>(t));
  }
  return u;
}

std::vector<std::array<long double, kGroup>> draw_groups() {
  const PhiloxKey key = PhiloxKey::from_seed(20261124);
  std::vector<std::array<long double, kGroup>> groups(kGroups);
  for (int g = 0; g < kGroups; ++g) groups[static_cast<std::size_t>(g)] = group_uniforms(key, static_cast<std::uint64_t>(g));
  return groups;
}

const std::vector<std::array<long double, kGroup>>& groups() {
  static const std::vector<std::array<long double, kGroup>> drawn = draw_groups();
  return drawn;
}

// Kolmogorov-Smirnov distance of `samples` from the continuous CDF `cdf`.
long double ks_distance(std::vector<long double> samples, const std::function<long double(long double)>& cdf) {
  std::sort(samples.begin(), samples.end());
  const long double n = static_cast<long double>(samples.size());
  long double worst = 0.0L;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const long double f = cdf(samples[i]);
    worst = std::max({worst, f - static_cast<long double>(i) / n, static_cast<long double>(i + 1) / n - f});
  }
  return worst;
}

// The KS distance a correct construction exceeds with probability at most 1e-6.
long double ks_threshold(std::size_t n) { return std::sqrt(std::log(2.0L / 1e-6L) / (2.0L * static_cast<long double>(n))); }

TEST(ExponentialRace, EachPositionIsUniform) {
  for (const int position : {0, 13, 31}) {
    std::vector<long double> samples;
    for (const auto& u : groups()) samples.push_back(u[static_cast<std::size_t>(position)]);
    EXPECT_LT(ks_distance(samples, [](long double x) { return x; }), ks_threshold(samples.size()))
        << "position " << position;
  }
}

TEST(ExponentialRace, OrderStatisticsHaveTheirBetaLaws) {
  // Of m i.i.d. uniforms: P(max <= u) = u^m; P(second largest <= u) = u^m + m u^(m-1) (1 - u);
  // P(min <= u) = 1 - (1 - u)^m. The second largest checks the law of the others given the max.
  std::vector<long double> largest, second, smallest;
  for (const auto& u : groups()) {
    std::array<long double, kGroup> sorted = u;
    std::sort(sorted.begin(), sorted.end());
    largest.push_back(sorted[kGroup - 1]);
    second.push_back(sorted[kGroup - 2]);
    smallest.push_back(sorted[0]);
  }
  const long double m = kGroup;
  const long double threshold = ks_threshold(largest.size());
  EXPECT_LT(ks_distance(largest, [&](long double x) { return std::pow(x, m); }), threshold);
  EXPECT_LT(ks_distance(second, [&](long double x) { return std::pow(x, m) + m * std::pow(x, m - 1) * (1 - x); }),
            threshold);
  EXPECT_LT(ks_distance(smallest, [&](long double x) { return 1 - std::pow(1 - x, m); }), threshold);
}

TEST(ExponentialRace, TheMaximumIsAtAUniformPosition) {
  std::array<int, kGroup> counts{};
  for (const auto& u : groups()) {
    counts[static_cast<std::size_t>(std::max_element(u.begin(), u.end()) - u.begin())]++;
  }
  const double expected = static_cast<double>(kGroups) / kGroup;
  double chi_square = 0.0;
  for (const int c : counts) chi_square += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi_square, 83.64);  // chi-square, 31 degrees of freedom, upper 1e-6 quantile
}

TEST(ExponentialRace, PairsInAGroupAreIndependent) {
  // Chi-square on a 4 x 4 grid of (U_a, U_b): the leader's and a follower's positions vary from
  // group to group, so these pairs mix leader-follower and follower-follower pairs.
  for (const auto& [a, b] : {std::pair{0, 1}, std::pair{5, 30}, std::pair{16, 17}}) {
    std::array<int, 16> counts{};
    for (const auto& u : groups()) {
      const int cell_a = std::min(3, static_cast<int>(u[static_cast<std::size_t>(a)] * 4));
      const int cell_b = std::min(3, static_cast<int>(u[static_cast<std::size_t>(b)] * 4));
      counts[static_cast<std::size_t>(4 * cell_a + cell_b)]++;
    }
    const double expected = kGroups / 16.0;
    double chi_square = 0.0;
    for (const int c : counts) chi_square += (c - expected) * (c - expected) / expected;
    EXPECT_LT(chi_square, 56.49) << "positions " << a << ", " << b;  // 15 degrees of freedom, 1e-6
  }
}

TEST(ExponentialRace, AMutatedRaceFailsTheLawOfTheSecondLargest) {
  // The tests above can fail: drawing the followers without the leader's offset (T_j = E'_j,
  // i.e. not conditioned below the maximum) breaks the second largest's law.
  const PhiloxKey key = PhiloxKey::from_seed(7);
  std::vector<long double> second;
  for (std::uint64_t g = 0; g < kGroups; ++g) {
    std::array<long double, kGroup> u{};
    const double e_v = noise::exponential(philox_block(key, 1, g));
    u[0] = std::exp(-static_cast<long double>(detail::race_leader(e_v)));
    for (int j = 1; j < kGroup; ++j) {
      u[static_cast<std::size_t>(j)] = std::exp(-static_cast<long double>(noise::exponential(philox_block(key, 2, g * kGroup + j))));
    }
    std::sort(u.begin(), u.end());
    second.push_back(u[kGroup - 2]);
  }
  const long double m = kGroup;
  EXPECT_GT(ks_distance(second, [&](long double x) { return std::pow(x, m) + m * std::pow(x, m - 1) * (1 - x); }),
            ks_threshold(second.size()));
}

}  // namespace
