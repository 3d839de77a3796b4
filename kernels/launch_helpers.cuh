// Helpers shared by the grid-stride kernels of kernels/ (sparse vector, noise vectors, secure
// noise): the grid size, and reading one result back. Device-only translation units include it.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "dpselect/detail/cuda_check.cuh"

namespace dpselect::detail {

// Blocks of `block_threads` for a grid-stride loop over `count` items: one item per thread when
// that fits in `max_blocks`, at least one block.
inline unsigned int grid_stride_blocks(std::uint64_t count, int block_threads, std::uint64_t max_blocks) {
  const auto threads = static_cast<std::uint64_t>(block_threads);
  return static_cast<unsigned int>(std::clamp<std::uint64_t>((count + threads - 1) / threads, 1, max_blocks));
}

// *source (device memory) after the work queued on `stream`; synchronizes `stream`.
template <class T>
T read_device_value(const T* source, cudaStream_t stream) {
  T value{};
  DPSELECT_CUDA_TRY(cudaMemcpyAsync(&value, source, sizeof value, cudaMemcpyDeviceToHost, stream));
  DPSELECT_CUDA_TRY(cudaStreamSynchronize(stream));
  return value;
}

}  // namespace dpselect::detail
