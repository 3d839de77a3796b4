// SPDX-License-Identifier: Apache-2.0
// Partition selection on the GPU (host/partition_selection/partition_passes.hpp's
// gpu_select_partitions): the CPU passes' steps, each a CUB device algorithm or a grid-stride
// kernel, every bit from the identity of a pair or key (partition_randomness.hpp) and every keep
// cut from the host's own table, so the released keys are the CPU's to the bit.
//
//   1. the pairs as 16-byte (user, key) records, sorted by (user, key) with CUB's radix sort
//      (a decomposer over the two words), and their repeats dropped (DeviceSelect::Unique);
//   2. the start of each user's run (DeviceSelect::Flagged over the positions where the user
//      changes), then one thread per user: a user over the bound shuffles its keys in place (the
//      partial Fisher-Yates of partition_randomness.hpp) and flags its first max_partitions;
//   3. the kept keys compacted, sorted (radix sort) and counted (DeviceRunLengthEncode);
//   4. one thread per distinct key compares its coin with the host's cut for its count (a table
//      up to the count from which every key is kept); a count beyond a table that ends before
//      certainty (extreme parameters) defers the key to the host, which decides it with the same
//      bits;
//   5. the released keys copied back.
// Device memory at the peak: about 48 bytes a pair (the records, the sorted copy, CUB's
// alternate buffer), from the library's pool. Pairs beyond what the device has free go in chunks
// (partition_chunks.hpp): grouped by user on the host, each chunk's kept keys brought back, and
// those grouped by key where they do not fit either; the keys released are the same.
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/std/tuple>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

#include "dpselect/detail/cuda_check.cuh"
#include "dpselect/detail/kernel_launch.cuh"
#include "dpselect/errors.hpp"
#include "dpselect/random_key.hpp"
#include "engine/gpu_backend.hpp"
#include "launch_helpers.cuh"
#include "partition_selection/partition_chunks.hpp"
#include "partition_selection/partition_passes.hpp"
#include "partition_selection/partition_randomness.hpp"

namespace dpselect::detail {
namespace {

constexpr int kBlockThreads = 256;
constexpr std::uint64_t kMaxBlocks = 8192;
// The host's table of keep cuts holds at most this many counts (32 MiB).
constexpr std::uint64_t kCutTableLimit = std::uint64_t{1} << 22;

// Device bytes at the peak: 48 a pair while the records sort (the records, the sorted copy, CUB's
// alternate buffer); 42 a kept key while the keys are decided (the keys, their sorted copy, the
// distinct keys' counts, two flags, and the deferred keys and counts), and CUB's scratch besides.
constexpr std::uint64_t kPeakBytesPerPair = 48;
constexpr std::uint64_t kPeakBytesPerKey = 48;
// The smallest chunk: below it a device pass is mostly launches and synchronizations.
constexpr std::uint64_t kSmallestChunkPairs = std::uint64_t{1} << 16;

// 0: the device's free memory decides (set_partition_chunk_pairs_for_testing).
std::atomic<std::uint64_t> chunk_pairs_for_testing{0};

constexpr const char* kOutOfMemory =
    "dpselect: the device has too little free memory for partition selection (about 48 bytes per (user, key) pair "
    "at the peak); free device memory, or select on the CPU (backend Cpu)";

struct DevicePair {
  std::uint64_t user;
  std::uint64_t key;
  __host__ __device__ friend bool operator==(const DevicePair& a, const DevicePair& b) {
    return a.user == b.user && a.key == b.key;
  }
};

// CUB's view of a pair as two radix words, the user the more significant.
struct PairDecomposer {
  __host__ __device__ ::cuda::std::tuple<std::uint64_t&, std::uint64_t&> operator()(DevicePair& pair) const {
    return {pair.user, pair.key};
  }
};

unsigned int blocks_for(std::uint64_t count) { return grid_stride_blocks(count, kBlockThreads, kMaxBlocks); }

__global__ void __launch_bounds__(kBlockThreads)
    interleave_kernel(const std::uint64_t* users, const std::uint64_t* keys, std::uint64_t count, DevicePair* pairs) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * kBlockThreads;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * kBlockThreads + threadIdx.x; i < count; i += stride) {
    pairs[i] = DevicePair{users[i], keys[i]};
  }
}

