// SPDX-License-Identifier: Apache-2.0
/// @file
/// Continuous noise for vectors, one coordinate at a time, identical on the CPU and the GPU:
/// standard Laplace, the standard normal N(0, 1), Gamma(a) for a in [1/32, 1], and the standard
/// generalized Gaussian GG(p, 1) (density exp(-|z|^p) / (2 Gamma(1 + 1/p)), Ganesh & Zhao 2021).
///
/// Randomness (docs/design.md, "Randomness"): coordinate i of a release on stream s reads only the
/// random blocks (random_key.hpp) at positions j * 2^54 + i of s, for j = 0, 1, ..., 2^10 - 1 in
/// this order ("row" j, "column" i), so its noise depends only on (key, stream, i): never on the
/// order, thread, backend or shard that computes it. Coordinates are numbered below 2^54. Rows
/// rather than one contiguous range per coordinate: the first blocks of neighbouring coordinates are
/// neighbouring positions, so one ChaCha20 block (4 positions) serves 4 coordinates in the CPU loop.
///
/// Methods (exact transforms of uniform variables, which are 126- or 127-bit fixed-point numbers;
/// the error is that discretisation and floating-point rounding):
/// - Laplace: noise::laplace (noise.hpp): a fair sign times -ln U from a 126-bit uniform; one
///   block; |z| <= 89 (noise.hpp's tail statement applies).
/// - normal: Marsaglia's polar method (Marsaglia & Bray 1964): (u1, u2) uniform on the square
///   (-1, 1)^2 until s = u1^2 + u2^2 < 1, then z = u1 sqrt(-2 ln s / s). Each u is a
///   sign and a 127-bit fixed-point magnitude (Y + 1/2) 2^-127 rounded to double once,
///   so it has full double precision down to 2^-74 and never is 0: s >= 2^-256 and
///   |z| < 18.9. The tails are those of the normal distribution with a relative error of
///   a few ulp wherever P[|Z| > t] > 2^-100 (t < 12.3). Needs only +, -, *, /, sqrt
///   (correctly rounded on both sides) and portable_log, no sin/cos (which differ
///   between glibc and CUDA). Two blocks per attempt, accepted with probability pi/4.
/// - Gamma: Marsaglia & Tsang 2000 ("A simple method for generating gamma variables") for the
///   shape a + 1 in (1, 2] (d = a + 2/3, c = 1/sqrt(9d), a normal x and a uniform u per
///   try, squeeze u < 1 - 0.0331 x^4, then ln u < x^2/2 + d(1 - v + ln v), v = (1+cx)^3;
///   exact for any d), then the boost Gamma(a) = Gamma(a + 1) U^(1/a) (their §6), computed
///   as exp(ln G + ln U / a) with portable_exp / portable_log.
/// - GG(p): |z|^p ~ Gamma(1/p, 1), so |z| = Gamma(1/p)^(1/p) = G^(1/p) U with G ~ Gamma(1/p + 1)
///   (the boost with a = 1/p: U^((1/a)/p) = U), and a fair sign: |z| = exp(ln G / p) U.
///   No underflow even at p = 32 (Gamma(1/32) itself is below 2^-1022 with probability
///   ~3e-10; gamma_small_shape then returns 0). The tails come from the normal x:
///   |z|^p <= G <= d (1 + 18.9 c)^3 < 440.
///
/// The shape actually sampled is the one the rounded parameters describe (d + 1/3 for Gamma; 1/p
/// rounded to double for GG): relative 2^-53 of the parameter.
///
/// Randomness budget and running out: Laplace reads 1 block. The normal reads 2 blocks per attempt;
/// running out needs 512 rejections in a row: probability (1 - pi/4)^512 < 2^-1130. GG and Gamma read
/// 1 block, then per Marsaglia-Tsang try one normal and 1 block; every polar attempt (at most 3
/// blocks with its try) ends the sample with probability >= 0.749 (pi/4 times the try's acceptance,
/// >= 0.9539 for a + 1 in [1 + 1/32, 2], computed by quadrature), independently of the past, so
/// running out needs >= 341 attempts in a row that do not: probability < 0.251^341 < 2^-680 per
/// coordinate. The samplers never read past their range: they return false instead (device code
/// cannot throw) and the callers (host/noise/noise_vector.cpp, kernels/noise_vector.cu) report
/// RandomnessExhausted.
///
/// Floating point (Mironov 2012, "On significance of the least significant bits for differential
/// privacy"): these samplers return doubles whose low-order bits are not protected; the set of
/// doubles a noisy value can take depends on the true value, which in principle leaks it. The
/// floating-point-safe (snapped) Laplace and Gaussian live elsewhere in the library
/// (add_secure_noise, secure_noise.hpp).
///
/// Plain C++ header, compiled by nvcc for the device: no exceptions, no CUDA headers. Every function
/// here is inline, callable from host and device code, and pure given its bit source; these are
/// the building blocks of add_noise (noise_vector.hpp), which most callers want instead.
#pragma once

