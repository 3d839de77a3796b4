// SPDX-License-Identifier: Apache-2.0
// The device as every mechanism's host side sees it: whether a GPU is usable and why not, device
// pointers, memory pools, and the passes over device arrays that several mechanisms share
// (kernels/common/).
// Implemented in kernels/ when built with CUDA; in a CPU-only build by gpu_unavailable.cpp beside
// this header, where every entry point throws BackendUnavailable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>
#include <string_view>

#include "dpselect/device_memory.hpp"
#include "dpselect/context.hpp"
#include "dpselect/types.hpp"

namespace dpselect::detail {

// Validates device-memory utilities for `backend` (InvalidArgument, BackendUnavailable) without
// drawing a stream.
void validate_device_utilities(const void* data, std::uint64_t size, std::uint64_t first_index,
                               Backend backend);

// Throws InvalidArgument naming `name` unless `data` is memory the current device can read:
// device or managed memory, pinned host memory, or pageable host memory where the device reports
// pageable access (cudaDevAttrPageableMemoryAccess). Checked before any launch and any charge:
// a kernel reading a plain host pointer raises cudaErrorIllegalAddress, which is sticky and
// leaves the CUDA context unusable for the rest of the process. Call after resolve_backend.
void validate_device_pointer(const void* data, std::string_view name);

bool cuda_backend_compiled();
// A CUDA device exists and its runtime initialises. Cached after the first call.
bool cuda_device_usable();
// Empty when a device is usable or when no NVIDIA GPU is present; otherwise why this build cannot
// use the GPU that is there and how to fix it (below). Probed once per process;
// the text lives as long as the process.
std::string_view gpu_unusable_reason();

// The library's device memory pools (kernels/common/device_memory.cu, dpselect/device_memory.hpp); in a
// CPU-only build there are none and these do nothing. With device_memory_mutex() held: sets the
// release threshold of every pool created so far (later ones read release_threshold_setting()).
void gpu_set_pool_release_threshold(std::uint64_t bytes);
// Trims every pool to `bytes_to_keep` and frees the idle page-locked staging buffers.
void gpu_trim_memory(std::uint64_t bytes_to_keep);
// The number of CUDA devices, and what the pool of `device` (0 <= device < that number) holds.
int gpu_device_count();
DeviceMemoryUsage gpu_pool_usage(int device);
// What a pass may still take on the current device: its free memory and what the library's pool
// holds idle (kernels/common/device_memory.cu).
std::uint64_t gpu_available_bytes();
// `count` 64-bit values in memory the device reads, copied to the host. Synchronizes `stream`.
std::vector<std::uint64_t> gpu_copy_to_host(const std::uint64_t* values, std::uint64_t count, cuda_stream_t stream);
// Test hook: the bytes of each device chunk (0: the default of each path) and of each pinned
// staging piece (0: the default) that host arrays stream through, so a test can force many chunks
// over a small array. Not for production use: it applies to every later call of every thread.
void set_host_streaming_bytes_for_testing(std::uint64_t chunk_bytes, std::uint64_t piece_bytes);
// Throws BackendUnavailable: what a CPU-only build's GPU entry points do (gpu_unavailable.cpp).
[[noreturn]] void throw_gpu_unavailable();

// One pass over `count` values in device memory (kernels/common/device_values.cu): the first one that is not finite or has
// |value| > bound (bound 0: none), first_invalid = count when there is none, and the largest
// |value| of the valid ones. Synchronizes `stream`.
struct DeviceValueScan {
  std::uint64_t first_invalid = 0;
  double first_invalid_value = 0.0;
  double largest_abs_value = 0.0;
};
DeviceValueScan gpu_scan_values(const double* values, std::uint64_t count, double bound, cuda_stream_t stream);
// values[index], copied from device memory. Synchronizes `stream`.
double gpu_read_value(const double* values, std::uint64_t index, cuda_stream_t stream);
double gpu_read_value(const float* values, std::uint64_t index, cuda_stream_t stream);

// ---- the release threshold of the device memory pools ----------------------------------------
// Set by device_memory.cpp, read by the pools when they are created (kernels/common/device_memory.cu).
// Held while the threshold is set (and applied to the pools that exist) and while a pool is
// created: a pool created while another thread sets the threshold then ends with the new one.
std::mutex& device_memory_mutex();

// The threshold last set; read it with device_memory_mutex() held.
std::uint64_t release_threshold_setting();

// ---- host copies into the page-locked staging of the host-array paths ------------------------
// On several cores (host_copy.cpp): one core copies about 10 GB/s, less than one PCIe 5.0 x16 link
// carries, so a single-threaded copy would bound the whole stream (kernels/common/host_streaming.cuh).
// std::memcpy(destination, source, bytes) split over up to kHostCopyMaxThreads OpenMP threads, one
// per 4 MiB at least (below that a thread costs more than it saves). The ranges must not overlap.
inline constexpr int kHostCopyMaxThreads = 8;
void copy_host_memory(void* destination, const void* source, std::size_t bytes);

// ---- why a GPU that is present cannot run this build -----------------------------------------
// The probe itself is backend-specific (kernels/common/device_runtime.cu with CUDA,
// gpu_unavailable.cpp without); the wording is plain C++ (gpu_diagnosis.cpp), so that every case is
// tested without a GPU.
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
