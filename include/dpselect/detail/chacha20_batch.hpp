// SPDX-License-Identifier: Apache-2.0
// Several consecutive ChaCha20 blocks of one stream at once, for CPU loops that read positions
// in increasing order (detail::SequentialBlocks in random_key.hpp). The blocks are exactly
// chacha20_stream_block's (chacha20.hpp); only the way they are computed differs: the lanes of
// SIMD registers hold the same state word of consecutive blocks, so the 20 rounds run on all
// blocks at once (SSE2 on any x86-64, AVX2 where the CPU has it, chosen at run time).
// Host code only; defined in host/random/chacha20_batch.cpp.
#pragma once

#include <cstdint>

#include "dpselect/chacha20.hpp"

namespace dpselect::detail {

inline constexpr unsigned kChaChaBatchBlocks = 8;

// out[j] = chacha20_stream_block(key, stream, first_block + j) for j < kChaChaBatchBlocks (the
// block numbers are consecutive 64-bit integers; the batch may cross a 2^32 boundary of the
// RFC 8439 block counter, which carries into nonce word 0 as in chacha20_stream_block).
void chacha20_stream_blocks(const ChaChaKey& key, std::uint64_t stream, std::uint64_t first_block,
                            std::uint32_t (&out)[kChaChaBatchBlocks][16]);

// out[j] = chacha20_stream_block(key, streams[j], blocks[j]) for j < kChaChaBatchBlocks: one block
// of each of several releases at once (the same position of consecutive streams, for batches of
// releases over a few candidates each, host/rows/small_rows.cpp). Same code as above; the lanes
// differ in state words 14 and 15 (the stream) as well as 12 and 13 (the block number).
void chacha20_blocks_of_streams(const ChaChaKey& key, const std::uint64_t (&streams)[kChaChaBatchBlocks],
                                const std::uint64_t (&blocks)[kChaChaBatchBlocks],
                                std::uint32_t (&out)[kChaChaBatchBlocks][16]);

// The same computed by the portable (one block at a time) code, the SSE2 code and the AVX2
// code, for tests that check each against chacha20_stream_block. Returns false (and leaves `out`
// alone) when this build or CPU lacks that implementation.
enum class ChaChaBatchCode : std::uint8_t { scalar, sse2, avx2 };
bool chacha20_stream_blocks_with(ChaChaBatchCode code, const ChaChaKey& key, std::uint64_t stream,
                                 std::uint64_t first_block, std::uint32_t (&out)[kChaChaBatchBlocks][16]);
bool chacha20_blocks_of_streams_with(ChaChaBatchCode code, const ChaChaKey& key,
                                     const std::uint64_t (&streams)[kChaChaBatchBlocks],
                                     const std::uint64_t (&blocks)[kChaChaBatchBlocks],
                                     std::uint32_t (&out)[kChaChaBatchBlocks][16]);

}  // namespace dpselect::detail
