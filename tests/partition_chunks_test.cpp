// SPDX-License-Identifier: Apache-2.0
// Partition selection in chunks (partition_selection/partition_chunks.hpp), on the CPU: the hash
// buckets are a stable permutation whose every bucket holds only its own ids, the chunks cover
// the buckets in order within their capacity, and the chunked driver, with the CPU passes standing
// in for the device, releases the keys and the count of one pass over all the pairs at every
// capacity, also where a user or a key alone is over it. The GPU's own chunks are tested against
// the CPU in partition_selection_gpu_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "dpselect/context.hpp"
#include "dpselect/detail/release_access.hpp"
#include "dpselect/partition_selection.hpp"
#include "partition_selection/partition_chunks.hpp"
#include "partition_selection/partition_passes.hpp"

namespace {

using dpselect::detail::Bucketed;
using dpselect::detail::ChunkRange;
using dpselect::detail::Contribution;
using dpselect::detail::kChunkBuckets;

// `users` users holding 1 to 8 keys each among `keys_range` keys (repeats included), one user
// with `heavy_keys` distinct keys, and one key held by `heavy_users` more users.
std::vector<Contribution> chunk_test_pairs(std::uint64_t users, std::uint64_t keys_range, std::uint64_t heavy_keys,
                                           std::uint64_t heavy_users, std::uint64_t seed) {
  std::vector<Contribution> pairs;
  std::mt19937_64 draw(seed);
  for (std::uint64_t user = 0; user < users; ++user) {
    const std::uint64_t held = 1 + draw() % 8;
    for (std::uint64_t j = 0; j < held; ++j) pairs.push_back({user, draw() % keys_range});
  }
  for (std::uint64_t j = 0; j < heavy_keys; ++j) pairs.push_back({users, j});
  for (std::uint64_t j = 0; j < heavy_users; ++j) pairs.push_back({users + 1 + j, keys_range + 1});
  std::shuffle(pairs.begin(), pairs.end(), draw);
  return pairs;
}

TEST(PartitionChunks, BucketsAreAStablePermutationByHash) {
  const std::vector<Contribution> pairs = chunk_test_pairs(30000, 5000, 300, 200, 1);  // > 2^16: every core
  const Bucketed<Contribution> grouped = dpselect::detail::bucketed_by_user(pairs);
  ASSERT_EQ(grouped.starts.size(), kChunkBuckets + 1);
  ASSERT_EQ(grouped.starts.front(), 0u);
  ASSERT_EQ(grouped.starts.back(), pairs.size());
  std::vector<Contribution> expected;
  for (std::uint32_t bucket = 0; bucket < kChunkBuckets; ++bucket) {
    for (const Contribution& pair : pairs) {
      if (dpselect::detail::chunk_bucket(pair.user) == bucket) expected.push_back(pair);
    }
    ASSERT_EQ(grouped.starts[bucket + 1], expected.size()) << "bucket " << bucket;
  }
  EXPECT_EQ(grouped.values, expected) << "each bucket's pairs in their first order";

  std::vector<std::uint64_t> keys;
  for (const Contribution& pair : pairs) keys.push_back(pair.key);
  const Bucketed<std::uint64_t> by_key = dpselect::detail::bucketed_by_key(keys);
  for (std::uint32_t bucket = 0; bucket < kChunkBuckets; ++bucket) {
    for (std::size_t i = by_key.starts[bucket]; i < by_key.starts[bucket + 1]; ++i) {
      ASSERT_EQ(dpselect::detail::chunk_bucket(by_key.values[i]), bucket);
    }
  }
  std::vector<std::uint64_t> sorted_keys = keys, sorted_grouped = by_key.values;
  std::sort(sorted_keys.begin(), sorted_keys.end());
  std::sort(sorted_grouped.begin(), sorted_grouped.end());
  EXPECT_EQ(sorted_grouped, sorted_keys);
}

TEST(PartitionChunks, ChunksAreRunsOfWholeBucketsWithinTheCapacity) {
  // Buckets of sizes 3, 0, 4, 9, 1, 1, 0, 2 (a bucket of 9 over a capacity of 5).
  const std::vector<std::size_t> starts = {0, 3, 3, 7, 16, 17, 18, 18, 20};
  const std::vector<ChunkRange> ranges = dpselect::detail::chunk_ranges(starts, 5);
  ASSERT_EQ(ranges.size(), 4u);
  const std::vector<std::size_t> firsts = {0, 3, 7, 16}, lasts = {3, 7, 16, 20};
  for (std::size_t c = 0; c < ranges.size(); ++c) {
    EXPECT_EQ(ranges[c].first, firsts[c]) << "chunk " << c;
    EXPECT_EQ(ranges[c].last, lasts[c]) << "chunk " << c;
    EXPECT_EQ(ranges[c].fits, c != 2) << "chunk " << c;
  }
  // Every capacity: the chunks tile [0, n) in order, and each that fits is within it.
  for (const std::uint64_t capacity : {1, 2, 4, 9, 20, 1000}) {
    std::size_t next = 0;
    for (const ChunkRange& range : dpselect::detail::chunk_ranges(starts, capacity)) {
      EXPECT_EQ(range.first, next);
      EXPECT_GT(range.last, range.first);
      EXPECT_EQ(range.fits, range.last - range.first <= capacity);
      next = range.last;
    }
    EXPECT_EQ(next, starts.back()) << "capacity " << capacity;
  }
  EXPECT_EQ(dpselect::detail::chunk_ranges(starts, 1000).size(), 1u);
}

// The chunked driver with the CPU passes as the device, against select_partitions on the CPU.
TEST(PartitionChunks, ChunkedSelectionReleasesTheKeysOfOnePass) {
  const std::vector<Contribution> pairs = chunk_test_pairs(20000, 3000, 5000, 4000, 2);
  std::vector<std::uint64_t> users, keys;
  for (const Contribution& pair : pairs) {
    users.push_back(pair.user);
    keys.push_back(pair.key);
  }
  for (const auto strategy : {dpselect::PartitionStrategy::truncated_geometric,
                              dpselect::PartitionStrategy::gaussian_threshold}) {
    const dpselect::PartitionSelectionParams params{1.0, 1e-3, 3, strategy, dpselect::Backend::Cpu};
    auto whole_context = dpselect::Context::with_fixed_seed(5);
    const dpselect::PartitionSelection whole = dpselect::select_partitions(whole_context, users, keys, params);
    ASSERT_GT(whole.keys.size(), 100u) << "a test that can fail: many keys released";
    ASSERT_TRUE(std::binary_search(whole.keys.begin(), whole.keys.end(), std::uint64_t{3001}))
        << "the key of 4000 users is released";
    const dpselect::PartitionKeepRule rule = dpselect::partition_keep_rule(params);
    // The capacities: every bucket over it, a few buckets a chunk, the heavy user's and key's
    // buckets alone over it, and one chunk for the keys.
    for (const std::uint64_t capacity : {1, 60, 400, 4500, 200000}) {
      auto context = dpselect::Context::with_fixed_seed(5);
      const auto drawn = dpselect::detail::ContextAccess::draw_stream(context);
      std::size_t keep_calls = 0, release_calls = 0;
      const dpselect::detail::DevicePartitionPasses passes{
          [&](std::span<const Contribution> chunk, std::vector<std::uint64_t>& kept) {
            ++keep_calls;
            EXPECT_LE(chunk.size(), capacity) << "a chunk over the capacity went to the device";
            std::vector<Contribution> own(chunk.begin(), chunk.end());
            dpselect::detail::keep_distinct(own);
            const auto chunk_kept = dpselect::detail::bounded_keys(own, params.max_partitions, drawn);
            kept.insert(kept.end(), chunk_kept.begin(), chunk_kept.end());
          },
          [&](std::span<const std::uint64_t> chunk) {
            ++release_calls;
            EXPECT_LE(chunk.size(), std::max<std::uint64_t>(capacity, 1)) << "a chunk over the capacity went to the device";
            std::vector<std::uint64_t> own(chunk.begin(), chunk.end());
            return dpselect::detail::released_keys(own, rule, strategy, drawn);
          }};
      std::vector<Contribution> input = pairs;
      const dpselect::detail::ReleasedKeys chunked = dpselect::detail::chunked_released_keys(
          input, capacity, capacity, params.max_partitions, rule, strategy, drawn, passes);
      EXPECT_EQ(chunked.keys, whole.keys) << "capacity " << capacity;
      EXPECT_EQ(chunked.distinct, whole.report.keys_considered) << "capacity " << capacity;
      EXPECT_EQ(drawn.stream, whole.report.stream);
      if (capacity == 400) {
        EXPECT_GT(keep_calls, 10u) << "the pairs went in many chunks";
        EXPECT_GT(release_calls, 10u) << "the kept keys went in many chunks";
      }
      if (capacity == 200000) EXPECT_EQ(release_calls, 1u) << "the kept keys in one chunk";
    }
  }
}

}  // namespace
