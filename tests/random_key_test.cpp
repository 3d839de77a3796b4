// SPDX-License-Identifier: Apache-2.0
// The generator behind a context's key: ChaCha20 by default, Philox by explicit choice, the same
// bits through every access path.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dpselect/context.hpp"
#include "dpselect/detail/release_access.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/select.hpp"
#include "dpselect/sparse_vector.hpp"

namespace dpselect {
namespace {

bool same_bits(const RandomBlock& a, const RandomBlock& b) {
  for (int w = 0; w < 4; ++w) {
    if (a.word[w] != b.word[w]) return false;
  }
  return true;
}

TEST(RandomKey, EveryContextIsChaCha20UnlessPhiloxIsAskedFor) {
  EXPECT_EQ(Context().generator(), Generator::chacha20);
  EXPECT_EQ(Context::from_os_entropy().generator(), Generator::chacha20);
  EXPECT_EQ(Context::with_fixed_seed(3).generator(), Generator::chacha20);
  EXPECT_EQ(Context::from_os_entropy(Generator::philox).generator(), Generator::philox);
  EXPECT_EQ(Context::with_fixed_seed(3, Generator::philox).generator(), Generator::philox);
  EXPECT_EQ(Context::with_shared_key(ChaChaKey::from_seed(1), 0).generator(), Generator::chacha20);
  EXPECT_EQ(Context::with_shared_key(PhiloxKey::from_seed(1), 0).generator(), Generator::philox);
}

TEST(RandomKey, RandomBlockIsTheChosenGeneratorsBlock) {
  const RandomKey chacha = RandomKey::from_seed(11, Generator::chacha20);
  const RandomKey philox = RandomKey::from_seed(11, Generator::philox);
  EXPECT_EQ(chacha.chacha, ChaChaKey::from_seed(11));
  EXPECT_EQ(philox.philox, PhiloxKey::from_seed(11));
  for (const std::uint64_t position : {std::uint64_t{0}, std::uint64_t{5}, std::uint64_t{1} << 62,
                                       ~std::uint64_t{0}}) {
    EXPECT_TRUE(same_bits(random_block(chacha, 9, position), chacha20_random_block(chacha.chacha, 9, position)));
    EXPECT_TRUE(same_bits(random_block(philox, 9, position), philox_block(philox.philox, 9, position)));
    EXPECT_FALSE(same_bits(random_block(chacha, 9, position), random_block(philox, 9, position)));
  }
}

TEST(RandomKey, SequentialBlocksGiveRandomBlockBitsInAnyOrder) {
  for (const Generator generator : {Generator::chacha20, Generator::philox}) {
    const RandomKey key = RandomKey::from_seed(0xC0FFEE, generator);
    detail::SequentialBlocks blocks(key, 77);
    // Runs inside one 64-byte block, across block boundaries, backwards and far jumps.
    const std::uint64_t positions[] = {0, 1, 2, 3, 4, 3, 7, 8, 1000, 999, 1001, 1u << 31, 0, ~std::uint64_t{0},
                                       (std::uint64_t{1} << 34) + 2};
    for (const std::uint64_t position : positions) {
      EXPECT_TRUE(same_bits(blocks.at(position), random_block(key, 77, position)))
          << to_string(generator) << " position " << position;
    }
  }
}

TEST(RandomKey, OsKeysDifferBetweenContexts) {
  // 256 (or 64) fresh bits per context: equal keys have probability 2^-256 (2^-64).
  for (const Generator generator : {Generator::chacha20, Generator::philox}) {
    Context a = Context::from_os_entropy(generator);
    Context b = Context::from_os_entropy(generator);
    const RandomKey key_a = detail::ContextAccess::draw_stream(a).key;
    const RandomKey key_b = detail::ContextAccess::draw_stream(b).key;
    EXPECT_EQ(key_a.generator, generator);
    EXPECT_FALSE(key_a == key_b) << to_string(generator);
  }
}

TEST(RandomKey, ReportsNameTheGeneratorAndTheGeneratorsGiveDifferentNoise) {
  std::vector<double> utilities(4096, 0.0);  // flat: the pick is decided by the noise alone
  SelectionParams params;
  params.epsilon = 1.0;
  params.sensitivity = 1.0;
  params.backend = Backend::Cpu;
  int differing = 0;
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    Context chacha = Context::with_fixed_seed(seed);
    Context philox = Context::with_fixed_seed(seed, Generator::philox);
    const Selection a = select(chacha, std::span<const double>(utilities), params);
    const Selection b = select(philox, std::span<const double>(utilities), params);
    EXPECT_EQ(a.report.generator, Generator::chacha20);
    EXPECT_EQ(b.report.generator, Generator::philox);
    differing += a.index != b.index;
  }
  // Under independent generators two picks agree with probability 1/4096 each.
  EXPECT_GE(differing, 7);

  Context context = Context::with_fixed_seed(1, Generator::philox);
  SparseVectorParams svt;
  svt.epsilon = 1.0;
  svt.sensitivity = 1.0;
  svt.threshold = 0.0;
  const std::vector<double> queries = {1.0, 2.0};
  EXPECT_EQ(sparse_vector_batch(context, std::span<const double>(queries), svt).report.generator,
            Generator::philox);
}

TEST(RandomKey, BadGeneratorIsRefusedNamingIt) {
  const auto bad = static_cast<Generator>(7);
  for (const auto& make : {+[] { return Context::from_os_entropy(static_cast<Generator>(7)); },
                           +[] { return Context::with_fixed_seed(1, static_cast<Generator>(7)); }}) {
    try {
      make();
      ADD_FAILURE() << "expected InvalidArgument";
    } catch (const InvalidArgument& error) {
      EXPECT_STREQ(error.what(), "dpselect: generator must be chacha20 or philox (got 7)");
    }
  }
  RandomKey key;
  key.generator = bad;
  EXPECT_THROW(Context::with_shared_key(key, 0), InvalidArgument);
  EXPECT_EQ(to_string(bad), "unknown");
}

TEST(RandomKey, AllZeroSharedKeysAreRefused) {
  for (const RandomKey& key : {RandomKey{}, RandomKey(ChaChaKey{}), RandomKey(PhiloxKey{})}) {
    try {
      Context::with_shared_key(key, 0);
      ADD_FAILURE() << "expected InvalidArgument";
    } catch (const InvalidArgument& error) {
      EXPECT_EQ(std::string(error.what()), "dpselect: key must not be all zero (got the all-zero " +
                                               std::string(to_string(key.generator)) +
                                               " key; share a key drawn from a CSPRNG)");
    }
  }
  PhiloxKey one_bit;
  one_bit.hi = 1;
  EXPECT_EQ(Context::with_shared_key(one_bit, 0).generator(), Generator::philox);
}

}  // namespace
}  // namespace dpselect
