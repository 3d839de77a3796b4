// SPDX-License-Identifier: Apache-2.0
// The quad fetch of the ChaCha20 noise-vector kernel (random/chacha20_coordinate_quads.hpp), run on
// the CPU: every block it returns is chacha20_random_block's, cached row or not, and the noisy
// values it gives are those of the one-block-at-a-time fetch for every noise shape, including
// coordinates whose samples read past the cached rows; every sample reads at least the
// rows_always_read rows a quad caches for its shape; and the kernels' first try from the cached
// rows alone (noisy_value_in_rows_of) gives the same bits wherever the sample ends there, and
// hands on exactly the samples that read further, and a normal resumed after it, one attempt at a
// time, gives the bits of its sample from row 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>

#include "dpselect/chacha20.hpp"
#include "dpselect/continuous_noise.hpp"
#include "random/chacha20_coordinate_quads.hpp"

namespace dpselect {
namespace {

using continuous::ChaChaCoordinateQuad;
using continuous::ChaChaQuadCoordinate;
using continuous::CoordinateNoise;
using continuous::NoiseShape;

constexpr std::uint64_t kStream = 0x0123456789ABCDEFull;

bool same_bits(const RandomBlock& a, const RandomBlock& b) {
  return std::equal(std::begin(a.word), std::end(a.word), std::begin(b.word));
}

// Forwards to `inner` and records the rows asked for (continuous_noise.hpp's position layout).
template <class Inner>
struct RowRecorder {
  Inner inner;
  std::uint64_t rows_read = 0;
  RandomBlock at(std::uint64_t position) {
    const std::uint64_t row = position >> continuous::kCoordinateColumnBits;
    rows_read = std::max(rows_read, row + 1);
    return inner.at(position);
  }
};

template <unsigned CachedRows>
void expect_lane_blocks(const ChaChaKey& key, std::uint64_t quad, unsigned lane) {
  const ChaChaCoordinateQuad<CachedRows> blocks(key, kStream, quad);
  const ChaChaQuadCoordinate<CachedRows> fetch{blocks, lane};
  const std::uint64_t coordinate = quad * continuous::kCoordinatesPerQuad + lane;
  for (const std::uint64_t row : {0, 1, 2, 3, 4, 5, 100, 1023}) {
    const std::uint64_t position = continuous::coordinate_position(coordinate, row);
    EXPECT_TRUE(same_bits(fetch.at(position), chacha20_random_block(key, kStream, position)))
        << "cached rows " << CachedRows << " lane " << lane << " quad " << quad << " row " << row;
  }
}

template <unsigned CachedRows>
void expect_quad_blocks(const ChaChaKey& key) {
  for (const std::uint64_t quad : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{12345},
                                   continuous::kCoordinateLimit / continuous::kCoordinatesPerQuad - 1}) {
    for (unsigned lane = 0; lane < continuous::kCoordinatesPerQuad; ++lane) expect_lane_blocks<CachedRows>(key, quad, lane);
  }
}

TEST(ChaCha20CoordinateQuads, EveryRowIsTheRandomBlockAtItsPosition) {
  const ChaChaKey key = ChaChaKey::from_seed(11);
  expect_quad_blocks<1>(key);
  expect_quad_blocks<2>(key);
  expect_quad_blocks<4>(key);
}

// Noisy value of coordinate 4 quad + lane through the quad fetch, with the rows it read: the
// sampler of the shape known at compile time, as the kernel of that shape runs it.
template <unsigned CachedRows>
bool quad_noisy_value(const ChaChaCoordinateQuad<CachedRows>& blocks, unsigned lane, const CoordinateNoise& noise,
                      std::uint64_t coordinate, double value, double& out, std::uint64_t& rows_read) {
  RowRecorder<ChaChaQuadCoordinate<CachedRows>> fetch{{blocks, lane}};
  bool ok = false;
  switch (noise.shape) {
    case NoiseShape::laplace:
      ok = continuous::noisy_value_of<NoiseShape::laplace>(fetch, noise, coordinate, value, out);
      break;
    case NoiseShape::normal:
      ok = continuous::noisy_value_of<NoiseShape::normal>(fetch, noise, coordinate, value, out);
      break;
    case NoiseShape::generalized_gaussian:
      ok = continuous::noisy_value_of<NoiseShape::generalized_gaussian>(fetch, noise, coordinate, value, out);
      break;
  }
  rows_read = fetch.rows_read;
  return ok;
}

// The first try of coordinate 4 quad + lane from the quad's cached rows alone, as the kernels run it.
template <unsigned CachedRows>
bool quad_first_try(const ChaChaCoordinateQuad<CachedRows>& blocks, unsigned lane, const CoordinateNoise& noise,
                    std::uint64_t coordinate, double value, double& out) {
  ChaChaQuadCoordinate<CachedRows> fetch{blocks, lane};
  switch (noise.shape) {
    case NoiseShape::laplace:
      return continuous::noisy_value_in_rows_of<NoiseShape::laplace>(fetch, noise, coordinate, 0, CachedRows, value,
                                                                     out);
    case NoiseShape::normal:
      return continuous::noisy_value_in_rows_of<NoiseShape::normal>(fetch, noise, coordinate, 0, CachedRows, value,
                                                                    out);
    case NoiseShape::generalized_gaussian:
      return continuous::noisy_value_in_rows_of<NoiseShape::generalized_gaussian>(fetch, noise, coordinate, 0,
                                                                                  CachedRows, value, out);
  }
  return false;
}

// Coordinates [0, 4 quads) of `noise` through ChaChaQuadCoordinate<CachedRows> against KeyedBlocks
// (the run-time shape dispatch of noisy_value).
template <unsigned CachedRows>
void expect_same_noisy_values(const CoordinateNoise& noise, std::uint64_t quads) {
  const RandomKey key = RandomKey::from_seed(2027, Generator::chacha20);
  const continuous::KeyedBlocks keyed{key, kStream};
  std::uint64_t fewest_rows = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t past_cache = 0;
  std::uint64_t resumed_normals = 0;
  for (std::uint64_t quad = 0; quad < quads; ++quad) {
    const ChaChaCoordinateQuad<CachedRows> blocks(key.chacha, kStream, quad);
    for (unsigned lane = 0; lane < continuous::kCoordinatesPerQuad; ++lane) {
      const std::uint64_t coordinate = quad * continuous::kCoordinatesPerQuad + lane;
      const double value = static_cast<double>(coordinate % 97) * 0.25 - 12.0;
      double expected = 0.0;
      double got = 0.0;
      std::uint64_t rows_read = 0;
      const bool expected_ok = continuous::noisy_value(keyed, noise, coordinate, value, expected);
      const bool ok = quad_noisy_value<CachedRows>(blocks, lane, noise, coordinate, value, got, rows_read);
      ASSERT_TRUE(expected_ok);
      ASSERT_EQ(ok, expected_ok) << coordinate;
      ASSERT_EQ(std::bit_cast<std::uint64_t>(got), std::bit_cast<std::uint64_t>(expected))
          << "coordinate " << coordinate;
      fewest_rows = std::min(fewest_rows, rows_read);
      past_cache += rows_read > CachedRows;
      // The first try: the same bits where the sample ends within the cached rows, and handed on
      // (out untouched) exactly where it reads further.
      double first = -1.0;
      const bool ended = quad_first_try<CachedRows>(blocks, lane, noise, coordinate, value, first);
      ASSERT_EQ(ended, rows_read <= CachedRows) << "coordinate " << coordinate << " rows read " << rows_read;
      ASSERT_EQ(std::bit_cast<std::uint64_t>(first), std::bit_cast<std::uint64_t>(ended ? expected : -1.0))
          << "coordinate " << coordinate;
      // A normal handed on resumes after its first try, one polar attempt at a time, as the
      // kernels' retry rounds run it: the same bits as the sample from row 0.
      constexpr unsigned kAttempt = continuous::independent_attempt_rows(NoiseShape::normal);
      if (!ended && noise.shape == NoiseShape::normal && CachedRows % kAttempt == 0) {
        double resumed = 0.0;
        std::uint64_t row = CachedRows;
        while (!continuous::noisy_value_in_rows_of<NoiseShape::normal>(keyed, noise, coordinate, row, row + kAttempt,
                                                                       value, resumed)) {
          row += kAttempt;
          ASSERT_LT(row, continuous::kBlocksPerCoordinate);
        }
        ASSERT_EQ(row + kAttempt, rows_read) << "coordinate " << coordinate;
        ASSERT_EQ(std::bit_cast<std::uint64_t>(resumed), std::bit_cast<std::uint64_t>(expected))
            << "coordinate " << coordinate;
        ++resumed_normals;
      }
    }
  }
  // Every sample reads the rows a quad caches for its shape, and rejections read past them.
  EXPECT_EQ(fewest_rows, continuous::rows_always_read(noise.shape));
  if (noise.shape != NoiseShape::laplace) EXPECT_GT(past_cache, 0u);
  if (noise.shape == NoiseShape::normal && CachedRows % 2 == 0) EXPECT_EQ(resumed_normals, past_cache);
}

TEST(ChaCha20CoordinateQuads, NoisyValuesEqualTheOneBlockFetch) {
  const CoordinateNoise laplace = continuous::make_coordinate_noise(NoiseShape::laplace, 1.5, 2.0);
  const CoordinateNoise normal = continuous::make_coordinate_noise(NoiseShape::normal, 0.75, 2.0);
  const CoordinateNoise generalized = continuous::make_coordinate_noise(NoiseShape::generalized_gaussian, 2.0, 1.5);
  const CoordinateNoise steep = continuous::make_coordinate_noise(NoiseShape::generalized_gaussian, 2.0, 32.0);
  // The cache the kernel uses for each shape, and caches of other sizes (the bits do not depend on it).
  expect_same_noisy_values<1>(laplace, 1000);
  expect_same_noisy_values<2>(normal, 1000);
  expect_same_noisy_values<4>(generalized, 1000);
  expect_same_noisy_values<4>(steep, 1000);
  expect_same_noisy_values<1>(generalized, 300);
  expect_same_noisy_values<2>(laplace, 300);
}

}  // namespace
}  // namespace dpselect
