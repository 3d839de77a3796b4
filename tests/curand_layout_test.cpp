// SPDX-License-Identifier: Apache-2.0
// Our Philox against cuRAND itself. cuRAND's host generator runs without a GPU; its output word i
// is word (i mod 4) of Philox(counter = (b / 65536, 0, b mod 65536, 0), key = seed) with b = i / 4
// (it interleaves 65536 subsequences). In the device-API layout (docs/design.md, "Randomness") that
// is word 4*(b / 65536) + i mod 4 of stream b mod 65536, so this checks our layout function against
// cuRAND over many streams and positions.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "dpselect/philox.hpp"

#if DPSELECT_HAVE_CURAND
#include <curand.h>
#endif

namespace {

TEST(CurandLayout, HostGeneratorMatchesDeviceLayout) {
#if !DPSELECT_HAVE_CURAND
  GTEST_SKIP() << "cuRAND not found at configure time";
#else
  // 2^20 words = 4 blocks in each of 65536 streams; enough to cross the interleave boundary.
  constexpr std::size_t kWords = std::size_t{1} << 20;
  for (const std::uint64_t seed : {0ULL, 42ULL, 0x0123456789abcdefULL}) {
    curandGenerator_t generator;
    ASSERT_EQ(curandCreateGeneratorHost(&generator, CURAND_RNG_PSEUDO_PHILOX4_32_10),
              CURAND_STATUS_SUCCESS);
    ASSERT_EQ(curandSetPseudoRandomGeneratorSeed(generator, seed), CURAND_STATUS_SUCCESS);
    std::vector<unsigned int> words(kWords);
    ASSERT_EQ(curandGenerate(generator, words.data(), kWords), CURAND_STATUS_SUCCESS);
    curandDestroyGenerator(generator);
    const dpselect::PhiloxKey key = dpselect::PhiloxKey::from_seed(seed);
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < kWords; ++i) {
      const std::uint64_t block = i / 4;
      const std::uint64_t stream = block % 65536;
      const std::uint64_t word = 4 * (block / 65536) + i % 4;
      mismatches += dpselect::philox_word(key, stream, word) != words[i];
    }
    EXPECT_EQ(mismatches, 0u) << "seed " << seed;
  }
#endif
}

}  // namespace
