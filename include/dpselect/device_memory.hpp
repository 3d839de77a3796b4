// SPDX-License-Identifier: Apache-2.0
/// @file
/// The GPU memory the library keeps between calls (plain C++; no CUDA headers needed).
///
/// Every device allocation of the library (chunks of host arrays on their way through the device,
/// kernel scratch) comes from a memory pool the library creates for each device it runs on
/// (cudaMemPoolCreate), never from the device's default pool, so these settings touch neither
/// your own cudaMallocAsync allocations nor other libraries'. A pool keeps the memory freed into
/// it mapped up to its release threshold; what lies beyond is returned to the driver when a stream
/// or event that used the pool is synchronized. A threshold of 0 (the CUDA default) returns
/// everything at every call's final synchronization, so the next call maps it again: for host
/// arrays, hundreds of MiB per call; for the sparse vector technique, a fresh page for each
/// window's 8-byte scratch.
///
/// Host arrays of more than one 32 MiB chunk also pass through page-locked (pinned) host buffers on
/// their way to the GPU, 2 x 32 MiB per call in flight, which the library keeps for later calls (at
/// most 4 idle pairs, 256 MiB); see trim_device_memory.
///
/// Thread-safety: every function here may be called from any thread at any time, also while
/// other threads run releases; a release uses the threshold in force when its pool was created
/// or last set. In a build without the CUDA backend, or on a machine without a usable GPU, the
/// threshold is still recorded and read back (it applies to the pools once there are any) and
/// trim_device_memory does nothing: code that configures memory need not know the backend.
///
/// None of these functions touches a release's privacy: they change only where memory is held.
///
/// Example:
/// @code{.cpp}
/// dpselect::set_device_memory_release_threshold(std::uint64_t{4} << 30);  // keep up to 4 GiB
/// ...                                                                     // releases
/// dpselect::trim_device_memory();       // give back what the library holds idle
/// @endcode
#pragma once

#include <cstdint>

namespace dpselect {

/// The default release threshold of each device's pool: 1 GiB. It covers what the library's calls
/// keep in use at once (a host array: two 32 MiB device chunks and under 10 MiB of scratch per
/// call; a host matrix: two blocks of whole rows of up to 256 MiB each; device arrays: scratch under
/// 40 MiB), so repeated calls, and a few host threads calling at once, reuse mapped memory; and a
/// process that shares the GPU with other code leaves at most 1 GiB per device (about 1% of an
/// 80 GB H100) held idle by this library. Set it higher when one large call (a radix sort of many
/// bids, say) repeats and the device is yours alone; set it to 0 for CUDA's own default.
/// QuantileData over device values is the exception that outlives a call: it keeps 4 bytes per
/// float32 value and 8 per double in the pool for as long as it lives (and its preparation peaks
/// at 8 bytes per float, 16 per double, for the sort).
inline constexpr std::uint64_t kDefaultDeviceMemoryReleaseThreshold = std::uint64_t{1} << 30;

/// Sets the release threshold, in bytes, of the library's pool on every device: the pools created
/// so far at once, and those created later when they are created. Any value is valid: 0 releases
/// everything at every synchronization, UINT64_MAX never releases (until trim_device_memory).
/// Throws CudaError if CUDA refuses the setting for an existing pool (the recorded value is then
/// the new one, and pools set before the failure keep it).
/// @param bytes The threshold per device, in bytes: 0 returns everything at every synchronization,
///        UINT64_MAX keeps everything; the default is kDefaultDeviceMemoryReleaseThreshold.
/// @throws CudaError if CUDA refuses the setting for an existing pool.
/// @par Synchronisation
/// Thread-safe (one lock); does not synchronize any stream or device. A release already running uses
/// the threshold in force when its pool was created or last set.
void set_device_memory_release_threshold(std::uint64_t bytes);

/// The threshold last set (kDefaultDeviceMemoryReleaseThreshold if none was).
///
/// Also without the CUDA backend or a usable GPU, where it is recorded but applies to no pool.
/// @return The release threshold per device, in bytes.
std::uint64_t device_memory_release_threshold();

/// Returns to the driver the device memory that the library's pools hold but no call uses, down to
/// `bytes_to_keep` per device, and frees the idle page-locked staging buffers. Memory still in use
/// by calls running on other threads stays (CUDA may count memory freed by a call whose end it
/// has not yet observed as in use). Does not synchronize the device. Throws CudaError if CUDA
/// refuses; does nothing without the CUDA backend or a usable GPU.
/// @param bytes_to_keep The memory to keep mapped in each device's pool, in bytes (default 0: return
///        all the idle memory).
/// @throws CudaError if CUDA refuses to trim a pool.
/// @par Synchronisation
/// Does not synchronize the device or any stream; memory freed by a call whose end CUDA has not yet
/// observed may stay. Thread-safe, also while other threads run releases.
void trim_device_memory(std::uint64_t bytes_to_keep = 0);

/// What the library's memory pool on one device holds (device_memory_usage), in bytes.
struct DeviceMemoryUsage {
  /// Device memory the library's pool on this device has mapped (in use or held for reuse).
  std::uint64_t reserved_bytes = 0;
  /// The part of it allocated to calls running now.
  std::uint64_t used_bytes = 0;
};

/// What the library's pool on CUDA device `device` holds now (zeros before its first allocation
/// there). Throws InvalidArgument naming `device` unless 0 <= device < the number of CUDA devices,
/// BackendUnavailable in a build without the CUDA backend or where no GPU is usable, CudaError if
/// CUDA fails.
/// @param device A CUDA device ordinal: 0 <= device < the number of CUDA devices.
/// @return The bytes the pool has mapped and the bytes in use now (a snapshot: other threads' calls
///         may change them at once).
/// @throws InvalidArgument for a device outside [0, number of devices).
/// @throws BackendUnavailable in a build without the CUDA backend or where no GPU is usable.
/// @throws CudaError if CUDA fails.
/// @par Synchronisation
/// Reads the pool's attributes; synchronizes nothing. Thread-safe.
DeviceMemoryUsage device_memory_usage(int device);

}  // namespace dpselect
