// The fused GPU pass: utility -> counter-based noise -> block arg-max -> one merge, with no
// materialised noise, no per-thread RNG state and no device-wide synchronisation. CUDA-only;
// used by kernels/select_arrays.cu (utility arrays) and dpselect/select.cuh (user functors).
//
// Each thread walks a grid-stride loop over groups of 8 candidates keeping a ShardAccumulator
// (which screens candidates that cannot win, noise.hpp), each block reduces with
// cub::BlockReduce, and a one-block kernel merges the block results into a device-resident
// accumulator, so several launches (chunks of a host array) accumulate stream-ordered.
#pragma once

#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <cstdint>

#include "dpselect/detail/cuda_check.cuh"
#include "dpselect/shard_result.hpp"

namespace dpselect::detail {

inline constexpr int kSelectBlockThreads = 256;

// Utility of global index i read from an array holding candidates [first_index, ...).
template <class T>
struct ArraySource {
  const T* data;
  std::uint64_t first_index;
  __device__ __forceinline__ double operator()(std::uint64_t index) const {
    return static_cast<double>(data[index - first_index]);
  }
};

// Utility of global index i computed by a user functor.
template <class UtilityFn>
struct FunctorSource {
  UtilityFn utility;
  __device__ __forceinline__ double operator()(std::uint64_t index) const {
    return static_cast<double>(utility(index));
  }
};

// Groups are taken four at a time: the "quad" q holds groups 4q .. 4q+3 (32 candidates). With
// ChaCha20 the four group blocks of a quad are the four quarters of one 64-byte block (the
// layout of random_block), so a thread computes one ChaCha20 block per 32 candidates rather than
// one per 8: the generator's arithmetic, not memory, bounds a ChaCha20 pass on a GPU. With
// Philox each group block is its own 16-byte block, computed when needed.
inline constexpr std::uint64_t kGroupsPerQuad = 4;

struct QuadBlocks {
  std::uint32_t words[16];