// 1 where a user's run begins.
__global__ void __launch_bounds__(kBlockThreads)
    user_starts_kernel(const DevicePair* pairs, std::uint64_t count, unsigned char* starts) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * kBlockThreads;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * kBlockThreads + threadIdx.x; i < count; i += stride) {
    starts[i] = i == 0 || pairs[i].user != pairs[i - 1].user;
  }
}

// One thread per user (run r: pairs [run_starts[r], run_starts[r + 1]) or to `count`): its keys
// shuffled in place as partition_randomness.hpp draws them, keep[j] = 1 for the kept ones, and
// its keys written to `keys` for the compaction. A draw rejected 2^20 times in a row (never in
// practice) sets *failed.
__global__ void __launch_bounds__(kBlockThreads)
    bound_users_kernel(DevicePair* pairs, std::uint64_t count, const std::uint64_t* run_starts, std::uint64_t users,
                       std::uint64_t max_partitions, RandomKey random_key, std::uint64_t stream_id,
                       std::uint64_t* keys, unsigned char* keep, unsigned int* failed) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * kBlockThreads;
  for (std::uint64_t r = std::uint64_t{blockIdx.x} * kBlockThreads + threadIdx.x; r < users; r += stride) {
    const std::uint64_t first = run_starts[r];
    const std::uint64_t last = r + 1 < users ? run_starts[r + 1] : count;
    const std::uint64_t held = last - first;
    if (held > max_partitions) {
      const std::uint64_t user = pairs[first].user;
      for (std::uint64_t step = 0; step < max_partitions; ++step) {
        std::uint64_t offset = 0;
        std::uint64_t attempt = 0;
        for (; attempt < kBoundingAttempts; ++attempt) {
          const RandomBlock block = random_block(random_key, stream_id, bounding_draw_position(user, step, attempt));
          if (uniform_below(bounding_word(block), held - step, offset)) break;
        }
        if (attempt == kBoundingAttempts) atomicOr(failed, 1u);
        const std::uint64_t swapped = pairs[first + step + offset].key;
        pairs[first + step + offset].key = pairs[first + step].key;
        pairs[first + step].key = swapped;
      }
    }
    for (std::uint64_t j = first; j < last; ++j) {
      keys[j] = pairs[j].key;
      keep[j] = j - first < max_partitions;
    }
  }
}

// What becomes of a distinct key: dropped, released, or decided on the host (its count beyond a
// table that ends before certainty).
enum KeyDecision : unsigned char { kDropped = 0, kReleased = 1, kDeferred = 2 };

__global__ void __launch_bounds__(kBlockThreads)
    decide_keys_kernel(const std::uint64_t* keys, const std::uint64_t* users_of_key, std::uint64_t distinct,
                       const std::uint64_t* cuts, std::uint64_t table_size, bool certain_beyond, RandomKey random_key,
                       std::uint64_t stream_id, unsigned char* released, unsigned char* deferred) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * kBlockThreads;
  for (std::uint64_t r = std::uint64_t{blockIdx.x} * kBlockThreads + threadIdx.x; r < distinct; r += stride) {
    const std::uint64_t users = users_of_key[r];
    unsigned char decision = kReleased;
    if (users < table_size) {
      const std::uint64_t coin = key_coin(random_block(random_key, stream_id, key_coin_position(keys[r])));
      decision = coin < cuts[users] ? kReleased : kDropped;
    } else if (!certain_beyond) {
      decision = kDeferred;
    }
    released[r] = decision == kReleased;
    deferred[r] = decision == kDeferred;
  }
}

// The elements of `values` (count of them) whose flag is set, compacted into `out` on the device;
// returns how many.
template <class In, class T>
std::uint64_t compact(In values, const unsigned char* flags, std::uint64_t count, T* out, cudaStream_t stream) {
  const PoolBuffer selected(sizeof(std::uint64_t), stream, kOutOfMemory);
  std::size_t temp_bytes = 0;
  DPSELECT_CUDA_TRY(cub::DeviceSelect::Flagged(nullptr, temp_bytes, values, flags, out,
                                               selected.as<std::uint64_t>(), count, stream));
  const PoolBuffer temp(temp_bytes, stream, kOutOfMemory);
  DPSELECT_CUDA_TRY(cub::DeviceSelect::Flagged(temp.as<void>(), temp_bytes, values, flags, out,
                                               selected.as<std::uint64_t>(), count, stream));
  return read_device_value(selected.as<std::uint64_t>(), stream);
}

