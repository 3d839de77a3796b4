// SPDX-License-Identifier: Apache-2.0
// The batched ChaCha20 of chacha20_batch.hpp (SIMD lanes: SSE2, and AVX2 where the CPU has it)
// against chacha20_stream_block, which the RFC 8439 vectors of chacha20_test.cpp pin.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "dpselect/chacha20.hpp"
#include "dpselect/detail/chacha20_batch.hpp"
#include "dpselect/random_key.hpp"

namespace dpselect::detail {
namespace {

// Batch starts: aligned and not (odd, not a multiple of 4 or 8), near 0, across the 2^32
// boundary where the RFC 8439 block counter carries into nonce word 0, and at the top of the
// 64-bit range of block numbers that positions reach.
std::vector<std::uint64_t> batch_starts() {
  std::vector<std::uint64_t> starts = {0, 1, 3, 4, 5, 7, 8, 13, 1000, 4093,
                                       (std::uint64_t{1} << 32) - 8, (std::uint64_t{1} << 32) - 5,
                                       (std::uint64_t{1} << 32) - 1, (std::uint64_t{1} << 32) + 3,
                                       (std::uint64_t{1} << 61) - 3, (std::uint64_t{1} << 62) - 8};
  std::mt19937_64 rng(20240601);
  for (int i = 0; i < 200; ++i) starts.push_back(rng() >> 2);
  return starts;
}

// Whether two batches hold the same words; the first difference names its block and word.
::testing::AssertionResult same_batch(const std::uint32_t (&got)[kChaChaBatchBlocks][16],
                                      const std::uint32_t (&want)[kChaChaBatchBlocks][16]) {
  for (unsigned j = 0; j < kChaChaBatchBlocks; ++j) {
    for (int w = 0; w < 16; ++w) {
      if (got[j][w] != want[j][w]) {
        return ::testing::AssertionFailure() << "block " << j << " word " << w << ": " << got[j][w] << " != "
                                             << want[j][w];
      }
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(ChaCha20Batch, EveryImplementationGivesTheScalarBlocks) {
  std::mt19937_64 rng(7);
  int avx2_checked = 0;
  for (const std::uint64_t first_block : batch_starts()) {
    const ChaChaKey key = ChaChaKey::from_seed(rng());
    const std::uint64_t stream = rng();
    std::uint32_t expected[kChaChaBatchBlocks][16];
    for (unsigned j = 0; j < kChaChaBatchBlocks; ++j) chacha20_stream_block(key, stream, first_block + j, expected[j]);
    for (const ChaChaBatchCode code : {ChaChaBatchCode::scalar, ChaChaBatchCode::sse2, ChaChaBatchCode::avx2}) {
      std::uint32_t out[kChaChaBatchBlocks][16] = {};
      if (!chacha20_stream_blocks_with(code, key, stream, first_block, out)) continue;  // not in this build/CPU
      if (code == ChaChaBatchCode::avx2) ++avx2_checked;
      ASSERT_TRUE(same_batch(out, expected)) << "code " << static_cast<int>(code) << " first block " << first_block;
    }
    std::uint32_t dispatched[kChaChaBatchBlocks][16];
    chacha20_stream_blocks(key, stream, first_block, dispatched);
    ASSERT_TRUE(same_batch(dispatched, expected));
  }
  if (avx2_checked == 0) GTEST_LOG_(INFO) << "no AVX2 on this CPU: the AVX2 blocks were not checked";
}

// One block of each of eight streams (streams that differ in either word, consecutive streams,
// the same stream twice), at block numbers that differ per lane, across the counter's 2^32 carry.
TEST(ChaCha20Batch, BlocksOfStreamsGiveEachLanesScalarBlock) {
  std::mt19937_64 rng(11);
  int avx2_checked = 0;
  const std::vector<std::uint64_t> starts = batch_starts();
  for (std::size_t trial = 0; trial < starts.size(); ++trial) {
    const ChaChaKey key = ChaChaKey::from_seed(rng());
    std::uint64_t streams[kChaChaBatchBlocks];
    std::uint64_t blocks[kChaChaBatchBlocks];
    const std::uint64_t first_stream = trial % 3 == 0 ? (std::uint64_t{1} << 32) - 4 : rng();
    for (unsigned j = 0; j < kChaChaBatchBlocks; ++j) {
      streams[j] = trial % 2 == 0 ? first_stream + j : rng();
      blocks[j] = trial % 4 == 1 ? starts[trial] : starts[(trial + j) % starts.size()] + j;
    }
    streams[7] = streams[6];  // the same stream in two lanes
    std::uint32_t expected[kChaChaBatchBlocks][16];
    for (unsigned j = 0; j < kChaChaBatchBlocks; ++j) chacha20_stream_block(key, streams[j], blocks[j], expected[j]);
    for (const ChaChaBatchCode code : {ChaChaBatchCode::scalar, ChaChaBatchCode::sse2, ChaChaBatchCode::avx2}) {
      std::uint32_t out[kChaChaBatchBlocks][16] = {};
      if (!chacha20_blocks_of_streams_with(code, key, streams, blocks, out)) continue;  // not in this build/CPU
      if (code == ChaChaBatchCode::avx2) ++avx2_checked;
      ASSERT_TRUE(same_batch(out, expected)) << "code " << static_cast<int>(code) << " trial " << trial;
    }
    std::uint32_t dispatched[kChaChaBatchBlocks][16];
    chacha20_blocks_of_streams(key, streams, blocks, dispatched);
    ASSERT_TRUE(same_batch(dispatched, expected));
  }
  if (avx2_checked == 0) GTEST_LOG_(INFO) << "no AVX2 on this CPU: the AVX2 blocks were not checked";
}

// SequentialBlocks serves every position of a long run, and of runs starting at unaligned
// positions, from its batches: the same bits as random_block.
TEST(ChaCha20Batch, SequentialBlocksMatchRandomBlockOverLongRuns) {
  const RandomKey key = RandomKey::from_seed(0xBA7C4, Generator::chacha20);
  for (const std::uint64_t start : {std::uint64_t{0}, std::uint64_t{5}, std::uint64_t{31}, std::uint64_t{33},
                                    (std::uint64_t{1} << 34) - 7}) {
    SequentialBlocks blocks(key, 5);
    for (std::uint64_t position = start; position < start + 300; ++position) {
      const RandomBlock got = blocks.at(position);
      const RandomBlock want = random_block(key, 5, position);
      for (int w = 0; w < 4; ++w) ASSERT_EQ(got.word[w], want.word[w]) << "position " << position;
    }
  }
}

}  // namespace
}  // namespace dpselect::detail
