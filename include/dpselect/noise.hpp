// Noise transforms shared by the CPU and GPU paths: the same 128 random bits give the same
// double on both.
//
// Every transform starts from one Philox block (128 bits) laid out as
//   bit 127        sign bit (Laplace only)
//   bit 126        tail selector: the uniform U is v (lower half) or 1 - v (upper half)
//   bits 125..0    X, a 126-bit fixed-point number; v = (X + 1/2) * 2^-127 in (0, 1/2]
//                  (1/2 only through the final rounding).
// Drawing the half first and then v with 126 bits gives both tails of U (near 0 and near 1)
// the same relative resolution: v is exact to a relative 2^-40 whenever v >= 2^-88, an
// event of probability 1 - 2^-87 per draw. The noise therefore has the exact distribution's
// tails out to about 88 (a 32-bit uniform stops Gumbel noise near 22, which silently excludes
// candidates that trail the best by more than ~26: DESIGN.md §4). No transform ever evaluates
// log(0) or log of a value >= 1.
//
// Error budget (used by the floating-point slack in host/engine/floating_point_slack.cpp): outside
// the 2^-87 event, each of exponential, Gumbel and Laplace noise is within 2^-39 (absolute) of
// the exact transform of the underlying continuous uniform, counting the 2^-40 discretisation,
// the double conversion (2^-51) and the < 1 ulp logarithms (portable_log.hpp); |noise| <= 89.
#pragma once

#include <cstdint>
#if !defined(__CUDA_ARCH__)
#include <bit>
#endif

#include "dpselect/detail/host_device.hpp"
#include "dpselect/detail/portable_log.hpp"
#include "dpselect/philox.hpp"

