// SPDX-License-Identifier: Apache-2.0
/// @file
/// Exact discrete noise (host side) and the calibration of Gaussian noise.
///
/// Samplers: Canonne, Kamath & Steinke 2020, "The Discrete Gaussian for Differential Privacy"
/// (CKS), Algorithms 1-3. They use integer arithmetic only (unsigned __int128 where products can
/// exceed 64 bits), so the output distribution is exactly the stated one given uniform bits; there
/// is no floating-point caveat in the sampling path. Calibration: CKS Theorem 7 (the exact delta
/// of the discrete Gaussian) and Balle & Wang 2018, "Improving the Gaussian Mechanism" (analytic
/// Gaussian mechanism), evaluated in long double and rounded towards the safe side.
///
/// Randomness (docs/design.md, "Randomness"): every sample reads 32-bit words from successive random
/// blocks (random_key.hpp) of one (key, stream). CounterBits::for_item(key, stream, i) gives item i
/// the block positions [i * 2^20, (i + 1) * 2^20), so the noise of item i depends only on (key,
/// stream, i), whatever order or thread the items are drawn in. Item i must be below 2^44.
///
/// Running out of positions: a sample draws a random number of words. Every loop in the samplers
/// stops at each iteration with probability at least 0.18 (the loosest is the discrete Laplace
/// outer loop: e^-1 to pass its Bernoulli, then 1/2 against the Y = 0 reflection), independently of
/// the past, and a discrete Gaussian sample needs on average 4-7 blocks (measured for sigma^2
/// between 1/16 and 2^32, see discrete_noise_test). Needing all 2^22 words of an item's
/// range would take ~2^20 consecutive failed iterations: probability below 0.82^(2^20) < 2^-300000.
/// If it ever happens the bit source throws RandomnessExhausted rather than read another item's
/// positions.
///
/// Host functions (defined in host/noise/discrete_noise.cpp and host/accounting/
/// gaussian_calibration.cpp). A CounterBits is not thread-safe (each sample advances it); give
/// each thread its own, e.g. one per item. The calibration functions are pure and thread-safe.
#pragma once

#include <cstdint>

#include "dpselect/random_key.hpp"

namespace dpselect::discrete {

/// Upper limit of every integer parameter of the samplers (numerators and denominators).
inline constexpr std::uint64_t kMaxRationalPart = std::uint64_t{1} << 32;
/// log2 of the number of random blocks reserved for one item by CounterBits::for_item.
inline constexpr unsigned kItemPositionBits = 20;
/// Items are numbered below this so that item * 2^20 does not wrap.
inline constexpr std::uint64_t kItemLimit = std::uint64_t{1} << (64 - kItemPositionBits);

/// Uniform words from successive random blocks: block number next_position of (key, stream), in
/// word order, then next_position + 1, ...; at most blocks_left more blocks are read
/// (then RandomnessExhausted; a count rather than an end position so that the last item's range
/// does not wrap to 0). A plain aggregate: copying it copies the stream state, so two copies hand
/// out the same words.
///
/// Build one with for_item (the layout every dpselect mechanism uses); a hand-made aggregate may
/// read any positions, and the caller then keeps the ranges of different samples disjoint.
struct CounterBits {
  RandomKey key{};  ///< The key of the random blocks (a context's secret key).
  std::uint64_t stream = 0;  ///< The stream id of the random blocks.
  std::uint64_t next_position = 0;  ///< The position of the next block to read.
  /// How many more blocks may be read; all 2^64 - 1 by default, 2^20 from for_item.
  std::uint64_t blocks_left = ~std::uint64_t{0};
  /// Words of the last block not handed out yet: block.word[4 - words_left .. 3].
  RandomBlock block{};
  unsigned words_left = 0;  ///< Words of `block` not handed out yet, 0..4 (0: read a new block first).

