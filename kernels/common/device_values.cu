// SPDX-License-Identifier: Apache-2.0
// Passes over arrays in device memory that several mechanisms share (device/gpu.hpp): the scan
// for the first value that is not finite or out of bounds, with the largest magnitude (the sparse
// vector's and the noise vectors' validation), and reading one value back.
#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>
#include <cuda/functional>
#include <cuda/std/bit>
#include <cuda/std/limits>

#include "launch_helpers.cuh"
#include "device/gpu.hpp"
#include "dpselect/detail/device_memory_pool.cuh"
#include "dpselect/detail/kernel_launch.cuh"

namespace dpselect::detail {
namespace {

// At most 4096 blocks: half the element-wise kernels' grid.
struct Policy : GridStridePolicy {
  static constexpr std::uint64_t kMaxBlocks = 4096;
};

// Non-negative doubles order like their bit patterns, so atomicMax on the bits is a max on |v|.
__global__ void scan_values_kernel(const double* values, std::uint64_t count, double bound,
                                   unsigned long long* first_invalid, unsigned long long* largest_abs_bits) {
  using Reduce = cub::BlockReduce<unsigned long long, Policy::kBlockThreads>;
  __shared__ typename Reduce::TempStorage storage;
  unsigned long long local_first = count;
  unsigned long long local_largest = 0;
  for (const std::uint64_t i : grid_stride_indices<Policy::kBlockThreads>(count)) {
    const double magnitude = fabs(values[i]);
    const bool valid = magnitude <= cuda::std::numeric_limits<double>::max() && (bound == 0.0 || magnitude <= bound);
    if (!valid) {
      local_first = local_first < i ? local_first : i;
    } else {
      const unsigned long long bits = cuda::std::bit_cast<unsigned long long>(magnitude);
      local_largest = local_largest > bits ? local_largest : bits;
    }
  }
  const unsigned long long block_first = Reduce(storage).Reduce(local_first, cuda::minimum<>{});
  __syncthreads();
  const unsigned long long block_largest = Reduce(storage).Reduce(local_largest, cuda::maximum<>{});
  if (threadIdx.x == 0) {
    atomicMin(first_invalid, block_first);
    atomicMax(largest_abs_bits, block_largest);
  }
}

}  // namespace

DeviceValueScan gpu_scan_values(const double* values, std::uint64_t count, double bound, cuda_stream_t stream) {
  DeviceValueScan scan{count, 0.0, 0.0};
  if (count == 0) return scan;
  DeviceScratch results(2 * sizeof(unsigned long long), stream);
  unsigned long long initial[2] = {count, 0};
  DPSELECT_CUDA_TRY(cudaMemcpyAsync(results.as<unsigned long long>(), initial, sizeof initial, cudaMemcpyHostToDevice,
                                    stream));
  launch_kernel<scan_values_kernel>(grid_blocks<Policy>(count), Policy::kBlockThreads, 0, stream,
                                    values, count, bound, results.as<unsigned long long>(),
                                    results.as<unsigned long long>() + 1);
  DPSELECT_CUDA_TRY(cudaGetLastError());
  unsigned long long found[2];
  DPSELECT_CUDA_TRY(cudaMemcpyAsync(found, results.as<unsigned long long>(), sizeof found, cudaMemcpyDeviceToHost,
                                    stream));
  DPSELECT_CUDA_TRY(cudaStreamSynchronize(stream));
  scan.first_invalid = found[0];
  scan.largest_abs_value = cuda::std::bit_cast<double>(found[1]);
  if (scan.first_invalid < count) scan.first_invalid_value = gpu_read_value(values, scan.first_invalid, stream);
  return scan;
}

double gpu_read_value(const double* values, std::uint64_t index, cuda_stream_t stream) {
  return read_device_value(values + index, stream);
}
double gpu_read_value(const float* values, std::uint64_t index, cuda_stream_t stream) {
  return static_cast<double>(read_device_value(values + index, stream));
}

}  // namespace dpselect::detail