template <class T>
std::vector<T> copied_to_host(const T* device, std::uint64_t count, cudaStream_t stream) {
  std::vector<T> host(count);
  if (count == 0) return host;
  DPSELECT_CUDA_TRY(cudaMemcpyAsync(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost, stream));
  DPSELECT_CUDA_TRY(cudaStreamSynchronize(stream));
  return host;
}

// floor(p(n) 2^53) for the counts n of the host's table (keep_cut_table), in device memory: made
// once a selection, whatever the number of chunks.
struct DeviceCuts {
  DeviceCuts(const PartitionKeepRule& rule, PartitionStrategy strategy, cudaStream_t stream)
      : table(keep_cut_table(rule, strategy, kCutTableLimit)),
        cuts(table.cuts.size() * sizeof(std::uint64_t), stream, kOutOfMemory) {
    if (!table.cuts.empty()) {
      DPSELECT_CUDA_TRY(cudaMemcpyAsync(cuts.as<void>(), table.cuts.data(), table.cuts.size() * sizeof(std::uint64_t),
                                        cudaMemcpyHostToDevice, stream));
    }
  }
  KeepCuts table;
  PoolBuffer cuts;
};

// `count` 64-bit keys in device memory.
struct DeviceKeys {
  PoolBuffer keys;
  std::uint64_t count = 0;
};

// Step 1's records from the caller's users and keys (host memory, copied in, or device memory).
PoolBuffer pairs_from_arrays(const std::uint64_t* users, const std::uint64_t* keys, std::uint64_t count,
                             bool on_device, cudaStream_t stream) {
  PoolBuffer pairs(count * sizeof(DevicePair), stream, kOutOfMemory);
  const std::uint64_t* device_users = users;
  const std::uint64_t* device_keys = keys;
  PoolBuffer staged_users(on_device ? 0 : count * sizeof(std::uint64_t), stream, kOutOfMemory);
  PoolBuffer staged_keys(on_device ? 0 : count * sizeof(std::uint64_t), stream, kOutOfMemory);
  if (!on_device) {
    DPSELECT_CUDA_TRY(cudaMemcpyAsync(staged_users.as<void>(), users, count * sizeof(std::uint64_t),
                                      cudaMemcpyHostToDevice, stream));
    DPSELECT_CUDA_TRY(cudaMemcpyAsync(staged_keys.as<void>(), keys, count * sizeof(std::uint64_t),
                                      cudaMemcpyHostToDevice, stream));
    device_users = staged_users.as<std::uint64_t>();
    device_keys = staged_keys.as<std::uint64_t>();
  }
  launch_kernel<interleave_kernel>(blocks_for(count), kBlockThreads, 0, stream, device_users, device_keys, count,
                                   pairs.as<DevicePair>());
  DPSELECT_CUDA_TRY(cudaGetLastError());
  return pairs;
}

// Step 1's records from a chunk of the host's (user, key) records, which have DevicePair's layout.
static_assert(sizeof(Contribution) == sizeof(DevicePair) && offsetof(Contribution, user) == offsetof(DevicePair, user) &&
              offsetof(Contribution, key) == offsetof(DevicePair, key));
PoolBuffer pairs_from_records(std::span<const Contribution> records, cudaStream_t stream) {
  PoolBuffer pairs(records.size() * sizeof(DevicePair), stream, kOutOfMemory);
  // From pageable memory the copy returns once it has left the caller's buffer.
  DPSELECT_CUDA_TRY(cudaMemcpyAsync(pairs.as<void>(), records.data(), records.size() * sizeof(DevicePair),
                                    cudaMemcpyHostToDevice, stream));
  return pairs;
}

