// SPDX-License-Identifier: Apache-2.0
// The noise of the sparse vector technique, shared by the host and the GPU's batched find-first
// so that both compare exactly the same doubles (see sparse_vector.hpp for the positions).
#pragma once

#include <cstdint>

#include "dpselect/detail/host_device.hpp"
#include "dpselect/noise.hpp"
#include "dpselect/random_key.hpp"

namespace dpselect::detail {

// Query i takes its noise from random block i, the threshold of epoch j from block 2^59 + j, and
// the j-th NumericSparse value (j = 0, 1, ...: the "above" answers in order) from the 2^20 blocks
// [2^60 + j 2^20, 2^60 + (j + 1) 2^20) (secure Laplace, secure_noise.hpp). Queries stay below 2^58;
// blocks [2^58, 2^59) are not read.
// The ranges are disjoint: queries < 2^58 <= 2^59 <= thresholds < 2^59 + 2^58 < 2^60 <= values,
// and j < 2^43 keeps the values below 2^60 + 2^63 (no wrap).
inline constexpr std::uint64_t kSparseAnswerPositionOffset = std::uint64_t{1} << 58;
inline constexpr std::uint64_t kSparseThresholdPositionOffset = std::uint64_t{1} << 59;
inline constexpr std::uint64_t kSparseQueryLimit = kSparseAnswerPositionOffset;
inline constexpr std::uint64_t kSparseSecureAnswerPositionOffset = std::uint64_t{1} << 60;
inline constexpr std::uint64_t kSparseNumericAnswerLimit = std::uint64_t{1} << 43;

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
    return above_given_block(random_block(key, stream, index), value, noisy_threshold);
  }
  // The same decision from query i's block, random_block(key, stream, i), computed by the caller
  // (the GPU computes one ChaCha20 block for four queries).
  DPSELECT_HD DPSELECT_FORCEINLINE bool above_given_block(const RandomBlock& block, double value,
                                                          double noisy_threshold) const {
    return fma_rn(query_scale, noise::laplace(block), value) >= noisy_threshold;
  }
};

}  // namespace dpselect::detail
