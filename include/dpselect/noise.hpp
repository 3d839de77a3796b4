// SPDX-License-Identifier: Apache-2.0
/// @file
/// Noise transforms shared by the CPU and GPU paths: the same 128 random bits give the same
/// double on both.
///
/// Every transform starts from one block of 128 random bits (ChaCha20 or Philox) laid out as
/// - bit 127: the sign bit (Laplace only);
/// - bit 126: the tail selector: the uniform U is v (lower half) or 1 - v (upper half);
/// - bits 125..0: X, a 126-bit fixed-point number; v = (X + 1/2) * 2^-127 in (0, 1/2]
///   (1/2 only through the final rounding).
///
/// Drawing the half first and then v with 126 bits gives both tails of U (near 0 and near 1) the
/// same relative resolution: v is exact to a relative 2^-40 whenever v >= 2^-88, an event of
/// probability 1 - 2^-87 per draw. The noise therefore has the exact distribution's tails out to
/// about 88 (a 32-bit uniform stops Gumbel noise near 22, which silently excludes candidates that
/// trail the best by more than ~26: docs/design.md, "Large ranges"). No transform ever evaluates
/// log(0) or log of a value >= 1.
///
/// Error budget (used by the floating-point slack in host/selection/floating_point_slack.cpp): outside
/// the 2^-87 event, each of exponential, Gumbel and Laplace noise is within 2^-39 (absolute) of
/// the exact transform of the underlying continuous uniform, counting the 2^-40 discretisation,
/// the double conversion (2^-51) and the < 1 ulp logarithms (portable_log.hpp); |noise| <= 89.
#pragma once

#include <cstdint>

#include "dpselect/detail/host_device.hpp"
#include "dpselect/detail/portable_log.hpp"
#include "dpselect/philox.hpp"

namespace dpselect::noise {

/// Largest magnitude any transform below can return: -ln(2^-128) = 88.72.
inline constexpr double kMaxAbsNoise = 89.0;
/// Additive error bound of every transform outside the bad event (see the file comment).
inline constexpr double kNoiseErrorBound = 0x1p-39;
/// Probability, per draw, of the bad event {continuous v < 2^-88}.
inline constexpr double kBadEventProbability = 0x1p-87;

/// A uniform on (0, 1) split into its half and its distance v from the nearer end.
struct SplitUniform {
  double v;    ///< in (0, 1/2]: the distance of U from 0 (lower) or from 1 (upper)
  bool upper;  ///< U = 1 - v when true, U = v when false
  bool sign;   ///< an independent fair bit
};

/// Splits 128 random bits into the half of a uniform U, its distance v from the nearer end (126
/// bits of resolution) and an independent sign bit (the layout of the file comment).
/// @param bits 128 uniformly random bits.
/// @return v in (0, 1/2], the half and the sign.
DPSELECT_HD DPSELECT_FORCEINLINE SplitUniform split_uniform(const RandomBlock& bits) {
  const std::uint32_t w0 = bits.word[0];
  const std::uint64_t high = (static_cast<std::uint64_t>(w0 & 0x3FFFFFFFu) << 32) | bits.word[1];
  const std::uint64_t low = (static_cast<std::uint64_t>(bits.word[2]) << 32) | bits.word[3];
  // v = high * 2^-63 + (low + 1/2) * 2^-127; the second term is >= 2^-128, so v > 0.
  const double low_part =
      detail::mul_rn(detail::add_rn(detail::u64_to_double_rn(low), 0.5), 0x1p-127);
  const double v = detail::fma_rn(detail::u64_to_double_rn(high), 0x1p-63, low_part);
  return SplitUniform{v, ((w0 >> 30) & 1u) != 0, (w0 >> 31) != 0};
}

/// Uniform on the open interval (0, 1). Near 1 a double cannot resolve steps below 2^-53, so
/// the upper end is held at 1 - 2^-53 (never 1); use the transforms below, which work from
/// SplitUniform, for noise that is exact in the tails.
DPSELECT_HD DPSELECT_FORCEINLINE double uniform_open(const RandomBlock& bits) {
  const SplitUniform u = split_uniform(bits);
  return u.upper ? detail::sub_rn(1.0, u.v < 0x1p-53 ? 0x1p-53 : u.v) : u.v;
}

/// Standard exponential E = -ln U, accurate in both tails.
DPSELECT_HD DPSELECT_FORCEINLINE double exponential(const SplitUniform& u) {
  return u.upper ? -detail::portable_log1m(u.v) : -detail::portable_log(u.v);
}

/// Standard exponential E = -ln U from 128 random bits: exponential(split_uniform(bits)).
DPSELECT_HD DPSELECT_FORCEINLINE double exponential(const RandomBlock& bits) {
  return exponential(split_uniform(bits));
}

/// Standard Gumbel G = -ln(-ln U); its upper tail comes from the small-E end of exponential().
DPSELECT_HD DPSELECT_FORCEINLINE double gumbel(const RandomBlock& bits) {
  return -detail::portable_log(exponential(bits));
}

/// Standard Laplace (density e^{-|x|}/2): a fair sign times a standard exponential.
DPSELECT_HD DPSELECT_FORCEINLINE double laplace(const RandomBlock& bits) {
  const SplitUniform u = split_uniform(bits);
  const double e = exponential(u);
  return u.sign ? -e : e;
}

}  // namespace dpselect::noise