#include <cstdint>

#include "dpselect/detail/host_device.hpp"
#include "dpselect/detail/portable_exp.hpp"
#include "dpselect/detail/portable_log.hpp"
#include "dpselect/noise.hpp"
#include "dpselect/random_key.hpp"

namespace dpselect::continuous {

/// log2 of the number of random blocks (rows) reserved for one coordinate.
inline constexpr unsigned kCoordinateRowBits = 10;
/// The number of random blocks (rows) reserved for one coordinate: 2^10.
inline constexpr std::uint64_t kBlocksPerCoordinate = std::uint64_t{1} << kCoordinateRowBits;
/// Coordinates are numbered below this; block j of coordinate i is at position (j << 54) | i.
inline constexpr unsigned kCoordinateColumnBits = 64 - kCoordinateRowBits;
/// Coordinates are numbered below this limit, 2^54 (the column bits of a position).
inline constexpr std::uint64_t kCoordinateLimit = std::uint64_t{1} << kCoordinateColumnBits;

/// The position of row `row` of coordinate `coordinate`: `(row << 54) | coordinate`.
/// @param coordinate The coordinate; below kCoordinateLimit (2^54), unchecked (a larger one would
///        share positions with another row).
/// @param row The row; below kBlocksPerCoordinate (2^10), unchecked.
/// @return The block position within the release's stream.
DPSELECT_HD DPSELECT_FORCEINLINE std::uint64_t coordinate_position(std::uint64_t coordinate, std::uint64_t row) {
  return (row << kCoordinateColumnBits) | coordinate;
}
/// Smallest shape of gamma_small_shape (a = 1/p for p in [1, 32]; the largest is 1).
inline constexpr double kMinGammaShape = 1.0 / 32.0;

/// Random blocks of one (key, stream) by position: the device path and any single lookup.
///
/// A Fetch for CoordinateBits that computes every block with random_block (no cache).
struct KeyedBlocks {
  RandomKey key;  ///< The release's key (its context's secret key).
  std::uint64_t stream;  ///< The release's stream id.
  /// The block at `position` of (key, stream).
  /// @param position Any 64-bit position.
  /// @return `random_block(key, stream, position)`.
  DPSELECT_HD DPSELECT_FORCEINLINE RandomBlock at(std::uint64_t position) const {
    return random_block(key, stream, position);
  }
};

/// The blocks of one coordinate, row by row. Fetch has `RandomBlock at(position)`: KeyedBlocks, or
/// on the host a cache that shares ChaCha20 blocks between coordinates (same bits).
///
/// The `Bits` argument of the samplers below. Not thread-safe; one per coordinate.
/// @tparam Fetch A type with `RandomBlock at(std::uint64_t position)` (const or not).
template <class Fetch>
struct CoordinateBits {
  Fetch& fetch;  ///< Where the blocks come from; must outlive this object.
  std::uint64_t coordinate;  ///< The coordinate; below kCoordinateLimit (the caller checks).
  std::uint64_t row;  ///< The next row to read, 0..2^10 (2^10: used up).

