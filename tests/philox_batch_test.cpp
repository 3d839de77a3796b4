// SPDX-License-Identifier: Apache-2.0
// The batched Philox4x32-10 of philox_batch.hpp (SIMD lanes: SSE2, and AVX2 where the CPU has
// it) against philox_block, which philox_test.cpp and the cuRAND layout test pin.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "dpselect/detail/philox_batch.hpp"
#include "dpselect/philox.hpp"
#include "dpselect/random_key.hpp"

namespace dpselect::detail {
namespace {

TEST(PhiloxBatch, EveryImplementationGivesTheScalarBlocks) {
  // Aligned and unaligned starts, across the 2^32 carry into counter word 1, near 2^64.
  std::vector<std::uint64_t> starts = {0, 1, 3, 5, 8, 13, 1000, (std::uint64_t{1} << 32) - 8,
                                       (std::uint64_t{1} << 32) - 3, (std::uint64_t{1} << 63) + 7,
                                       ~std::uint64_t{0} - 7};
  std::mt19937_64 rng(99);
  for (int i = 0; i < 200; ++i) starts.push_back(rng());
  for (const std::uint64_t first_position : starts) {
    const PhiloxKey key = PhiloxKey::from_seed(rng());
    const std::uint64_t stream = rng();
    for (const PhiloxBatchCode code : {PhiloxBatchCode::scalar, PhiloxBatchCode::sse2, PhiloxBatchCode::avx2}) {
      RandomBlock out[kPhiloxBatchBlocks] = {};
      if (!philox_blocks_with(code, key, stream, first_position, out)) continue;  // not in this build/CPU
      for (unsigned j = 0; j < kPhiloxBatchBlocks; ++j) {
        const RandomBlock want = philox_block(key, stream, first_position + j);
        for (int w = 0; w < 4; ++w) {
          ASSERT_EQ(out[j].word[w], want.word[w]) << "code " << static_cast<int>(code) << " first position "
                                                  << first_position << " block " << j << " word " << w;
        }
      }
    }
    RandomBlock dispatched[kPhiloxBatchBlocks];
    philox_blocks(key, stream, first_position, dispatched);
    for (unsigned j = 0; j < kPhiloxBatchBlocks; ++j) {
      const RandomBlock want = philox_block(key, stream, first_position + j);
      for (int w = 0; w < 4; ++w) ASSERT_EQ(dispatched[j].word[w], want.word[w]);
    }
  }
}

TEST(PhiloxBatch, SequentialBlocksMatchRandomBlockOverLongRuns) {
  const RandomKey key = RandomKey::from_seed(0xBA7C4, Generator::philox);
  for (const std::uint64_t start : {std::uint64_t{0}, std::uint64_t{5}, std::uint64_t{31},
                                    (std::uint64_t{1} << 32) - 9}) {
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