// Steps 1 (the sort and the repeats dropped) and 2 over the `count` records of `pairs_buffer`
// (consumed), and the kept keys compacted: one per kept pair, in device memory.
DeviceKeys kept_keys_on_device(PoolBuffer pairs_buffer, std::uint64_t count, std::uint64_t max_partitions,
                               const ContextAccess::KeyedStream& drawn, cudaStream_t stream) {
  std::optional<PoolBuffer> pairs_holder(std::move(pairs_buffer));
  DevicePair* const pairs = pairs_holder->as<DevicePair>();
  std::uint64_t distinct_pairs = 0;
  {
    const PoolBuffer sorted(count * sizeof(DevicePair), stream, kOutOfMemory);
    std::size_t temp_bytes = 0;
    DPSELECT_CUDA_TRY(with_item_count(count, [&](auto items) {
      return cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, pairs, sorted.as<DevicePair>(),
                                            items, PairDecomposer{}, stream);
    }));
    {
      const PoolBuffer temp(temp_bytes, stream, kOutOfMemory);
      DPSELECT_CUDA_TRY(with_item_count(count, [&](auto items) {
        return cub::DeviceRadixSort::SortKeys(temp.as<void>(), temp_bytes, pairs,
                                              sorted.as<DevicePair>(), items, PairDecomposer{}, stream);
      }));
    }
    const PoolBuffer selected(sizeof(std::uint64_t), stream, kOutOfMemory);
    temp_bytes = 0;
    DPSELECT_CUDA_TRY(cub::DeviceSelect::Unique(nullptr, temp_bytes, sorted.as<DevicePair>(), pairs,
                                                selected.as<std::uint64_t>(), count, stream));
    const PoolBuffer temp(temp_bytes, stream, kOutOfMemory);
    DPSELECT_CUDA_TRY(cub::DeviceSelect::Unique(temp.as<void>(), temp_bytes, sorted.as<DevicePair>(),
                                                pairs, selected.as<std::uint64_t>(), count, stream));
    distinct_pairs = read_device_value(selected.as<std::uint64_t>(), stream);
  }

  // 2. Each user bounded.
  const PoolBuffer flags(distinct_pairs, stream, kOutOfMemory);
  const PoolBuffer candidate_keys(distinct_pairs * sizeof(std::uint64_t), stream, kOutOfMemory);
  {
    launch_kernel<user_starts_kernel>(blocks_for(distinct_pairs), kBlockThreads, 0, stream, pairs, distinct_pairs,
                                      flags.as<unsigned char>());
    DPSELECT_CUDA_TRY(cudaGetLastError());
    const PoolBuffer run_starts(distinct_pairs * sizeof(std::uint64_t), stream, kOutOfMemory);
    const std::uint64_t user_count = compact(thrust::counting_iterator<std::uint64_t>(0), flags.as<unsigned char>(),
                                             distinct_pairs, run_starts.as<std::uint64_t>(), stream);
    const PoolBuffer failed(sizeof(unsigned int), stream, kOutOfMemory);
    DPSELECT_CUDA_TRY(cudaMemsetAsync(failed.as<void>(), 0, sizeof(unsigned int), stream));
    launch_kernel<bound_users_kernel>(blocks_for(user_count), kBlockThreads, 0, stream, pairs, distinct_pairs,
                                      run_starts.as<std::uint64_t>(), user_count, max_partitions, drawn.key,
                                      drawn.stream, candidate_keys.as<std::uint64_t>(), flags.as<unsigned char>(),
                                      failed.as<unsigned int>());
    DPSELECT_CUDA_TRY(cudaGetLastError());
    if (read_device_value(failed.as<unsigned int>(), stream) != 0) {
      throw std::logic_error("dpselect: 2^20 rejections in a row");
    }
  }
  pairs_holder.reset();  // freed in stream order: nothing reads the records any more

  // 3, first half: the kept keys compacted.
  DeviceKeys kept{PoolBuffer(distinct_pairs * sizeof(std::uint64_t), stream, kOutOfMemory), 0};
  kept.count = compact(candidate_keys.as<std::uint64_t>(), flags.as<unsigned char>(), distinct_pairs,
                       kept.keys.as<std::uint64_t>(), stream);
  return kept;
}

