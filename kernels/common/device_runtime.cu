// SPDX-License-Identifier: Apache-2.0
// Device discovery for Backend::Auto: a GPU counts as usable only if this build carries a kernel
// image it can run and it supports the stream-ordered allocator the GPU path uses. Where a GPU is
// present but unusable, gpu_unusable_reason says why (device/gpu.hpp).
#include <cuda_runtime.h>

#include <string>

#include "dpselect/errors.hpp"
#include "device/gpu.hpp"
#include "dpselect/detail/fused_select_kernel.cuh"

namespace dpselect::detail {

bool cuda_backend_compiled() { return true; }

namespace {

// What the current device is to this build, probed once per process. Every failure is turned into
// an outcome that describe_unusable_gpu words for the user; no CUDA error status is left behind.
GpuProbe probe_current_device() {
  GpuProbe probe;
  probe.built_architectures = DPSELECT_CUDA_ARCHITECTURES;
  static_cast<void>(cudaRuntimeGetVersion(&probe.runtime_cuda_version));
  static_cast<void>(cudaDriverGetVersion(&probe.driver_cuda_version));  // 0: no driver library
  int devices = 0;
  const cudaError_t count_status = cudaGetDeviceCount(&devices);
  int device = 0;
  int memory_pools = 0;
  cudaFuncAttributes attributes;
  cudaError_t status = cudaSuccess;
  if (count_status == cudaErrorNoDevice || (count_status == cudaSuccess && devices == 0)) {
    probe.outcome = GpuProbeOutcome::no_gpu;
  } else if (count_status == cudaErrorInsufficientDriver) {
    // Also what a machine without any NVIDIA driver answers; the driver's version tells them apart.
    probe.outcome = probe.driver_cuda_version > 0 ? GpuProbeOutcome::driver_too_old
                    : nvidia_gpu_present_to_os() ? GpuProbeOutcome::driver_missing
                                                 : GpuProbeOutcome::no_gpu;
  } else if (count_status != cudaSuccess) {
    probe.outcome = GpuProbeOutcome::runtime_error;
    probe.error_text = cudaGetErrorString(count_status);
  } else if ((status = cudaGetDevice(&device)) != cudaSuccess) {
    probe.outcome = GpuProbeOutcome::runtime_error;
    probe.error_text = cudaGetErrorString(status);
  } else {
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, device) == cudaSuccess) {
      probe.device_name = properties.name;
      probe.compute_major = properties.major;
      probe.compute_minor = properties.minor;
    }
    if ((status = cudaDeviceGetAttribute(&memory_pools, cudaDevAttrMemoryPoolsSupported, device)) != cudaSuccess) {
      probe.outcome = GpuProbeOutcome::runtime_error;
      probe.error_text = cudaGetErrorString(status);
    } else if (memory_pools == 0) {
      probe.outcome = GpuProbeOutcome::no_memory_pools;
    } else if ((status = cudaFuncGetAttributes(&attributes, reset_accumulator_kernel<0>)) ==
               cudaErrorNoKernelImageForDevice) {
      probe.outcome = GpuProbeOutcome::no_kernel_image;  // the build lacks this architecture
    } else if (status != cudaSuccess) {
      probe.outcome = GpuProbeOutcome::runtime_error;
      probe.error_text = cudaGetErrorString(status);
    } else {
      probe.outcome = GpuProbeOutcome::usable;
    }
  }
  static_cast<void>(cudaGetLastError());  // leave no error status behind for the caller
  return probe;
}

struct DeviceStatus {
  bool usable = false;
  std::string unusable_reason;
};

const DeviceStatus& device_status() {
  static const DeviceStatus status = [] {
    const GpuProbe probe = probe_current_device();
    return DeviceStatus{probe.outcome == GpuProbeOutcome::usable, describe_unusable_gpu(probe)};
  }();
  return status;
}

}  // namespace

bool cuda_device_usable() { return device_status().usable; }

std::string_view gpu_unusable_reason() { return device_status().unusable_reason; }

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
