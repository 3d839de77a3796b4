// SPDX-License-Identifier: Apache-2.0
// Why a GPU that is present cannot run this build of the library, in words a user can act on.
// The probe itself is backend-specific (kernels/device_runtime.cu with CUDA, gpu_unavailable.cpp
// without); the wording is plain C++ here, so that every case is tested without a GPU.
#pragma once

#include <string>

namespace dpselect::detail {

enum class GpuProbeOutcome {
  usable,            // a device runs this build's kernels
  no_gpu,            // no NVIDIA GPU and no driver: nothing to say
  backend_not_built, // an NVIDIA GPU is present, but the library was built without CUDA
  driver_missing,    // the kernel driver sees a GPU, but CUDA's driver library does not load
  driver_too_old,    // the driver supports an older CUDA than this build's runtime
  no_kernel_image,   // the build carries no kernel for the device's compute capability
  no_memory_pools,   // the device lacks the stream-ordered allocator the GPU path uses
  runtime_error,     // any other failure to initialise CUDA
};

struct GpuProbe {
  GpuProbeOutcome outcome = GpuProbeOutcome::no_gpu;
  std::string device_name;           // of the current device, where CUDA could name it
  int compute_major = 0;             // its compute capability, where known
  int compute_minor = 0;
  std::string built_architectures;   // CMAKE_CUDA_ARCHITECTURES of this build ("90", "75-real;...")
  int driver_cuda_version = 0;       // cudaDriverGetVersion's encoding: 12040 is CUDA 12.4
  int runtime_cuda_version = 0;      // cudaRuntimeGetVersion's
  std::string error_text;            // CUDA's own text for runtime_error
};

// Empty for usable and no_gpu; otherwise one sentence: what is present, why this build cannot
// use it, that Backend::Auto therefore runs on the CPU, and how to fix it.
std::string describe_unusable_gpu(const GpuProbe& probe);

// Whether the operating system's NVIDIA kernel driver reports at least one GPU (Linux:
// /proc/driver/nvidia/gpus/ has an entry), whether or not this build or CUDA can use it.
bool nvidia_gpu_present_to_os();

}  // namespace dpselect::detail
