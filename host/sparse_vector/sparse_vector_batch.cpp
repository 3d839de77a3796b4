// The batched sparse vector: a windowed parallel find-first over a batch of query values (see
// sparse_vector.hpp), on all CPU cores for values in host memory and on the GPU for values in
// device memory. Both drive the same loop; only "the first above in [begin, end)" differs.
#include <algorithm>
#include <cmath>
#include <string>

#include "dpselect/detail/release_access.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/sparse_vector.hpp"
#include "engine/gpu_backend.hpp"
#include "sparse_vector/sparse_vector_internal.hpp"
#include "engine/validation.hpp"

namespace dpselect {
namespace {

// Windows restart small after each "above" (positives may come close together) and double while
// none is found, so the work beyond the queries answered is at most one window plus as much again.
// A GPU window costs a launch and a synchronization (~10 us), so its windows are larger.
struct WindowSizes {
  std::uint64_t first;
  std::uint64_t largest;
};
constexpr WindowSizes kCpuWindows{256, std::uint64_t{1} << 22};
constexpr WindowSizes kGpuWindows{std::uint64_t{1} << 16, std::uint64_t{1} << 28};
// Below this many queries a window is searched on one thread (a parallel region costs more).
constexpr std::uint64_t kParallelWindow = std::uint64_t{1} << 14;

void validate_batch_size(std::uint64_t size) {
  if (size > detail::kSparseQueryLimit) {
    throw InvalidArgument("dpselect: values must number at most 2^58 (got " + std::to_string(size) + ")");
  }
}

// Runs the mechanism over `count` queries on the stream `drawn` (already charged).
// FirstAbove(begin, end, noise, noisy_threshold) returns the first i in [begin, end) whose noisy
// value clears the threshold, or end; ValueAt(i) returns value i (for NumericSparse answers).
template <class FirstAbove, class ValueAt>
SparseVectorBatch run_batch(const detail::ContextAccess::KeyedStream& drawn, const SparseVectorParams& params,
                            const SparseVectorScales& scales, std::uint64_t count, double largest_abs_value,
                            WindowSizes windows, FirstAbove first_above, ValueAt value_at) {
  std::uint64_t queries = 0;
  std::uint64_t positives = 0;
  double noisy_threshold = 0.0;
  detail::SparseVectorRun run{params, scales, drawn.key, drawn.stream, queries, positives, noisy_threshold};
  run.draw_threshold();
  SparseVectorBatch batch;
  std::uint64_t window = windows.first;
  while (queries < count && positives < params.max_positives) {
    const std::uint64_t end = queries + std::min(window, count - queries);
    const std::uint64_t found = first_above(queries, end, run.query_noise(), noisy_threshold);
    if (found == end) {
      queries = end;
      window = std::min(window * 2, windows.largest);
      continue;
    }
    batch.above.push_back({found, run.record_above(found, value_at(found))});
    window = windows.first;
  }
  // Conservative: the slack uses the largest of all values given, answered or not.
  batch.report = detail::sparse_vector_report(params, scales, drawn.key.generator, drawn.stream, queries,
                                              positives, largest_abs_value);
  return batch;
}

std::uint64_t cpu_first_above(const double* values, std::uint64_t begin, std::uint64_t end,
                              const detail::SparseQueryNoise& noise, double noisy_threshold) {
  if (end - begin < kParallelWindow) {
    for (std::uint64_t i = begin; i < end; ++i) {
      if (noise.above(i, values[i], noisy_threshold)) return i;
    }
    return end;
  }
  std::uint64_t first = end;
#pragma omp parallel for schedule(static) reduction(min : first)
  for (std::uint64_t i = begin; i < end; ++i) {
    if (i < first && noise.above(i, values[i], noisy_threshold)) first = i;
  }
  return first;
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
  return run_batch(
      drawn, params, scales, values.size(), largest_abs_value, kCpuWindows,
      [data](std::uint64_t begin, std::uint64_t end, const detail::SparseQueryNoise& noise, double threshold) {
        return cpu_first_above(data, begin, end, noise, threshold);
      },
      [data](std::uint64_t index) { return data[index]; });
}

}  // namespace

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
  return run_batch(
      charge_and_draw(context, params), params, scales, values.size, scan.largest_abs_value, kGpuWindows,
      [&](std::uint64_t begin, std::uint64_t end, const detail::SparseQueryNoise& noise, double threshold) {
        return detail::gpu_first_above(values.data, begin, end, noise, threshold, stream);
      },
      [&](std::uint64_t index) { return detail::gpu_read_value(values.data, index, stream); });
}

}  // namespace dpselect
