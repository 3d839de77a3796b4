// SPDX-License-Identifier: Apache-2.0
// Many releases in one launch: row r of a utility matrix is release r, with its own NoiseSpec
// (stream, and scale when the rows have their own epsilons). With row_stride 0 every release
// reads the same row (select_repeated). Each row is scored by a team of threads: one thread for
// rows of up to 64 candidates, a warp up to kWarpTeamMaxColumns, and for longer ones a warp where
// the rows are enough to give every warp the device holds one (warp_per_long_row), else a whole
// block; rows too few to give every resident block one are cut into segments, a block each,
// merged per row afterwards (select_row_segments_kernel). So a launch over 4096 x 128k, one over
// 32 x 256k and one over 10^6 x 8 all keep the device busy without a launch per row. Warp and
// block teams read their row in tiles of 32 groups (warp_tiles.cuh). Only a row so long that it
// alone fills the device runs as a single release, spread over the whole device by the fused pass.
// Scores are the same function of (key, stream, index, utility) as every other path, so each row
// returns what a single release over it returns on any backend.
#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <span>

#include "selection/gpu.hpp"
#include "rows/gpu.hpp"
#include "dpselect/detail/fused_select_kernel.cuh"
#include "dpselect/detail/kernel_launch.cuh"
#include "dpselect/detail/noise_positions.hpp"
#include "dpselect/detail/screened_scoring.hpp"
#include "common/host_streaming.cuh"

