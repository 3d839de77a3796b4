// SPDX-License-Identifier: Apache-2.0
// The library's device memory pools (dpselect/device_memory.hpp): one per device, created on the
// first allocation there with the configured release threshold, and used for every device
// allocation of the library. The device's default pool is left to the application: its release
// threshold is 0, which unmaps freed memory at every synchronisation, and changing it would
// change the application's own cudaMallocAsync behaviour.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include "dpselect/detail/cuda_check.cuh"
#include "dpselect/detail/device_memory_pool.cuh"
#include "device/gpu.hpp"
#include "pinned_staging.cuh"

namespace dpselect::detail {
namespace {

// One slot per device, each filled once. Never destroyed: the pools must outlive every static
// destructor that may still free into them, and destroying a pool while the CUDA runtime itself
// shuts down is not safe; the driver reclaims them at exit.
struct PoolTable {
  int devices = 0;
  std::unique_ptr<std::atomic<cudaMemPool_t>[]> pools;
};

// Set once the table exists, so that setting the threshold before any allocation neither
// initialises CUDA nor creates a pool.
std::atomic<PoolTable*> existing_table{nullptr};

PoolTable& pool_table() {
  static PoolTable* const table = [] {
    auto* created = new PoolTable;
    if (cudaGetDeviceCount(&created->devices) != cudaSuccess) {
      created->devices = 0;
      static_cast<void>(cudaGetLastError());
    }
    created->pools = std::make_unique<std::atomic<cudaMemPool_t>[]>(static_cast<std::size_t>(created->devices));
    existing_table.store(created, std::memory_order_release);
    return created;
  }();
  return *table;
}

// The pools created so far, for each device that has one.
template <class Visit>
void for_each_pool(Visit visit) {
  const PoolTable* table = existing_table.load(std::memory_order_acquire);
  if (table == nullptr) return;
  for (int device = 0; device < table->devices; ++device) {
    const cudaMemPool_t pool = table->pools[device].load(std::memory_order_acquire);
    if (pool != nullptr) visit(pool);
  }
}

cudaError_t stream_device(cudaStream_t stream, int* device) {
#if CUDART_VERSION >= 12080
  // The stream's own device (the current one for the default streams), which may differ from the
  // current device when the caller passes a stream of another device.
  if (cudaStreamGetDevice(stream, device) == cudaSuccess) return cudaSuccess;
  static_cast<void>(cudaGetLastError());
#else
  static_cast<void>(stream);
#endif
  return cudaGetDevice(device);
}

}  // namespace

cudaError_t library_pool(int device, cudaMemPool_t* pool) {
  PoolTable& table = pool_table();
  if (device < 0 || device >= table.devices) return cudaErrorInvalidDevice;
  std::atomic<cudaMemPool_t>& slot = table.pools[device];
  *pool = slot.load(std::memory_order_acquire);
  if (*pool != nullptr) return cudaSuccess;
  const std::lock_guard lock(device_memory_mutex());
  *pool = slot.load(std::memory_order_relaxed);
  if (*pool != nullptr) return cudaSuccess;
  cudaMemPoolProps properties{};
  properties.allocType = cudaMemAllocationTypePinned;
  properties.handleTypes = cudaMemHandleTypeNone;
  properties.location.type = cudaMemLocationTypeDevice;
  properties.location.id = device;
  cudaMemPool_t created = nullptr;
  cudaError_t status = cudaMemPoolCreate(&created, &properties);
  if (status != cudaSuccess) return status;
  std::uint64_t threshold = release_threshold_setting();
  status = cudaMemPoolSetAttribute(created, cudaMemPoolAttrReleaseThreshold, &threshold);
  if (status != cudaSuccess) {
    static_cast<void>(cudaMemPoolDestroy(created));
    return status;
  }
  slot.store(created, std::memory_order_release);
  *pool = created;
  return cudaSuccess;
}

cudaError_t library_pool_malloc_async(void** pointer, std::size_t bytes, cudaStream_t stream) {
  int device = 0;
  cudaMemPool_t pool = nullptr;
  cudaError_t status = stream_device(stream, &device);
  if (status == cudaSuccess) status = library_pool(device, &pool);
  if (status == cudaSuccess) status = cudaMallocFromPoolAsync(pointer, bytes, pool, stream);
  // A full device is not sticky: clear it so that the caller's retry (DeviceChunk) and every later
  // call start from a clean error state.
  if (status == cudaErrorMemoryAllocation) static_cast<void>(cudaGetLastError());
  return status;
}

void gpu_set_pool_release_threshold(std::uint64_t bytes) {
  for_each_pool([bytes](cudaMemPool_t pool) {
    std::uint64_t value = bytes;
    DPSELECT_CUDA_TRY(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &value));
  });
}

void gpu_trim_memory(std::uint64_t bytes_to_keep) {
  const auto keep = static_cast<std::size_t>(std::min<std::uint64_t>(bytes_to_keep, std::numeric_limits<std::size_t>::max()));
  for_each_pool([keep](cudaMemPool_t pool) { DPSELECT_CUDA_TRY(cudaMemPoolTrimTo(pool, keep)); });
  release_idle_pinned_staging();
}

int gpu_device_count() { return pool_table().devices; }

DeviceMemoryUsage gpu_pool_usage(int device) {
  const cudaMemPool_t pool = pool_table().pools[device].load(std::memory_order_acquire);
  DeviceMemoryUsage usage;
  if (pool == nullptr) return usage;
  std::uint64_t reserved = 0;
  std::uint64_t used = 0;
  DPSELECT_CUDA_TRY(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  DPSELECT_CUDA_TRY(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  usage.reserved_bytes = reserved;
  usage.used_bytes = used;
  return usage;
}

std::uint64_t gpu_available_bytes() {
  int device = 0;
  DPSELECT_CUDA_TRY(cudaGetDevice(&device));
  std::size_t free_bytes = 0, total_bytes = 0;
  DPSELECT_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  const DeviceMemoryUsage pool = gpu_pool_usage(device);
  return free_bytes + (pool.reserved_bytes - pool.used_bytes);
}

std::vector<std::uint64_t> gpu_copy_to_host(const std::uint64_t* values, std::uint64_t count, cuda_stream_t stream) {
  std::vector<std::uint64_t> host(count);
  if (count == 0) return host;
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  DPSELECT_CUDA_TRY(cudaMemcpyAsync(host.data(), values, count * sizeof(std::uint64_t), cudaMemcpyDeviceToHost,
                                    cuda_stream));
  DPSELECT_CUDA_TRY(cudaStreamSynchronize(cuda_stream));
  return host;
}

}  // namespace dpselect::detail
