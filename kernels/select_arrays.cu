// SPDX-License-Identifier: Apache-2.0
// GPU selection over utility arrays in device memory, and over host arrays streamed through
// the device in chunks, the upload of one overlapping the pass over the last.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "selection/gpu.hpp"
#include "common/host_streaming.cuh"
#include "dpselect/detail/fused_select_kernel.cuh"

namespace dpselect::detail {
namespace {

template <class T>
ShardResult evaluate_device_array(const NoiseSpec& spec, const T* utilities, IndexRange range,
                                  cudaStream_t stream) {
  return run_fused_select(ArraySource<T>{utilities, range.begin}, range.begin, range.size(), spec,
                          stream);
}

// Chunks of the host array stream through the device (common/host_streaming.cuh), each folded into one
// device-resident accumulator by a pass that reads it at its global indices.
template <class T>
ShardResult evaluate_host_array(const NoiseSpec& spec, const T* utilities, IndexRange range) {
  HostStreaming<T> streaming(range.size(), 1, streaming_chunk_bytes(kDefaultStreamingChunkBytes),
                             StreamingDirection::to_device, "cudaMallocFromPoolAsync(selection chunk)");
  const cudaStream_t stream = streaming.compute_stream();
  const unsigned int grid = fused_select_grid<ArraySource<T>>(streaming.chunk_elements(), spec.key.generator);
  const FusedSelectScratch scratch(grid, stream);
  streaming.upload_each(utilities, [&](const T* chunk, std::uint64_t offset, std::uint64_t count) {
    const std::uint64_t first_index = range.begin + offset;
    enqueue_fused_select(ArraySource<T>{chunk, first_index}, first_index, count, spec, scratch, stream);
  });
  return scratch.result(stream);
}

}  // namespace

ShardResult gpu_evaluate_device(const NoiseSpec& spec, const float* utilities, IndexRange range,
                                cuda_stream_t stream) {
  return evaluate_device_array(spec, utilities, range, stream);
}
ShardResult gpu_evaluate_device(const NoiseSpec& spec, const double* utilities, IndexRange range,
                                cuda_stream_t stream) {
  return evaluate_device_array(spec, utilities, range, stream);
}
ShardResult gpu_evaluate_host(const NoiseSpec& spec, const float* utilities, IndexRange range) {
  return evaluate_host_array(spec, utilities, range);
}
ShardResult gpu_evaluate_host(const NoiseSpec& spec, const double* utilities, IndexRange range) {
  return evaluate_host_array(spec, utilities, range);
}

}  // namespace dpselect::detail
