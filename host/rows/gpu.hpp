// SPDX-License-Identifier: Apache-2.0
// The rows pass on the GPU (kernels/select_rows.cu).
// Implemented in kernels/ when built with CUDA; in a CPU-only build by gpu_unavailable.cpp beside
// this header, where every entry point throws BackendUnavailable.
#pragma once

#include <cstdint>
#include <span>

#include "dpselect/detail/noise_spec.hpp"
#include "dpselect/shard_result.hpp"
#include "dpselect/context.hpp"
#include "dpselect/types.hpp"

namespace dpselect::detail {

// How the rows pass (kernels/select_rows.cu) scores a batch of rows: a team of one thread, a warp
// or a block per row, or each row cut into segments of a block each. `automatic` is the pass's own
// choice from the shape and the device.
enum class RowsLayout { automatic, thread_per_row, warp_per_row, block_per_row, segmented };
// Test hook: every later rows pass takes `layout` (segmented: `segments` per row, at least 2,
// fewer where a row has fewer tiles), whatever the shape and the device, and never runs a row of
// device memory as a single release; so a test can run each layout over small shapes on any
// GPU. Not for production use: it applies to every later call of every thread.
void set_rows_layout_for_testing(RowsLayout layout, unsigned segments);

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

}  // namespace dpselect::detail
