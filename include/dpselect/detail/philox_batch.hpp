// SPDX-License-Identifier: Apache-2.0
// Several consecutive Philox4x32-10 blocks of one stream at once, for CPU loops that read
// positions in increasing order (detail::SequentialBlocks in random_key.hpp). The blocks are
// exactly philox_block's (philox.hpp, cuRAND's layout); SIMD lanes hold the same counter word of
// consecutive positions, with the 32 x 32 -> 64-bit products done by the unsigned widening
// multiply (SSE2 on any x86-64, AVX2 where the CPU has it, chosen at run time).
// Host code only; defined in host/random/philox_batch.cpp.
#pragma once

#include <cstdint>

#include "dpselect/philox.hpp"

namespace dpselect::detail {

inline constexpr unsigned kPhiloxBatchBlocks = 8;

// out[j] = philox_block(key, stream, first_position + j) for j < kPhiloxBatchBlocks (consecutive
// 64-bit positions; the batch may cross a 2^32 boundary, where the carry reaches counter word 1).
void philox_blocks(PhiloxKey key, std::uint64_t stream, std::uint64_t first_position,
                   RandomBlock (&out)[kPhiloxBatchBlocks]);

// The same by the portable (one block at a time) code, the SSE2 code or the AVX2 code, for tests
// that check each against philox_block. Returns false (and leaves `out` alone) when this build
// or CPU lacks that implementation.
enum class PhiloxBatchCode : std::uint8_t { scalar, sse2, avx2 };
bool philox_blocks_with(PhiloxBatchCode code, PhiloxKey key, std::uint64_t stream, std::uint64_t first_position,
                        RandomBlock (&out)[kPhiloxBatchBlocks]);

}  // namespace dpselect::detail
