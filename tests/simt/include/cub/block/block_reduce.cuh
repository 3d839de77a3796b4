// SPDX-License-Identifier: Apache-2.0
// cub::BlockReduce for the simt build, as CUB's default algorithm (BLOCK_REDUCE_WARP_REDUCTIONS)
// computes it: each warp's shuffle tree, lane 0 of each warp writes its aggregate to the shared
// temp storage, one __syncthreads, and thread 0 folds the warps' aggregates in warp order. The
// result is valid in thread 0 only. No barrier follows: code that reuses the temp storage without
// one races, as with CUB.
#pragma once

#include <cstring>
#include <type_traits>

#include "simt/collectives.hpp"

namespace cub {

enum BlockReduceAlgorithm { BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY, BLOCK_REDUCE_RAKING, BLOCK_REDUCE_WARP_REDUCTIONS };

template <class T, int BlockDimX, BlockReduceAlgorithm Algorithm = BLOCK_REDUCE_WARP_REDUCTIONS, int BlockDimY = 1,
          int BlockDimZ = 1>
class BlockReduce {
  static constexpr unsigned int kThreads = static_cast<unsigned int>(BlockDimX * BlockDimY * BlockDimZ);
  static constexpr unsigned int kWarps = (kThreads + 31) / 32;
  static_assert(kThreads % 32 == 0, "the simt model of BlockReduce covers blocks of whole warps");
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  struct TempStorage {
    alignas(T) unsigned char warp_aggregates[sizeof(T) * kWarps];
  };

  explicit BlockReduce(TempStorage& storage) : storage_(storage) {}

  template <class Op>
  T Reduce(T input, Op op) {
    ::simt::cub_model::require_block_shape(kThreads, "cub::BlockReduce");
    const unsigned int thread = ::simt::cub_model::linear_thread_index();
    const T warp_aggregate = ::simt::cub_model::warp_reduce<32>(input, op);
    if (thread % 32 == 0) {
      std::memcpy(storage_.warp_aggregates + sizeof(T) * (thread / 32), &warp_aggregate, sizeof(T));
    }
    __syncthreads();
    if (thread != 0) return warp_aggregate;
    T total = warp_aggregate;
    for (unsigned int warp = 1; warp < kWarps; ++warp) {
      T other;
      std::memcpy(&other, storage_.warp_aggregates + sizeof(T) * warp, sizeof(T));
      total = op(total, other);
    }
    return total;
  }
  T Sum(T input) {
    return Reduce(input, [](const T& a, const T& b) { return a + b; });
  }

 private:
  TempStorage& storage_;
};

}  // namespace cub