namespace dpselect::detail {
namespace {

constexpr int kRowsBlockThreads = 256;
constexpr int kWarpThreads = 32;
// A thread per row up to 2 groups of 32 candidates (the auditor's rows of a few candidates), a
// warp per row up to 2 tiles, beyond that a block per row.
constexpr std::uint64_t kThreadTeamMaxColumns = kCandidatesPerGroup * 2;
constexpr std::uint64_t kWarpTeamMaxColumns = kTileCandidates * 2;
// Rows per launch: bounds the device copies of the specs and results (~36 MiB).
constexpr std::uint64_t kRowsPerLaunch = std::uint64_t{1} << 18;
// Host rows larger than this are streamed through the device in chunks, one release at a time.
constexpr std::uint64_t kCopyBytes = std::uint64_t{256} << 20;

// A row runs as a single release only when the fused pass over it alone fills the device: then
// nothing is lost by taking rows one at a time, while a block per row would leave a few blocks
// to scan a long row each. Any shorter row is batched, even when the rows are too few to fill
// the device: one launch beats a launch, an allocation and a synchronisation per row.
template <class T>
bool one_release_at_a_time(std::uint64_t cols, Generator generator, bool on_host) {
  if (on_host && cols * sizeof(T) > kCopyBytes) return true;
  return cols > kWarpTeamMaxColumns && fills_device<ArraySource<T>>(cols, generator);
}

// Reduces the team's accumulators; the merged result is valid in the team's lane 0.
template <int TeamThreads>
struct TeamReduce;

template <>
struct TeamReduce<1> {
  struct Storage {};
  __device__ __forceinline__ static ShardResult reduce(Storage&, int, const ShardResult& part) { return part; }
};

template <>
struct TeamReduce<kWarpThreads> {
  using WarpReduce = cub::WarpReduce<ShardResult, kWarpThreads>;
  struct Storage {
    typename WarpReduce::TempStorage warps[kRowsBlockThreads / kWarpThreads];
  };
  __device__ __forceinline__ static ShardResult reduce(Storage& storage, int team, const ShardResult& part) {
    const ShardResult total = WarpReduce(storage.warps[team]).Reduce(part, MergeShards{});
    __syncwarp();  // the storage is reused by the team's next row
    return total;
  }
  __device__ __forceinline__ static void barrier() { __syncwarp(); }
};

template <>
struct TeamReduce<kRowsBlockThreads> {
  using BlockReduce = cub::BlockReduce<ShardResult, kRowsBlockThreads>;
  using Storage = typename BlockReduce::TempStorage;
  __device__ __forceinline__ static ShardResult reduce(Storage& storage, int, const ShardResult& part) {
    const ShardResult total = BlockReduce(storage).Reduce(part, MergeShards{});
    __syncthreads();  // the storage is reused by the block's next row
    return total;
  }
  __device__ __forceinline__ static void barrier() { __syncthreads(); }
};

// As kSelectMinBlocksPerMultiprocessor (fused_select_kernel.cuh), with one block less for
// Philox: a team also holds its row's NoiseSpec and loop state, which spill at 80 registers, so
// 2 blocks (128 registers) with either generator.
template <class T, Generator G>
inline constexpr int kRowsMinBlocksPerMultiprocessor = 2;

// Rows [0, rows) of this launch: row r reads utilities + r * row_stride, scored with specs[r]
// (whose generator is G); results[r] is its unstamped ShardResult over candidates [0, cols).
template <class T, Generator G, int TeamThreads>
__global__ void __launch_bounds__(kRowsBlockThreads, kRowsMinBlocksPerMultiprocessor<T, G>)
    select_rows_kernel(const T* utilities, std::uint64_t row_stride, std::uint64_t rows, std::uint64_t cols,
                       const NoiseSpec* __restrict__ specs, ShardResult* results) {
  constexpr int kTeamsPerBlock = kRowsBlockThreads / TeamThreads;
  constexpr int kTeamWarps = TeamThreads < kWarpThreads ? 1 : TeamThreads / kWarpThreads;
  __shared__ typename TeamReduce<TeamThreads>::Storage storage;
  const int team = static_cast<int>(threadIdx.x) / TeamThreads;
  const int member = static_cast<int>(threadIdx.x) % TeamThreads;
  const GroupRange groups{0, cols};
  __shared__ ScreenBoundTable bounds;  // every row of a launch has one mechanism (one release kind)
  if constexpr (TeamThreads != 1) bounds.fill(rows != 0 ? specs[0].mechanism : Mechanism::exponential);
  // Each team's screen threshold word for its current row (WarpScreenThreshold), shared by the
  // team's warps.
  __shared__ unsigned long long team_published[kTeamsPerBlock];
  const std::uint64_t row_step = static_cast<std::uint64_t>(gridDim.x) * kTeamsPerBlock;
  // The row loop is uniform across a team, so every member of a team reaches each reduction.
  for (std::uint64_t row = static_cast<std::uint64_t>(blockIdx.x) * kTeamsPerBlock + team; row < rows;
       row += row_step) {
    const NoiseSpec& spec = specs[row];
    const ArraySource<T> source{utilities + row * row_stride, 0};
    ShardAccumulator accumulator;
    if constexpr (TeamThreads == 1) {
      // Two groups at most: each reads its own screen block.
      for (std::uint64_t group = 0; group < groups.group_count(); ++group) {
        score_group<GeneratorBlocks<G>>(spec, group, group_screen<GeneratorBlocks<G>>(spec, group),
                                        groups.lanes(group), source, accumulator.result, accumulator);
      }
    } else {
      __shared__ WarpTile tiles[kRowsBlockThreads / kWarpThreads];
      // The team's last row has been reduced (TeamReduce ends with a team barrier), so no member
      // reads the word while it is reset.
      if (member == 0) team_published[team] = kNoPublishedScore;
      TeamReduce<TeamThreads>::barrier();
      WarpScreenThreshold threshold(&team_published[team], -kInfinity);
      add_tiles<G>(accumulator, spec, CheckedTableBound{bounds, spec}, groups, source,
                   static_cast<std::uint64_t>(member / kWarpThreads), kTeamWarps, tiles[threadIdx.x / kWarpThreads],
                   threadIdx.x % kWarpThreads, threshold);
    }
    ShardResult total = TeamReduce<TeamThreads>::reduce(storage, team, accumulator.result);
    total.executed_on = ExecutedOn::gpu;
    if (member == 0) store_whole(results + row, total);  // the host copies whole structs back
  }
}

// Rows longer than kWarpTeamMaxColumns go to a warp each where they give every warp the device
// holds one and the last wave of rows leaves few warps idle; otherwise a block per row, so that
// they spread over the device. A warp alone takes its row's tiles in order, each screened against
// the best of the tiles before it, where 8 warps sharing a row each start their first tiles
// against little or nothing; and it uses the screen blocks it computes (TileScreens computes the
// blocks of 32 tiles at a time: 8 warps over a row of 128 tiles use 16 each, a warp alone all 32).
// The schedule model's replay of the benchmark's 4096 x 131072 (bench/schedule_model, rows
// what-ifs): a warp's row costs about 1.2x fewer instructions than its share of a block's. So
// warps are taken when their waves of rows, the last counted whole, cost at most 6/5 of the
// rows' share of the resident warps.
template <class T, Generator G>
bool warp_per_long_row(std::uint64_t rows) {
  constexpr std::uint64_t kTeamsPerBlock = kRowsBlockThreads / kWarpThreads;
  const std::uint64_t warps =
      resident_blocks(select_rows_kernel<T, G, kWarpThreads>, kRowsBlockThreads, 0) * kTeamsPerBlock;
  const std::uint64_t waves = (rows + warps - 1) / warps;
  return rows >= warps && waves * warps * 5 <= rows * 6;
}

// Rows too few to give every resident block one: row r's candidates are cut into `segments`
// segments of consecutive tiles, and item r * segments + s of the launch is segment s of row r,
// scored by a whole block (its warps taking the segment's tiles w, w + 8, ...) into
// segment_results[item]. The segments of a row share its screen threshold word row_words[r] in
// device memory (WarpScreenThreshold, as the single pick's grid shares one), kNoPublishedScore
// before any score. Each candidate is scored in one segment with the scores of every path, so the
// merge of a row's segments (merge_row_segments_kernel) is one pass's result over the row.
template <class T, Generator G>
__global__ void __launch_bounds__(kRowsBlockThreads, kRowsMinBlocksPerMultiprocessor<T, G>)
    select_row_segments_kernel(const T* utilities, std::uint64_t row_stride, std::uint64_t rows, std::uint64_t cols,
                               unsigned int segments, const NoiseSpec* __restrict__ specs,
                               unsigned long long* row_words, ShardResult* segment_results) {
  constexpr int kWarps = kRowsBlockThreads / kWarpThreads;
  __shared__ ScreenBoundTable bounds;  // every row of a launch has one mechanism (one release kind)
  bounds.fill(rows != 0 ? specs[0].mechanism : Mechanism::exponential);
  __shared__ WarpTile tiles[kWarps];
  using BlockReduce = cub::BlockReduce<ShardResult, kRowsBlockThreads>;
  __shared__ typename BlockReduce::TempStorage storage;
  const std::uint64_t row_tiles = (cols + kTileCandidates - 1) / kTileCandidates;
  // The item loop is uniform across the block, so every thread reaches each reduction.
  for (std::uint64_t item = blockIdx.x; item < rows * segments; item += gridDim.x) {
    const std::uint64_t row = item / segments;
    const std::uint64_t segment = item % segments;
    const std::uint64_t first = row_tiles * segment / segments;
    const std::uint64_t end = row_tiles * (segment + 1) / segments;
    ShardAccumulator accumulator;
    if (first < end) {
      const NoiseSpec& spec = specs[row];
      const std::uint64_t segment_end = end * kTileCandidates;
      const GroupRange groups{first * kTileCandidates, segment_end < cols ? segment_end : cols};
      WarpScreenThreshold threshold(row_words + row, -kInfinity);
      add_tiles<G>(accumulator, spec, CheckedTableBound{bounds, spec}, groups,
                   ArraySource<T>{utilities + row * row_stride, 0}, threadIdx.x / kWarpThreads, kWarps,
                   tiles[threadIdx.x / kWarpThreads], threadIdx.x % kWarpThreads, threshold);
    }
    ShardResult total = BlockReduce(storage).Reduce(accumulator.result, MergeShards{});
    __syncthreads();  // the storage is reused by the block's next item
    total.executed_on = ExecutedOn::gpu;
    if (threadIdx.x == 0) store_whole(segment_results + item, total);
  }
}

// Every row's word before any score (select_row_segments_kernel).
__global__ void reset_row_words_kernel(unsigned long long* row_words, std::uint64_t rows) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t r = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; r < rows; r += stride) {
    row_words[r] = kNoPublishedScore;
  }
}

