// SPDX-License-Identifier: Apache-2.0
// The device entry points of a CPU-only build: no device is usable, so there are no pools, and
// every pass over device memory throws BackendUnavailable.
#include "dpselect/errors.hpp"
#include "device/gpu.hpp"

namespace dpselect::detail {

void throw_gpu_unavailable() {
  throw BackendUnavailable("dpselect: this build has no CUDA backend (configured with "
                           "DPSELECT_CUDA=OFF or without nvcc); use Backend::Cpu or Auto");
}

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
DeviceMemoryUsage gpu_pool_usage(int) { throw_gpu_unavailable(); }
std::uint64_t gpu_available_bytes() { throw_gpu_unavailable(); }
std::vector<std::uint64_t> gpu_copy_to_host(const std::uint64_t*, std::uint64_t, cuda_stream_t) {
  throw_gpu_unavailable();
}
void set_host_streaming_bytes_for_testing(std::uint64_t, std::uint64_t) {}

// Unreachable in practice: resolve_backend(Gpu) has thrown BackendUnavailable before.
void validate_device_pointer(const void*, std::string_view) {}

DeviceValueScan gpu_scan_values(const double*, std::uint64_t, double, cuda_stream_t) { throw_gpu_unavailable(); }
double gpu_read_value(const double*, std::uint64_t, cuda_stream_t) { throw_gpu_unavailable(); }
double gpu_read_value(const float*, std::uint64_t, cuda_stream_t) { throw_gpu_unavailable(); }

}  // namespace dpselect::detail
