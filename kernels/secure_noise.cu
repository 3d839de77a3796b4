// SPDX-License-Identifier: Apache-2.0
// The GPU side of secure noise (secure_noise.hpp): a validation pass and the per-coordinate
// kernel. Each coordinate's noise is a pure function of (key, stream, index), computed by the
// same __host__ __device__ code as the CPU loop (noise/secure_noise_core.hpp), so the doubles
// written are the host's, bit for bit.
#include <cuda_runtime.h>

#include <cuda/std/limits>

#include "device/gpu.hpp"
#include "noise/gpu.hpp"
#include "dpselect/detail/fused_select_kernel.cuh"
#include "dpselect/detail/kernel_launch.cuh"
#include "common/launch_helpers.cuh"

namespace dpselect::detail {
namespace {

using Policy = GridStridePolicy;

__global__ void secure_scan_kernel(const double* values, std::uint64_t count, double granularity,
                                   unsigned long long* first_invalid) {
  for (const std::uint64_t i : grid_stride_indices<Policy::kBlockThreads>(count)) {
    const double v = values[i];
    const bool finite = fabs(v) <= cuda::std::numeric_limits<double>::max();
    const bool on_grid = granularity == 0.0 || (finite && v == mul_rn(granularity, rint(div_rn(v, granularity))));
    if (!(finite && on_grid)) {
      atomicMin(first_invalid, static_cast<unsigned long long>(i));
      return;
    }
  }
}

__global__ void secure_noise_kernel(SecureNoiseCore core, double* values, std::uint64_t count, int* exhausted) {
  for (const std::uint64_t i : grid_stride_indices<Policy::kBlockThreads>(count)) {
    bool spent = false;
    values[i] = secure_coordinate(core, i, values[i], &spent);
    if (spent) atomicOr(exhausted, 1);
  }
}

}  // namespace

DeviceValueScan gpu_secure_scan(const double* values, std::uint64_t count, double granularity, cuda_stream_t stream) {
  DeviceValueScan scan{count, 0.0, 0.0};
  if (count == 0) return scan;
  DeviceScratch first(sizeof(unsigned long long), stream);
  DPSELECT_CUDA_TRY(cudaMemsetAsync(first.as<unsigned long long>(), 0xFF, sizeof(unsigned long long), stream));
  launch_kernel<secure_scan_kernel>(grid_blocks<Policy>(count), Policy::kBlockThreads, 0, stream,
                                    values, count, granularity, first.as<unsigned long long>());
  DPSELECT_CUDA_TRY(cudaGetLastError());
  const unsigned long long found = read_device_value(first.as<unsigned long long>(), stream);
  if (found < count) {
    scan.first_invalid = found;
    scan.first_invalid_value = gpu_read_value(values, found, stream);
  }
  return scan;
}

bool gpu_add_secure_noise(const SecureNoiseCore& core, double* values, std::uint64_t count, cuda_stream_t stream) {
  if (count == 0) return false;
  DeviceScratch flag(sizeof(int), stream);
  DPSELECT_CUDA_TRY(cudaMemsetAsync(flag.as<int>(), 0, sizeof(int), stream));
  launch_kernel<secure_noise_kernel>(grid_blocks<Policy>(count), Policy::kBlockThreads, 0, stream,
                                     core, values, count, flag.as<int>());
  DPSELECT_CUDA_TRY(cudaGetLastError());
  return read_device_value(flag.as<int>(), stream) != 0;
}

}  // namespace dpselect::detail
