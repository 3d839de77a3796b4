// SPDX-License-Identifier: Apache-2.0
// Partition selection in chunks that fit a device (partition_chunks.hpp): the hash buckets, the
// chunks cut from them, and the driver that sends each chunk to the device or, over its capacity,
// to the CPU passes.
#include "partition_selection/partition_chunks.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "partition_selection/partition_shares.hpp"

namespace dpselect::detail {

Bucketed<Contribution> bucketed_by_user(const std::vector<Contribution>& pairs) {
  return bucketed(pairs, kChunkBuckets, [](const Contribution& pair) { return chunk_bucket(pair.user); });
}

Bucketed<std::uint64_t> bucketed_by_key(const std::vector<std::uint64_t>& keys) {
  return bucketed(keys, kChunkBuckets, [](std::uint64_t key) { return chunk_bucket(key); });
}

std::vector<ChunkRange> chunk_ranges(const std::vector<std::size_t>& starts, std::uint64_t capacity) {
  std::vector<ChunkRange> ranges;
  const std::size_t buckets = starts.size() - 1;
  for (std::size_t bucket = 0; bucket < buckets;) {
    const std::size_t first = starts[bucket];
    if (starts[bucket + 1] - first > capacity) {
      ranges.push_back({first, starts[bucket + 1], false});
      ++bucket;
      continue;
    }
    std::size_t end = bucket + 1;
    while (end < buckets && starts[end + 1] - first <= capacity) ++end;
    if (starts[end] > first) ranges.push_back({first, starts[end], true});
    bucket = end;
  }
  return ranges;
}

ReleasedKeys chunked_released_keys(std::vector<Contribution>& pairs, std::uint64_t pairs_per_chunk,
                                   std::uint64_t keys_per_chunk, std::uint64_t max_partitions,
                                   const PartitionKeepRule& rule, PartitionStrategy strategy,
                                   const ContextAccess::KeyedStream& drawn, const DevicePartitionPasses& device) {
  std::vector<std::uint64_t> kept;
  {
    Bucketed<Contribution> by_user = bucketed_by_user(pairs);
    pairs = {};
    for (const ChunkRange& range : chunk_ranges(by_user.starts, pairs_per_chunk)) {
      const std::span<const Contribution> chunk(by_user.values.data() + range.first, range.last - range.first);
      if (range.fits) {
        device.keep(chunk, kept);
        continue;
      }
      std::vector<Contribution> own(chunk.begin(), chunk.end());
      keep_distinct(own);
      const std::vector<std::uint64_t> own_kept = bounded_keys(own, max_partitions, drawn);
      kept.insert(kept.end(), own_kept.begin(), own_kept.end());
    }
  }
  if (kept.size() <= keys_per_chunk) return device.release(kept);

  Bucketed<std::uint64_t> by_key = bucketed_by_key(kept);
  kept = {};
  ReleasedKeys released;
  for (const ChunkRange& range : chunk_ranges(by_key.starts, keys_per_chunk)) {
    const std::span<const std::uint64_t> chunk(by_key.values.data() + range.first, range.last - range.first);
    ReleasedKeys part;
    if (range.fits) {
      part = device.release(chunk);
    } else {
      std::vector<std::uint64_t> own(chunk.begin(), chunk.end());
      part = released_keys(own, rule, strategy, drawn);
    }
    released.keys.insert(released.keys.end(), part.keys.begin(), part.keys.end());
    released.distinct += part.distinct;
  }
  // Each chunk's keys are ascending; the chunks are buckets of a hash.
  sort_on_every_core(released.keys.begin(), released.keys.end());
  return released;
}

}  // namespace dpselect::detail
