// SPDX-License-Identifier: Apache-2.0
// The portable logarithm against long double (64-bit mantissa, so its own error is ~2^-11 ulp
// of a double result and cannot hide a 1-ulp error). fdlibm documents < 1 ulp; the floating-
// point slack (host/selection/floating_point_slack.cpp) relies on that bound.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "dpselect/detail/portable_log.hpp"

namespace {

// |computed - exact| in units of the last place of the double nearest to exact.
double ulp_error(double computed, long double exact) {
  const double nearest = static_cast<double>(exact);
  if (nearest == 0.0) return computed == 0.0 ? 0.0 : INFINITY;
  const long double ulp = std::nextafter(std::fabs(nearest), INFINITY) - std::fabs(nearest);
  return static_cast<double>(std::fabs(static_cast<long double>(computed) - exact) / ulp);
}

TEST(PortableLog, WithinOneUlpAcrossTheNormalRange) {
  std::mt19937_64 rng(20261122);
  std::uniform_real_distribution<double> exponent(-1021.0, 1023.0);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  double worst = 0.0;
  double worst_at = 0.0;
  for (int i = 0; i < 2'000'000; ++i) {
    const double x = std::ldexp(mantissa(rng), static_cast<int>(std::floor(exponent(rng))));
    const double error = ulp_error(dpselect::detail::portable_log(x), std::log(static_cast<long double>(x)));
    if (error > worst) {
      worst = error;
      worst_at = x;
    }
  }
  EXPECT_LT(worst, 1.0) << "at x = " << worst_at;
}

TEST(PortableLog, WithinOneUlpNearOneAndOnTheNoiseDomain) {
  double worst = 0.0;
  for (int k = -2000; k <= 2000; ++k) {  // 1 + k ulp: where log is smallest and cancellation bites
    const double x = 1.0 + k * 0x1p-52;
    if (x == 1.0) {
      EXPECT_EQ(dpselect::detail::portable_log(x), 0.0);
      continue;
    }
    worst = std::max(worst, ulp_error(dpselect::detail::portable_log(x), std::log(static_cast<long double>(x))));
  }
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> log2_of_x(-128.0, 6.5);  // [2^-128, ~90]: noise inputs
  for (int i = 0; i < 1'000'000; ++i) {
    const double x = std::exp2(log2_of_x(rng));
    worst = std::max(worst, ulp_error(dpselect::detail::portable_log(x), std::log(static_cast<long double>(x))));
  }
  EXPECT_LT(worst, 1.0);
  EXPECT_EQ(dpselect::detail::portable_log(1.0), 0.0);
  EXPECT_EQ(dpselect::detail::portable_log(0x1p-128), static_cast<double>(-128 * std::log(2.0L)));
}

TEST(PortableLog, LogOneMinusWithinOneUlp) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> log2_of_v(-128.0, -1.0);
  std::uniform_real_distribution<double> near_branch(0.25, 0.35);  // branch point 1 - sqrt(2)/2
  double worst = 0.0;
  for (int i = 0; i < 2'000'000; ++i) {
    const double v = (i % 4 == 0) ? near_branch(rng) : std::exp2(log2_of_v(rng));
    worst = std::max(worst, ulp_error(dpselect::detail::portable_log1m(v),
                                      std::log1p(-static_cast<long double>(v))));
  }
  EXPECT_LT(worst, 1.0);
  EXPECT_EQ(dpselect::detail::portable_log1m(0.5), static_cast<double>(-std::log(2.0L)));
}

}  // namespace
