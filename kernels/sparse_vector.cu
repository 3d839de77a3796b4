// The GPU side of the batched sparse vector: a validation pass over the query values and the
// parallel find-first that decides the next "above" answer (host/sparse_vector/sparse_vector_batch.cpp drives
// both). Each query's noise is a pure function of its index, so any thread may evaluate any
// query and the first index found is the one the sequential mechanism stops at.
#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>
#include <cuda/functional>
#include <cuda/std/bit>
#include <cuda/std/limits>

#include "engine/gpu_backend.hpp"
#include "dpselect/detail/fused_select_kernel.cuh"
#include "launch_helpers.cuh"

namespace dpselect::detail {
namespace {

constexpr int kBlockThreads = 256;
constexpr std::uint64_t kMaxBlocks = 4096;

// Non-negative doubles order like their bit patterns, so atomicMax on the bits is a max on |v|.
__global__ void scan_values_kernel(const double* values, std::uint64_t count, double bound,
                                   unsigned long long* first_invalid, unsigned long long* largest_abs_bits) {
  using Reduce = cub::BlockReduce<unsigned long long, kBlockThreads>;
  __shared__ typename Reduce::TempStorage storage;
  unsigned long long local_first = count;
  unsigned long long local_largest = 0;
  const std::uint64_t stride = std::uint64_t{gridDim.x} * kBlockThreads;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * kBlockThreads + threadIdx.x; i < count; i += stride) {
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

// Each thread walks its indices in increasing order and stops at its first "above" or as soon as
// another thread has found an earlier one.
__global__ void first_above_kernel(const double* values, std::uint64_t begin, std::uint64_t end,
                                   SparseQueryNoise noise, double noisy_threshold, unsigned long long* first) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * kBlockThreads;
  for (std::uint64_t i = begin + std::uint64_t{blockIdx.x} * kBlockThreads + threadIdx.x; i < end; i += stride) {
    if (i >= *static_cast<volatile unsigned long long*>(first)) return;
    if (noise.above(i, values[i], noisy_threshold)) {
      atomicMin(first, static_cast<unsigned long long>(i));
      return;
    }
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
  scan_values_kernel<<<grid_stride_blocks(count, kBlockThreads, kMaxBlocks), kBlockThreads, 0, stream>>>(
      values, count, bound, results.as<unsigned long long>(), results.as<unsigned long long>() + 1);
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

std::uint64_t gpu_first_above(const double* values, std::uint64_t begin, std::uint64_t end,
                              const SparseQueryNoise& noise, double noisy_threshold, cuda_stream_t stream) {
  if (begin >= end) return end;
  // All ones means "none found": a memset, not a copy from the host, so nothing waits for it.
  DeviceScratch first(sizeof(unsigned long long), stream);
  DPSELECT_CUDA_TRY(cudaMemsetAsync(first.as<unsigned long long>(), 0xFF, sizeof(unsigned long long), stream));
  first_above_kernel<<<grid_stride_blocks(end - begin, kBlockThreads, kMaxBlocks), kBlockThreads, 0, stream>>>(
      values, begin, end, noise, noisy_threshold, first.as<unsigned long long>());
  DPSELECT_CUDA_TRY(cudaGetLastError());
  const unsigned long long found = read_device_value(first.as<unsigned long long>(), stream);
  return found < end ? found : end;
}

double gpu_read_value(const double* values, std::uint64_t index, cuda_stream_t stream) {
  return read_device_value(values + index, stream);
}

}  // namespace dpselect::detail
