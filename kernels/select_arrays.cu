// GPU selection over utility arrays in device memory, and over host arrays streamed through
// the device in chunks.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "engine/gpu_backend.hpp"
#include "launch_helpers.cuh"
#include "dpselect/detail/fused_select_kernel.cuh"

namespace dpselect::detail {
namespace {

template <class T>
ShardResult evaluate_device_array(const NoiseSpec& spec, const T* utilities, IndexRange range,
                                  cudaStream_t stream) {
  return run_fused_select(ArraySource<T>{utilities, range.begin}, range.begin, range.size(), spec,
                          stream);
}

template <class T>
ShardResult evaluate_host_array(const NoiseSpec& spec, const T* utilities, IndexRange range) {
  // 256 MiB of float per chunk: large enough to reach full bandwidth per launch.
  constexpr std::uint64_t kChunkElements = std::uint64_t{1} << 26;
  const OwnedStream owned_stream;
  const cudaStream_t stream = owned_stream.get();

  const std::uint64_t n = range.size();
  const DeviceChunk<T> staging(std::min(n, kChunkElements), stream, "cudaMallocAsync(chunk buffer)");
  T* const chunk = staging.data();
  const std::uint64_t chunk_elements = staging.elements();

  const unsigned int grid = fused_select_grid<ArraySource<T>>(chunk_elements, spec.key.generator);
  DeviceScratch scratch((grid + 1) * sizeof(ShardResult), stream);
  ShardResult* accumulator = scratch.as<ShardResult>();
  reset_accumulator_kernel<0><<<1, 1, 0, stream>>>(accumulator);
  DPSELECT_CUDA_TRY(cudaGetLastError());
  for (std::uint64_t offset = 0; offset < n; offset += chunk_elements) {
    const std::uint64_t count = std::min(chunk_elements, n - offset);
    DPSELECT_CUDA_TRY(cudaMemcpyAsync(chunk, utilities + offset, count * sizeof(T),
                                      cudaMemcpyHostToDevice, stream));
    const std::uint64_t first_index = range.begin + offset;
    enqueue_fused_select(ArraySource<T>{chunk, first_index}, first_index, count, spec, grid,
                         accumulator + 1, accumulator, stream);
  }
  ShardResult result;
  DPSELECT_CUDA_TRY(cudaMemcpyAsync(&result, accumulator, sizeof result, cudaMemcpyDeviceToHost, stream));
  DPSELECT_CUDA_TRY(cudaStreamSynchronize(stream));
  return result;
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