namespace dpselect::noise {

// Largest magnitude any transform below can return: -ln(2^-128) = 88.72.
inline constexpr double kMaxAbsNoise = 89.0;
// Additive error bound of every transform outside the bad event (see the file comment).
inline constexpr double kNoiseErrorBound = 0x1p-39;
// Probability, per draw, of the bad event {continuous v < 2^-88}.
inline constexpr double kBadEventProbability = 0x1p-87;

// A uniform on (0, 1) split into its half and its distance v from the nearer end.
struct SplitUniform {
  double v;    // in (0, 1/2]: the distance of U from 0 (lower) or from 1 (upper)
  bool upper;  // U = 1 - v when true, U = v when false
  bool sign;   // an independent fair bit
};

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

// Uniform on the open interval (0, 1). Near 1 a double cannot resolve steps below 2^-53, so
// the upper end is held at 1 - 2^-53 (never 1); use the transforms below, which work from
// SplitUniform, for noise that is exact in the tails.
DPSELECT_HD DPSELECT_FORCEINLINE double uniform_open(const RandomBlock& bits) {
  const SplitUniform u = split_uniform(bits);
  return u.upper ? detail::sub_rn(1.0, u.v < 0x1p-53 ? 0x1p-53 : u.v) : u.v;
}

// Standard exponential E = -ln U, accurate in both tails.
DPSELECT_HD DPSELECT_FORCEINLINE double exponential(const SplitUniform& u) {
  return u.upper ? -detail::portable_log1m(u.v) : -detail::portable_log(u.v);
}

DPSELECT_HD DPSELECT_FORCEINLINE double exponential(const RandomBlock& bits) {
  return exponential(split_uniform(bits));
}

// Standard Gumbel G = -ln(-ln U); its upper tail comes from the small-E end of exponential().
DPSELECT_HD DPSELECT_FORCEINLINE double gumbel(const RandomBlock& bits) {
  return -detail::portable_log(exponential(bits));
}

// Standard Laplace (density e^{-|x|}/2): a fair sign times a standard exponential.
DPSELECT_HD DPSELECT_FORCEINLINE double laplace(const RandomBlock& bits) {
  const SplitUniform u = split_uniform(bits);
  const double e = exponential(u);
  return u.sign ? -e : e;
}

// --- Where a candidate's 128 bits come from, and the cheap bound that screens it -------------
//
// Candidate i of a release on stream s draws its 128 bits in two parts:
//   top 16 bits (sign, tail selector, X's top 14 bits): half-word (i mod 8) of the "group block"
//       at position i / 8 of stream s: word (i mod 8) / 2, high half for even i;
//   low 112 bits: the top 112 bits of the "detail block" at position 2^63 + i of stream s.
// The 16 screen bits alone bound the candidate's noise from above (v >= X_top * 2^-15). A
// candidate whose bound cannot reach the best score seen so far cannot be the arg-max, so the
// detail block and the logarithms are computed only for the few that can: one Philox block per
// 8 candidates instead of one per candidate, and the same result bit for bit.

inline constexpr std::uint64_t kCandidatesPerGroup = 8;
inline constexpr std::uint64_t kDetailPositionOffset = std::uint64_t{1} << 63;
// Group blocks use positions below 2^60 and detail blocks 2^63 and above; position 2^62 of a
// release's stream gives the release's tag (ShardResult::release_tag), never noise.
inline constexpr std::uint64_t kReleaseTagPosition = std::uint64_t{1} << 62;

// Picks the word with selects rather than word[lane >> 1]: a GPU keeps an array indexed at run
// time in local memory, and the survivors of a screened group are visited by a run-time lane.
DPSELECT_HD DPSELECT_FORCEINLINE std::uint32_t screen_bits(const RandomBlock& group_block,
                                                           unsigned int lane) {
  const std::uint32_t low_pair = (lane & 2u) != 0 ? group_block.word[1] : group_block.word[0];
  const std::uint32_t high_pair = (lane & 2u) != 0 ? group_block.word[3] : group_block.word[2];
  const std::uint32_t word = (lane & 4u) != 0 ? high_pair : low_pair;
  return (lane & 1u) != 0 ? (word & 0xFFFFu) : (word >> 16);
}

DPSELECT_HD DPSELECT_FORCEINLINE RandomBlock candidate_bits(std::uint32_t screen,
                                                            const RandomBlock& detail) {
  return RandomBlock{{(screen << 16) | (detail.word[0] >> 16),
                      (detail.word[0] << 16) | (detail.word[1] >> 16),
                      (detail.word[1] << 16) | (detail.word[2] >> 16),
                      (detail.word[2] << 16) | (detail.word[3] >> 16)}};
}

// Upper bounds of each transform given only the screen bits. Each exceeds every value the
// transform can return for such bits by at least kScreenMargin, far more than the transforms'
// rounding (< 2^-45 absolute), so `noise <= bound` holds for the computed doubles.
inline constexpr double kScreenMargin = 0x1p-20;
inline constexpr double kLn2 = 0.69314718055994530942;
inline constexpr double kMinusLogLn2 = 0.36651292058166432701;  // -ln(ln 2)

// Bound on -ln v when v >= top * 2^-15: (15 - floor(log2 top)) ln 2; no bound below 2^-15.
DPSELECT_HD DPSELECT_FORCEINLINE double minus_log_v_bound(std::uint32_t top) {
  if (top == 0) return kMaxAbsNoise;
#if defined(__CUDA_ARCH__)
  const int floor_log2 = 31 - __clz(top);
#else
  const int floor_log2 = 31 - std::countl_zero(top);
#endif
  return detail::add_rn(detail::mul_rn(static_cast<double>(15 - floor_log2), kLn2), kScreenMargin);
}

DPSELECT_HD DPSELECT_FORCEINLINE bool screen_sign(std::uint32_t screen) { return (screen >> 15) != 0; }
DPSELECT_HD DPSELECT_FORCEINLINE bool screen_upper(std::uint32_t screen) { return ((screen >> 14) & 1u) != 0; }
DPSELECT_HD DPSELECT_FORCEINLINE std::uint32_t screen_top(std::uint32_t screen) { return screen & 0x3FFFu; }

// Upper half: E = -ln(1 - v) <= ln 2. Lower half: E = -ln v.
DPSELECT_HD DPSELECT_FORCEINLINE double exponential_upper_bound(std::uint32_t screen) {
  return screen_upper(screen) ? kLn2 + kScreenMargin : minus_log_v_bound(screen_top(screen));
}

// Upper half: E >= v, so G = -ln E <= -ln v. Lower half: E >= ln 2, so G <= -ln ln 2.
DPSELECT_HD DPSELECT_FORCEINLINE double gumbel_upper_bound(std::uint32_t screen) {
  return screen_upper(screen) ? minus_log_v_bound(screen_top(screen)) : kMinusLogLn2 + kScreenMargin;
}

// Negative sign: L = -E <= 0.
DPSELECT_HD DPSELECT_FORCEINLINE double laplace_upper_bound(std::uint32_t screen) {
  return screen_sign(screen) ? kScreenMargin : exponential_upper_bound(screen);
}

}  // namespace dpselect::noise