  /// The coordinate's next block; false (and nothing read) when its 2^10 rows are used up.
  /// @param out Receives the block of row `row` (unchanged when false is returned).
  /// @return true when a block was read (and `row` advanced), false when the rows are used up.
  DPSELECT_HD DPSELECT_FORCEINLINE bool next(RandomBlock& out) {
    if (row == kBlocksPerCoordinate) return false;
    out = fetch.at(coordinate_position(coordinate, row));
    ++row;
    return true;
  }
  /// How many blocks the coordinate has read so far.
  /// @return `row`, in [0, 2^10].
  DPSELECT_HD DPSELECT_FORCEINLINE std::uint64_t used() const { return row; }
};

/// The bit source of coordinate `coordinate` (< kCoordinateLimit: the caller checks).
/// @tparam Fetch A type with `RandomBlock at(std::uint64_t position)`.
/// @param fetch Where the blocks come from; must outlive the result.
/// @param coordinate The coordinate; below kCoordinateLimit (2^54), unchecked.
/// @return A source at row 0 of the coordinate.
template <class Fetch>
DPSELECT_HD DPSELECT_FORCEINLINE CoordinateBits<Fetch> coordinate_bits(Fetch& fetch, std::uint64_t coordinate) {
  return CoordinateBits<Fetch>{fetch, coordinate, 0};
}

/// A sign (bit 127) and a magnitude (Y + 1/2) 2^-127 for Y the other 127 bits, rounded to double:
/// in (0, 1] (1 only through rounding), full precision down to 2^-74, never below 2^-128.
struct SignedUnit {
  double magnitude;  ///< (Y + 1/2) 2^-127 rounded to double: in (0, 1], never below 2^-128.
  bool negative;     ///< The sign: bit 127 of the block (bit 31 of `word[0]`).
};

/// The SignedUnit of one random block: bit 127 the sign, the other 127 bits Y (word 0 most
/// significant), magnitude (Y + 1/2) 2^-127 computed with one rounding to double.
/// @param bits The random block.
/// @return The sign and magnitude.
DPSELECT_HD DPSELECT_FORCEINLINE SignedUnit signed_unit(const RandomBlock& bits) {
  const std::uint64_t high = (static_cast<std::uint64_t>(bits.word[0] & 0x7FFFFFFFu) << 32) | bits.word[1];
  const std::uint64_t low = (static_cast<std::uint64_t>(bits.word[2]) << 32) | bits.word[3];
  const double low_part = detail::mul_rn(detail::add_rn(detail::u64_to_double_rn(low), 0.5), 0x1p-127);
  return SignedUnit{detail::fma_rn(detail::u64_to_double_rn(high), 0x1p-63, low_part), (bits.word[0] >> 31) != 0};
}

/// N(0, 1) by the polar method (see the file comment). False when the bits ran out.
/// @tparam Bits A bit source with `bool next(RandomBlock&)`, such as CoordinateBits.
/// @param bits The bit source; two blocks are read per attempt.
/// @param z Receives the sample, |z| < 18.9 (unchanged when false is returned).
/// @return true on success, false when `bits` ran out before an attempt was accepted.
template <class Bits>
DPSELECT_HD DPSELECT_FORCEINLINE bool standard_normal(Bits& bits, double& z) {
  RandomBlock first;
  RandomBlock second;
  while (bits.next(first) && bits.next(second)) {
    const SignedUnit u1 = signed_unit(first);
    const double u2 = signed_unit(second).magnitude;  // its sign does not change s
    const double s = detail::fma_rn(u1.magnitude, u1.magnitude, detail::mul_rn(u2, u2));
    if (s < 1.0) {
      // s >= 2^-256 > 0, so the logarithm's argument is a positive normal double.
      const double factor =
          detail::sqrt_rn(detail::div_rn(detail::mul_rn(-2.0, detail::portable_log(s)), s));
      const double magnitude = detail::mul_rn(u1.magnitude, factor);
      z = u1.negative ? -magnitude : magnitude;
      return true;
    }
  }
  return false;
}

/// The constants of Marsaglia & Tsang for shape a + 1, a in [1/32, 1].
struct GammaShape {
  double a;  ///< the boost exponent 1/a is applied by gamma_small_shape
  double d;  ///< a + 1 - 1/3
  double c;  ///< 1 / sqrt(9 d)
};

/// The constants of Marsaglia & Tsang for shape a + 1, rounded once per operation.
/// @param a The small shape; in [1/32, 1] (kMinGammaShape), unchecked.
/// @return `{a, a + 1 - 1/3, 1 / sqrt(9 d)}`.
DPSELECT_HD DPSELECT_FORCEINLINE GammaShape gamma_shape(double a) {
  const double d = detail::sub_rn(detail::add_rn(a, 1.0), 1.0 / 3.0);
  return GammaShape{a, d, detail::div_rn(1.0, detail::sqrt_rn(detail::mul_rn(9.0, d)))};
}

/// Gamma(a + 1, 1) by Marsaglia & Tsang 2000 (file comment). Returns a positive normal double.
/// @tparam Bits A bit source with `bool next(RandomBlock&)`, such as CoordinateBits.
/// @param bits The bit source; each try reads one normal (standard_normal) and one block.
/// @param shape The constants of gamma_shape(a), a in [1/32, 1].
/// @param out Receives the sample, a positive normal double (unchanged when false is returned).
/// @return true on success, false when `bits` ran out.
template <class Bits>
DPSELECT_HD DPSELECT_FORCEINLINE bool gamma_plus_one(Bits& bits, const GammaShape& shape, double& out) {
  for (;;) {
    double x = 0.0;
    double v = 0.0;
    do {
      if (!standard_normal(bits, x)) return false;
      v = detail::add_rn(1.0, detail::mul_rn(shape.c, x));
    } while (!(v > 0.0));  // v >= 2^-53 once positive, so v^3 and d v are normal
    v = detail::mul_rn(detail::mul_rn(v, v), v);
    RandomBlock block;
    if (!bits.next(block)) return false;
    const double u = signed_unit(block).magnitude;
    const double x2 = detail::mul_rn(x, x);
    if (u < detail::sub_rn(1.0, detail::mul_rn(0.0331, detail::mul_rn(x2, x2))) ||
        detail::portable_log(u) <
            detail::add_rn(detail::mul_rn(0.5, x2),
                           detail::mul_rn(shape.d, detail::add_rn(detail::sub_rn(1.0, v), detail::portable_log(v))))) {
      out = detail::mul_rn(shape.d, v);
      return true;
    }
  }
}

/// Gamma(a, 1) for a in [1/32, 1]: G U^(1/a) with G ~ Gamma(a + 1), as exp(ln G + ln U / a).
/// Results below 2^-1022 are returned as 0 (portable_exp flushes them).
/// @tparam Bits A bit source with `bool next(RandomBlock&)`, such as CoordinateBits.
/// @param bits The bit source; one block for U, then gamma_plus_one's.
/// @param shape The constants of gamma_shape(a), a in [1/32, 1].
/// @param out Receives the sample, >= 0 (unchanged when false is returned).
/// @return true on success, false when `bits` ran out.
template <class Bits>
DPSELECT_HD DPSELECT_FORCEINLINE bool gamma_small_shape(Bits& bits, const GammaShape& shape, double& out) {
  RandomBlock block;
  if (!bits.next(block)) return false;
  const double u = signed_unit(block).magnitude;
  double g = 0.0;
  if (!gamma_plus_one(bits, shape, g)) return false;
  out = detail::portable_exp(
      detail::add_rn(detail::portable_log(g), detail::div_rn(detail::portable_log(u), shape.a)));
  return true;
}

/// GG(p, 1) for p in [1, 32]: its shape constants.
struct GeneralizedGaussianShape {
  double p;          ///< The exponent, in [1, 32].
  GammaShape gamma;  ///< for a = 1/p
};

/// The shape constants of GG(p, 1).
/// @param p The exponent; in [1, 32], unchecked (1/p must be in [1/32, 1]).
/// @return `{p, gamma_shape(1/p)}`.
DPSELECT_HD DPSELECT_FORCEINLINE GeneralizedGaussianShape generalized_gaussian_shape(double p) {
  return GeneralizedGaussianShape{p, gamma_shape(detail::div_rn(1.0, p))};
}

/// A standard GG(p) variable: density exp(-|z|^p) / (2 Gamma(1 + 1/p)); a sign and
/// exp(ln G / p) U (file comment).
/// @tparam Bits A bit source with `bool next(RandomBlock&)`, such as CoordinateBits.
/// @param bits The bit source; one block for the sign and U, then gamma_plus_one's.
/// @param shape The constants of generalized_gaussian_shape(p).
/// @param z Receives the sample (unchanged when false is returned).
/// @return true on success, false when `bits` ran out.
template <class Bits>
DPSELECT_HD DPSELECT_FORCEINLINE bool standard_generalized_gaussian(Bits& bits, const GeneralizedGaussianShape& shape,
                                                                     double& z) {
  RandomBlock block;
  if (!bits.next(block)) return false;
  const SignedUnit u = signed_unit(block);
  double g = 0.0;
  if (!gamma_plus_one(bits, shape.gamma, g)) return false;
  const double magnitude =
      detail::mul_rn(detail::portable_exp(detail::div_rn(detail::portable_log(g), shape.p)), u.magnitude);
  z = u.negative ? -magnitude : magnitude;
  return true;
}

// ---- One coordinate of a noise vector ------------------------------------------------------

/// The standard variable of a coordinate's noise.
enum class NoiseShape : std::uint8_t {
  laplace,               ///< Standard Laplace: density exp(-|z|) / 2.
  normal,                ///< Standard normal N(0, 1).
  generalized_gaussian   ///< Standard GG(p, 1): density exp(-|z|^p) / (2 Gamma(1 + 1/p)).
};

/// What to add to every coordinate: scale times a standard variable of `shape`. Built on the host
/// by make_coordinate_noise and passed by value to the kernel.
struct CoordinateNoise {
  NoiseShape shape = NoiseShape::laplace;  ///< The standard variable; Laplace by default.
  double scale = 1.0;  ///< The factor applied to it, in the units of the values; 1 by default.
  GeneralizedGaussianShape generalized_gaussian{};  ///< used when shape == generalized_gaussian
};

/// The CoordinateNoise for `scale` times a standard variable of `shape`. Validates nothing: the
/// callers (add_noise) check the scale and p first.
/// @param shape The standard variable.
/// @param scale The noise scale (Laplace b, normal standard deviation, GG sigma); positive and
///        finite for a meaningful release.
/// @param p The GG exponent, in [1, 32]; read only for NoiseShape::generalized_gaussian (other
///        shapes store the constants of p = 2, unused).
/// @return The noise description, to pass by value to standard_noise or noisy_value.
DPSELECT_HD DPSELECT_FORCEINLINE CoordinateNoise make_coordinate_noise(NoiseShape shape, double scale, double p) {
  CoordinateNoise noise;
  noise.shape = shape;
  noise.scale = scale;
  noise.generalized_gaussian = generalized_gaussian_shape(shape == NoiseShape::generalized_gaussian ? p : 2.0);
  return noise;
}

/// The sampler of `Shape` over any bit source: standard_noise_of's body.
/// @tparam Shape The standard variable (`noise.shape` is not read).
/// @tparam Bits A bit source with `bool next(RandomBlock&)`, such as CoordinateBits.
/// @param bits The bit source.
/// @param noise The shape's constants (its `scale` is not applied here).
/// @param z Receives the standard sample (unchanged when false is returned).
/// @return true on success, false when `bits` ran out.
template <NoiseShape Shape, class Bits>
DPSELECT_HD DPSELECT_FORCEINLINE bool standard_noise_from(Bits& bits, const CoordinateNoise& noise, double& z) {
  if constexpr (Shape == NoiseShape::laplace) {
    RandomBlock block;
    if (!bits.next(block)) return false;
    z = noise::laplace(block);
    return true;
  } else if constexpr (Shape == NoiseShape::normal) {
    return standard_normal(bits, z);
  } else {
    static_assert(Shape == NoiseShape::generalized_gaussian, "a NoiseShape value");
    return standard_generalized_gaussian(bits, noise.generalized_gaussian, z);
  }
}

/// The standard (scale 1) noise of coordinate `coordinate` for a shape known at compile time: the
/// same bits as standard_noise for `noise.shape == Shape`, in code that holds that shape's sampler
/// alone (a GPU kernel per shape, kernels/noise_vector.cu).
/// @tparam Shape The standard variable (`noise.shape` is not read).
/// @tparam Fetch A type with `RandomBlock at(std::uint64_t position)`, such as KeyedBlocks.
/// @param fetch Where the blocks come from.
/// @param noise The shape's constants (its `scale` is not applied here).
/// @param coordinate The coordinate; below kCoordinateLimit (2^54), unchecked.
/// @param z Receives the standard sample (unchanged when false is returned).
/// @return true on success, false when the coordinate's 2^10 blocks ran out.
template <NoiseShape Shape, class Fetch>
DPSELECT_HD DPSELECT_FORCEINLINE bool standard_noise_of(Fetch& fetch, const CoordinateNoise& noise,
                                                        std::uint64_t coordinate, double& z) {
  CoordinateBits<Fetch> bits = coordinate_bits(fetch, coordinate);
  return standard_noise_from<Shape>(bits, noise, z);
}

/// Rows [first, end) of a coordinate (CoordinateBits started late and cut short): a sampler that
/// needs more runs out at `end`.
/// @tparam Fetch A type with `RandomBlock at(std::uint64_t position)`.
template <class Fetch>
struct RowsOfCoordinate {
  CoordinateBits<Fetch> bits;  ///< The coordinate's blocks from row `first`.
  std::uint64_t end;  ///< One past the last row it may read, at most kBlocksPerCoordinate.