  __device__ __forceinline__ QuadBlocks(const NoiseSpec& spec, std::uint64_t quad) {
    if (spec.key.generator == Generator::chacha20) chacha20_stream_block(spec.key.chacha, spec.stream, quad, words);
  }
  // random_block(spec.key, spec.stream, 4 quad + j).
  __device__ __forceinline__ RandomBlock group_block(const NoiseSpec& spec, std::uint64_t quad, unsigned int j) const {
    if (spec.key.generator == Generator::chacha20) {
      return RandomBlock{{words[4 * j], words[4 * j + 1], words[4 * j + 2], words[4 * j + 3]}};
    }
    return philox_block(spec.key.philox, spec.stream, quad * kGroupsPerQuad + j);
  }
};

// The quads that overlap the groups of `groups`.
__device__ __forceinline__ std::uint64_t first_quad(const GroupRange& groups) {
  return groups.first_group() / kGroupsPerQuad;
}
__device__ __forceinline__ std::uint64_t quad_count(const GroupRange& groups) {
  return (groups.first_group() + groups.group_count() - 1) / kGroupsPerQuad - first_quad(groups) + 1;
}

// Scores the groups of quad `quad` that overlap `groups` (their candidates inside it only).
template <class Source>
__device__ __forceinline__ void add_quad(ShardAccumulator& accumulator, const NoiseSpec& spec, const GroupRange& groups,
                                         std::uint64_t quad, const Source& source) {
  const QuadBlocks blocks(spec, quad);
  const std::uint64_t first_group = groups.first_group();
  const std::uint64_t end_group = first_group + groups.group_count();
  // Unrolled so that the block's words are indexed by constants and stay in registers.
#pragma unroll
  for (unsigned int j = 0; j < kGroupsPerQuad; ++j) {
    const std::uint64_t group = quad * kGroupsPerQuad + j;
    if (group < first_group || group >= end_group) continue;
    accumulator.add_group(spec, group, blocks.group_block(spec, quad, j), groups.lane_begin(group),
                          groups.lane_end(group), source);
  }
}

// Each thread scores whole quads of 4 groups of 8 candidates in a grid-stride loop over the quads
// overlapping [begin, end).
template <class Source, int BlockThreads>
__global__ void __launch_bounds__(BlockThreads)
    fused_select_kernel(Source source, GroupRange groups, NoiseSpec spec, ShardResult* block_results) {
  ShardAccumulator accumulator;
  const std::uint64_t quads = quad_count(groups);
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * BlockThreads;
  for (std::uint64_t offset = static_cast<std::uint64_t>(blockIdx.x) * BlockThreads + threadIdx.x; offset < quads;
       offset += stride) {
    add_quad(accumulator, spec, groups, first_quad(groups) + offset, source);
  }
  using BlockReduce = cub::BlockReduce<ShardResult, BlockThreads>;
  __shared__ typename BlockReduce::TempStorage temp_storage;
  const ShardResult block_result = BlockReduce(temp_storage).Reduce(accumulator.result, MergeShards{});
  if (threadIdx.x == 0) block_results[blockIdx.x] = block_result;
}

// One block: folds block_results[0..blocks) into *accumulator (stream-ordered after the pass).
template <int BlockThreads>
__global__ void __launch_bounds__(BlockThreads)
    merge_block_results_kernel(const ShardResult* block_results, unsigned int blocks,
                               ShardResult* accumulator) {
  ShardResult partial;
  for (unsigned int b = threadIdx.x; b < blocks; b += BlockThreads) {
    partial = merge(partial, block_results[b]);
  }
  using BlockReduce = cub::BlockReduce<ShardResult, BlockThreads>;
  __shared__ typename BlockReduce::TempStorage temp_storage;
  const ShardResult total = BlockReduce(temp_storage).Reduce(partial, MergeShards{});
  if (threadIdx.x == 0) *accumulator = merge(*accumulator, total);
}

template <int Unused>
__global__ void reset_accumulator_kernel(ShardResult* accumulator) {
  ShardResult empty;
  empty.executed_on = ExecutedOn::gpu;
  *accumulator = empty;
}

// How many blocks of `kernel` (with `threads` threads and `shared_bytes` of dynamic shared memory
// each) the current device runs at once: the most a grid-stride pass needs to launch.
template <class Kernel>
std::uint64_t resident_blocks(Kernel kernel, int threads, std::size_t shared_bytes) {
  int device = 0;
  int multiprocessors = 0;
  int blocks_per_multiprocessor = 0;
  DPSELECT_CUDA_TRY(cudaGetDevice(&device));
  DPSELECT_CUDA_TRY(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  DPSELECT_CUDA_TRY(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_multiprocessor, kernel, threads, shared_bytes));
  return static_cast<std::uint64_t>(multiprocessors) * std::max(blocks_per_multiprocessor, 1);
}

// A grid of the blocks the work needs, never more than fill the device, and at least one.
inline unsigned int filling_grid(std::uint64_t resident, std::uint64_t needed) {
  return static_cast<unsigned int>(std::max<std::uint64_t>(1, std::min(resident, needed)));
}

// An upper bound on the quads that `count` consecutive candidates overlap, wherever they start:
// starting at offset o (0 <= o < 32) into its quad, they reach quad (o + count - 1) / 32, so at
// most (31 + count - 1) / 32 + 1 quads.
inline std::uint64_t quads_spanning(std::uint64_t count) {
  constexpr std::uint64_t candidates_per_quad = noise::kCandidatesPerGroup * kGroupsPerQuad;
  return (count + candidates_per_quad - 2) / candidates_per_quad + 1;
}

// Enough resident blocks to fill the device, never more than the work needs.
template <class Source>
unsigned int fused_select_grid(std::uint64_t count) {
  const std::uint64_t needed = (quads_spanning(count) + kSelectBlockThreads - 1) / kSelectBlockThreads;
  return filling_grid(
      resident_blocks(fused_select_kernel<Source, kSelectBlockThreads>, kSelectBlockThreads, 0), needed);
}

// A non-blocking stream owned for the duration of one host call (the host-array and pricing
// paths, which have no caller stream); destroyed after its queued work completes.
class OwnedStream {
 public:
  OwnedStream() { DPSELECT_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  // Waits for the queued work first: after an exception a copy from the caller's memory may
  // still be in flight, and the caller may free that memory as soon as the call returns.
  ~OwnedStream() {
    static_cast<void>(cudaStreamSynchronize(stream_));
    static_cast<void>(cudaStreamDestroy(stream_));
  }
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// The library's pool allocation (declared with the rest of the pool in device_memory_pool.cuh,
// defined in the library: kernels/device_memory.cu).
cudaError_t library_pool_malloc_async(void** pointer, std::size_t bytes, cudaStream_t stream);

// Stream-ordered device scratch from the library's memory pool (dpselect/device_memory.hpp), which
// keeps freed memory mapped up to its release threshold: a call's scratch reuses the last call's
// pages instead of mapping fresh ones after every synchronisation.
class DeviceScratch {
 public:
  DeviceScratch(std::size_t bytes, cudaStream_t stream) : stream_(stream) {
    DPSELECT_CUDA_TRY(library_pool_malloc_async(&pointer_, bytes, stream));
  }
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
  ~DeviceScratch() {
    if (pointer_ != nullptr) static_cast<void>(cudaFreeAsync(pointer_, stream_));
  }
  template <class T>
  T* as() const {
    return static_cast<T*>(pointer_);
  }

 private:
  void* pointer_ = nullptr;
  cudaStream_t stream_;
};

// Launches the pass over `count` candidates starting at global index `begin` and folds it into
// *accumulator. block_results must hold `grid` entries. Launches only; never synchronises.
template <class Source>
void enqueue_fused_select(const Source& source, std::uint64_t begin, std::uint64_t count,
                          const NoiseSpec& spec, unsigned int grid, ShardResult* block_results,
                          ShardResult* accumulator, cudaStream_t stream) {
  fused_select_kernel<Source, kSelectBlockThreads>
      <<<grid, kSelectBlockThreads, 0, stream>>>(source, GroupRange{begin, begin + count}, spec, block_results);
  DPSELECT_CUDA_TRY(cudaGetLastError());
  merge_block_results_kernel<kSelectBlockThreads>
      <<<1, kSelectBlockThreads, 0, stream>>>(block_results, grid, accumulator);
  DPSELECT_CUDA_TRY(cudaGetLastError());
}

// One fused pass over [begin, begin + count); synchronizes `stream` to return the result. The
// stream must belong to the current device (sizing uses the current device's properties).
template <class Source>
ShardResult run_fused_select(const Source& source, std::uint64_t begin, std::uint64_t count,
                             const NoiseSpec& spec, cudaStream_t stream) {
  const unsigned int grid = fused_select_grid<Source>(count);
  DeviceScratch scratch((grid + 1) * sizeof(ShardResult), stream);
  ShardResult* accumulator = scratch.as<ShardResult>();
  ShardResult* block_results = accumulator + 1;
  reset_accumulator_kernel<0><<<1, 1, 0, stream>>>(accumulator);
  DPSELECT_CUDA_TRY(cudaGetLastError());
  enqueue_fused_select(source, begin, count, spec, grid, block_results, accumulator, stream);
  ShardResult result;
  DPSELECT_CUDA_TRY(cudaMemcpyAsync(&result, accumulator, sizeof result, cudaMemcpyDeviceToHost, stream));
  DPSELECT_CUDA_TRY(cudaStreamSynchronize(stream));
  return result;
}

}  // namespace dpselect::detail
