// SPDX-License-Identifier: Apache-2.0
// The GPU side of the batched sparse vector: the parallel find-first that decides the next "above"
// answer (host/sparse_vector/sparse_vector_batch.cpp drives it, after the value scan of
// kernels/common/device_values.cu). Each query's noise is a pure function of its index, so any
// thread may evaluate any query and the first index found is the one the sequential mechanism
// stops at.
#include <cuda_runtime.h>

#include "common/launch_helpers.cuh"
#include "dpselect/detail/fused_select_kernel.cuh"
#include "dpselect/detail/kernel_launch.cuh"
#include "sparse_vector/gpu.hpp"

namespace dpselect::detail {
namespace {

// At most 4096 blocks: half the element-wise kernels' grid (as the value scan's).
struct Policy : GridStridePolicy {
  static constexpr std::uint64_t kMaxBlocks = 4096;
};

// Finding the first "above" in [begin, end): each thread walks its indices in increasing order and
// stops at its first "above", or as soon as *first (the smallest "above" recorded so far) is at or
// before its next index. *first ends at the smallest "above" m: only "above" indices, all >= m,
// are recorded, so m's thread can stop short of m only once *first = m.

// Philox: one query per thread, one 16-byte block each.
__global__ void first_above_kernel(const double* values, std::uint64_t begin, std::uint64_t end,
                                   SparseQueryNoise noise, double noisy_threshold, unsigned long long* first) {
  constexpr int kThreads = Policy::kBlockThreads;
  const std::uint64_t stride = std::uint64_t{gridDim.x} * kThreads;
  for (std::uint64_t i = begin + std::uint64_t{blockIdx.x} * kThreads + threadIdx.x; i < end; i += stride) {
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
  for (const std::uint64_t offset : grid_stride_indices<Policy::kBlockThreads>(quads)) {
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

std::uint64_t gpu_first_above(const double* values, std::uint64_t begin, std::uint64_t end,
                              const SparseQueryNoise& noise, double noisy_threshold, cuda_stream_t stream) {
  if (begin >= end) return end;
  // All ones means "none found": a memset, not a copy from the host, so nothing waits for it.
  DeviceScratch first(sizeof(unsigned long long), stream);
  DPSELECT_CUDA_TRY(cudaMemsetAsync(first.as<unsigned long long>(), 0xFF, sizeof(unsigned long long), stream));
  if (noise.key.generator == Generator::philox) {
    launch_kernel<first_above_kernel>(grid_blocks<Policy>(end - begin), Policy::kBlockThreads, 0,
                                      stream, values, begin, end, noise, noisy_threshold,
                                      first.as<unsigned long long>());
  } else {
    launch_kernel<first_above_quads_kernel>(
        grid_blocks<Policy>(quads_overlapping(begin, end)), Policy::kBlockThreads, 0, stream, values,
        begin, end, noise, noisy_threshold, first.as<unsigned long long>());
  }
  DPSELECT_CUDA_TRY(cudaGetLastError());
  const unsigned long long found = read_device_value(first.as<unsigned long long>(), stream);
  return found < end ? found : end;
}

}  // namespace dpselect::detail
