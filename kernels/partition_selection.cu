// SPDX-License-Identifier: Apache-2.0
// Partition selection's device steps (host/partition_selection/gpu.hpp; the host's
// gpu_selection.cpp runs them): the CPU passes' steps, each a CUB device algorithm or a grid-stride
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
//   5. the released keys copied back, and the deferred keys with their counts.
// Device memory at the peak: about 48 bytes a pair (the records, the sorted copy, CUB's
// alternate buffer), from the library's pool. Steps 1-2 and 3-5 also run apart, over chunks the
// host cut (partition_chunks.hpp).
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/std/tuple>
#include <thrust/iterator/counting_iterator.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

#include "common/launch_helpers.cuh"
#include "dpselect/detail/cuda_check.cuh"
#include "dpselect/detail/kernel_launch.cuh"
#include "dpselect/errors.hpp"
#include "dpselect/random_key.hpp"
#include "partition_selection/gpu.hpp"
#include "random/partition_randomness.hpp"

namespace dpselect::detail {
namespace {

using Policy = GridStridePolicy;

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

__global__ void __launch_bounds__(Policy::kBlockThreads)
    interleave_kernel(const std::uint64_t* users, const std::uint64_t* keys, std::uint64_t count, DevicePair* pairs) {
  for (const std::uint64_t i : grid_stride_indices<Policy::kBlockThreads>(count)) {
    pairs[i] = DevicePair{users[i], keys[i]};
  }
}

// 1 where a user's run begins.
__global__ void __launch_bounds__(Policy::kBlockThreads)
    user_starts_kernel(const DevicePair* pairs, std::uint64_t count, unsigned char* starts) {
  for (const std::uint64_t i : grid_stride_indices<Policy::kBlockThreads>(count)) {
    starts[i] = i == 0 || pairs[i].user != pairs[i - 1].user;
  }
}

// One thread per user (run r: pairs [run_starts[r], run_starts[r + 1]) or to `count`): its keys
// shuffled in place as partition_randomness.hpp draws them, keep[j] = 1 for the kept ones, and
// its keys written to `keys` for the compaction. A draw rejected 2^20 times in a row (never in
// practice) sets *failed.
__global__ void __launch_bounds__(Policy::kBlockThreads)
    bound_users_kernel(DevicePair* pairs, std::uint64_t count, const std::uint64_t* run_starts, std::uint64_t users,
                       std::uint64_t max_partitions, RandomKey random_key, std::uint64_t stream_id,
                       std::uint64_t* keys, unsigned char* keep, unsigned int* failed) {
  for (const std::uint64_t r : grid_stride_indices<Policy::kBlockThreads>(users)) {
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

__global__ void __launch_bounds__(Policy::kBlockThreads)
    decide_keys_kernel(const std::uint64_t* keys, const std::uint64_t* users_of_key, std::uint64_t distinct,
                       const std::uint64_t* cuts, std::uint64_t table_size, bool certain_beyond, RandomKey random_key,
                       std::uint64_t stream_id, unsigned char* released, unsigned char* deferred) {
  for (const std::uint64_t r : grid_stride_indices<Policy::kBlockThreads>(distinct)) {
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
  const DeviceScratch selected(sizeof(std::uint64_t), stream, kOutOfMemory);
  std::size_t temp_bytes = 0;
  DPSELECT_CUDA_TRY(cub::DeviceSelect::Flagged(nullptr, temp_bytes, values, flags, out,
                                               selected.as<std::uint64_t>(), count, stream));
  const DeviceScratch temp(temp_bytes, stream, kOutOfMemory);
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

}  // namespace

// floor(p(n) 2^53) for the counts n of the host's table (keep_cut_table), in device memory.
struct GpuKeepCuts::Device {
  Device(const KeepCuts& table, cudaStream_t stream)
      : cuts(table.cuts.size() * sizeof(std::uint64_t), stream, kOutOfMemory), size(table.cuts.size()),
        certain(table.certain) {
    if (!table.cuts.empty()) {
      DPSELECT_CUDA_TRY(cudaMemcpyAsync(cuts.as<void>(), table.cuts.data(), table.cuts.size() * sizeof(std::uint64_t),
                                        cudaMemcpyHostToDevice, stream));
    }
  }
  DeviceScratch cuts;
  std::uint64_t size;
  bool certain;
};

GpuKeepCuts::GpuKeepCuts(const KeepCuts& table, cuda_stream_t stream)
    : device_(std::make_unique<Device>(table, static_cast<cudaStream_t>(stream))) {}
GpuKeepCuts::~GpuKeepCuts() = default;

namespace {

// `count` 64-bit keys in device memory.
struct DeviceKeys {
  DeviceScratch keys;
  std::uint64_t count = 0;
};

// Step 1's records from the caller's users and keys (host memory, copied in, or device memory).
DeviceScratch pairs_from_arrays(const std::uint64_t* users, const std::uint64_t* keys, std::uint64_t count,
                                bool on_device, cudaStream_t stream) {
  DeviceScratch pairs(count * sizeof(DevicePair), stream, kOutOfMemory);
  const std::uint64_t* device_users = users;
  const std::uint64_t* device_keys = keys;
  DeviceScratch staged_users(on_device ? 0 : count * sizeof(std::uint64_t), stream, kOutOfMemory);
  DeviceScratch staged_keys(on_device ? 0 : count * sizeof(std::uint64_t), stream, kOutOfMemory);
  if (!on_device) {
    DPSELECT_CUDA_TRY(cudaMemcpyAsync(staged_users.as<void>(), users, count * sizeof(std::uint64_t),
                                      cudaMemcpyHostToDevice, stream));
    DPSELECT_CUDA_TRY(cudaMemcpyAsync(staged_keys.as<void>(), keys, count * sizeof(std::uint64_t),
                                      cudaMemcpyHostToDevice, stream));
    device_users = staged_users.as<std::uint64_t>();
    device_keys = staged_keys.as<std::uint64_t>();
  }
  launch_kernel<interleave_kernel>(grid_blocks<Policy>(count), Policy::kBlockThreads, 0, stream, device_users,
                                   device_keys, count, pairs.as<DevicePair>());
  DPSELECT_CUDA_TRY(cudaGetLastError());
  return pairs;
}

// Step 1's records from a chunk of the host's (user, key) records, which have DevicePair's layout.
static_assert(sizeof(Contribution) == sizeof(DevicePair) && offsetof(Contribution, user) == offsetof(DevicePair, user) &&
              offsetof(Contribution, key) == offsetof(DevicePair, key));
DeviceScratch pairs_from_records(std::span<const Contribution> records, cudaStream_t stream) {
  DeviceScratch pairs(records.size() * sizeof(DevicePair), stream, kOutOfMemory);
  // From pageable memory the copy returns once it has left the caller's buffer.
  DPSELECT_CUDA_TRY(cudaMemcpyAsync(pairs.as<void>(), records.data(), records.size() * sizeof(DevicePair),
                                    cudaMemcpyHostToDevice, stream));
  return pairs;
}

// Steps 1 (the sort and the repeats dropped) and 2 over the `count` records of `pairs_buffer`
// (consumed), and the kept keys compacted: one per kept pair, in device memory.
DeviceKeys kept_keys_on_device(DeviceScratch pairs_buffer, std::uint64_t count, std::uint64_t max_partitions,
                               const ContextAccess::KeyedStream& drawn, cudaStream_t stream) {
  std::optional<DeviceScratch> pairs_holder(std::move(pairs_buffer));
  DevicePair* const pairs = pairs_holder->as<DevicePair>();
  std::uint64_t distinct_pairs = 0;
  {
    const DeviceScratch sorted(count * sizeof(DevicePair), stream, kOutOfMemory);
    std::size_t temp_bytes = 0;
    DPSELECT_CUDA_TRY(with_item_count(count, [&](auto items) {
      return cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, pairs, sorted.as<DevicePair>(),
                                            items, PairDecomposer{}, stream);
    }));
    {
      const DeviceScratch temp(temp_bytes, stream, kOutOfMemory);
      DPSELECT_CUDA_TRY(with_item_count(count, [&](auto items) {
        return cub::DeviceRadixSort::SortKeys(temp.as<void>(), temp_bytes, pairs,
                                              sorted.as<DevicePair>(), items, PairDecomposer{}, stream);
      }));
    }
    const DeviceScratch selected(sizeof(std::uint64_t), stream, kOutOfMemory);
    temp_bytes = 0;
    DPSELECT_CUDA_TRY(cub::DeviceSelect::Unique(nullptr, temp_bytes, sorted.as<DevicePair>(), pairs,
                                                selected.as<std::uint64_t>(), count, stream));
    const DeviceScratch temp(temp_bytes, stream, kOutOfMemory);
    DPSELECT_CUDA_TRY(cub::DeviceSelect::Unique(temp.as<void>(), temp_bytes, sorted.as<DevicePair>(),
                                                pairs, selected.as<std::uint64_t>(), count, stream));
    distinct_pairs = read_device_value(selected.as<std::uint64_t>(), stream);
  }

  // 2. Each user bounded.
  const DeviceScratch flags(distinct_pairs, stream, kOutOfMemory);
  const DeviceScratch candidate_keys(distinct_pairs * sizeof(std::uint64_t), stream, kOutOfMemory);
  {
    launch_kernel<user_starts_kernel>(grid_blocks<Policy>(distinct_pairs), Policy::kBlockThreads, 0, stream, pairs,
                                      distinct_pairs, flags.as<unsigned char>());
    DPSELECT_CUDA_TRY(cudaGetLastError());
    const DeviceScratch run_starts(distinct_pairs * sizeof(std::uint64_t), stream, kOutOfMemory);
    const std::uint64_t user_count = compact(thrust::counting_iterator<std::uint64_t>(0), flags.as<unsigned char>(),
                                             distinct_pairs, run_starts.as<std::uint64_t>(), stream);
    const DeviceScratch failed(sizeof(unsigned int), stream, kOutOfMemory);
    DPSELECT_CUDA_TRY(cudaMemsetAsync(failed.as<void>(), 0, sizeof(unsigned int), stream));
    launch_kernel<bound_users_kernel>(grid_blocks<Policy>(user_count), Policy::kBlockThreads, 0, stream, pairs,
                                      distinct_pairs, run_starts.as<std::uint64_t>(), user_count, max_partitions,
                                      drawn.key, drawn.stream, candidate_keys.as<std::uint64_t>(),
                                      flags.as<unsigned char>(), failed.as<unsigned int>());
    DPSELECT_CUDA_TRY(cudaGetLastError());
    if (read_device_value(failed.as<unsigned int>(), stream) != 0) {
      throw std::logic_error("dpselect: 2^20 rejections in a row");
    }
  }
  pairs_holder.reset();  // freed in stream order: nothing reads the records any more

  // 3, first half: the kept keys compacted.
  DeviceKeys kept{DeviceScratch(distinct_pairs * sizeof(std::uint64_t), stream, kOutOfMemory), 0};
  kept.count = compact(candidate_keys.as<std::uint64_t>(), flags.as<unsigned char>(), distinct_pairs,
                       kept.keys.as<std::uint64_t>(), stream);
  return kept;
}

// Steps 3 (the kept keys sorted and counted), 4 and 5 over `kept` (every kept pair of each of its
// keys; its buffer then holds the distinct keys): the released keys, ascending, and the deferred
// keys with their counts, on the host.
GpuKeyDecisions decided_on_device(DeviceKeys& kept, const GpuKeepCuts::Device& cuts,
                                  const ContextAccess::KeyedStream& drawn, cudaStream_t stream) {
  const std::uint64_t kept_count = kept.count;
  const DeviceScratch sorted_kept(kept_count * sizeof(std::uint64_t), stream, kOutOfMemory);
  {
    std::size_t temp_bytes = 0;
    DPSELECT_CUDA_TRY(with_item_count(kept_count, [&](auto items) {
      return cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, kept.keys.as<std::uint64_t>(),
                                            sorted_kept.as<std::uint64_t>(), items, 0, 64, stream);
    }));
    const DeviceScratch temp(temp_bytes, stream, kOutOfMemory);
    DPSELECT_CUDA_TRY(with_item_count(kept_count, [&](auto items) {
      return cub::DeviceRadixSort::SortKeys(temp.as<void>(), temp_bytes, kept.keys.as<std::uint64_t>(),
                                            sorted_kept.as<std::uint64_t>(), items, 0, 64, stream);
    }));
  }
  // The distinct keys reuse `kept`.
  std::uint64_t* const distinct = kept.keys.as<std::uint64_t>();
  const DeviceScratch users_of_key(kept_count * sizeof(std::uint64_t), stream, kOutOfMemory);
  std::uint64_t distinct_keys = 0;
  {
    const DeviceScratch runs(sizeof(std::uint64_t), stream, kOutOfMemory);
    std::size_t temp_bytes = 0;
    DPSELECT_CUDA_TRY(cub::DeviceRunLengthEncode::Encode(nullptr, temp_bytes, sorted_kept.as<std::uint64_t>(),
                                                         distinct, users_of_key.as<std::uint64_t>(),
                                                         runs.as<std::uint64_t>(), kept_count, stream));
    const DeviceScratch temp(temp_bytes, stream, kOutOfMemory);
    DPSELECT_CUDA_TRY(cub::DeviceRunLengthEncode::Encode(temp.as<void>(), temp_bytes, sorted_kept.as<std::uint64_t>(),
                                                         distinct, users_of_key.as<std::uint64_t>(),
                                                         runs.as<std::uint64_t>(), kept_count, stream));
    distinct_keys = read_device_value(runs.as<std::uint64_t>(), stream);
  }

  // 4. The coins, against the host's cuts.
  const DeviceScratch released_flags(distinct_keys, stream, kOutOfMemory);
  const DeviceScratch deferred_flags(distinct_keys, stream, kOutOfMemory);
  launch_kernel<decide_keys_kernel>(grid_blocks<Policy>(distinct_keys), Policy::kBlockThreads, 0, stream, distinct,
                                    users_of_key.as<std::uint64_t>(), distinct_keys, cuts.cuts.as<std::uint64_t>(),
                                    cuts.size, cuts.certain, drawn.key, drawn.stream,
                                    released_flags.as<unsigned char>(), deferred_flags.as<unsigned char>());
  DPSELECT_CUDA_TRY(cudaGetLastError());

  // 5. Back to the host: the released keys, and the deferred ones for the host to decide.
  GpuKeyDecisions decisions;
  decisions.distinct = distinct_keys;
  const std::uint64_t released_count = compact(distinct, released_flags.as<unsigned char>(), distinct_keys,
                                               sorted_kept.as<std::uint64_t>(), stream);
  decisions.released = copied_to_host(sorted_kept.as<std::uint64_t>(), released_count, stream);
  if (!cuts.certain) {
    const DeviceScratch deferred_keys(distinct_keys * sizeof(std::uint64_t), stream, kOutOfMemory);
    const DeviceScratch deferred_counts(distinct_keys * sizeof(std::uint64_t), stream, kOutOfMemory);
    const std::uint64_t deferred = compact(distinct, deferred_flags.as<unsigned char>(), distinct_keys,
                                           deferred_keys.as<std::uint64_t>(), stream);
    compact(users_of_key.as<std::uint64_t>(), deferred_flags.as<unsigned char>(), distinct_keys,
            deferred_counts.as<std::uint64_t>(), stream);
    decisions.deferred_keys = copied_to_host(deferred_keys.as<std::uint64_t>(), deferred, stream);
    decisions.deferred_counts = copied_to_host(deferred_counts.as<std::uint64_t>(), deferred, stream);
  }
  return decisions;
}

}  // namespace

GpuKeyDecisions gpu_partition_decide_pairs(const std::uint64_t* users, const std::uint64_t* keys, std::uint64_t count,
                                           bool on_device, std::uint64_t max_partitions, const GpuKeepCuts& cuts,
                                           const ContextAccess::KeyedStream& drawn, cuda_stream_t stream_handle) {
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  DeviceKeys kept = kept_keys_on_device(pairs_from_arrays(users, keys, count, on_device, stream), count,
                                        max_partitions, drawn, stream);
  return decided_on_device(kept, cuts.device(), drawn, stream);
}

void gpu_partition_keep_pairs(std::span<const Contribution> pairs, std::uint64_t max_partitions,
                              const ContextAccess::KeyedStream& drawn, cuda_stream_t stream_handle,
                              std::vector<std::uint64_t>& kept) {
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  const DeviceKeys chunk_kept =
      kept_keys_on_device(pairs_from_records(pairs, stream), pairs.size(), max_partitions, drawn, stream);
  const std::size_t before = kept.size();
  kept.resize(before + chunk_kept.count);
  if (chunk_kept.count == 0) return;
  DPSELECT_CUDA_TRY(cudaMemcpyAsync(kept.data() + before, chunk_kept.keys.as<void>(),
                                    chunk_kept.count * sizeof(std::uint64_t), cudaMemcpyDeviceToHost, stream));
  DPSELECT_CUDA_TRY(cudaStreamSynchronize(stream));
}

GpuKeyDecisions gpu_partition_decide_keys(std::span<const std::uint64_t> kept_keys, const GpuKeepCuts& cuts,
                                          const ContextAccess::KeyedStream& drawn, cuda_stream_t stream_handle) {
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  DeviceKeys kept{DeviceScratch(kept_keys.size() * sizeof(std::uint64_t), stream, kOutOfMemory), kept_keys.size()};
  DPSELECT_CUDA_TRY(cudaMemcpyAsync(kept.keys.as<void>(), kept_keys.data(), kept_keys.size() * sizeof(std::uint64_t),
                                    cudaMemcpyHostToDevice, stream));
  return decided_on_device(kept, cuts.device(), drawn, stream);
}

}  // namespace dpselect::detail