// Steps 3 (the kept keys sorted and counted), 4 and 5 over `kept` (every kept pair of each of its
// keys; its buffer then holds the distinct keys): the released keys, ascending, on the host.
ReleasedKeys released_on_device(DeviceKeys& kept, const DeviceCuts& cuts, const PartitionKeepRule& rule,
                                PartitionStrategy strategy, const ContextAccess::KeyedStream& drawn,
                                cudaStream_t stream) {
  const std::uint64_t kept_count = kept.count;
  const PoolBuffer sorted_kept(kept_count * sizeof(std::uint64_t), stream, kOutOfMemory);
  {
    std::size_t temp_bytes = 0;
    DPSELECT_CUDA_TRY(with_item_count(kept_count, [&](auto items) {
      return cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, kept.keys.as<std::uint64_t>(),
                                            sorted_kept.as<std::uint64_t>(), items, 0, 64, stream);
    }));
    const PoolBuffer temp(temp_bytes, stream, kOutOfMemory);
    DPSELECT_CUDA_TRY(with_item_count(kept_count, [&](auto items) {
      return cub::DeviceRadixSort::SortKeys(temp.as<void>(), temp_bytes, kept.keys.as<std::uint64_t>(),
                                            sorted_kept.as<std::uint64_t>(), items, 0, 64, stream);
    }));
  }
  // The distinct keys reuse `kept`.
  std::uint64_t* const distinct = kept.keys.as<std::uint64_t>();
  const PoolBuffer users_of_key(kept_count * sizeof(std::uint64_t), stream, kOutOfMemory);
  std::uint64_t distinct_keys = 0;
  {
    const PoolBuffer runs(sizeof(std::uint64_t), stream, kOutOfMemory);
    std::size_t temp_bytes = 0;
    DPSELECT_CUDA_TRY(cub::DeviceRunLengthEncode::Encode(nullptr, temp_bytes, sorted_kept.as<std::uint64_t>(),
                                                         distinct, users_of_key.as<std::uint64_t>(),
                                                         runs.as<std::uint64_t>(), kept_count, stream));
    const PoolBuffer temp(temp_bytes, stream, kOutOfMemory);
    DPSELECT_CUDA_TRY(cub::DeviceRunLengthEncode::Encode(temp.as<void>(), temp_bytes, sorted_kept.as<std::uint64_t>(),
                                                         distinct, users_of_key.as<std::uint64_t>(),
                                                         runs.as<std::uint64_t>(), kept_count, stream));
    distinct_keys = read_device_value(runs.as<std::uint64_t>(), stream);
  }

  // 4. The coins, against the host's cuts.
  const KeepCuts& table = cuts.table;
  const PoolBuffer released_flags(distinct_keys, stream, kOutOfMemory);
  const PoolBuffer deferred_flags(distinct_keys, stream, kOutOfMemory);
  launch_kernel<decide_keys_kernel>(blocks_for(distinct_keys), kBlockThreads, 0, stream, distinct,
                                    users_of_key.as<std::uint64_t>(), distinct_keys, cuts.cuts.as<std::uint64_t>(),
                                    table.cuts.size(), table.certain, drawn.key, drawn.stream,
                                    released_flags.as<unsigned char>(), deferred_flags.as<unsigned char>());
  DPSELECT_CUDA_TRY(cudaGetLastError());

  // 5. Back to the host: the released keys, and the deferred ones decided there.
  ReleasedKeys released;
  released.distinct = distinct_keys;
  const std::uint64_t released_count = compact(distinct, released_flags.as<unsigned char>(), distinct_keys,
                                               sorted_kept.as<std::uint64_t>(), stream);
  released.keys = copied_to_host(sorted_kept.as<std::uint64_t>(), released_count, stream);
  if (!table.certain) {
    const PoolBuffer deferred_keys(distinct_keys * sizeof(std::uint64_t), stream, kOutOfMemory);
    const PoolBuffer deferred_counts(distinct_keys * sizeof(std::uint64_t), stream, kOutOfMemory);
    const std::uint64_t deferred = compact(distinct, deferred_flags.as<unsigned char>(), distinct_keys,
                                           deferred_keys.as<std::uint64_t>(), stream);
    compact(users_of_key.as<std::uint64_t>(), deferred_flags.as<unsigned char>(), distinct_keys,
            deferred_counts.as<std::uint64_t>(), stream);
    const std::vector<std::uint64_t> keys_here = copied_to_host(deferred_keys.as<std::uint64_t>(), deferred, stream);
    const std::vector<std::uint64_t> counts_here =
        copied_to_host(deferred_counts.as<std::uint64_t>(), deferred, stream);
    for (std::uint64_t i = 0; i < deferred; ++i) {
      const std::uint64_t coin = key_coin(random_block(drawn.key, drawn.stream, key_coin_position(keys_here[i])));
      if (coin < keep_cut(keep_probability(rule, strategy, counts_here[i]))) released.keys.push_back(keys_here[i]);
    }
    std::sort(released.keys.begin(), released.keys.end());
  }
  return released;
}