// results[r]: the merge of row r's segments, a thread per row.
__global__ void merge_row_segments_kernel(const ShardResult* segment_results, std::uint64_t rows,
                                          unsigned int segments, ShardResult* results) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t r = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; r < rows; r += stride) {
    ShardResult total = segment_results[r * segments];
    for (unsigned int s = 1; s < segments; ++s) total = merge(total, segment_results[r * segments + s]);
    store_whole(results + r, total);
  }
}

// Segments per row: as many as rows * segments still fit in one wave of the segments kernel's
// resident blocks (one more would leave a second wave of a few blocks), but at least
// kSegmentMinTiles tiles each (4 per warp), so that a segment's warps amortise their start (a
// first tile against little or nothing) and their share of the reduction. 1 when the rows fill
// the device without segments, or are too short to cut.
constexpr std::uint64_t kSegmentMinTiles = 4 * (kRowsBlockThreads / kWarpThreads);
template <class T, Generator G>
unsigned int segments_per_row(std::uint64_t rows, std::uint64_t cols) {
  const std::uint64_t resident = resident_blocks(select_row_segments_kernel<T, G>, kRowsBlockThreads, 0);
  const std::uint64_t row_tiles = (cols + kTileCandidates - 1) / kTileCandidates;
  return static_cast<unsigned int>(std::max<std::uint64_t>(1, std::min(resident / rows, row_tiles / kSegmentMinTiles)));
}

