// SPDX-License-Identifier: Apache-2.0
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
#include "dpselect/detail/kernel_launch.cuh"
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

// Finding the first "above" in [begin, end): each thread walks its indices in increasing order and
// stops at its first "above", or as soon as *first (the smallest "above" recorded so far) is at or
// before its next index. *first ends at the smallest "above" m: only "above" indices, all >= m,
// are recorded, so m's thread can stop short of m only once *first = m.

// Philox: one query per thread, one 16-byte block each.
__global__ void first_above_kernel(const double* values, std::uint64_t begin, std::uint64_t end,
                                   SparseQueryNoise noise, double noisy_threshold, unsigned long long* first) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * kBlockThreads;
  for (std::uint64_t i = begin + std::uint64_t{blockIdx.x} * kBlockThreads + threadIdx.x; i < end; i += stride) {
    if (i >= *static_cast<volatile unsigned long long*>(first)) return;
    if (noise.above_given_block(philox_block(noise.key.philox, noise.stream, i), values[i], noisy_threshold)) {
      atomicMin(first, static_cast<unsigned long long>(i));
      return;
    }
  }
}

constexpr std::uint64_t kQueriesPerChaChaBlock = 4;

// The quads (queries 4q .. 4q+3) that overlap queries [begin, end), end > begin.
__host__ __device__ __forceinline__ std::uint64_t quads_overlapping(std::uint64_t begin, std::uint64_t end) {
  return (end - 1) / kQueriesPerChaChaBlock - begin / kQueriesPerChaChaBlock + 1;
}

// Query 4 quad + Lane, from its quarter of the quad's ChaCha20 block: true (and recorded) when it
// lies in [begin, end) and is "above".
template <unsigned Lane>
__device__ __forceinline__ bool query_above(const std::uint32_t (&words)[16], std::uint64_t quad, const double* values,
                                            std::uint64_t begin, std::uint64_t end, const SparseQueryNoise& noise,
                                            double noisy_threshold, unsigned long long* first) {
  const std::uint64_t index = quad * kQueriesPerChaChaBlock + Lane;
  if (index < begin || index >= end) return false;
  if (!noise.above_given_block(chacha20_quarter<Lane>(words), values[index], noisy_threshold)) return false;
  atomicMin(first, static_cast<unsigned long long>(index));
  return true;
}

// ChaCha20: query i reads quarter i % 4 of block i / 4, so a thread takes the four queries of a
// block ("quad") and computes the block once. Its walk is still in increasing index order: quads
// in increasing order, the queries of a quad in order, stopping at the first "above".
__global__ void first_above_quads_kernel(const double* values, std::uint64_t begin, std::uint64_t end,
                                         SparseQueryNoise noise, double noisy_threshold, unsigned long long* first) {
  const std::uint64_t first_quad = begin / kQueriesPerChaChaBlock;
  const std::uint64_t quads = quads_overlapping(begin, end);
  const std::uint64_t stride = std::uint64_t{gridDim.x} * kBlockThreads;
  for (std::uint64_t offset = std::uint64_t{blockIdx.x} * kBlockThreads + threadIdx.x; offset < quads;
       offset += stride) {
    const std::uint64_t quad = first_quad + offset;
    const std::uint64_t next_index = quad * kQueriesPerChaChaBlock < begin ? begin : quad * kQueriesPerChaChaBlock;
    if (next_index >= *static_cast<volatile unsigned long long*>(first)) return;
    std::uint32_t words[16];
    chacha20_stream_block(noise.key.chacha, noise.stream, quad, words);
    if (query_above<0>(words, quad, values, begin, end, noise, noisy_threshold, first) ||
        query_above<1>(words, quad, values, begin, end, noise, noisy_threshold, first) ||
        query_above<2>(words, quad, values, begin, end, noise, noisy_threshold, first) ||
        query_above<3>(words, quad, values, begin, end, noise, noisy_threshold, first)) {
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
  launch_kernel<scan_values_kernel>(grid_stride_blocks(count, kBlockThreads, kMaxBlocks), kBlockThreads, 0, stream,
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

std::uint64_t gpu_first_above(const double* values, std::uint64_t begin, std::uint64_t end,
                              const SparseQueryNoise& noise, double noisy_threshold, cuda_stream_t stream) {
  if (begin >= end) return end;
  // All ones means "none found": a memset, not a copy from the host, so nothing waits for it.
  DeviceScratch first(sizeof(unsigned long long), stream);
  DPSELECT_CUDA_TRY(cudaMemsetAsync(first.as<unsigned long long>(), 0xFF, sizeof(unsigned long long), stream));
  if (noise.key.generator == Generator::philox) {
    launch_kernel<first_above_kernel>(grid_stride_blocks(end - begin, kBlockThreads, kMaxBlocks), kBlockThreads, 0,
                                      stream, values, begin, end, noise, noisy_threshold,
                                      first.as<unsigned long long>());
  } else {
    launch_kernel<first_above_quads_kernel>(
        grid_stride_blocks(quads_overlapping(begin, end), kBlockThreads, kMaxBlocks), kBlockThreads, 0, stream, values,
        begin, end, noise, noisy_threshold, first.as<unsigned long long>());
  }
  DPSELECT_CUDA_TRY(cudaGetLastError());
  const unsigned long long found = read_device_value(first.as<unsigned long long>(), stream);
  return found < end ? found : end;
}

double gpu_read_value(const double* values, std::uint64_t index, cuda_stream_t stream) {
  return read_device_value(values + index, stream);
}
double gpu_read_value(const float* values, std::uint64_t index, cuda_stream_t stream) {
  return static_cast<double>(read_device_value(values + index, stream));
}

}  // namespace dpselect::detail