// The pairs one chunk may hold: what the device has free (its own free memory and what the
// library's pool holds idle), less a margin for CUB's scratch and other users of the device, over
// the peak bytes per pair, and at least kSmallestChunkPairs (a device with less room than that
// fails with kOutOfMemory); or what a test set.
std::uint64_t pairs_per_chunk() {
  if (const std::uint64_t for_testing = chunk_pairs_for_testing.load(std::memory_order_relaxed); for_testing != 0) {
    return for_testing;
  }
  int device = 0;
  DPSELECT_CUDA_TRY(cudaGetDevice(&device));
  std::size_t free_bytes = 0, total_bytes = 0;
  DPSELECT_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  const DeviceMemoryUsage pool = gpu_pool_usage(device);
  const std::uint64_t available = free_bytes + (pool.reserved_bytes - pool.used_bytes);
  const std::uint64_t margin = available / 10 + std::min<std::uint64_t>(available / 4, std::uint64_t{256} << 20);
  return std::max(kSmallestChunkPairs, (available - margin) / kPeakBytesPerPair);
}

}  // namespace

void set_partition_chunk_pairs_for_testing(std::uint64_t pairs) {
  chunk_pairs_for_testing.store(pairs, std::memory_order_relaxed);
}

ReleasedKeys gpu_select_partitions(const std::uint64_t* users, const std::uint64_t* keys, std::uint64_t count,
                                   bool on_device, std::uint64_t max_partitions, const PartitionKeepRule& rule,
                                   PartitionStrategy strategy, const ContextAccess::KeyedStream& drawn,
                                   cuda_stream_t stream_handle) {
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  const DeviceCuts cuts(rule, strategy, stream);
  const std::uint64_t chunk_pairs = pairs_per_chunk();
  if (count <= chunk_pairs) {
    DeviceKeys kept = kept_keys_on_device(pairs_from_arrays(users, keys, count, on_device, stream), count,
                                          max_partitions, drawn, stream);
    return released_on_device(kept, cuts, rule, strategy, drawn, stream);
  }

  // In chunks: the pairs grouped by user on the host (partition_chunks.hpp).
  std::vector<Contribution> records;
  if (on_device) {
    const std::vector<std::uint64_t> host_users = copied_to_host(users, count, stream);
    const std::vector<std::uint64_t> host_keys = copied_to_host(keys, count, stream);
    records = contributions_of(host_users, host_keys);
  } else {
    records = contributions_of({users, count}, {keys, count});
  }
  const DevicePartitionPasses passes{
      [&](std::span<const Contribution> chunk, std::vector<std::uint64_t>& kept) {
        const DeviceKeys chunk_kept =
            kept_keys_on_device(pairs_from_records(chunk, stream), chunk.size(), max_partitions, drawn, stream);
        const std::size_t before = kept.size();
        kept.resize(before + chunk_kept.count);
        if (chunk_kept.count == 0) return;
        DPSELECT_CUDA_TRY(cudaMemcpyAsync(kept.data() + before, chunk_kept.keys.as<void>(),
                                          chunk_kept.count * sizeof(std::uint64_t), cudaMemcpyDeviceToHost, stream));
        DPSELECT_CUDA_TRY(cudaStreamSynchronize(stream));
      },
      [&](std::span<const std::uint64_t> chunk) {
        DeviceKeys kept{PoolBuffer(chunk.size() * sizeof(std::uint64_t), stream, kOutOfMemory), chunk.size()};
        DPSELECT_CUDA_TRY(cudaMemcpyAsync(kept.keys.as<void>(), chunk.data(), chunk.size() * sizeof(std::uint64_t),
                                          cudaMemcpyHostToDevice, stream));
        return released_on_device(kept, cuts, rule, strategy, drawn, stream);
      }};
  const std::uint64_t chunk_keys = chunk_pairs * kPeakBytesPerPair / kPeakBytesPerKey;
  return chunked_released_keys(records, chunk_pairs, chunk_keys, max_partitions, rule, strategy, drawn, passes);
}

}  // namespace dpselect::detail