  /// The coordinate's next block; false (and nothing read) at row `end`.
  /// @param out Receives the block (unchanged when false is returned).
  /// @return true when a block was read, false at row `end` or past the coordinate's 2^10 rows.
  DPSELECT_HD DPSELECT_FORCEINLINE bool next(RandomBlock& out) {
    if (bits.used() == end) return false;
    return bits.next(out);
  }
};

/// The rows of one attempt of `shape` where a rejected attempt leaves the sampler no state, so
/// that the sample of a coordinate whose attempts up to row 2k were all rejected is the sample of
/// its rows from 2k on: the normal's polar attempts (2 rows each). 0 where a sample carries state
/// across its attempts (the generalized Gaussian keeps its first row's uniform; Laplace has none).
/// @param shape The standard variable.
/// @return 2 for NoiseShape::normal, 0 otherwise.
DPSELECT_HD constexpr unsigned independent_attempt_rows(NoiseShape shape) {
  return shape == NoiseShape::normal ? 2u : 0u;
}

/// The standard (scale 1) noise of coordinate `coordinate`: a function of the blocks at positions
/// (j << 54) | coordinate, j < 2^10, only. False when they ran out (see the file comment).
/// @tparam Fetch A type with `RandomBlock at(std::uint64_t position)`, such as KeyedBlocks.
/// @param fetch Where the blocks come from.
/// @param noise The shape (its `scale` is not applied here).
/// @param coordinate The coordinate; below kCoordinateLimit (2^54), unchecked.
/// @param z Receives the standard sample (unchanged when false is returned).
/// @return true on success, false when the coordinate's 2^10 blocks ran out (or `noise.shape` is
///         not a NoiseShape value).
template <class Fetch>
DPSELECT_HD DPSELECT_FORCEINLINE bool standard_noise(Fetch& fetch, const CoordinateNoise& noise,
                                                     std::uint64_t coordinate, double& z) {
  switch (noise.shape) {
    case NoiseShape::laplace:
      return standard_noise_of<NoiseShape::laplace>(fetch, noise, coordinate, z);
    case NoiseShape::normal:
      return standard_noise_of<NoiseShape::normal>(fetch, noise, coordinate, z);
    case NoiseShape::generalized_gaussian:
      return standard_noise_of<NoiseShape::generalized_gaussian>(fetch, noise, coordinate, z);
  }
  return false;
}

/// noisy_value for a shape known at compile time: the same bits for `noise.shape == Shape`.
/// @tparam Shape The standard variable (`noise.shape` is not read).
/// @tparam Fetch A type with `RandomBlock at(std::uint64_t position)`, such as KeyedBlocks.
/// @param fetch Where the blocks come from (the release's key and stream).
/// @param noise The shape's constants and the scale.
/// @param coordinate The coordinate; below kCoordinateLimit (2^54), unchecked.
/// @param value The true value; finite for a meaningful release (not checked).
/// @param out Receives the noisy value (may alias `value`'s source); NaN when false is returned.
/// @return true on success, false when the coordinate's bits ran out.
template <NoiseShape Shape, class Fetch>
DPSELECT_HD DPSELECT_FORCEINLINE bool noisy_value_of(Fetch& fetch, const CoordinateNoise& noise,
                                                     std::uint64_t coordinate, double value, double& out) {
  double z = 0.0;
  if (!standard_noise_of<Shape>(fetch, noise, coordinate, z)) {
    out = detail::double_from_bits(0x7FF8000000000000ull);
    return false;
  }
  out = detail::add_rn(value, detail::mul_rn(noise.scale, z));
  return true;
}

/// noisy_value_of from rows [first_row, end_row) of the coordinate alone: what a pass computes
/// when it holds some rows at hand (a GPU thread's cached rows, kernels/noise_vector.cu) and leaves
/// the samples that need more (a rejection) to a later pass, run side by side. A sampler is a
/// function of the blocks it reads, so where this returns true with first_row 0, `out` is
/// noisy_value_of's, bit for bit; with first_row = 2k > 0 (only for a shape with
/// independent_attempt_rows 2, and a coordinate whose attempts in rows [0, 2k) were all rejected)
/// it is too.
/// @tparam Shape The standard variable (`noise.shape` is not read).
/// @tparam Fetch A type with `RandomBlock at(std::uint64_t position)`.
/// @param fetch Where the blocks come from (the release's key and stream).
/// @param noise The shape's constants and the scale.
/// @param coordinate The coordinate; below kCoordinateLimit (2^54), unchecked.
/// @param first_row The first row the sample reads: 0, or an attempt boundary as above.
/// @param end_row One past the last row it may read (at most 2^10).
/// @param value The true value; finite for a meaningful release (not checked).
/// @param out Receives the noisy value when true is returned (unchanged otherwise).
/// @return true when the sample ended before `end_row`, false when it needs more rows.
template <NoiseShape Shape, class Fetch>
DPSELECT_HD DPSELECT_FORCEINLINE bool noisy_value_in_rows_of(Fetch& fetch, const CoordinateNoise& noise,
                                                             std::uint64_t coordinate, std::uint64_t first_row,
                                                             std::uint64_t end_row, double value, double& out) {
  RowsOfCoordinate<Fetch> bits{CoordinateBits<Fetch>{fetch, coordinate, first_row}, end_row};
  double z = 0.0;
  if (!standard_noise_from<Shape>(bits, noise, z)) return false;
  out = detail::add_rn(value, detail::mul_rn(noise.scale, z));
  return true;
}

/// value + scale * (standard noise of `coordinate`), rounded once per operation. On running out of
/// bits: false, and `out` is NaN (never the unnoised value).
///
/// No privacy is accounted here: the caller charges the release and draws its fresh stream
/// (add_noise does both; see noise_vector.hpp for the guarantee and the floating-point caveat).
/// @tparam Fetch A type with `RandomBlock at(std::uint64_t position)`, such as KeyedBlocks.
/// @param fetch Where the blocks come from (the release's key and stream).
/// @param noise The shape and scale.
/// @param coordinate The coordinate; below kCoordinateLimit (2^54), unchecked.
/// @param value The true value; finite for a meaningful release (not checked).
/// @param out Receives the noisy value (may alias `value`'s source); NaN when false is returned.
/// @return true on success, false when the coordinate's bits ran out (or `noise.shape` is not a
///         NoiseShape value).
template <class Fetch>
DPSELECT_HD DPSELECT_FORCEINLINE bool noisy_value(Fetch& fetch, const CoordinateNoise& noise, std::uint64_t coordinate,
                                                  double value, double& out) {
  switch (noise.shape) {
    case NoiseShape::laplace:
      return noisy_value_of<NoiseShape::laplace>(fetch, noise, coordinate, value, out);
    case NoiseShape::normal:
      return noisy_value_of<NoiseShape::normal>(fetch, noise, coordinate, value, out);
    case NoiseShape::generalized_gaussian:
      return noisy_value_of<NoiseShape::generalized_gaussian>(fetch, noise, coordinate, value, out);
  }
  out = detail::double_from_bits(0x7FF8000000000000ull);
  return false;
}

}  // namespace dpselect::continuous
