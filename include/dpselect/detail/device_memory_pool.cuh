// SPDX-License-Identifier: Apache-2.0
// The library's stream-ordered device memory (dpselect/device_memory.hpp): one memory pool per
// device, created on first use with the configured release threshold (kernels/common/device_memory.cu).
// CUDA-only; every device allocation of the library goes through library_pool_malloc_async, most
// of them through DeviceScratch, the one device buffer class of the library's kernels. The pool
// keeps freed memory mapped up to its release threshold, so a call's scratch reuses the last
// call's pages instead of mapping fresh ones after every synchronisation.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "dpselect/detail/cuda_check.cuh"
#include "dpselect/errors.hpp"

namespace dpselect::detail {

// Allocates `bytes` from the library's pool of the device `stream` belongs to, ordered on
// `stream` like cudaMallocAsync (free it with cudaFreeAsync). An allocation the device cannot
// hold returns cudaErrorMemoryAllocation and leaves no error behind (cudaGetLastError is clear),
// so the caller may retry with less; any other failure returns its status.
cudaError_t library_pool_malloc_async(void** pointer, std::size_t bytes, cudaStream_t stream);

// The library's pool of `device`, created on first use.
cudaError_t library_pool(int device, cudaMemPool_t* pool);

// `bytes` of device memory (at least one byte), freed in order on `stream` unless handed over with
// release(). A full device throws CudaError with `out_of_memory` where one is given (a text that
// must say nothing of the data's size: a count of records can be private), otherwise, like any
// other failure, a CudaError naming the call.
class DeviceScratch {
 public:
  DeviceScratch(std::size_t bytes, cudaStream_t stream, const char* out_of_memory = nullptr) : stream_(stream) {
    const cudaError_t status = library_pool_malloc_async(&pointer_, bytes == 0 ? 1 : bytes, stream);
    // The pool reports a full device as cudaErrorMemoryAllocation and leaves no error behind.
    if (status == cudaErrorMemoryAllocation && out_of_memory != nullptr) throw CudaError(out_of_memory);
    if (status != cudaSuccess) throw_cuda_error(status, "library_pool_malloc_async", __FILE__, __LINE__);
  }
  DeviceScratch(DeviceScratch&& other) noexcept : pointer_(other.release()), stream_(other.stream_) {}
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
  DeviceScratch& operator=(DeviceScratch&&) = delete;
  ~DeviceScratch() {
    if (pointer_ != nullptr) static_cast<void>(cudaFreeAsync(pointer_, stream_));
  }

  template <class T>
  T* as() const {
    return static_cast<T*>(pointer_);
  }
  // Hands the memory over: the buffer no longer frees it.
  void* release() {
    void* pointer = pointer_;
    pointer_ = nullptr;
    return pointer;
  }

 private:
  void* pointer_ = nullptr;
  cudaStream_t stream_;
};

}  // namespace dpselect::detail
