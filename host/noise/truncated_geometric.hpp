// SPDX-License-Identifier: Apache-2.0
// Exact-to-2^-30 sampling of a truncated geometric variable from one 128-bit uniform: the
// within-interval stage of the bid-interval pricing sampler (host/pricing/pricing_intervals.cpp).
//
// digit_from_uniform(u, rate, size) returns d in [0, size) with P(d) proportional to
// e^{-rate * d}, size <= kMaxDigitValues, by inversion of the truncated exponential
//     x = -ln(1 - U q) / rate,  q = 1 - e^{-rate * size},  d = floor(x).
// Each form below keeps a relative error in ln(1 - U q) of a few ulps:
//   U = v (lower half of the split uniform):           ln(1 - q v)       via log1p
//   U = 1 - v, q <= 1/2 (1 - U q is close to 1):        ln(1 - q U)       via log1p
//   U = 1 - v, q > 1/2 (1 - U q = e^{-rate size} + q v): ln of a sum of two positives.
// A boundary of a cell then moves by dx <= |x| 2^-50 (log1p branches: relative error) or
// dx <= |x| 2^-50 + 2^-50 / rate (the sum branch), and the adjacent cell's probability by a
// relative dx rate / (1 - e^{-rate}). On the log1p branches with rate < 1 that is
// <= size 2^-50 / (1 - rate/2) <= 2^-33 (size <= 2^16); for rate >= 1, rate |x| <= 89 for every
// reachable uniform (>= 2^-128) gives <= 2 * 90 * 2^-50; the sum branch has rate size >= ln 2,
// so 2^-50 / (1 - e^{-rate}) <= 2^-50 * 2 size / ln 2 <= 2^-32. kDigitRelativeError = 2^-30
// keeps a factor 4 of margin (an independent review measured at most 2^-34.9 against a
// __float128 reference over rates 1e-300 ... 700 and sizes up to 2^16);
// tests/truncated_geometric_test.cpp checks four boundaries of each (rate, size) at 2^-31.
// Outside that, the bad event of the split uniform (v < 2^-88, probability 2^-87), the 2^-127
// lattice of v (total variation <= 2^-111 per draw) and cells of probability below 2^-1000
// (rate > 700) are not represented; the slack's delta counts all three.
#pragma once

#include <cmath>
#include <cstdint>

#include "dpselect/detail/noise_positions.hpp"
#include "dpselect/noise.hpp"
#include "dpselect/random_key.hpp"

namespace dpselect::detail {

inline constexpr std::uint64_t kMaxDigitValues = std::uint64_t{1} << 16;
inline constexpr double kDigitRelativeError = 0x1p-30;
// Above this rate P(d >= 1) < e^-700 < 2^-1000: d = 0 is returned and the rest counted as bad.
inline constexpr double kLargestDigitRate = 700.0;

inline std::uint64_t digit_from_uniform(const noise::SplitUniform& u, double rate, std::uint64_t size) {
  if (size <= 1 || rate > kLargestDigitRate) return 0;
  const double values = static_cast<double>(size);
  double x;
  if (rate == 0.0) {  // uniform: x = U * size
    x = u.upper ? (1.0 - u.v) * values : u.v * values;
  } else {
    const double q = -std::expm1(-rate * values);
    double log_rest;  // ln(1 - U q) <= 0
    if (!u.upper) {
      log_rest = std::log1p(-q * u.v);
    } else if (q <= 0.5) {
      log_rest = std::log1p(-q * (1.0 - u.v));
    } else {
      log_rest = std::log(std::exp(-rate * values) + q * u.v);
    }
    x = -log_rest / rate;
  }
  const double last = values - 1.0;
  return static_cast<std::uint64_t>(x < last ? std::floor(x) : last);
}

}  // namespace dpselect::detail

namespace dpselect::detail {

// Random positions of the within-interval stage: [2^60, 2^60 + 4 * kMaxGeometricAttempts) of the
// release's stream, which its first stage (the selection engine over the intervals) never reads:
// noise_positions.hpp's screen blocks lie below 2^55, race blocks in [2^61, 2^61 + 2^58), the
// release's tag key at 2^62 and 2^62 + 1 and candidate blocks at 2^63 and above (static_asserts below).
inline constexpr std::uint64_t kGeometricPositionOffset = std::uint64_t{1} << 60;
inline constexpr int kGeometricDigitsPerAttempt = 4;  // 16-bit digits: lengths up to 2^64
// Each attempt is accepted with probability >= 1/2, so 128 rejections in a row have
// probability <= 2^-128; the release then fails (counted in the floating-point delta).
inline constexpr int kMaxGeometricAttempts = 128;
static_assert(screen_position((kDetailPositionOffset - 1) / kCandidatesPerGroup) <
                  kGeometricPositionOffset,
              "the within-interval draws must not overlap the screen blocks");
static_assert(kGeometricPositionOffset + std::uint64_t{kGeometricDigitsPerAttempt} * kMaxGeometricAttempts <=
                  kRacePositionOffset,
              "the within-interval draws must not overlap the race blocks");

// t in [0, length) with P(t) proportional to e^{-rate * t}, length >= 1. Writes
// t = sum_i d_i 2^{16 i}: the digits of a geometric variable are independent truncated
// geometrics with rates rate * 2^{16 i} (e^{-rate t} factorises over them), each drawn by
// digit_from_uniform. The top digit ranges over ceil(length / 2^{16 h}) >= 2 values, so the
// digits cover [0, E) with E < 2 length; t >= length is rejected and redrawn from fresh
// positions. As P(t) decreases in t the rejected part has at most half the mass. Per outcome
// the result is within a factor e^{+-2 h kDigitRelativeError} (h <= 4 digits) of the exact
// conditional distribution. Throws std::runtime_error after kMaxGeometricAttempts rejections
// (probability <= 2^-128, counted in the slack's delta).
// `draw` selects disjoint positions for several draws on one stream (draw < kMaxGeometricDraws):
// draw d reads [offset + d * kPositionsPerGeometricDraw, offset + (d + 1) * kPositionsPerGeometricDraw).
inline constexpr std::uint64_t kPositionsPerGeometricDraw =
    std::uint64_t{kGeometricDigitsPerAttempt} * kMaxGeometricAttempts;
inline constexpr std::uint64_t kMaxGeometricDraws = std::uint64_t{1} << 40;
static_assert(kGeometricPositionOffset + kMaxGeometricDraws * kPositionsPerGeometricDraw <= kRacePositionOffset,
              "every draw's positions must lie below the race blocks");
std::uint64_t truncated_geometric(const RandomKey& key, std::uint64_t stream, double rate, std::uint64_t length,
                                  std::uint64_t draw = 0);

}  // namespace dpselect::detail
