// SPDX-License-Identifier: Apache-2.0
// The GPU entry points of a CPU-only build.
#include "dpselect/errors.hpp"
#include "engine/gpu_backend.hpp"
#include "engine/gpu_diagnosis.hpp"
#include "partition_selection/partition_passes.hpp"
#include "quantiles/quantiles_internal.hpp"

namespace dpselect::detail {
namespace {
[[noreturn]] void throw_unavailable() {
  throw BackendUnavailable("dpselect: this build has no CUDA backend (configured with "
                           "DPSELECT_CUDA=OFF or without nvcc); use Backend::Cpu or Auto");
}
}  // namespace

bool cuda_backend_compiled() { return false; }
bool cuda_device_usable() { return false; }
std::string_view gpu_unusable_reason() {
  static const std::string reason = [] {
    GpuProbe probe;
    probe.outcome = nvidia_gpu_present_to_os() ? GpuProbeOutcome::backend_not_built : GpuProbeOutcome::no_gpu;
    return describe_unusable_gpu(probe);
  }();
  return reason;
}

// No device, so no pools: the threshold setting is recorded by the caller and applies to nothing.
void gpu_set_pool_release_threshold(std::uint64_t) {}
void gpu_trim_memory(std::uint64_t) {}
int gpu_device_count() { return 0; }
// Unreachable in practice: device_memory_usage has thrown BackendUnavailable before.
DeviceMemoryUsage gpu_pool_usage(int) { throw_unavailable(); }
void set_host_streaming_bytes_for_testing(std::uint64_t, std::uint64_t) {}
void set_partition_chunk_pairs_for_testing(std::uint64_t) {}
void set_rows_layout_for_testing(RowsLayout, unsigned) {}

// Unreachable in practice: resolve_backend(Gpu) has thrown BackendUnavailable before.
void validate_device_pointer(const void*, std::string_view) {}

ShardResult gpu_evaluate_device(const NoiseSpec&, const float*, IndexRange, cuda_stream_t) {
  throw_unavailable();
}
ShardResult gpu_evaluate_device(const NoiseSpec&, const double*, IndexRange, cuda_stream_t) {
  throw_unavailable();
}
ShardResult gpu_evaluate_host(const NoiseSpec&, const float*, IndexRange) { throw_unavailable(); }
ShardResult gpu_evaluate_host(const NoiseSpec&, const double*, IndexRange) { throw_unavailable(); }
void gpu_evaluate_device_rows(std::span<const NoiseSpec>, const float*, std::uint64_t, std::uint64_t,
                              std::span<ShardResult>, cuda_stream_t) {
  throw_unavailable();
}
void gpu_evaluate_device_rows(std::span<const NoiseSpec>, const double*, std::uint64_t, std::uint64_t,
                              std::span<ShardResult>, cuda_stream_t) {
  throw_unavailable();
}
void gpu_evaluate_host_rows(std::span<const NoiseSpec>, const float*, std::uint64_t, std::uint64_t,
                            std::span<ShardResult>) {
  throw_unavailable();
}
void gpu_evaluate_host_rows(std::span<const NoiseSpec>, const double*, std::uint64_t, std::uint64_t,
                            std::span<ShardResult>) {
  throw_unavailable();
}
TopKShard gpu_top_k_device(const NoiseSpec&, const float*, std::uint64_t, std::uint64_t, cuda_stream_t) {
  throw_unavailable();
}
TopKShard gpu_top_k_device(const NoiseSpec&, const double*, std::uint64_t, std::uint64_t, cuda_stream_t) {
  throw_unavailable();
}
TopKShard gpu_top_k_host(const NoiseSpec&, const float*, std::uint64_t, std::uint64_t) { throw_unavailable(); }
TopKShard gpu_top_k_host(const NoiseSpec&, const double*, std::uint64_t, std::uint64_t) { throw_unavailable(); }
ShardResult gpu_evaluate_price_grid(const NoiseSpec&, std::span<const double>, const PriceGrid&, IndexRange) {
  throw_unavailable();
}

void gpu_sort(std::span<double>) { throw_unavailable(); }

bool gpu_add_noise(double*, std::uint64_t, std::uint64_t, const RandomKey&, std::uint64_t,
                   const continuous::CoordinateNoise&, cuda_stream_t) {
  throw_unavailable();
}
bool gpu_add_noise_host(std::span<double>, const RandomKey&, std::uint64_t, const continuous::CoordinateNoise&) {
  throw_unavailable();
}

DeviceValueScan gpu_scan_values(const double*, std::uint64_t, double, cuda_stream_t) { throw_unavailable(); }
std::uint64_t gpu_first_above(const double*, std::uint64_t, std::uint64_t, const SparseQueryNoise&, double,
                              cuda_stream_t) {
  throw_unavailable();
}
double gpu_read_value(const double*, std::uint64_t, cuda_stream_t) { throw_unavailable(); }
double gpu_read_value(const float*, std::uint64_t, cuda_stream_t) { throw_unavailable(); }
DeviceValueScan gpu_secure_scan(const double*, std::uint64_t, double, cuda_stream_t) { throw_unavailable(); }
bool gpu_add_secure_noise(const SecureNoiseCore&, double*, std::uint64_t, cuda_stream_t) { throw_unavailable(); }

// Quantiles (kernels/quantiles.cu). Unreachable in practice: QuantileData::from_device and
// Backend::Gpu resolve the backend first.
std::shared_ptr<const QuantileData::Storage> gpu_prepare_quantile_data(const double*, std::uint64_t,
                                                                       const QuantileRange&, cuda_stream_t) {
  throw_unavailable();
}
std::shared_ptr<const QuantileData::Storage> gpu_prepare_quantile_data(const float*, std::uint64_t,
                                                                       const QuantileRange&, cuda_stream_t) {
  throw_unavailable();
}
ShardResult gpu_score_quantile_intervals(const SingleQuantilePlan&, const NoiseSpec&, const QuantileData::Storage&,
                                         IndexRange) {
  throw_unavailable();
}
ShardResult gpu_score_quantile_atoms(const SingleQuantilePlan&, const NoiseSpec&, const QuantileData::Storage&,
                                     IndexRange, double) {
  throw_unavailable();
}
std::vector<std::uint64_t> gpu_read_quantile_positions(const QuantileData::Storage&, std::uint64_t, std::uint64_t) {
  throw_unavailable();
}

// Partition selection (kernels/partition_selection.cu). Unreachable in practice: both entry points
// resolve the backend first.
ReleasedKeys gpu_select_partitions(const std::uint64_t*, const std::uint64_t*, std::uint64_t, bool, std::uint64_t,
                                   const PartitionKeepRule&, PartitionStrategy, const ContextAccess::KeyedStream&,
                                   cuda_stream_t) {
  throw_unavailable();
}

}  // namespace dpselect::detail
