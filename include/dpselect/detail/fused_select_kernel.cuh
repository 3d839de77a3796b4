// SPDX-License-Identifier: Apache-2.0
// The fused GPU pass: utility -> counter-based noise -> block arg-max -> one merge, with no
// materialised noise, no per-thread RNG state and no device-wide synchronisation. CUDA-only;
// used by kernels/select_arrays.cu (utility arrays) and dpselect/select.cuh (user functors).
//
// Each thread keeps a ShardAccumulator over groups of 32 candidates, a warp taking a tile of 32
// groups at a time (device_groups.cuh): utility arrays are staged through shared memory
// (warp_tiles.cuh), functors called by each lane for its own group. Groups that cannot win are
// screened against a threshold the warp shares with the whole grid (WarpScreenThreshold). Each
// block reduces with cub::BlockReduce, and a one-block kernel merges the block results into a
// device-resident accumulator, so several launches (chunks of a host array) accumulate
// stream-ordered.
#pragma once

#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "dpselect/detail/cuda_check.cuh"
#include "dpselect/detail/device_memory_pool.cuh"
#include "dpselect/detail/device_groups.cuh"
#include "dpselect/detail/kernel_launch.cuh"
#include "dpselect/detail/screened_scoring.hpp"
#include "dpselect/detail/warp_tiles.cuh"
#include "dpselect/shard_result.hpp"
namespace dpselect::detail {

inline constexpr int kSelectBlockThreads = 256;

// Blocks of kSelectBlockThreads each multiprocessor should hold at once, which caps the registers
// per thread (65,536 / (blocks x 256)): with Philox the pass fits in 80 registers, so 3 blocks
// (24 warps; at 64 it spills); a ChaCha20 thread holds the 64-byte block of its warp's coming
// tiles as well and needs about 124, so 2 (16 warps, still 64 KiB of loads in flight per
// multiprocessor). Either way no spills (bench/kernel_resources.sh). Left to itself, ptxas picks
// a cap of its own and spills.
template <Generator G>
inline constexpr int kSelectMinBlocksPerMultiprocessor = G == Generator::philox ? 3 : 2;

// One pass over the candidates of `groups` into one ShardResult per block; spec.key's generator
// is G. The screen's threshold starts at `known_score` (-inf: none), a score that a candidate
// outside `groups` is known to reach (cpu_evaluate_generated's known_score, cpu_backend.hpp): the
// merge with that candidate's result is the one-pass result, and a block where nothing reaches it
// reports best_index kNoIndex.
// `published`: the grid-wide screen threshold word of the release (WarpScreenThreshold).
template <class Source, Generator G, int BlockThreads>
__global__ void __launch_bounds__(BlockThreads, kSelectMinBlocksPerMultiprocessor<G>)
    fused_select_kernel(Source source, GroupRange groups, NoiseSpec spec, ShardResult* block_results,
                        unsigned long long* published, double known_score) {
  // r from the pass's first utility (NoiseSpec::reference_on_device): one broadcast load per warp.
  if (spec.reference_on_device) spec.utility_reference = reference_from_first_utility(source(groups.begin));
  ShardAccumulator accumulator;
  // No index: a candidate here that ties it is kept (its index is below kNoIndex), as in one pass.
  accumulator.result.best_score = known_score;
  WarpScreenThreshold threshold(published, known_score);
  const std::uint64_t thread = static_cast<std::uint64_t>(blockIdx.x) * BlockThreads + threadIdx.x;
  const std::uint64_t threads = static_cast<std::uint64_t>(gridDim.x) * BlockThreads;
  __shared__ ScreenBoundTable bounds;
  bounds.fill(spec.mechanism);
  if constexpr (kIsArraySource<Source>) {
    __shared__ WarpTile tiles[BlockThreads / kWarpLanes];
    add_tiles<G>(accumulator, spec, FilledTableBound{bounds}, groups, source, thread / kWarpLanes,
                 threads / kWarpLanes, tiles[threadIdx.x / kWarpLanes], threadIdx.x % kWarpLanes, threshold);
  } else {
    add_source_tiles<G>(spec, FilledTableBound{bounds}, groups, source, thread / kWarpLanes, threads / kWarpLanes,
                        threadIdx.x % kWarpLanes, accumulator, threshold);
  }
  using BlockReduce = cub::BlockReduce<ShardResult, BlockThreads>;
  __shared__ typename BlockReduce::TempStorage temp_storage;
  const ShardResult block_result = BlockReduce(temp_storage).Reduce(accumulator.result, MergeShards{});
  if (threadIdx.x == 0) block_results[blockIdx.x] = block_result;
}

// Stores every byte of `value` at `target`, padding included. A plain assignment stores the
// fields alone, and the host then copies the whole struct back: compute-sanitizer's initcheck
// reports the padding bytes that no kernel wrote (seen on an H200, 2026-11-26).
__device__ __forceinline__ void store_whole(ShardResult* target, const ShardResult& value) {
  static_assert(sizeof(ShardResult) % sizeof(std::uint64_t) == 0 && alignof(ShardResult) >= alignof(std::uint64_t));
  constexpr int kWords = sizeof(ShardResult) / sizeof(std::uint64_t);
  std::uint64_t words[kWords];
  memcpy(words, &value, sizeof value);
  auto* out = reinterpret_cast<std::uint64_t*>(target);
#pragma unroll
  for (int i = 0; i < kWords; ++i) out[i] = words[i];
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
  if (threadIdx.x == 0) store_whole(accumulator, merge(*accumulator, total));
}

template <int Unused>
__global__ void reset_accumulator_kernel(ShardResult* accumulator, unsigned long long* published) {
  ShardResult empty;
  empty.executed_on = ExecutedOn::gpu;
  store_whole(accumulator, empty);
  *published = kNoPublishedScore;
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

// An upper bound on the tiles that `count` consecutive candidates overlap, wherever they start:
// starting at offset o (0 <= o < 1024) into its tile, they reach tile (o + count - 1) / 1024, so
// at most (1023 + count - 1) / 1024 + 1 tiles.
inline std::uint64_t tiles_spanning(std::uint64_t count) {
  return (count + kTileCandidates - 2) / kTileCandidates + 1;
}

// How many blocks of the pass the current device holds at once.
template <class Source>
std::uint64_t fused_select_resident_blocks(Generator generator) {
  std::uint64_t resident = 0;
  with_generator(generator, [&](auto g) {
    resident = resident_blocks(fused_select_kernel<Source, g(), kSelectBlockThreads>, kSelectBlockThreads, 0);
  });
  return resident;
}

// Blocks a pass over `count` candidates needs: one tile per warp.
inline std::uint64_t fused_select_blocks_needed(std::uint64_t count) {
  constexpr std::uint64_t warps_per_block = kSelectBlockThreads / kWarpLanes;
  return (tiles_spanning(count) + warps_per_block - 1) / warps_per_block;
}

// Enough resident blocks to fill the device, never more than the work needs.
template <class Source>
unsigned int fused_select_grid(std::uint64_t count, Generator generator) {
  return filling_grid(fused_select_resident_blocks<Source>(generator), fused_select_blocks_needed(count));
}

// Whether one pass over `count` candidates launches every block the device can hold.
template <class Source>
bool fills_device(std::uint64_t count, Generator generator) {
  return fused_select_blocks_needed(count) >= fused_select_resident_blocks<Source>(generator);
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

// The device memory of one release's fused passes (one launch, or one per chunk of a host array):
// the accumulator they fold into, the grid-wide screen threshold word they share (each launch's
// warps start from the scores the earlier ones published), and one result per block of a launch.
// Reset in stream order on construction.
class FusedSelectScratch {
 public:
  FusedSelectScratch(unsigned int grid, cudaStream_t stream)
      : memory_((grid + 2) * sizeof(ShardResult), stream), grid_(grid) {
    launch_kernel<reset_accumulator_kernel<0>>(1, 1, 0, stream, accumulator(), published());
    DPSELECT_CUDA_TRY(cudaGetLastError());
  }
  ShardResult* accumulator() const { return memory_.as<ShardResult>(); }
  unsigned long long* published() const { return reinterpret_cast<unsigned long long*>(memory_.as<ShardResult>() + 1); }
  ShardResult* block_results() const { return memory_.as<ShardResult>() + 2; }
  unsigned int grid() const { return grid_; }
  // The accumulator once the queued passes have run; synchronizes `stream`.
  ShardResult result(cudaStream_t stream) const {
    ShardResult value;
    DPSELECT_CUDA_TRY(cudaMemcpyAsync(&value, accumulator(), sizeof value, cudaMemcpyDeviceToHost, stream));
    DPSELECT_CUDA_TRY(cudaStreamSynchronize(stream));
    return value;
  }

 private:
  DeviceScratch memory_;
  unsigned int grid_;
};

// Launches the pass over `count` candidates starting at global index `begin` with scratch.grid()
// blocks and folds it into scratch's accumulator. Launches only; never synchronises.
// known_score: fused_select_kernel's.
template <class Source>
void enqueue_fused_select(const Source& source, std::uint64_t begin, std::uint64_t count, const NoiseSpec& spec,
                          const FusedSelectScratch& scratch, cudaStream_t stream, double known_score = -kInfinity) {
  with_generator(spec.key.generator, [&](auto g) {
    launch_kernel<fused_select_kernel<Source, g(), kSelectBlockThreads>>(
        scratch.grid(), kSelectBlockThreads, 0, stream, source, GroupRange{begin, begin + count}, spec,
        scratch.block_results(), scratch.published(), known_score);
  });
  DPSELECT_CUDA_TRY(cudaGetLastError());
  launch_kernel<merge_block_results_kernel<kSelectBlockThreads>>(
      1, kSelectBlockThreads, 0, stream, scratch.block_results(), scratch.grid(), scratch.accumulator());
  DPSELECT_CUDA_TRY(cudaGetLastError());
}

// One fused pass over [begin, begin + count); synchronizes `stream` to return the result. The
// stream must belong to the current device (sizing uses the current device's properties).
// known_score: fused_select_kernel's.
template <class Source>
ShardResult run_fused_select(const Source& source, std::uint64_t begin, std::uint64_t count,
                             const NoiseSpec& spec, cudaStream_t stream, double known_score = -kInfinity) {
  const FusedSelectScratch scratch(fused_select_grid<Source>(count, spec.key.generator), stream);
  enqueue_fused_select(source, begin, count, spec, scratch, stream, known_score);
  return scratch.result(stream);
}

}  // namespace dpselect::detail
