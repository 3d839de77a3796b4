// SPDX-License-Identifier: Apache-2.0
// Partition selection on a device too small for all its pairs at once (the GPU backend,
// kernels/partition_selection.cu): the pairs are grouped on the host by a hash of their user into
// chunks that each fit the device, every user whole in one chunk, and each chunk bounded there;
// the kept keys come back and, when they do not fit either, are grouped by a hash of the key into
// chunks whose keys are each whole in one, and each chunk's coins are tossed there. The bounding
// of a user and the coin of a key read only that user's or key's bits
// (partition_randomness.hpp), so the released keys are those of one pass over all the pairs, for
// any cut into chunks. A group of one hash value too large for the device (a few users holding
// most of the pairs, or a key that most users hold) is done by the CPU passes, with the same bits.
//
// The hash groups are 2^12 buckets of the SplitMix64 finalizer's top bits (hash_bucket):
// the buckets of random-looking ids are close to equal, and a chunk is a run of whole buckets.
// Internal to the partition selection backends.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "dpselect/detail/release_access.hpp"
#include "dpselect/partition_selection.hpp"
#include "partition_selection/partition_passes.hpp"
#include "partition_selection/partition_shares.hpp"

namespace dpselect::detail {

inline constexpr int kChunkBucketBits = 12;
inline constexpr std::uint32_t kChunkBuckets = std::uint32_t{1} << kChunkBucketBits;

// The bucket of a user or key id: the top bits of its mix (a bijection, so equal ids share one).
inline std::uint32_t chunk_bucket(std::uint64_t id) {
  return static_cast<std::uint32_t>(hash_bucket(id, kChunkBucketBits));
}

// The pairs, or the kept keys, in the buckets of their user or key (partition_shares.hpp's
// bucketed over kChunkBuckets).
Bucketed<Contribution> bucketed_by_user(const std::vector<Contribution>& pairs);
Bucketed<std::uint64_t> bucketed_by_key(const std::vector<std::uint64_t>& keys);

// A chunk: elements [first, last) of a Bucketed, whole buckets; fits: at most the capacity (else
// it is one bucket, over it on its own).
struct ChunkRange {
  std::size_t first = 0;
  std::size_t last = 0;
  bool fits = true;
};
// The buckets of `starts` cut, in order, into the fewest runs of at most `capacity` elements each
// that greedy filling gives; a bucket over `capacity` is a chunk of its own. Empty chunks are left
// out. capacity >= 1.
std::vector<ChunkRange> chunk_ranges(const std::vector<std::size_t>& starts, std::uint64_t capacity);

// What the device does with a chunk that fits: append the kept keys of `pairs` (every pair of each
// of its users; repeats allowed) to `kept`; and decide the coins of `kept` (every kept pair of each
// of its keys): the released keys, ascending, with the number of distinct keys.
struct DevicePartitionPasses {
  std::function<void(std::span<const Contribution> pairs, std::vector<std::uint64_t>& kept)> keep;
  std::function<ReleasedKeys(std::span<const std::uint64_t> kept)> release;
};

// The whole selection over `pairs` (consumed) in chunks of at most pairs_per_chunk pairs for the
// bounding and keys_per_chunk kept keys for the coins, each on the device (`device`) where it
// fits, on the CPU where it does not. The keys one pass over all the pairs releases.
ReleasedKeys chunked_released_keys(std::vector<Contribution>& pairs, std::uint64_t pairs_per_chunk,
                                   std::uint64_t keys_per_chunk, std::uint64_t max_partitions,
                                   const PartitionKeepRule& rule, PartitionStrategy strategy,
                                   const ContextAccess::KeyedStream& drawn, const DevicePartitionPasses& device);

}  // namespace dpselect::detail
