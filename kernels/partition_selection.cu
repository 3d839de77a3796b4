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
// Device memory at the peak: about 48 bytes a pair (the records, the sorted copy, CUB's alternate
// buffer), from the library's pool; a device too small throws CudaError (the release stays
// charged), which says nothing of the number of pairs.
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/std/tuple>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

#include "dpselect/detail/cuda_check.cuh"
#include "dpselect/errors.hpp"
#include "dpselect/random_key.hpp"
#include "launch_helpers.cuh"
#include "partition_selection/partition_passes.hpp"
#include "partition_selection/partition_randomness.hpp"

namespace dpselect::detail {
namespace {

constexpr int kBlockThreads = 256;
constexpr std::uint64_t kMaxBlocks = 8192;
// The host's table of keep cuts holds at most this many counts (32 MiB).
constexpr std::uint64_t kCutTableLimit = std::uint64_t{1} << 22;

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

}  // namespace

ReleasedKeys gpu_select_partitions(const std::uint64_t* users, const std::uint64_t* keys, std::uint64_t count,
                                   bool on_device, std::uint64_t max_partitions, const PartitionKeepRule& rule,
                                   PartitionStrategy strategy, const ContextAccess::KeyedStream& drawn,
                                   cuda_stream_t stream_handle) {
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  // 1. The records, sorted, without repeats.
  std::optional<PoolBuffer> pairs_buffer(std::in_place, count * sizeof(DevicePair), stream, kOutOfMemory);
  DevicePair* const pairs = pairs_buffer->as<DevicePair>();
  {
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
    interleave_kernel<<<blocks_for(count), kBlockThreads, 0, stream>>>(device_users, device_keys, count,
                                                                      pairs);
    DPSELECT_CUDA_TRY(cudaGetLastError());
  }
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
    user_starts_kernel<<<blocks_for(distinct_pairs), kBlockThreads, 0, stream>>>(
        pairs, distinct_pairs, flags.as<unsigned char>());
    DPSELECT_CUDA_TRY(cudaGetLastError());
    const PoolBuffer run_starts(distinct_pairs * sizeof(std::uint64_t), stream, kOutOfMemory);
    const std::uint64_t user_count = compact(thrust::counting_iterator<std::uint64_t>(0), flags.as<unsigned char>(),
                                             distinct_pairs, run_starts.as<std::uint64_t>(), stream);
    const PoolBuffer failed(sizeof(unsigned int), stream, kOutOfMemory);
    DPSELECT_CUDA_TRY(cudaMemsetAsync(failed.as<void>(), 0, sizeof(unsigned int), stream));
    bound_users_kernel<<<blocks_for(user_count), kBlockThreads, 0, stream>>>(
        pairs, distinct_pairs, run_starts.as<std::uint64_t>(), user_count, max_partitions, drawn.key,
        drawn.stream, candidate_keys.as<std::uint64_t>(), flags.as<unsigned char>(), failed.as<unsigned int>());
    DPSELECT_CUDA_TRY(cudaGetLastError());
    if (read_device_value(failed.as<unsigned int>(), stream) != 0) {
      throw std::logic_error("dpselect: 2^20 rejections in a row");
    }
  }
  pairs_buffer.reset();  // freed in stream order: nothing reads the records any more