// Scores rows [0, specs.size()) (at most kRowsPerLaunch) in `segments` segments each, merges them
// and copies the results back. Synchronizes `stream`.
template <class T, Generator G>
void evaluate_device_row_segments(std::span<const NoiseSpec> specs, const T* utilities, std::uint64_t row_stride,
                                  std::uint64_t cols, unsigned int segments, std::span<ShardResult> results,
                                  cudaStream_t stream) {
  const std::uint64_t rows = specs.size();
  if (rows == 0) return;
  DeviceScratch device_specs(rows * sizeof(NoiseSpec), stream);
  DeviceScratch row_words(rows * sizeof(unsigned long long), stream);
  DeviceScratch segment_results(rows * segments * sizeof(ShardResult), stream);
  DeviceScratch device_results(rows * sizeof(ShardResult), stream);
  DPSELECT_CUDA_TRY(cudaMemcpyAsync(device_specs.as<NoiseSpec>(), specs.data(), rows * sizeof(NoiseSpec),
                                    cudaMemcpyHostToDevice, stream));
  constexpr unsigned int kSmallKernelThreads = 256;
  const unsigned int small_grid = static_cast<unsigned int>((rows + kSmallKernelThreads - 1) / kSmallKernelThreads);
  launch_kernel<reset_row_words_kernel>(small_grid, kSmallKernelThreads, 0, stream, row_words.as<unsigned long long>(),
                                        rows);
  DPSELECT_CUDA_TRY(cudaGetLastError());
  const unsigned int grid =
      filling_grid(resident_blocks(select_row_segments_kernel<T, G>, kRowsBlockThreads, 0), rows * segments);
  launch_kernel<select_row_segments_kernel<T, G>>(
      grid, kRowsBlockThreads, 0, stream, utilities, row_stride, rows, cols, segments, device_specs.as<NoiseSpec>(),
      row_words.as<unsigned long long>(), segment_results.as<ShardResult>());
  DPSELECT_CUDA_TRY(cudaGetLastError());
  launch_kernel<merge_row_segments_kernel>(small_grid, kSmallKernelThreads, 0, stream,
                                           segment_results.as<ShardResult>(), rows, segments,
                                           device_results.as<ShardResult>());
  DPSELECT_CUDA_TRY(cudaGetLastError());
  DPSELECT_CUDA_TRY(cudaMemcpyAsync(results.data(), device_results.as<ShardResult>(), rows * sizeof(ShardResult),
                                    cudaMemcpyDeviceToHost, stream));
  DPSELECT_CUDA_TRY(cudaStreamSynchronize(stream));
}

template <class T, Generator G, int TeamThreads>
unsigned int rows_grid(std::uint64_t rows) {
  const std::uint64_t teams_per_block = kRowsBlockThreads / TeamThreads;
  return filling_grid(resident_blocks(select_rows_kernel<T, G, TeamThreads>, kRowsBlockThreads, 0),
                      (rows + teams_per_block - 1) / teams_per_block);
}

// One launch over `count` rows by teams of TeamThreads.
template <class T, Generator G, int TeamThreads>
void enqueue_rows(const T* first_row, std::uint64_t row_stride, std::uint64_t count, std::uint64_t cols,
                  unsigned int grid, const NoiseSpec* specs, ShardResult* results, cudaStream_t stream) {
  launch_kernel<select_rows_kernel<T, G, TeamThreads>>(grid, kRowsBlockThreads, 0, stream, first_row, row_stride, count,
                                                       cols, specs, results);
  DPSELECT_CUDA_TRY(cudaGetLastError());
}

