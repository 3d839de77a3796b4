// SPDX-License-Identifier: Apache-2.0
#include "dpselect/device_memory.hpp"

#include <string>

#include "dpselect/errors.hpp"
#include "device/gpu.hpp"

namespace dpselect {
namespace detail {
namespace {
std::uint64_t release_threshold = kDefaultDeviceMemoryReleaseThreshold;  // guarded by device_memory_mutex()
}  // namespace

std::mutex& device_memory_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::uint64_t release_threshold_setting() { return release_threshold; }

}  // namespace detail

void set_device_memory_release_threshold(std::uint64_t bytes) {
  const std::lock_guard lock(detail::device_memory_mutex());
  detail::release_threshold = bytes;
  detail::gpu_set_pool_release_threshold(bytes);
}

std::uint64_t device_memory_release_threshold() {
  const std::lock_guard lock(detail::device_memory_mutex());
  return detail::release_threshold;
}

void trim_device_memory(std::uint64_t bytes_to_keep) { detail::gpu_trim_memory(bytes_to_keep); }

DeviceMemoryUsage device_memory_usage(int device) {
  if (!detail::cuda_device_usable()) {
    throw BackendUnavailable(detail::cuda_backend_compiled()
                                 ? "dpselect: device_memory_usage: no CUDA device is usable"
                                 : "dpselect: device_memory_usage: this build has no CUDA backend");
  }
  const int devices = detail::gpu_device_count();
  if (device < 0 || device >= devices) {
    throw InvalidArgument("dpselect: device must be in [0, " + std::to_string(devices) + ") (got " +
                          std::to_string(device) + ")");
  }
  return detail::gpu_pool_usage(device);
}

}  // namespace dpselect
