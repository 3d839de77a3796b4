// Device discovery for Backend::Auto: a GPU counts as usable only if this build carries a kernel
// image it can run and it supports the stream-ordered allocator the GPU path uses.
#include <cuda_runtime.h>

#include <string>

#include "dpselect/errors.hpp"
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

void validate_device_pointer(const void* data, std::string_view name) {
  cudaPointerAttributes attributes{};
  const cudaError_t status = cudaPointerGetAttributes(&attributes, data);
  static_cast<void>(cudaGetLastError());  // an unknown pointer must leave no error behind
  if (status == cudaSuccess && (attributes.type == cudaMemoryTypeDevice ||
                                attributes.type == cudaMemoryTypeManaged ||
                                attributes.type == cudaMemoryTypeHost)) {
    return;
  }
  int device = 0;
  int pageable_access = 0;
  if (cudaGetDevice(&device) == cudaSuccess &&
      cudaDeviceGetAttribute(&pageable_access, cudaDevAttrPageableMemoryAccess, device) == cudaSuccess &&
      pageable_access != 0) {
    return;  // (HMM, or a coherent platform such as Grace Hopper): the device reads any host memory
  }
  static_cast<void>(cudaGetLastError());
  throw InvalidArgument("dpselect: " + std::string(name) +
                        " must point to device, managed or pinned host memory (got a pointer to pageable "
                        "host memory, which this device cannot read: pass a host span instead, or copy "
                        "it to the device first)");
}

}  // namespace dpselect::detail
