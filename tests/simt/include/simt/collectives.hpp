// SPDX-License-Identifier: Apache-2.0
// The CUB pieces of the simt build (tests/simt/include/cub): CUB's block and warp reductions as
// CUB computes them (a shuffle-down tree in each warp, then the warps' aggregates folded in warp
// order by thread 0, through shared memory and one barrier), and the host side of its device-wide
// algorithms: the two-phase temp-storage protocol and the check that every buffer is device
// memory. Test-tree only.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace simt::cub_model {

// The running thread's index within its block, x fastest (CUB's linear thread id).
inline unsigned int linear_thread_index() {
  const Position& p = position();
  return p.thread_index.x + p.block_dim.x * (p.thread_index.y + p.block_dim.y * p.thread_index.z);
}

inline void require_block_shape(unsigned int threads, const char* algorithm) {
  const Position& p = position();
  const unsigned int actual = p.block_dim.x * p.block_dim.y * p.block_dim.z;
  if (actual != threads) {
    fail(std::string(algorithm) + " declared for " + std::to_string(threads) + " threads, run by a block of " +
         std::to_string(actual));
  }
}

// `value` of lane `source` of the lanes in `mask`, for a T of any size, in one collective (CUB
// moves a struct through the warp a word at a time; the lanes' values are the same).
template <class T>
T shuffle_any(unsigned int mask, const T& value, unsigned int source) {
  static_assert(std::is_trivially_copyable_v<T>, "a shuffled value must be trivially copyable");
  alignas(T) unsigned char result[sizeof(T)];
  warp_shuffle_bytes(mask, &value, result, sizeof(T), source, "cub warp reduction (shuffle)");
  T shuffled;
  std::memcpy(&shuffled, result, sizeof(T));
  return shuffled;
}

// CUB's WarpReduceShfl: offsets 1, 2, 4, ... up to the logical warp; lane l combines with lane
// l + offset where that lane is inside the logical warp. The aggregate is valid in lane 0 only.
template <int LogicalWarpThreads, class T, class Op>
T warp_reduce(T value, Op op) {
  static_assert(LogicalWarpThreads > 0 && LogicalWarpThreads <= 32 &&
                    (LogicalWarpThreads & (LogicalWarpThreads - 1)) == 0,
                "a logical warp is a power of two of at most 32 lanes");
  const unsigned int thread = linear_thread_index();
  const unsigned int lane = thread % 32u;
  const unsigned int logical_lane = lane % LogicalWarpThreads;
  const unsigned int first_lane = lane - logical_lane;
  const unsigned int mask = LogicalWarpThreads == 32 ? 0xFFFFFFFFu
                                                     : ((1u << LogicalWarpThreads) - 1u) << first_lane;
  for (unsigned int offset = 1; offset < static_cast<unsigned int>(LogicalWarpThreads); offset *= 2) {
    const bool inside = logical_lane + offset < static_cast<unsigned int>(LogicalWarpThreads);
    const T other = shuffle_any(mask, value, inside ? lane + offset : lane);
    if (inside) value = op(value, other);
  }
  return value;
}

// Device-wide algorithms: with `temp` null, sets `temp_bytes` to what the call needs and returns
// true (the size query); else checks that `temp` is device memory of at least that size.
inline bool temp_storage_query(void* temp, std::size_t& temp_bytes, std::size_t needed, const char* algorithm) {
  if (temp == nullptr) {
    temp_bytes = needed;
    return true;
  }
  if (temp_bytes < needed) {
    fail(std::string(algorithm) + ": temp storage of " + std::to_string(temp_bytes) + " bytes, " +
         std::to_string(needed) + " needed (the size query was made for other arguments)");
  }
  require_device_memory(temp, needed, algorithm);
  return false;
}

// The items [first, first + count) of a buffer given to a device-wide algorithm: device memory,
// where it is a pointer (an iterator such as a counting iterator holds no memory).
template <class Iterator>
void require_items(Iterator first, std::uint64_t count, const char* what) {
  if constexpr (std::is_pointer_v<Iterator>) {
    using Item = std::remove_cv_t<std::remove_pointer_t<Iterator>>;
    require_device_memory(static_cast<const void*>(first), count * sizeof(Item), what);
  }
}

}  // namespace simt::cub_model
