// Helpers shared by the kernels of kernels/: the grid size of the grid-stride kernels (sparse
// vector, noise vectors, secure noise), reading one result back, and the staging buffer of the
// host-array paths (selection, top-k, noise vectors). Device-only translation units include it.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "dpselect/detail/cuda_check.cuh"
#include "dpselect/detail/device_memory_pool.cuh"

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

// The device buffer through which a host array is streamed: the largest of up to `wanted`
// elements of T the device can hold now, halved on out-of-memory down to 2^16 elements (then
// CudaError); from the library's pool (device_memory_pool.cuh), freed in stream order. One chunk
// size for every host-array path, so none of them fails where another would have halved.
template <class T>
class DeviceChunk {
 public:
  DeviceChunk(std::uint64_t wanted, cudaStream_t stream, const char* what) : stream_(stream) {
    constexpr std::uint64_t kSmallestChunk = std::uint64_t{1} << 16;
    for (elements_ = std::max<std::uint64_t>(wanted, 1);; elements_ /= 2) {
      const cudaError_t status =
          library_pool_malloc_async(reinterpret_cast<void**>(&data_), elements_ * sizeof(T), stream);
      if (status == cudaSuccess) return;
      // The pool reports a full device as cudaErrorMemoryAllocation and leaves no error behind.
      if (status != cudaErrorMemoryAllocation || elements_ <= kSmallestChunk) {
        data_ = nullptr;
        throw_cuda_error(status, what, __FILE__, __LINE__);
      }
    }
  }
  DeviceChunk(const DeviceChunk&) = delete;
  DeviceChunk& operator=(const DeviceChunk&) = delete;
  ~DeviceChunk() { static_cast<void>(cudaFreeAsync(data_, stream_)); }

  T* data() const { return data_; }
  std::uint64_t elements() const { return elements_; }

 private:
  T* data_ = nullptr;
  std::uint64_t elements_ = 0;
  cudaStream_t stream_;
};

}  // namespace dpselect::detail
