// SPDX-License-Identifier: Apache-2.0
// CUDA error handling for the GPU path (CUDA-only header).
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "dpselect/errors.hpp"

namespace dpselect::detail {

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* call, const char* file,
                                          int line) {
  throw CudaError(std::string("dpselect: CUDA error ") + cudaGetErrorName(status) + " (" +
                  cudaGetErrorString(status) + ") in " + call + " at " + file + ":" +
                  std::to_string(line));
}

}  // namespace dpselect::detail

// Throws dpselect::CudaError carrying the CUDA error text and the call site.
#define DPSELECT_CUDA_TRY(call)                                                     \
  do {                                                                              \
    const cudaError_t dpselect_status_ = (call);                                    \
    if (dpselect_status_ != cudaSuccess) {                                          \
      ::dpselect::detail::throw_cuda_error(dpselect_status_, #call, __FILE__, __LINE__); \
    }                                                                               \
  } while (0)
