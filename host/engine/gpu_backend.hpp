// SPDX-License-Identifier: Apache-2.0
// The GPU path as the host sees it. Implemented in kernels/ when built with CUDA, and by
// host/engine/gpu_unavailable.cpp (every call throws BackendUnavailable) otherwise.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "dpselect/context.hpp"
#include "dpselect/detail/noise_spec.hpp"
#include "dpselect/continuous_noise.hpp"
#include "dpselect/device_memory.hpp"
#include "dpselect/pricing.hpp"
#include "dpselect/shard_result.hpp"
#include "dpselect/top_k.hpp"
#include "noise/secure_noise_core.hpp"
#include "sparse_vector/sparse_vector_noise.hpp"

namespace dpselect::detail {

// Validates device-memory utilities for `backend` (InvalidArgument, BackendUnavailable) without
// drawing a stream.
void validate_device_utilities(const void* data, std::uint64_t size, std::uint64_t first_index,
                               Backend backend);

// Throws InvalidArgument naming `name` unless `data` is memory the current device can read:
// device or managed memory, pinned host memory, or pageable host memory where the device reports
// pageable access (cudaDevAttrPageableMemoryAccess). Checked before any launch and any charge:
// a kernel reading a plain host pointer raises cudaErrorIllegalAddress, which is sticky and
// leaves the CUDA context unusable for the rest of the process. Call after resolve_backend.
void validate_device_pointer(const void* data, std::string_view name);

bool cuda_backend_compiled();
// A CUDA device exists and its runtime initialises. Cached after the first call.
bool cuda_device_usable();
// Empty when a device is usable or when no NVIDIA GPU is present; otherwise why this build cannot
// use the GPU that is there and how to fix it (engine/gpu_diagnosis.hpp). Probed once per process;
// the text lives as long as the process.
std::string_view gpu_unusable_reason();

// The library's device memory pools (kernels/device_memory.cu, dpselect/device_memory.hpp); in a
// CPU-only build there are none and these do nothing. With device_memory_mutex() held: sets the
// release threshold of every pool created so far (later ones read release_threshold_setting()).
void gpu_set_pool_release_threshold(std::uint64_t bytes);
// Trims every pool to `bytes_to_keep` and frees the idle page-locked staging buffers.
void gpu_trim_memory(std::uint64_t bytes_to_keep);
// The number of CUDA devices, and what the pool of `device` (0 <= device < that number) holds.
int gpu_device_count();
DeviceMemoryUsage gpu_pool_usage(int device);
// Test hook: the bytes of each device chunk (0: the default of each path) and of each pinned
// staging piece (0: the default) that host arrays stream through, so a test can force many chunks
// over a small array. Not for production use: it applies to every later call of every thread.
void set_host_streaming_bytes_for_testing(std::uint64_t chunk_bytes, std::uint64_t piece_bytes);
// Test hook: the pairs each chunk of partition selection on the GPU holds (0: as many as the
// device's free memory allows), so a test can run the chunked path (partition_chunks.hpp) over
// small inputs. Not for production use: it applies to every later call of every thread.
void set_partition_chunk_pairs_for_testing(std::uint64_t pairs);
// How the rows pass (kernels/select_rows.cu) scores a batch of rows: a team of one thread, a warp
// or a block per row, or each row cut into segments of a block each. `automatic` is the pass's own
// choice from the shape and the device.
enum class RowsLayout { automatic, thread_per_row, warp_per_row, block_per_row, segmented };
// Test hook: every later rows pass takes `layout` (segmented: `segments` per row, at least 2,
// fewer where a row has fewer tiles), whatever the shape and the device, and never runs a row of
// device memory as a single release; so a test can run each layout over small shapes on any
// GPU. Not for production use: it applies to every later call of every thread.
void set_rows_layout_for_testing(RowsLayout layout, unsigned segments);

// Utilities already in device memory, range.size() of them starting at `utilities`.
ShardResult gpu_evaluate_device(const NoiseSpec& spec, const float* utilities, IndexRange range,
                                cuda_stream_t stream);
ShardResult gpu_evaluate_device(const NoiseSpec& spec, const double* utilities, IndexRange range,
                                cuda_stream_t stream);
// Utilities in host memory, streamed to the device in chunks that fit its free memory, each copy
// overlapping the pass over the chunk before (kernels/host_streaming.cuh, on streams of its own).
ShardResult gpu_evaluate_host(const NoiseSpec& spec, const float* utilities, IndexRange range);
ShardResult gpu_evaluate_host(const NoiseSpec& spec, const double* utilities, IndexRange range);
// Release r of a batch scores row r of a matrix (row r at utilities + r * row_stride; row_stride 0:
// every release reads the same row) over candidates [0, cols) with specs[r], in one launch per
// 2^18 rows (kernels/select_rows.cu). results[r] is unstamped. Device memory (ordered on `stream`,
// which is synchronized) or host memory (streamed in blocks of whole rows on streams of its own).
void gpu_evaluate_device_rows(std::span<const NoiseSpec> specs, const float* utilities, std::uint64_t row_stride,
                              std::uint64_t cols, std::span<ShardResult> results, cuda_stream_t stream);
void gpu_evaluate_device_rows(std::span<const NoiseSpec> specs, const double* utilities, std::uint64_t row_stride,
                              std::uint64_t cols, std::span<ShardResult> results, cuda_stream_t stream);
void gpu_evaluate_host_rows(std::span<const NoiseSpec> specs, const float* utilities, std::uint64_t row_stride,
                            std::uint64_t cols, std::span<ShardResult> results);
void gpu_evaluate_host_rows(std::span<const NoiseSpec> specs, const double* utilities, std::uint64_t row_stride,
                            std::uint64_t cols, std::span<ShardResult> results);
// One-shot Gumbel top-k on the GPU (kernels/top_k.cu), k <= kGpuTopKMax: the k best (score,
// index) pairs of candidates [0, n), best first (padded with (-inf, kNoIndex) when fewer are
// valid), and the tally of every candidate (unstamped; best_* unset). Device memory (ordered on
// `stream`, which is synchronized) or host memory (streamed in chunks on streams of its own).
inline constexpr std::uint64_t kGpuTopKMax = kGpuTopKMaxK;
using RankedCandidate = RankedScore;
struct TopKShard {
  ShardResult tally;
  std::vector<RankedCandidate> top;
};
TopKShard gpu_top_k_device(const NoiseSpec& spec, const float* utilities, std::uint64_t n, std::uint64_t k,
                           cuda_stream_t stream);
TopKShard gpu_top_k_device(const NoiseSpec& spec, const double* utilities, std::uint64_t n, std::uint64_t k,
                           cuda_stream_t stream);
TopKShard gpu_top_k_host(const NoiseSpec& spec, const float* utilities, std::uint64_t n, std::uint64_t k);
TopKShard gpu_top_k_host(const NoiseSpec& spec, const double* utilities, std::uint64_t n, std::uint64_t k);
// Revenue of the grid prices `range` against the sorted bids, computed in the fused pass.
ShardResult gpu_evaluate_price_grid(const NoiseSpec& spec, std::span<const double> sorted_bids,
                                    const PriceGrid& grid, IndexRange range);

// One pass over `count` values in device memory: the first one that is not finite or has
// |value| > bound (bound 0: none), first_invalid = count when there is none, and the largest
// |value| of the valid ones. Synchronizes `stream`.
struct DeviceValueScan {
  std::uint64_t first_invalid = 0;
  double first_invalid_value = 0.0;
  double largest_abs_value = 0.0;
};
DeviceValueScan gpu_scan_values(const double* values, std::uint64_t count, double bound, cuda_stream_t stream);
// The first i in [begin, end) with noise.above(i, values[i], noisy_threshold), or end: a parallel
// find-first over device memory. Synchronizes `stream`.
std::uint64_t gpu_first_above(const double* values, std::uint64_t begin, std::uint64_t end,
                              const SparseQueryNoise& noise, double noisy_threshold, cuda_stream_t stream);
// values[index], copied from device memory. Synchronizes `stream`.
double gpu_read_value(const double* values, std::uint64_t index, cuda_stream_t stream);
double gpu_read_value(const float* values, std::uint64_t index, cuda_stream_t stream);

// Secure noise (kernels/secure_noise.cu): the first value that is not finite or, with granularity
// > 0, not a multiple of it (first_invalid = count if none; largest_abs_value unused).
// Synchronizes `stream`.
DeviceValueScan gpu_secure_scan(const double* values, std::uint64_t count, double granularity, cuda_stream_t stream);
// values[i] = secure_coordinate(core, i, values[i]) for every i < count; returns whether any
// coordinate exhausted its random-bit budget. Synchronizes `stream`.
bool gpu_add_secure_noise(const SecureNoiseCore& core, double* values, std::uint64_t count, cuda_stream_t stream);
// values[i] += noise of coordinate first_coordinate + i (continuous_noise.hpp) for `count` values
// in device memory: a grid-stride kernel ordered on `stream`. False if some coordinate ran out of
// random blocks (that value is then NaN). Synchronizes `stream`; throws CudaError.
bool gpu_add_noise(double* values, std::uint64_t count, std::uint64_t first_coordinate, const RandomKey& key,
                   std::uint64_t stream, const continuous::CoordinateNoise& noise, cuda_stream_t cuda_stream);
// The same for values in host memory, copied to the device and back in chunks that fit its
// free memory (streamed both ways on streams of its own). Throws CudaError.
bool gpu_add_noise_host(std::span<double> values, const RandomKey& key, std::uint64_t stream,
                        const continuous::CoordinateNoise& noise);

// Sorts `values` (finite doubles) ascending on the device: CUB's radix sort. Throws CudaError.
void gpu_sort(std::span<double> values);

}  // namespace dpselect::detail
