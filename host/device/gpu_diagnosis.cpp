// SPDX-License-Identifier: Apache-2.0
#include "device/gpu.hpp"

#include <filesystem>
#include <system_error>

namespace dpselect::detail {
namespace {

std::string cuda_version_text(int encoded) {
  return std::to_string(encoded / 1000) + "." + std::to_string(encoded % 1000 / 10);
}

std::string device_text(const GpuProbe& probe) {
  std::string text = probe.device_name.empty() ? std::string("the GPU") : "the GPU " + probe.device_name;
  if (probe.compute_major > 0) {
    text += " (compute capability " + std::to_string(probe.compute_major) + "." +
            std::to_string(probe.compute_minor) + ")";
  }
  return text;
}

constexpr const char* kRunsOnCpu = ", so Backend::Auto runs on the CPU";

}  // namespace

std::string describe_unusable_gpu(const GpuProbe& probe) {
  switch (probe.outcome) {
    case GpuProbeOutcome::usable:
    case GpuProbeOutcome::no_gpu:
      return {};
    case GpuProbeOutcome::backend_not_built:
      return std::string("an NVIDIA GPU is present but this build has no CUDA backend (it was built "
                         "with DPSELECT_CUDA=OFF or without nvcc on PATH)") +
             kRunsOnCpu +
             "; to use the GPU, install the CUDA Toolkit (12.0 or newer) and rebuild (pip: put nvcc on PATH and "
             "reinstall)";
    case GpuProbeOutcome::driver_missing:
      return std::string("the NVIDIA kernel driver reports a GPU but CUDA's driver library "
                         "(libcuda.so) could not be loaded") +
             kRunsOnCpu + "; install the NVIDIA driver's user-space libraries (in a container: run it with the GPU "
                          "exposed, e.g. docker --gpus all)";
    case GpuProbeOutcome::driver_too_old:
      return "the NVIDIA driver supports CUDA " + cuda_version_text(probe.driver_cuda_version) +
             " but this build's CUDA runtime is " + cuda_version_text(probe.runtime_cuda_version) + kRunsOnCpu +
             "; update the NVIDIA driver, or rebuild with a CUDA Toolkit no newer than " +
             cuda_version_text(probe.driver_cuda_version);
    case GpuProbeOutcome::no_kernel_image: {
      std::string text = "this build has no kernel for " + device_text(probe) +
                         " (built for CUDA architectures " +
                         (probe.built_architectures.empty() ? std::string("unknown") : probe.built_architectures) +
                         ")" + kRunsOnCpu +
                         "; rebuild with -DCMAKE_CUDA_ARCHITECTURES=native (pip: "
                         "CMAKE_ARGS=-DCMAKE_CUDA_ARCHITECTURES=native)";
      if (probe.compute_major > 0) {
        text += " or with a list that includes " + std::to_string(probe.compute_major * 10 + probe.compute_minor);
      }
      return text;
    }
    case GpuProbeOutcome::no_memory_pools:
      return device_text(probe) +
             " does not support stream-ordered memory allocation (cudaMallocAsync), which the GPU path needs" +
             kRunsOnCpu + "; update the NVIDIA driver (some virtualized GPUs never support it)";
    case GpuProbeOutcome::runtime_error:
      return "CUDA could not be initialised (" +
             (probe.error_text.empty() ? std::string("unknown error") : probe.error_text) + ")" + kRunsOnCpu +
             "; check the GPU and driver with nvidia-smi";
  }
  return {};
}

bool nvidia_gpu_present_to_os() {
  std::error_code error;
  const std::filesystem::directory_iterator gpus("/proc/driver/nvidia/gpus", error);
  return !error && gpus != std::filesystem::directory_iterator();
}

}  // namespace dpselect::detail