// Scores every row of a matrix already in device memory, kRowsPerLaunch rows per launch, and
// copies the results back. Synchronizes `stream`. Every row's key is the same (one context).
template <class T, Generator G, int TeamThreads>
void evaluate_device_rows_by(std::span<const NoiseSpec> specs, const T* utilities, std::uint64_t row_stride,
                             std::uint64_t cols, std::span<ShardResult> results, cudaStream_t stream) {
  const std::uint64_t rows = specs.size();
  const std::uint64_t rows_per_launch = std::min(rows, kRowsPerLaunch);
  DeviceScratch device_specs(rows_per_launch * sizeof(NoiseSpec), stream);
  DeviceScratch device_results(rows_per_launch * sizeof(ShardResult), stream);
  const unsigned int grid = rows_grid<T, G, TeamThreads>(rows_per_launch);
  for (std::uint64_t first = 0; first < rows; first += rows_per_launch) {
    const std::uint64_t count = std::min(rows_per_launch, rows - first);
    DPSELECT_CUDA_TRY(cudaMemcpyAsync(device_specs.as<NoiseSpec>(), specs.data() + first, count * sizeof(NoiseSpec),
                                      cudaMemcpyHostToDevice, stream));
    enqueue_rows<T, G, TeamThreads>(utilities + first * row_stride, row_stride, count, cols, grid,
                                    device_specs.as<NoiseSpec>(), device_results.as<ShardResult>(), stream);
    DPSELECT_CUDA_TRY(cudaMemcpyAsync(results.data() + first, device_results.as<ShardResult>(),
                                      count * sizeof(ShardResult), cudaMemcpyDeviceToHost, stream));
    // The host buffers of the next chunk's copies are distinct, but the device buffers are
    // reused: stream order keeps the next copy in behind this chunk's read-back.
  }
  DPSELECT_CUDA_TRY(cudaStreamSynchronize(stream));
}

// set_rows_layout_for_testing's layout (automatic unless a test set one) and segment count.
std::atomic<RowsLayout> rows_layout_for_testing{RowsLayout::automatic};
std::atomic<unsigned int> rows_segments_for_testing{0};

struct ChosenRowsLayout {
  RowsLayout layout;
  unsigned int segments;  // segmented: per row
};

// The layout of a batch of `rows` rows of `cols` candidates (the pass's own choice: the file's
// comment at the top), unless a test forces one.
template <class T, Generator G>
ChosenRowsLayout choose_rows_layout(std::uint64_t rows, std::uint64_t cols) {
  if (const RowsLayout forced = rows_layout_for_testing.load(std::memory_order_relaxed);
      forced != RowsLayout::automatic) {
    const std::uint64_t row_tiles = (cols + kTileCandidates - 1) / kTileCandidates;
    const std::uint64_t asked = std::max(2u, rows_segments_for_testing.load(std::memory_order_relaxed));
    return {forced, static_cast<unsigned int>(std::min(asked, row_tiles))};
  }
  if (cols <= kThreadTeamMaxColumns) return {RowsLayout::thread_per_row, 1};
  if (cols <= kWarpTeamMaxColumns || warp_per_long_row<T, G>(rows)) return {RowsLayout::warp_per_row, 1};
  if (const unsigned int segments = segments_per_row<T, G>(rows, cols); segments > 1) {
    return {RowsLayout::segmented, segments};
  }
  return {RowsLayout::block_per_row, 1};
}