  // 3. The kept keys, sorted and counted.
  const PoolBuffer kept(distinct_pairs * sizeof(std::uint64_t), stream, kOutOfMemory);
  const std::uint64_t kept_count = compact(candidate_keys.as<std::uint64_t>(), flags.as<unsigned char>(),
                                           distinct_pairs, kept.as<std::uint64_t>(), stream);
  const PoolBuffer sorted_kept(kept_count * sizeof(std::uint64_t), stream, kOutOfMemory);
  {
    std::size_t temp_bytes = 0;
    DPSELECT_CUDA_TRY(with_item_count(kept_count, [&](auto items) {
      return cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, kept.as<std::uint64_t>(),
                                            sorted_kept.as<std::uint64_t>(), items, 0, 64, stream);
    }));
    const PoolBuffer temp(temp_bytes, stream, kOutOfMemory);
    DPSELECT_CUDA_TRY(with_item_count(kept_count, [&](auto items) {
      return cub::DeviceRadixSort::SortKeys(temp.as<void>(), temp_bytes, kept.as<std::uint64_t>(),
                                            sorted_kept.as<std::uint64_t>(), items, 0, 64, stream);
    }));
  }
  // The distinct keys reuse `kept`, their counts `candidate_keys`.
  std::uint64_t distinct_keys = 0;
  {
    const PoolBuffer runs(sizeof(std::uint64_t), stream, kOutOfMemory);
    std::size_t temp_bytes = 0;
    DPSELECT_CUDA_TRY(cub::DeviceRunLengthEncode::Encode(nullptr, temp_bytes, sorted_kept.as<std::uint64_t>(),
                                                         kept.as<std::uint64_t>(), candidate_keys.as<std::uint64_t>(),
                                                         runs.as<std::uint64_t>(), kept_count, stream));
    const PoolBuffer temp(temp_bytes, stream, kOutOfMemory);
    DPSELECT_CUDA_TRY(cub::DeviceRunLengthEncode::Encode(temp.as<void>(), temp_bytes, sorted_kept.as<std::uint64_t>(),
                                                         kept.as<std::uint64_t>(), candidate_keys.as<std::uint64_t>(),
                                                         runs.as<std::uint64_t>(), kept_count, stream));
    distinct_keys = read_device_value(runs.as<std::uint64_t>(), stream);
  }

  // 4. The coins, against the host's cuts.
  const KeepCuts table = keep_cut_table(rule, strategy, kCutTableLimit);
  const PoolBuffer cuts(table.cuts.size() * sizeof(std::uint64_t), stream, kOutOfMemory);
  if (!table.cuts.empty()) {
    DPSELECT_CUDA_TRY(cudaMemcpyAsync(cuts.as<void>(), table.cuts.data(), table.cuts.size() * sizeof(std::uint64_t),
                                      cudaMemcpyHostToDevice, stream));
  }
  const PoolBuffer released_flags(distinct_keys, stream, kOutOfMemory);
  const PoolBuffer deferred_flags(distinct_keys, stream, kOutOfMemory);
  decide_keys_kernel<<<blocks_for(distinct_keys), kBlockThreads, 0, stream>>>(
      kept.as<std::uint64_t>(), candidate_keys.as<std::uint64_t>(), distinct_keys, cuts.as<std::uint64_t>(),
      table.cuts.size(), table.certain, drawn.key, drawn.stream, released_flags.as<unsigned char>(),
      deferred_flags.as<unsigned char>());
  DPSELECT_CUDA_TRY(cudaGetLastError());

  // 5. Back to the host: the released keys, and the deferred ones decided there.
  ReleasedKeys released;
  released.distinct = distinct_keys;
  const std::uint64_t released_count = compact(kept.as<std::uint64_t>(), released_flags.as<unsigned char>(),
                                               distinct_keys, sorted_kept.as<std::uint64_t>(), stream);
  released.keys = copied_to_host(sorted_kept.as<std::uint64_t>(), released_count, stream);
  if (!table.certain) {
    const PoolBuffer deferred_keys(distinct_keys * sizeof(std::uint64_t), stream, kOutOfMemory);
    const PoolBuffer deferred_counts(distinct_keys * sizeof(std::uint64_t), stream, kOutOfMemory);
    const std::uint64_t deferred = compact(kept.as<std::uint64_t>(), deferred_flags.as<unsigned char>(),
                                           distinct_keys, deferred_keys.as<std::uint64_t>(), stream);
    compact(candidate_keys.as<std::uint64_t>(), deferred_flags.as<unsigned char>(), distinct_keys,
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

}  // namespace dpselect::detail
