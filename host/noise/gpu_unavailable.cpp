// SPDX-License-Identifier: Apache-2.0
// The noise passes' GPU entry points in a CPU-only build: each throws BackendUnavailable.
#include "noise/gpu.hpp"
#include "device/gpu.hpp"

namespace dpselect::detail {

bool gpu_add_noise(double*, std::uint64_t, std::uint64_t, const RandomKey&, std::uint64_t,
                   const continuous::CoordinateNoise&, cuda_stream_t) {
  throw_gpu_unavailable();
}
bool gpu_add_noise_host(std::span<double>, const RandomKey&, std::uint64_t, const continuous::CoordinateNoise&) {
  throw_gpu_unavailable();
}

DeviceValueScan gpu_secure_scan(const double*, std::uint64_t, double, cuda_stream_t) { throw_gpu_unavailable(); }
bool gpu_add_secure_noise(const SecureNoiseCore&, double*, std::uint64_t, cuda_stream_t) { throw_gpu_unavailable(); }

}  // namespace dpselect::detail