template <class T>
void evaluate_device_rows(std::span<const NoiseSpec> specs, const T* utilities, std::uint64_t row_stride,
                          std::uint64_t cols, std::span<ShardResult> results, cudaStream_t stream) {
  const std::uint64_t rows = specs.size();
  if (rows == 0) return;
  const Generator generator = specs.front().key.generator;
  if (rows_layout_for_testing.load(std::memory_order_relaxed) == RowsLayout::automatic &&
      one_release_at_a_time<T>(cols, generator, false)) {
    for (std::uint64_t r = 0; r < rows; ++r) {
      results[r] = gpu_evaluate_device(specs[r], utilities + r * row_stride, IndexRange{0, cols}, stream);
    }
    return;
  }
  with_generator(generator, [&](auto g) {
    const ChosenRowsLayout chosen = choose_rows_layout<T, g()>(rows, cols);
    switch (chosen.layout) {
      case RowsLayout::thread_per_row:
        evaluate_device_rows_by<T, g(), 1>(specs, utilities, row_stride, cols, results, stream);
        return;
      case RowsLayout::warp_per_row:
        evaluate_device_rows_by<T, g(), kWarpThreads>(specs, utilities, row_stride, cols, results, stream);
        return;
      case RowsLayout::segmented:
        // A chunk of rows at a time (the automatic choice's rows are fewer than one chunk).
        for (std::uint64_t first = 0; first < rows; first += kRowsPerLaunch) {
          const std::uint64_t count = std::min(kRowsPerLaunch, rows - first);
          evaluate_device_row_segments<T, g()>(specs.subspan(first, count), utilities + first * row_stride,
                                               row_stride, cols, chosen.segments, results.subspan(first, count),
                                               stream);
        }
        return;
      case RowsLayout::automatic:  // never chosen
      case RowsLayout::block_per_row:
        evaluate_device_rows_by<T, g(), kRowsBlockThreads>(specs, utilities, row_stride, cols, results, stream);
        return;
    }
  });
}

// A matrix in host memory: blocks of whole rows (at most kCopyBytes, at least one row) stream
// through the device (common/host_streaming.cuh), the next block's upload overlapping this block's
// evaluate_device_rows; with row_stride 0 the one row every release reads goes up once.
template <class T>
void evaluate_host_rows(std::span<const NoiseSpec> specs, const T* utilities, std::uint64_t row_stride,
                        std::uint64_t cols, std::span<ShardResult> results) {
  const std::uint64_t rows = specs.size();
  if (rows == 0) return;
  if (one_release_at_a_time<T>(cols, specs.front().key.generator, true)) {
    for (std::uint64_t r = 0; r < rows; ++r) {
      results[r] = gpu_evaluate_host(specs[r], utilities + r * row_stride, IndexRange{0, cols});
    }
    return;
  }
  const std::uint64_t row_elements = row_stride == 0 ? cols : row_stride;
  const std::uint64_t elements = row_stride == 0 ? cols : rows * row_stride;
  HostStreaming<T> streaming(elements, row_elements, streaming_chunk_bytes(kCopyBytes), StreamingDirection::to_device,
                             "cudaMallocFromPoolAsync(rows block)");
  const cudaStream_t stream = streaming.compute_stream();
  streaming.upload_each(utilities, [&](const T* block, std::uint64_t offset, std::uint64_t count) {
    const std::uint64_t first = offset / row_elements;
    const std::uint64_t block_rows = row_stride == 0 ? rows : count / row_elements;
    evaluate_device_rows(specs.subspan(first, block_rows), block, row_stride, cols, results.subspan(first, block_rows),
                         stream);
  });
}

}  // namespace

void set_rows_layout_for_testing(RowsLayout layout, unsigned segments) {
  rows_segments_for_testing.store(segments, std::memory_order_relaxed);
  rows_layout_for_testing.store(layout, std::memory_order_relaxed);
}

void gpu_evaluate_device_rows(std::span<const NoiseSpec> specs, const float* utilities, std::uint64_t row_stride,
                              std::uint64_t cols, std::span<ShardResult> results, cuda_stream_t stream) {
  evaluate_device_rows(specs, utilities, row_stride, cols, results, stream);
}
void gpu_evaluate_device_rows(std::span<const NoiseSpec> specs, const double* utilities, std::uint64_t row_stride,
                              std::uint64_t cols, std::span<ShardResult> results, cuda_stream_t stream) {
  evaluate_device_rows(specs, utilities, row_stride, cols, results, stream);
}
void gpu_evaluate_host_rows(std::span<const NoiseSpec> specs, const float* utilities, std::uint64_t row_stride,
                            std::uint64_t cols, std::span<ShardResult> results) {
  evaluate_host_rows(specs, utilities, row_stride, cols, results);
}
void gpu_evaluate_host_rows(std::span<const NoiseSpec> specs, const double* utilities, std::uint64_t row_stride,
                            std::uint64_t cols, std::span<ShardResult> results) {
  evaluate_host_rows(specs, utilities, row_stride, cols, results);
}

}  // namespace dpselect::detail
