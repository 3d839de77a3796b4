// Device discovery for Backend::Auto.
#include <cuda_runtime.h>

#include "../host/gpu_backend.hpp"

namespace dpselect::detail {

bool cuda_backend_compiled() { return true; }

bool cuda_device_usable() {
  static const bool usable = [] {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess) {
      static_cast<void>(cudaGetLastError());  // clear the sticky "no device" status
      return false;
    }
    return devices > 0;
  }();
  return usable;
}

}  // namespace dpselect::detail
