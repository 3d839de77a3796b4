// SPDX-License-Identifier: Apache-2.0
// The batched sparse vector: a windowed parallel find-first over a batch of query values (see
// sparse_vector.hpp), on all CPU cores for values in host memory and on the GPU for values in
// device memory. Both drive the same loop; only "the first above in [begin, end)" differs.
#include <algorithm>
#include <cmath>
#include <string>

#include "dpselect/detail/release_access.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/sparse_vector.hpp"
#include "device/gpu.hpp"
#include "sparse_vector/gpu.hpp"
#include "sparse_vector/sparse_vector_internal.hpp"
#include "validation/validation.hpp"

namespace dpselect {
namespace {

using detail::kCpuWindows;
// A GPU window costs a launch and a synchronization (~10 us), so its windows are larger.
constexpr detail::WindowSizes kGpuWindows{std::uint64_t{1} << 16, std::uint64_t{1} << 28};

void validate_batch_size(std::uint64_t size) {
  if (size > detail::kSparseQueryLimit) {
    throw InvalidArgument("dpselect: values must number at most 2^58 (got " + std::to_string(size) + ")");
  }
}

detail::ContextAccess::KeyedStream charge_and_draw(Context& context, const SparseVectorParams& params) {
  detail::charge_sparse_vector(context, params);
  return detail::ContextAccess::draw_stream(context);
}

// Validates `values` (InvalidArgument naming the first bad one) and returns the largest |value|.
double validated_largest_abs_value(std::span<const double> values, const SparseVectorParams& params) {
  validate_batch_size(values.size());
  double largest_abs_value = 0.0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    detail::validate_sparse_value(params, values[i], i);
    largest_abs_value = std::fmax(largest_abs_value, std::fabs(values[i]));
  }
  return largest_abs_value;
}

SparseVectorBatch run_cpu_batch(const detail::ContextAccess::KeyedStream& drawn, std::span<const double> values,
                                const SparseVectorParams& params, const SparseVectorScales& scales,
                                double largest_abs_value) {
  const double* data = values.data();
  return detail::run_batch(
      drawn, params, scales, values.size(), largest_abs_value, kCpuWindows,
      [data](std::uint64_t begin, std::uint64_t end, const detail::SparseQueryNoise& noise, double threshold) {
        return detail::cpu_first_above(data, 0, begin, end, noise, threshold);
      },
      [data](std::uint64_t index) { return data[index]; });
}

}  // namespace

std::uint64_t detail::cpu_first_above(const double* values, std::uint64_t first_index, std::uint64_t begin,
                                      std::uint64_t end, const SparseQueryNoise& noise, double noisy_threshold) {
  // Below this many queries a window is searched on one thread (a parallel region costs more).
  constexpr std::uint64_t kParallelWindow = std::uint64_t{1} << 14;
  if (end - begin < kParallelWindow) {
    for (std::uint64_t i = begin; i < end; ++i) {
      if (noise.above(i, values[i - first_index], noisy_threshold)) return i;
    }
    return end;
  }
  std::uint64_t first = end;
#pragma omp parallel for schedule(static) reduction(min : first)
  for (std::uint64_t i = begin; i < end; ++i) {
    if (i < first && noise.above(i, values[i - first_index], noisy_threshold)) first = i;
  }
  return first;
}

SparseVectorBatch detail::sparse_vector_batch_on_stream(const ContextAccess::KeyedStream& drawn,
                                                        std::span<const double> values,
                                                        const SparseVectorParams& params) {
  const SparseVectorScales scales = sparse_vector_scales(params);
  return run_cpu_batch(drawn, values, params, scales, validated_largest_abs_value(values, params));
}

SparseVectorBatch sparse_vector_batch(Context& context, std::span<const double> values,
                                      const SparseVectorParams& params) {
  const SparseVectorScales scales = sparse_vector_scales(params);
  const double largest_abs_value = validated_largest_abs_value(values, params);
  return run_cpu_batch(charge_and_draw(context, params), values, params, scales, largest_abs_value);
}

SparseVectorBatch sparse_vector_batch(Context& context, DeviceSpan<const double> values,
                                      const SparseVectorParams& params, cuda_stream_t stream) {
  const SparseVectorScales scales = sparse_vector_scales(params);
  validate_batch_size(values.size);
  if (values.data == nullptr && values.size != 0) {
    throw InvalidArgument("dpselect: values.data must be a device pointer (got nullptr)");
  }
  detail::resolve_backend(Backend::Gpu);
  if (values.size != 0) detail::validate_device_pointer(values.data, "values.data");
  const detail::DeviceValueScan scan = detail::gpu_scan_values(values.data, values.size, params.value_bound, stream);
  if (scan.first_invalid < values.size) {
    detail::validate_sparse_value(params, scan.first_invalid_value, scan.first_invalid);  // throws
  }
  return detail::run_batch(
      charge_and_draw(context, params), params, scales, values.size, scan.largest_abs_value, kGpuWindows,
      [&](std::uint64_t begin, std::uint64_t end, const detail::SparseQueryNoise& noise, double threshold) {
        return detail::gpu_first_above(values.data, begin, end, noise, threshold, stream);
      },
      [&](std::uint64_t index) { return detail::gpu_read_value(values.data, index, stream); });
}

}  // namespace dpselect
