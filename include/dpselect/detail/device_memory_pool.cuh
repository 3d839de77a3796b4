// SPDX-License-Identifier: Apache-2.0
// The library's stream-ordered device memory (dpselect/device_memory.hpp): one memory pool per
// device, created on first use with the configured release threshold (kernels/device_memory.cu).
// CUDA-only; every device allocation of the library goes through library_pool_malloc_async.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace dpselect::detail {

// Allocates `bytes` from the library's pool of the device `stream` belongs to, ordered on
// `stream` like cudaMallocAsync (free it with cudaFreeAsync). An allocation the device cannot
// hold returns cudaErrorMemoryAllocation and leaves no error behind (cudaGetLastError is clear),
// so the caller may retry with less; any other failure returns its status.
cudaError_t library_pool_malloc_async(void** pointer, std::size_t bytes, cudaStream_t stream);

// The library's pool of `device`, created on first use.
cudaError_t library_pool(int device, cudaMemPool_t* pool);

}  // namespace dpselect::detail
