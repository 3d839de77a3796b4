// Device discovery for Backend::Auto: a GPU counts as usable only if this build carries a kernel
// image it can run and it supports the stream-ordered allocator the GPU path uses.
#include <cuda_runtime.h>

#include "engine/gpu_backend.hpp"
#include "dpselect/detail/fused_select_kernel.cuh"

namespace dpselect::detail {

bool cuda_backend_compiled() { return true; }

bool cuda_device_usable() {
  static const bool usable = [] {
    int devices = 0;
    int device = 0;
    int memory_pools = 0;
    cudaFuncAttributes attributes;
    const bool ok = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0 &&
                    cudaGetDevice(&device) == cudaSuccess &&
                    cudaDeviceGetAttribute(&memory_pools, cudaDevAttrMemoryPoolsSupported, device) == cudaSuccess &&
                    memory_pools != 0 &&
                    // fails with cudaErrorNoKernelImageForDevice when the build lacks this architecture
                    cudaFuncGetAttributes(&attributes, reset_accumulator_kernel<0>) == cudaSuccess;
    static_cast<void>(cudaGetLastError());  // leave no error status behind for the caller
    return ok;
  }();
  return usable;
}

}  // namespace dpselect::detail
