// SPDX-License-Identifier: Apache-2.0
// The four coordinates of a noise vector that share ChaCha20 blocks, read as one unit: what lets a
// GPU thread compute one 64-byte block for four coordinates instead of one per coordinate
// (kernels/noise_vector.cu). Plain C++, so the CPU tests run the same code.
//
// Block j of coordinate i sits at position (j << 54) | i (continuous_noise.hpp), and position p is
// quarter p % 4 of ChaCha20 block p / 4 (chacha20.hpp). So for every row j the coordinates
// 4q .. 4q+3 (a "quad") read the four quarters of one block, (j << 52) | q, coordinate 4q + l
// quarter l. A quad caches its first rows, computed once; a coordinate that reads further (a
// rejection, continuous_noise.hpp) computes those blocks itself. Either way the fetch returns
// exactly chacha20_random_block(key, stream, position): the samplers, and so the bits, are those
// of every other path.
#pragma once

#include <cstdint>

#include "dpselect/chacha20.hpp"
#include "dpselect/continuous_noise.hpp"
#include "dpselect/detail/host_device.hpp"

namespace dpselect::continuous {

inline constexpr std::uint64_t kCoordinatesPerQuad = 4;

// Rows every sample of `shape` reads whatever its bits (continuous_noise.hpp): Laplace one block;
// the normal one polar attempt (2); the generalized Gaussian its uniform, one polar attempt and
// the Marsaglia-Tsang uniform (4). Caching more would hold registers for rows most quads never read.
DPSELECT_HD constexpr unsigned rows_always_read(NoiseShape shape) {
  switch (shape) {
    case NoiseShape::laplace: return 1;
    case NoiseShape::normal: return 2;
    case NoiseShape::generalized_gaussian: return 4;
  }
  return 1;
}

// Whether a sample of `shape` can read more than rows_always_read rows: Laplace reads exactly one
// block; the normal and the generalized Gaussian reject attempts and draw again.
DPSELECT_HD constexpr bool samples_may_read_more(NoiseShape shape) { return shape != NoiseShape::laplace; }

// Rows 0 .. CachedRows - 1 of quad `quad` (coordinates 4 quad .. 4 quad + 3), as whole blocks.
template <unsigned CachedRows>
struct ChaChaCoordinateQuad {
  ChaChaKey key;
  std::uint64_t stream;
  std::uint32_t rows[CachedRows][16];

  DPSELECT_HD DPSELECT_FORCEINLINE ChaChaCoordinateQuad(const ChaChaKey& quad_key, std::uint64_t quad_stream,
                                                        std::uint64_t quad)
      : key(quad_key), stream(quad_stream) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (unsigned row = 0; row < CachedRows; ++row) {
      chacha20_stream_block(key, stream, coordinate_position(quad * kCoordinatesPerQuad, row) / 4, rows[row]);
    }
  }
};

// A block of a coordinate beyond its quad's cached rows (a rejection's retry): chacha20_random_block.
// Out of line on the GPU: inlined, its 20 rounds were copied into every read of every sampler of
// every lane (about 30,000 SASS instructions per kernel where the samplers need a few thousand),
// for reads that few coordinates make.
#if defined(__CUDACC__)
__host__ __device__ __noinline__
#else
inline
#endif
    RandomBlock uncached_coordinate_block(ChaChaKey key, std::uint64_t stream, std::uint64_t position) {
  return chacha20_random_block(key, stream, position);
}

// The Fetch of coordinate 4 quad + lane (continuous::noisy_value): asked only for that coordinate's
// positions, all of which are `lane` modulo 4, so every block is read at quarter `lane`. The lane is
// a run-time value (chacha20_quarter selects the words, so they stay in registers): one copy of
// the samplers serves the four coordinates of a quad.
template <unsigned CachedRows>
struct ChaChaQuadCoordinate {
  const ChaChaCoordinateQuad<CachedRows>& quad;
  unsigned lane;  // < kCoordinatesPerQuad

  DPSELECT_HD DPSELECT_FORCEINLINE RandomBlock at(std::uint64_t position) const {
    return from_row<0>(position >> kCoordinateColumnBits, position);
  }

 private:
  // Row `row` compared with each cached row in turn (a template recursion, so every index is a
  // constant: a row number used as an index would put the cache in local memory on a GPU).
  template <unsigned Cached>
  DPSELECT_HD DPSELECT_FORCEINLINE RandomBlock from_row(std::uint64_t row, std::uint64_t position) const {
    if constexpr (Cached < CachedRows) {
      if (row == Cached) return chacha20_quarter(quad.rows[Cached], lane);
      return from_row<Cached + 1>(row, position);
    } else {
      return uncached_coordinate_block(quad.key, quad.stream, position);
    }
  }
};

}  // namespace dpselect::continuous
