// SPDX-License-Identifier: Apache-2.0
// Partition selection's steps on the GPU (kernels/partition_selection.cu): each a pass over pairs
// or keys that the host's selection (gpu_selection.cpp) sizes, chunks and finishes. Every bit is
// drawn from the identity of a pair or key (random/partition_randomness.hpp) and every keep cut is
// the host's own (keep_cut_table), so the released keys are the CPU passes' to the bit.
// Implemented in kernels/ when built with CUDA; in a CPU-only build by gpu_unavailable.cpp beside
// this header, where every entry point throws BackendUnavailable.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "dpselect/context.hpp"
#include "dpselect/detail/release_access.hpp"
#include "partition_selection/partition_passes.hpp"

namespace dpselect::detail {

// Device bytes at the peak: 48 a pair while the records sort (the records, the sorted copy, CUB's
// alternate buffer); 48 a kept key while the keys are decided (the keys, their sorted copy, the
// distinct keys' counts, two flags, and the deferred keys and counts), and CUB's scratch besides.
inline constexpr std::uint64_t kGpuPartitionBytesPerPair = 48;
inline constexpr std::uint64_t kGpuPartitionBytesPerKey = 48;

// One selection's keep cuts (keep_cut_table) in device memory, copied in on `stream` once, whatever
// the number of chunks decided against them.
class GpuKeepCuts {
 public:
  GpuKeepCuts(const KeepCuts& table, cuda_stream_t stream);
  GpuKeepCuts(const GpuKeepCuts&) = delete;
  GpuKeepCuts& operator=(const GpuKeepCuts&) = delete;
  ~GpuKeepCuts();

  struct Device;  // the device copy (kernels/partition_selection.cu)
  const Device& device() const { return *device_; }

 private:
  std::unique_ptr<Device> device_;
};

// What a device pass decided over some whole keys: the released keys (ascending), the number of
// distinct keys, and the keys whose user count lies beyond a cut table that ends before certainty
// (extreme parameters), with those counts, for the host to decide with the same bits.
struct GpuKeyDecisions {
  std::vector<std::uint64_t> released;
  std::uint64_t distinct = 0;
  std::vector<std::uint64_t> deferred_keys;
  std::vector<std::uint64_t> deferred_counts;
};

// Every step over the caller's `count` pairs: `users` and `keys` in host memory (copied in on
// `stream`) or in memory the device reads (`on_device`). Synchronizes `stream`.
GpuKeyDecisions gpu_partition_decide_pairs(const std::uint64_t* users, const std::uint64_t* keys, std::uint64_t count,
                                           bool on_device, std::uint64_t max_partitions, const GpuKeepCuts& cuts,
                                           const ContextAccess::KeyedStream& drawn, cuda_stream_t stream);
// The bounding of a chunk of the host's pairs (every pair of each of its users): the kept keys, one
// per kept pair, appended to `kept`. Synchronizes `stream`.
void gpu_partition_keep_pairs(std::span<const Contribution> pairs, std::uint64_t max_partitions,
                              const ContextAccess::KeyedStream& drawn, cuda_stream_t stream,
                              std::vector<std::uint64_t>& kept);
// The coins of kept keys in host memory (every kept pair of each of its keys). Synchronizes `stream`.
GpuKeyDecisions gpu_partition_decide_keys(std::span<const std::uint64_t> kept, const GpuKeepCuts& cuts,
                                          const ContextAccess::KeyedStream& drawn, cuda_stream_t stream);

}  // namespace dpselect::detail
