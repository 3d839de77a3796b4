// SPDX-License-Identifier: Apache-2.0
// The device utilities every kernel file of kernels/ shares: the launch shape of the grid-stride
// kernels (GridStridePolicy) and the loop they run (grid_stride_indices), CUB's item counts,
// reading one result back, and the device buffers of the host-array paths (host_streaming.cuh).
// The buffer class (DeviceScratch) and the launch helper (launch_kernel) are the public fused
// pass's own (dpselect/detail/). Device-only translation units include it.
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

// The launch shape of the element-wise kernels (scans, compactions, per-item noise), in the manner
// of CUB's tuning policies: blocks of kBlockThreads threads, at most kMaxBlocks of them (enough to
// fill any current GPU several times over), each thread striding over what is left.
struct GridStridePolicy {
  static constexpr int kBlockThreads = 256;
  static constexpr std::uint64_t kMaxBlocks = 8192;
};
// The blocks of a grid-stride launch over `count` items under `Policy` (GridStridePolicy or one
// derived from it).
template <class Policy>
unsigned int grid_blocks(std::uint64_t count) {
  return grid_stride_blocks(count, Policy::kBlockThreads, Policy::kMaxBlocks);
}

// The indices in [0, count) a thread visits in a grid-stride loop over blocks of BlockThreads
// threads, as a range:
//   for (const std::uint64_t i : grid_stride_indices<Policy::kBlockThreads>(count)) { ... }
// The same loop a hand-written `for (i = blockIdx.x * B + threadIdx.x; i < count; i += gridDim.x * B)`
// is; `break` and `return` leave it as they would that one.
template <int BlockThreads>
class GridStrideIndices {
 public:
  struct End {
    std::uint64_t count;
  };
  class Iterator {
   public:
    __device__ __forceinline__ Iterator(std::uint64_t index, std::uint64_t stride) : index_(index), stride_(stride) {}
    __device__ __forceinline__ std::uint64_t operator*() const { return index_; }
    __device__ __forceinline__ Iterator& operator++() {
      index_ += stride_;
      return *this;
    }
    __device__ __forceinline__ bool operator!=(const End& end) const { return index_ < end.count; }

   private:
    std::uint64_t index_;
    std::uint64_t stride_;
  };
  __device__ __forceinline__ explicit GridStrideIndices(std::uint64_t count) : count_(count) {}
  __device__ __forceinline__ Iterator begin() const {
    return Iterator(std::uint64_t{blockIdx.x} * BlockThreads + threadIdx.x, std::uint64_t{gridDim.x} * BlockThreads);
  }
  __device__ __forceinline__ End end() const { return End{count_}; }

 private:
  std::uint64_t count_;
};
template <int BlockThreads>
__device__ __forceinline__ GridStrideIndices<BlockThreads> grid_stride_indices(std::uint64_t count) {
  return GridStrideIndices<BlockThreads>(count);
}

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
