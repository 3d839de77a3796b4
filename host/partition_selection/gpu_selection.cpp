// SPDX-License-Identifier: Apache-2.0
// Partition selection on the GPU as the host runs it: the keep cuts computed here and copied to the
// device once, the chunks sized from what the device has free, the pairs grouped by user on the
// host when they do not fit (partition_chunks.hpp), and the keys whose count lies beyond the cut
// table decided here with the same bits. The device steps are gpu.hpp's.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "device/gpu.hpp"
#include "partition_selection/gpu.hpp"
#include "partition_selection/partition_chunks.hpp"
#include "partition_selection/partition_passes.hpp"
#include "random/partition_randomness.hpp"

namespace dpselect::detail {
namespace {

// The host's table of keep cuts holds at most this many counts (32 MiB).
constexpr std::uint64_t kCutTableLimit = std::uint64_t{1} << 22;
// The smallest chunk: below it a device pass is mostly launches and synchronizations.
constexpr std::uint64_t kSmallestChunkPairs = std::uint64_t{1} << 16;

// 0: the device's free memory decides (set_partition_chunk_pairs_for_testing).
std::atomic<std::uint64_t> chunk_pairs_for_testing{0};

// The pairs one chunk may hold: what the device has free (gpu_available_bytes), less a margin for
// CUB's scratch and other users of the device, over the peak bytes per pair, and at least
// kSmallestChunkPairs (a device with less room than that fails with the device's out-of-memory
// error); or what a test set.
std::uint64_t pairs_per_chunk() {
  if (const std::uint64_t for_testing = chunk_pairs_for_testing.load(std::memory_order_relaxed); for_testing != 0) {
    return for_testing;
  }
  const std::uint64_t available = gpu_available_bytes();
  const std::uint64_t margin = available / 10 + std::min<std::uint64_t>(available / 4, std::uint64_t{256} << 20);
  return std::max(kSmallestChunkPairs, (available - margin) / kGpuPartitionBytesPerPair);
}

// The released keys of a device pass, its deferred keys decided here: the same coin, against the
// cut of the same keep probability, as the device's table holds for smaller counts.
ReleasedKeys finished(GpuKeyDecisions decisions, const PartitionKeepRule& rule, PartitionStrategy strategy,
                      const ContextAccess::KeyedStream& drawn) {
  ReleasedKeys released;
  released.distinct = decisions.distinct;
  released.keys = std::move(decisions.released);
  if (decisions.deferred_keys.empty()) return released;
  for (std::size_t i = 0; i < decisions.deferred_keys.size(); ++i) {
    const std::uint64_t key = decisions.deferred_keys[i];
    const std::uint64_t coin = key_coin(random_block(drawn.key, drawn.stream, key_coin_position(key)));
    if (coin < keep_cut(keep_probability(rule, strategy, decisions.deferred_counts[i]))) released.keys.push_back(key);
  }
  std::sort(released.keys.begin(), released.keys.end());
  return released;
}

}  // namespace

void set_partition_chunk_pairs_for_testing(std::uint64_t pairs) {
  chunk_pairs_for_testing.store(pairs, std::memory_order_relaxed);
}

ReleasedKeys gpu_select_partitions(const std::uint64_t* users, const std::uint64_t* keys, std::uint64_t count,
                                   bool on_device, std::uint64_t max_partitions, const PartitionKeepRule& rule,
                                   PartitionStrategy strategy, const ContextAccess::KeyedStream& drawn,
                                   cuda_stream_t stream) {
  const KeepCuts table = keep_cut_table(rule, strategy, kCutTableLimit);
  const GpuKeepCuts cuts(table, stream);
  const std::uint64_t chunk_pairs = pairs_per_chunk();
  if (count <= chunk_pairs) {
    return finished(gpu_partition_decide_pairs(users, keys, count, on_device, max_partitions, cuts, drawn, stream),
                    rule, strategy, drawn);
  }

  // In chunks: the pairs grouped by user on the host.
  std::vector<Contribution> records;
  if (on_device) {
    records = contributions_of(gpu_copy_to_host(users, count, stream), gpu_copy_to_host(keys, count, stream));
  } else {
    records = contributions_of({users, count}, {keys, count});
  }
  const DevicePartitionPasses passes{
      [&](std::span<const Contribution> chunk, std::vector<std::uint64_t>& kept) {
        gpu_partition_keep_pairs(chunk, max_partitions, drawn, stream, kept);
      },
      [&](std::span<const std::uint64_t> chunk) {
        return finished(gpu_partition_decide_keys(chunk, cuts, drawn, stream), rule, strategy, drawn);
      }};
  const std::uint64_t chunk_keys = chunk_pairs * kGpuPartitionBytesPerPair / kGpuPartitionBytesPerKey;
  return chunked_released_keys(records, chunk_pairs, chunk_keys, max_partitions, rule, strategy, drawn, passes);
}

}  // namespace dpselect::detail
