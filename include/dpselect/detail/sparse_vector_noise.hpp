// The noise of the sparse vector technique, shared by the host and the GPU's batched find-first
// so that both compare exactly the same doubles (see sparse_vector.hpp for the positions).
#pragma once

#include <cstdint>

#include "dpselect/detail/host_device.hpp"
#include "dpselect/noise.hpp"
#include "dpselect/random_key.hpp"

namespace dpselect::detail {

// Query i takes its noise from random block i, its NumericSparse value from block 2^58 + i, the
// threshold of epoch j from block 2^59 + j. Queries stay below 2^58.
inline constexpr std::uint64_t kSparseAnswerPositionOffset = std::uint64_t{1} << 58;
inline constexpr std::uint64_t kSparseThresholdPositionOffset = std::uint64_t{1} << 59;
inline constexpr std::uint64_t kSparseQueryLimit = kSparseAnswerPositionOffset;

// center + scale * Lap(1) from random block `position` of `stream`, with one rounding (fma).
DPSELECT_HD DPSELECT_FORCEINLINE double sparse_vector_laplace(const RandomKey& key, std::uint64_t stream,
                                                              std::uint64_t position, double scale, double center) {
  return fma_rn(scale, noise::laplace(random_block(key, stream, position)), center);
}

// What deciding "above" for query i needs besides its value.
struct SparseQueryNoise {
  RandomKey key;
  std::uint64_t stream = 0;
  double query_scale = 0.0;

  DPSELECT_HD DPSELECT_FORCEINLINE bool above(std::uint64_t index, double value, double noisy_threshold) const {
    return sparse_vector_laplace(key, stream, index, query_scale, value) >= noisy_threshold;
  }
};

}  // namespace dpselect::detail
