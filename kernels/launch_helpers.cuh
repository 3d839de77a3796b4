// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the kernels of kernels/: the grid size of the grid-stride kernels (sparse
// vector, noise vectors, secure noise), reading one result back, and the device buffers of the
// host-array paths (host_streaming.cuh). Device-only translation units include it.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "dpselect/detail/cuda_check.cuh"
#include "dpselect/detail/device_memory_pool.cuh"
#include "dpselect/errors.hpp"

namespace dpselect::detail {

// Blocks of `block_threads` for a grid-stride loop over `count` items: one item per thread when
// that fits in `max_blocks`, at least one block.
inline unsigned int grid_stride_blocks(std::uint64_t count, int block_threads, std::uint64_t max_blocks) {
  const auto threads = static_cast<std::uint64_t>(block_threads);
  return static_cast<unsigned int>(std::clamp<std::uint64_t>((count + threads - 1) / threads, 1, max_blocks));
}

// A buffer from the library's pool, freed in order on `stream` unless handed over with release().
// A full device throws CudaError with `out_of_memory`, which must say nothing of the data's size
// (a count of records can be private); any other failure a CudaError naming the call.
class PoolBuffer {
 public:
  PoolBuffer(std::size_t bytes, cudaStream_t stream, const char* out_of_memory) : stream_(stream) {
    const cudaError_t status = library_pool_malloc_async(&pointer_, bytes == 0 ? 1 : bytes, stream);
    if (status == cudaErrorMemoryAllocation) throw CudaError(out_of_memory);  // the pool leaves no error behind
    if (status != cudaSuccess) throw_cuda_error(status, "library_pool_malloc_async", __FILE__, __LINE__);
  }
  PoolBuffer(PoolBuffer&& other) noexcept : pointer_(other.release()), stream_(other.stream_) {}
  PoolBuffer(const PoolBuffer&) = delete;
  PoolBuffer& operator=(const PoolBuffer&) = delete;
  PoolBuffer& operator=(PoolBuffer&&) = delete;
  ~PoolBuffer() {
    if (pointer_ != nullptr) static_cast<void>(cudaFreeAsync(pointer_, stream_));
  }

  template <class T>
  T* as() const {
    return static_cast<T*>(pointer_);
  }
  void* release() {
    void* pointer = pointer_;
    pointer_ = nullptr;
    return pointer;
  }

 private:
  void* pointer_ = nullptr;
  cudaStream_t stream_;
};

// A CUB device algorithm called with 32-bit item counts where the count allows (its faster
// path), else 64-bit.
template <class Call>
cudaError_t with_item_count(std::uint64_t count, const Call& call) {
  if (count <= std::numeric_limits<std::uint32_t>::max()) return call(static_cast<std::uint32_t>(count));
  return call(count);
}

// *source (device memory) after the work queued on `stream`; synchronizes `stream`.
template <class T>
T read_device_value(const T* source, cudaStream_t stream) {
  T value{};
  DPSELECT_CUDA_TRY(cudaMemcpyAsync(&value, source, sizeof value, cudaMemcpyDeviceToHost, stream));
  DPSELECT_CUDA_TRY(cudaStreamSynchronize(stream));
  return value;
}

// The device buffers through which a host array is streamed (host_streaming.cuh): `buffers`
// buffers of the same number of elements, a whole number of `granule`s (rows, for a matrix): up
// to `wanted`, halved while the device cannot hold them, down to 2^16 elements or one granule,
// whichever is more (then CudaError). From the library's pool (device_memory_pool.cuh), freed in
// stream order on `stream`. One sizing rule for every host-array path, so none of them fails
// where another would have halved.
template <class T>
class DeviceChunk {
 public:
  DeviceChunk(std::uint64_t wanted, cudaStream_t stream, const char* what, std::uint64_t granule = 1,
              unsigned int buffers = 1)
      : stream_(stream) {
    constexpr std::uint64_t kSmallestChunk = std::uint64_t{1} << 16;
    const std::uint64_t smallest_granules = std::max<std::uint64_t>(1, (kSmallestChunk + granule - 1) / granule);
    for (std::uint64_t granules = std::max<std::uint64_t>(1, wanted / granule);;
         granules = std::max(granules / 2, smallest_granules)) {
      elements_ = granules * granule;
      const cudaError_t status =
          library_pool_malloc_async(reinterpret_cast<void**>(&data_), elements_ * buffers * sizeof(T), stream);
      if (status == cudaSuccess) return;
      // The pool reports a full device as cudaErrorMemoryAllocation and leaves no error behind.
      if (status != cudaErrorMemoryAllocation || granules <= smallest_granules) {
        data_ = nullptr;
        throw_cuda_error(status, what, __FILE__, __LINE__);
      }
    }
  }
  DeviceChunk(const DeviceChunk&) = delete;
  DeviceChunk& operator=(const DeviceChunk&) = delete;
  ~DeviceChunk() { static_cast<void>(cudaFreeAsync(data_, stream_)); }

  // Buffer `which` (0 <= which < buffers).
  T* buffer(unsigned int which) const { return data_ + static_cast<std::uint64_t>(which) * elements_; }
  // Elements of each buffer.
  std::uint64_t elements() const { return elements_; }

 private:
  T* data_ = nullptr;
  std::uint64_t elements_ = 0;
  cudaStream_t stream_;
};

}  // namespace dpselect::detail
