// SPDX-License-Identifier: Apache-2.0
// Rows scored on the CPU or the GPU, one release per row: shared by select_rows / select_repeated
// (rows.cpp, from their noise specs) and their distributed forms (host/mpi/distributed_rows.cpp,
// from Releases).
#pragma once

#include <omp.h>

#include <cstdint>
#include <exception>
#include <span>
#include <vector>

#include "dpselect/context.hpp"
#include "dpselect/detail/noise_spec.hpp"
#include "dpselect/detail/release_access.hpp"
#include "dpselect/shard_result.hpp"
#include "rows/gpu.hpp"

namespace dpselect::detail {

// results[r] = evaluate_row(r) for every r < rows on the CPU: with at least as many rows as
// threads, rows run in parallel and each row's pass on its thread alone (nested regions are
// serialized); with fewer rows, each row's pass uses every core. The first exception any row
// throws is rethrown once every row has stopped.
template <class EvaluateRow>
std::vector<ShardResult> score_each_row_on_cpu(std::uint64_t rows, const EvaluateRow& evaluate_row) {
  std::vector<ShardResult> results(rows);
  std::exception_ptr failure;
  const bool parallel_rows = rows >= static_cast<std::uint64_t>(omp_get_max_threads());
#pragma omp parallel for schedule(dynamic, 1) if (parallel_rows)
  for (std::uint64_t r = 0; r < rows; ++r) {
    try {
      results[r] = evaluate_row(r);
    } catch (...) {
#pragma omp critical
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  return results;
}

// releases[r] scores row r: `cols` elements at data + r * row_stride (row_stride 0: every release
// reads the same row), by Release::evaluate.
template <class T>
std::vector<ShardResult> score_rows_on_cpu(std::span<Release> releases, const T* data, std::uint64_t cols,
                                           std::uint64_t row_stride) {
  return score_each_row_on_cpu(releases.size(), [&](std::uint64_t r) {
    return releases[r].evaluate(std::span<const T>(data + r * row_stride, cols), 0);
  });
}

// Rows r scored with specs[r] on the GPU in one batched pass (kernels/select_rows.cu), unstamped:
// `data` in device memory (on_device, read on `stream`) or in host memory (streamed through the
// device).
template <class T>
void gpu_evaluate_rows(std::span<const NoiseSpec> specs, const T* data, std::uint64_t cols, std::uint64_t row_stride,
                       bool on_device, cuda_stream_t stream, std::span<ShardResult> results) {
  if (on_device) {
    gpu_evaluate_device_rows(specs, data, row_stride, cols, results, stream);
  } else {
    gpu_evaluate_host_rows(specs, data, row_stride, cols, results);
  }
}

// The same rows of releases on the GPU, each claimed and its result stamped.
template <class T>
std::vector<ShardResult> score_rows_on_gpu(std::span<Release> releases, const T* data, std::uint64_t cols,
                                           std::uint64_t row_stride, bool on_device, cuda_stream_t stream) {
  const IndexRange row_range{0, cols};
  std::vector<NoiseSpec> specs;
  specs.reserve(releases.size());
  for (Release& release : releases) {
    ReleaseAccess::claim(release, row_range);
    specs.push_back(ReleaseAccess::noise_spec(release));
  }
  std::vector<ShardResult> results(releases.size());
  gpu_evaluate_rows(std::span<const NoiseSpec>(specs), data, cols, row_stride, on_device, stream, results);
  for (std::size_t r = 0; r < releases.size(); ++r) {
    results[r] = ReleaseAccess::stamped(releases[r], row_range, results[r]);
  }
  return results;
}

}  // namespace dpselect::detail