  /// The bit source of item `item`: positions [item * 2^20, (item + 1) * 2^20).
  /// Throws InvalidArgument if item >= 2^44.
  /// @param key The key of the random blocks.
  /// @param stream The stream id (a context hands out a fresh one per release).
  /// @param item The item's number; below 2^44 (kItemLimit).
  /// @return A source at position item * 2^20 with 2^20 blocks left and no word pending.
  /// @throws InvalidArgument `item` >= 2^44 (the message names `item` and its value).
  static CounterBits for_item(const RandomKey& key, std::uint64_t stream, std::uint64_t item);

  /// The next 32-bit word. Throws RandomnessExhausted when a block is needed and blocks_left is 0.
  /// @return The next unused word of the current block, or word 0 of the next block (which is
  ///         then read: `next_position` advances and `blocks_left` decreases by one).
  /// @throws RandomnessExhausted No word is pending and `blocks_left` is 0; nothing is read.
  std::uint32_t next32();
  /// Two words, the first one high.
  /// @return `(next32() << 32) | next32()`, the first call's word in the high half.
  /// @throws RandomnessExhausted As next32 (the source may then have handed out the first word).
  std::uint64_t next64();
};

/// Uniform on {0, ..., m - 1} by rejection from the bit width of m - 1 (no modulo bias; each try
/// is accepted with probability > 1/2). Throws InvalidArgument if m == 0.
/// @param bits The bit source; advanced by the words the sample draws.
/// @param m The number of outcomes; >= 1 (m = 1 always gives 0).
/// @return A uniform integer in [0, m - 1].
/// @throws InvalidArgument `m` is 0, before any word is drawn.
/// @throws RandomnessExhausted `bits` ran out of blocks (see the file comment).
std::uint64_t uniform_below(CounterBits& bits, std::uint64_t m);

/// Bernoulli(exp(-n / d)): true with probability exp(-n/d), exactly (CKS Algorithm 1 for
/// gamma in [0, 1], and a product of Bernoulli(exp(-1)) for the integer part).
/// Requires 0 <= n <= 2^32 and 1 <= d <= 2^32; throws InvalidArgument naming n or d otherwise.
/// @param bits The bit source; advanced by the words the sample draws.
/// @param n Numerator of the exponent n/d; in [0, 2^32] (0 always gives true).
/// @param d Denominator of the exponent; in [1, 2^32].
/// @return true with probability exactly exp(-n/d) given uniform bits.
/// @throws InvalidArgument `n` or `d` out of range, before any word is drawn.
/// @throws RandomnessExhausted `bits` ran out of blocks (see the file comment).
bool bernoulli_exp(CounterBits& bits, std::uint64_t n, std::uint64_t d);

/// Discrete Laplace with scale t = scale_num / scale_den: P[x] proportional to exp(-|x| / t) on
/// the integers (CKS Algorithm 2 with s = scale_den, t = scale_num).
/// Requires 1 <= scale_num, scale_den <= 2^32; throws InvalidArgument naming the parameter.
/// @param bits The bit source; advanced by the words the sample draws.
/// @param scale_num Numerator of the scale t; in [1, 2^32].
/// @param scale_den Denominator of the scale t; in [1, 2^32].
/// @return An integer sample, exactly distributed given uniform bits.
/// @throws InvalidArgument A parameter out of range (named with its value), before any word is drawn.
/// @throws RandomnessExhausted `bits` ran out of blocks (see the file comment).
std::int64_t discrete_laplace(CounterBits& bits, std::uint64_t scale_num, std::uint64_t scale_den);

/// Discrete Gaussian N_Z(0, sigma^2) with sigma^2 = sigma2_num / sigma2_den: P[x] proportional to
/// exp(-x^2 / (2 sigma^2)) on the integers (CKS Algorithm 3).
/// Requires 1 <= sigma2_num, sigma2_den <= 2^32; throws InvalidArgument naming the parameter.
///
/// Usage:
/// @code{.cpp}
/// discrete_gaussian(bits = CounterBits::for_item(key, stream, i), 9, 4)  // sigma = 1.5
/// @endcode
/// @param bits The bit source; advanced by the words the sample draws.
/// @param sigma2_num Numerator of the variance parameter sigma^2; in [1, 2^32].
/// @param sigma2_den Denominator of sigma^2; in [1, 2^32].
/// @return An integer sample, exactly distributed given uniform bits.
/// @throws InvalidArgument A parameter out of range (named with its value), before any word is drawn.
/// @throws RandomnessExhausted `bits` ran out of blocks (see the file comment).
std::int64_t discrete_gaussian(CounterBits& bits, std::uint64_t sigma2_num,
                               std::uint64_t sigma2_den);

/// Smallest delta for which adding N_Z(0, sigma^2) to an integer query of sensitivity
/// `sensitivity` is (epsilon, delta)-DP (CKS Theorem 7), rounded up: the pmf is summed in long
/// double (compensated) to |k| <= ceil(sigma sqrt(2 (epsilon + 80))) + 1, which leaves
/// out at most e^-80 (1 + sigma) (the truncation bound, 2 e^-80 (1 + sigma), is added), and the
/// result is raised by a bound on the rounding error.
/// Requires sigma finite, > 0 and <= 10^6; sensitivity >= 1; epsilon finite and > 0; at most 2^26
/// pmf terms. Throws InvalidArgument naming the parameter and value.
/// @param sigma The discrete Gaussian's parameter (standard deviation of the underlying normal);
///        finite, > 0 and <= 10^6.
/// @param sensitivity The query's sensitivity (integer); >= 1.
/// @param epsilon The target epsilon; finite and > 0.
/// @return An upper bound on the smallest delta, in [0, 1].
/// @throws InvalidArgument `sigma`, `sensitivity` or `epsilon` out of range, or
///         ceil(sigma sqrt(2 (epsilon + 80))) + 1 > 2^25 (the sum's length; the message names
///         "sigma * sqrt(2 (epsilon + 80))").
double discrete_gaussian_delta(double sigma, std::int64_t sensitivity, double epsilon);

/// delta of the Gaussian mechanism N(0, sigma^2) for L2 sensitivity l2_sensitivity at epsilon
/// (Balle & Wang 2018, Theorem 8), exact up to a rounding bound that is added (so the value is an
/// upper bound). Every epsilon > 0 is valid. Throws InvalidArgument for sigma, l2_sensitivity or
/// epsilon not finite and > 0.
/// @param sigma The standard deviation of the normal noise; finite and > 0.
/// @param l2_sensitivity The L2 sensitivity of the query; finite and > 0.
/// @param epsilon The target epsilon; finite and > 0.
/// @return An upper bound on the mechanism's delta at `epsilon`, in [0, 1].
/// @throws InvalidArgument A parameter not finite and > 0 (named with its value).
double gaussian_delta(double sigma, double l2_sensitivity, double epsilon);

/// The analytic Gaussian mechanism (Balle & Wang 2018, Algorithm 1 by bisection): the smallest
/// double sigma with gaussian_delta(sigma, l2_sensitivity, epsilon) <= delta, to the last bit;
/// always from the safe side. Valid for every epsilon > 0 (the classical
/// sqrt(2 ln(1.25/delta)) Delta/epsilon needs epsilon < 1 and is larger).
/// Requires epsilon and l2_sensitivity finite and > 0, delta in (0, 1). Throws InvalidArgument
/// naming the parameter, or if sigma would exceed the double range.
/// Results are cached (the last 64 parameter triples; thread-safe).
/// @param epsilon The target epsilon; finite and > 0.
/// @param delta The target delta; in (0, 1).
/// @param l2_sensitivity The L2 sensitivity of the query; finite and > 0.
/// @return The standard deviation sigma, in the units of the query.
/// @throws InvalidArgument A parameter out of range (named with its value), or sigma beyond the
///         double range (the message names `l2_sensitivity`).
double analytic_gaussian_sigma(double epsilon, double delta, double l2_sensitivity);

}  // namespace dpselect::discrete
