// Many releases in one launch: row r of a utility matrix is release r, with its own NoiseSpec
// (stream, and scale when the rows have their own epsilons). With row_stride 0 every release
// reads the same row (select_repeated). Each row is scored by a team of threads: one thread for
// rows of up to 64 candidates, a warp up to kWarpTeamMaxColumns, a whole block for long ones, so a launch over 4096 x
// 128k and one over 10^6 x 8 both keep the device busy without a per-row launch or merge kernel.
// A few long rows (fewer than kRowsToFillDevice) instead run one release at a time through the
// single-release pass, which spreads each row over the whole device.
// Scores are the same function of (key, stream, index, utility) as every other path, so each row
// returns what a single release over it returns on any backend.
#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>

#include <algorithm>
#include <cstdint>
#include <span>

#include "engine/gpu_backend.hpp"
#include "dpselect/detail/fused_select_kernel.cuh"
#include "host_streaming.cuh"

namespace dpselect::detail {
namespace {

constexpr int kRowsBlockThreads = 256;
constexpr int kWarpThreads = 32;
// A thread per row up to 2 quads of 32 candidates (the auditor's rows of a few candidates), a
// warp per row up to 2 quads per lane, beyond that a block per row.
constexpr std::uint64_t kThreadTeamMaxColumns = kGroupsPerQuad * noise::kCandidatesPerGroup * 2;
constexpr std::uint64_t kWarpTeamMaxColumns = kWarpThreads * kGroupsPerQuad * noise::kCandidatesPerGroup * 2;
// Rows per launch: bounds the device copies of the specs and results (~36 MiB).
constexpr std::uint64_t kRowsPerLaunch = std::uint64_t{1} << 18;
// Long rows are batched only when there are enough of them to fill the device with one block
// each; fewer long rows run as single releases, each spread over the whole device by the fused
// pass (the same scores: a row's result does not depend on how its candidates are split).
constexpr std::uint64_t kRowsToFillDevice = 512;
// Host rows larger than this are streamed through the device in chunks, one release at a time.
constexpr std::uint64_t kCopyBytes = std::uint64_t{256} << 20;

bool one_release_at_a_time(std::uint64_t rows, std::uint64_t cols, std::size_t element_bytes, bool on_host) {
  if (on_host && cols * element_bytes > kCopyBytes) return true;
  return cols > kWarpTeamMaxColumns && rows < kRowsToFillDevice;
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
};

// Rows [0, rows) of this launch: row r reads utilities + r * row_stride, scored with specs[r];
// results[r] is its unstamped ShardResult over candidates [0, cols).
template <class T, int TeamThreads>
__global__ void __launch_bounds__(kRowsBlockThreads)
    select_rows_kernel(const T* utilities, std::uint64_t row_stride, std::uint64_t rows, std::uint64_t cols,
                       const NoiseSpec* specs, ShardResult* results) {
  constexpr int kTeamsPerBlock = kRowsBlockThreads / TeamThreads;
  __shared__ typename TeamReduce<TeamThreads>::Storage storage;
  const int team = static_cast<int>(threadIdx.x) / TeamThreads;
  const int lane = static_cast<int>(threadIdx.x) % TeamThreads;
  const GroupRange groups{0, cols};
  const std::uint64_t quads = quad_count(groups);
  const std::uint64_t row_step = static_cast<std::uint64_t>(gridDim.x) * kTeamsPerBlock;
  // The row loop is uniform across a team, so every lane of a team reaches each reduction.
  for (std::uint64_t row = static_cast<std::uint64_t>(blockIdx.x) * kTeamsPerBlock + team; row < rows;
       row += row_step) {
    const NoiseSpec spec = specs[row];
    const ArraySource<T> source{utilities + row * row_stride, 0};
    ShardAccumulator accumulator;
    accumulator.result.executed_on = ExecutedOn::gpu;
    for (std::uint64_t quad = static_cast<std::uint64_t>(lane); quad < quads; quad += TeamThreads) {
      add_quad(accumulator, spec, groups, quad, source);
    }
    const ShardResult total = TeamReduce<TeamThreads>::reduce(storage, team, accumulator.result);
    if (lane == 0) results[row] = total;
  }
}

template <class T, int TeamThreads>
unsigned int rows_grid(std::uint64_t rows) {
  const std::uint64_t teams_per_block = kRowsBlockThreads / TeamThreads;
  return filling_grid(resident_blocks(select_rows_kernel<T, TeamThreads>, kRowsBlockThreads, 0),
                      (rows + teams_per_block - 1) / teams_per_block);
}

// Scores every row of a matrix already in device memory, kRowsPerLaunch rows per launch, and
// copies the results back. Synchronizes `stream`.
template <class T>
void evaluate_device_rows(std::span<const NoiseSpec> specs, const T* utilities, std::uint64_t row_stride,
                          std::uint64_t cols, std::span<ShardResult> results, cudaStream_t stream) {
  const std::uint64_t rows = specs.size();
  if (one_release_at_a_time(rows, cols, sizeof(T), false)) {
    for (std::uint64_t r = 0; r < rows; ++r) {
      results[r] = gpu_evaluate_device(specs[r], utilities + r * row_stride, IndexRange{0, cols}, stream);
    }
    return;
  }
  const std::uint64_t rows_per_launch = std::min(rows, kRowsPerLaunch);
  DeviceScratch device_specs(rows_per_launch * sizeof(NoiseSpec), stream);
  DeviceScratch device_results(rows_per_launch * sizeof(ShardResult), stream);
  const int team_threads = cols <= kThreadTeamMaxColumns ? 1 : cols <= kWarpTeamMaxColumns ? kWarpThreads : kRowsBlockThreads;
  const unsigned int grid = team_threads == 1              ? rows_grid<T, 1>(rows_per_launch)
                            : team_threads == kWarpThreads ? rows_grid<T, kWarpThreads>(rows_per_launch)
                                                           : rows_grid<T, kRowsBlockThreads>(rows_per_launch);
  for (std::uint64_t first = 0; first < rows; first += rows_per_launch) {
    const std::uint64_t count = std::min(rows_per_launch, rows - first);
    DPSELECT_CUDA_TRY(cudaMemcpyAsync(device_specs.as<NoiseSpec>(), specs.data() + first, count * sizeof(NoiseSpec),
                                      cudaMemcpyHostToDevice, stream));
    const T* first_row = utilities + first * row_stride;
    if (team_threads == 1) {
      select_rows_kernel<T, 1><<<grid, kRowsBlockThreads, 0, stream>>>(
          first_row, row_stride, count, cols, device_specs.as<NoiseSpec>(), device_results.as<ShardResult>());
    } else if (team_threads == kWarpThreads) {
      select_rows_kernel<T, kWarpThreads><<<grid, kRowsBlockThreads, 0, stream>>>(
          first_row, row_stride, count, cols, device_specs.as<NoiseSpec>(), device_results.as<ShardResult>());
    } else {
      select_rows_kernel<T, kRowsBlockThreads><<<grid, kRowsBlockThreads, 0, stream>>>(
          first_row, row_stride, count, cols, device_specs.as<NoiseSpec>(), device_results.as<ShardResult>());
    }
    DPSELECT_CUDA_TRY(cudaGetLastError());
    DPSELECT_CUDA_TRY(cudaMemcpyAsync(results.data() + first, device_results.as<ShardResult>(),
                                      count * sizeof(ShardResult), cudaMemcpyDeviceToHost, stream));
    // The host buffers of the next chunk's copies are distinct, but the device buffers are
    // reused: stream order keeps the next copy in behind this chunk's read-back.
  }
  DPSELECT_CUDA_TRY(cudaStreamSynchronize(stream));
}

// A matrix in host memory: blocks of whole rows (at most kCopyBytes, at least one row) stream
// through the device (host_streaming.cuh), the next block's upload overlapping this block's
// evaluate_device_rows; with row_stride 0 the one row every release reads goes up once.
template <class T>
void evaluate_host_rows(std::span<const NoiseSpec> specs, const T* utilities, std::uint64_t row_stride,
                        std::uint64_t cols, std::span<ShardResult> results) {
  const std::uint64_t rows = specs.size();
  if (one_release_at_a_time(rows, cols, sizeof(T), true)) {
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
