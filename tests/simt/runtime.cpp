// SPDX-License-Identifier: Apache-2.0
// The runtime API of the simt build (<cuda_runtime.h> in tests/simt/include): one nominal sm_90
// device whose memory is host memory kept in a registry, so that every copy, set and free can be
// checked against what was allocated where, and a host pointer where device memory is expected is
// an error, as on a device.
#include <cuda_runtime.h>

#include <cxxabi.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>

// Under AddressSanitizer the bytes between an allocation's size and its 256-byte rounding are
// poisoned, so that device code reading or writing past what it allocated is reported with its
// line, as compute-sanitizer's memcheck reports it on a device.
#include "simt/address_sanitizer.hpp"
#if defined(SIMT_ADDRESS_SANITIZER)
#include <sanitizer/asan_interface.h>
#endif

struct CUstream_st {
  unsigned int flags = 0;
};
struct CUevent_st {
  unsigned int flags = 0;
};
struct CUmemPoolHandle_st {
  std::size_t release_threshold = 0;
  std::size_t used = 0;      // bytes handed out and not freed
  std::size_t reserved = 0;  // bytes the pool holds: used, and freed bytes kept up to the threshold
};

namespace simt {
namespace {

// The nominal device: an sm_90 device of SIMT_MULTIPROCESSORS multiprocessors (default 4, not an
// H200's 132: the kernels' persistent grids are sized by it, and every thread of a launch runs on
// one CPU core, so the default keeps a launch to a few blocks while still more than one) and a
// memory of SIMT_DEVICE_MEMORY bytes (default 8 GiB: what the tests' largest allocations need).
std::size_t environment_number(const char* name, std::size_t fallback) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? static_cast<std::size_t>(std::strtoull(text, nullptr, 10)) : fallback;
}
const int kMultiprocessors = static_cast<int>(std::max<std::size_t>(1, environment_number("SIMT_MULTIPROCESSORS", 4)));
constexpr int kRuntimeVersion = 13000;

enum class Kind : std::uint8_t { device, host, managed };

struct Allocation {
  std::size_t bytes;
  Kind kind;
  cudaMemPool_t pool;
};

struct State {
  std::mutex mutex;
  std::map<std::uintptr_t, Allocation> allocations;  // by first byte
  std::set<cudaStream_t> streams;
  std::set<cudaEvent_t> events;
  std::set<cudaMemPool_t> pools;
  std::unordered_map<const void*, std::size_t> dynamic_shared_limits;
  CUmemPoolHandle_st default_pool;
  std::size_t device_bytes_in_use = 0;
  std::size_t capacity = environment_number("SIMT_DEVICE_MEMORY", std::size_t{8} << 30);
};

State& state() {
  static State* s = new State;  // never destroyed: static destructors may still free memory
  return *s;
}

thread_local cudaError_t last_error = cudaSuccess;
thread_local int current_device = 0;

cudaError_t record(cudaError_t error) {
  if (error != cudaSuccess) last_error = error;
  return error;
}

// The allocation holding [pointer, pointer + bytes), if any (for 0 bytes: the one the pointer
// lies in or just past). Caller holds the mutex.
const Allocation* find(State& s, const void* pointer, std::size_t bytes) {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  auto it = s.allocations.upper_bound(address);
  if (it == s.allocations.begin()) return nullptr;
  --it;
  const std::uintptr_t offset = address - it->first;
  const std::size_t size = it->second.bytes;
  if (bytes == 0) return offset <= size ? &it->second : nullptr;
  return offset < size && size - offset >= bytes ? &it->second : nullptr;
}

bool is_device(State& s, const void* pointer, std::size_t bytes) {
  const Allocation* a = find(s, pointer, bytes);
  return a != nullptr && (a->kind == Kind::device || a->kind == Kind::managed);
}
bool is_host(State& s, const void* pointer, std::size_t bytes) {
  const Allocation* a = find(s, pointer, bytes);
  return a == nullptr || a->kind == Kind::host || a->kind == Kind::managed;
}

// A new stream, event or pool, kept in `handles` (one of the state's sets) until it is destroyed.
template <class Handle, class... Fields>
cudaError_t create_handle(std::set<Handle*> State::*handles, Handle** out, Fields... fields) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  *out = new Handle{fields...};
  (s.*handles).insert(*out);
  return cudaSuccess;
}
template <class Handle>
cudaError_t destroy_handle(std::set<Handle*> State::*handles, Handle* handle, cudaError_t unknown) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if ((s.*handles).erase(handle) == 0) return record(unknown);
  delete handle;
  return cudaSuccess;
}

bool valid_stream(State& s, cudaStream_t stream) {
  return stream == nullptr || stream == cudaStreamPerThread || stream == cudaStreamLegacy || s.streams.count(stream) != 0;
}

// 256-byte aligned, as cudaMalloc's; at least one byte so that every allocation has an address.
std::size_t rounded_size(std::size_t bytes) { return (std::max<std::size_t>(bytes, 1) + 255) / 256 * 256; }

cudaError_t allocate(void** pointer, std::size_t bytes, Kind kind, cudaMemPool_t pool) {
  if (pointer == nullptr) return record(cudaErrorInvalidValue);
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (kind != Kind::host && bytes > s.capacity - s.device_bytes_in_use) {
    *pointer = nullptr;
    return record(cudaErrorMemoryAllocation);
  }
  const std::size_t rounded = rounded_size(bytes);
  void* memory = std::aligned_alloc(256, rounded);
  if (memory == nullptr) return record(cudaErrorMemoryAllocation);
#if defined(SIMT_ADDRESS_SANITIZER)
  __asan_poison_memory_region(static_cast<unsigned char*>(memory) + bytes, rounded - bytes);
#endif
  s.allocations[reinterpret_cast<std::uintptr_t>(memory)] = Allocation{bytes, kind, pool};
  if (kind != Kind::host) s.device_bytes_in_use += bytes;
  if (pool != nullptr) {
    pool->used += bytes;
    pool->reserved = std::max(pool->reserved, pool->used);
  }
  *pointer = memory;
  return cudaSuccess;
}

cudaError_t release(void* pointer, bool host) {
  if (pointer == nullptr) return cudaSuccess;
  State& s = state();
  std::lock_guard lock(s.mutex);
  const auto it = s.allocations.find(reinterpret_cast<std::uintptr_t>(pointer));
  if (it == s.allocations.end() || (it->second.kind == Kind::host) != host) {
    fail(std::string(host ? "cudaFreeHost" : "cudaFree") + " of a pointer that " +
         (host ? "cudaMallocHost" : "cudaMalloc") + " did not return");
  }
  if (it->second.kind != Kind::host) s.device_bytes_in_use -= it->second.bytes;
  if (cudaMemPool_t pool = it->second.pool) {
    pool->used -= it->second.bytes;
    pool->reserved = std::max(pool->used, std::min(pool->reserved, pool->used + pool->release_threshold));
  }
#if defined(SIMT_ADDRESS_SANITIZER)
  __asan_unpoison_memory_region(pointer, rounded_size(it->second.bytes));
#endif
  std::free(pointer);
  s.allocations.erase(it);
  return cudaSuccess;
}

}  // namespace

bool launch_configuration_ok(dim3 grid, dim3 block, std::size_t shared_bytes, cudaStream_t stream) {
  State& s = state();
  {
    std::lock_guard lock(s.mutex);
    if (!valid_stream(s, stream)) fail("a kernel launched on a stream that was destroyed or never created");
  }
  const unsigned long long threads = 1ull * block.x * block.y * block.z;
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || threads == 0 || threads > 1024 || grid.y > 65535 ||
      grid.z > 65535 || shared_bytes > (227u << 10)) {
    record(cudaErrorInvalidConfiguration);
    return false;
  }
  return true;
}

std::string kernel_name(const void* kernel) {
  Dl_info info{};
  if (dladdr(kernel, &info) != 0 && info.dli_sname != nullptr) {
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> demangled(abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status),
                                                          &std::free);
    return status == 0 && demangled ? demangled.get() : info.dli_sname;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%p", kernel);
  return text;
}

std::size_t kernel_dynamic_shared_limit(const void* kernel) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  const auto it = s.dynamic_shared_limits.find(kernel);
  return it == s.dynamic_shared_limits.end() ? std::size_t{48} << 10 : it->second;
}

void set_kernel_dynamic_shared_limit(const void* kernel, std::size_t bytes) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.dynamic_shared_limits[kernel] = bytes;
}

void require_device_memory(const void* pointer, std::size_t bytes, const char* what) {
  if (bytes == 0) return;
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!is_device(s, pointer, bytes)) {
    fail(std::string(what) + ": " + std::to_string(bytes) + " bytes at " +
         std::to_string(reinterpret_cast<std::uintptr_t>(pointer)) + " are not inside one device allocation");
  }
}

}  // namespace simt

using simt::record;
using simt::state;

cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return record(cudaErrorInvalidValue);
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return record(cudaErrorInvalidValue);
  *device = simt::current_device;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) {
  if (device != 0) return record(cudaErrorInvalidDevice);
  simt::current_device = device;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* properties, int device) {
  if (properties == nullptr) return record(cudaErrorInvalidValue);
  if (device != 0) return record(cudaErrorInvalidDevice);
  *properties = cudaDeviceProp{};
  std::snprintf(properties->name, sizeof properties->name, "simt (nominal sm_90)");
  properties->totalGlobalMem = state().capacity;
  properties->sharedMemPerBlock = 48 << 10;
  properties->regsPerBlock = 65536;
  properties->warpSize = 32;
  properties->maxThreadsPerBlock = 1024;
  properties->major = 9;
  properties->minor = 0;
  properties->multiProcessorCount = simt::kMultiprocessors;
  properties->maxThreadsPerMultiProcessor = 2048;
  properties->l2CacheSize = 50 << 20;
  return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attribute, int device) {
  if (value == nullptr) return record(cudaErrorInvalidValue);
  if (device != 0) return record(cudaErrorInvalidDevice);
  switch (attribute) {
    case cudaDevAttrMaxThreadsPerBlock: *value = 1024; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = 48 << 10; break;
    case cudaDevAttrWarpSize: *value = 32; break;
    case cudaDevAttrMultiProcessorCount: *value = simt::kMultiprocessors; break;
    case cudaDevAttrComputeCapabilityMajor: *value = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *value = 0; break;
    case cudaDevAttrPageableMemoryAccess: *value = 0; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = 227 << 10; break;
    case cudaDevAttrMemoryPoolsSupported: *value = 1; break;
    default: return record(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
cudaError_t cudaRuntimeGetVersion(int* version) {
  if (version == nullptr) return record(cudaErrorInvalidValue);
  *version = simt::kRuntimeVersion;
  return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int* version) {
  if (version == nullptr) return record(cudaErrorInvalidValue);
  *version = simt::kRuntimeVersion;
  return cudaSuccess;
}
cudaError_t cudaGetLastError() {
  const cudaError_t error = simt::last_error;
  simt::last_error = cudaSuccess;
  return error;
}
cudaError_t cudaPeekAtLastError() { return simt::last_error; }
const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInitializationError: return "cudaErrorInitializationError";
    case cudaErrorInsufficientDriver: return "cudaErrorInsufficientDriver";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorNoKernelImageForDevice: return "cudaErrorNoKernelImageForDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    default: break;
  }
  return "cudaErrorUnknown";
}
const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    default: return cudaGetErrorName(error);
  }
}
cudaError_t cudaMemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes) {
  auto& s = state();
  std::lock_guard lock(s.mutex);
  if (free_bytes != nullptr) *free_bytes = s.capacity - s.device_bytes_in_use;
  if (total_bytes != nullptr) *total_bytes = s.capacity;
  return cudaSuccess;
}

cudaError_t cudaMalloc(void** pointer, std::size_t bytes) {
  return simt::allocate(pointer, bytes, simt::Kind::device, nullptr);
}
cudaError_t cudaFree(void* pointer) { return simt::release(pointer, false); }
cudaError_t cudaMallocHost(void** pointer, std::size_t bytes) {
  return simt::allocate(pointer, bytes, simt::Kind::host, nullptr);
}
cudaError_t cudaHostAlloc(void** pointer, std::size_t bytes, unsigned int) {
  return simt::allocate(pointer, bytes, simt::Kind::host, nullptr);
}
cudaError_t cudaFreeHost(void* pointer) { return simt::release(pointer, true); }
cudaError_t cudaMallocManaged(void** pointer, std::size_t bytes, unsigned int) {
  return simt::allocate(pointer, bytes, simt::Kind::managed, nullptr);
}

namespace {

// Checks that the copy's ends lie where `kind` says; an error (as the runtime's) otherwise.
cudaError_t check_copy(void* destination, const void* source, std::size_t bytes, cudaMemcpyKind kind) {
  auto& s = state();
  std::lock_guard lock(s.mutex);
  bool destination_device = simt::is_device(s, destination, bytes);
  bool source_device = simt::is_device(s, source, bytes);
  bool destination_ok = true;
  bool source_ok = true;
  switch (kind) {
    case cudaMemcpyHostToDevice:
      destination_ok = destination_device;
      source_ok = simt::is_host(s, source, bytes);
      break;
    case cudaMemcpyDeviceToHost:
      destination_ok = simt::is_host(s, destination, bytes);
      source_ok = source_device;
      break;
    case cudaMemcpyDeviceToDevice:
      destination_ok = destination_device;
      source_ok = source_device;
      break;
    case cudaMemcpyHostToHost:
      destination_ok = simt::is_host(s, destination, bytes);
      source_ok = simt::is_host(s, source, bytes);
      break;
    case cudaMemcpyDefault: break;
  }
  static_cast<void>(destination_device);
  static_cast<void>(source_device);
  return destination_ok && source_ok ? cudaSuccess : record(cudaErrorInvalidValue);
}

}  // namespace

cudaError_t cudaMemcpy(void* destination, const void* source, std::size_t bytes, cudaMemcpyKind kind) {
  if (const cudaError_t error = check_copy(destination, source, bytes, kind); error != cudaSuccess) return error;
  if (bytes != 0) std::memmove(destination, source, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void* destination, const void* source, std::size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  {
    auto& s = state();
    std::lock_guard lock(s.mutex);
    if (!simt::valid_stream(s, stream)) return record(cudaErrorInvalidResourceHandle);
  }
  return cudaMemcpy(destination, source, bytes, kind);
}
cudaError_t cudaMemset(void* destination, int value, std::size_t bytes) {
  {
    auto& s = state();
    std::lock_guard lock(s.mutex);
    if (!simt::is_device(s, destination, bytes)) return record(cudaErrorInvalidValue);
  }
  if (bytes != 0) std::memset(destination, value, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* destination, int value, std::size_t bytes, cudaStream_t) {
  return cudaMemset(destination, value, bytes);
}
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* pointer) {
  if (attributes == nullptr) return record(cudaErrorInvalidValue);
  auto& s = state();
  std::lock_guard lock(s.mutex);
  *attributes = cudaPointerAttributes{cudaMemoryTypeUnregistered, -2, nullptr, nullptr};
  if (const simt::Allocation* a = simt::find(s, pointer, 1)) {
    attributes->device = 0;
    switch (a->kind) {
      case simt::Kind::device:
        attributes->type = cudaMemoryTypeDevice;
        attributes->devicePointer = const_cast<void*>(pointer);
        break;
      case simt::Kind::host:
        attributes->type = cudaMemoryTypeHost;
        attributes->hostPointer = const_cast<void*>(pointer);
        attributes->devicePointer = const_cast<void*>(pointer);
        break;
      case simt::Kind::managed:
        attributes->type = cudaMemoryTypeManaged;
        attributes->hostPointer = const_cast<void*>(pointer);
        attributes->devicePointer = const_cast<void*>(pointer);
        break;
    }
  }
  return cudaSuccess;
}

cudaError_t cudaMallocAsync(void** pointer, std::size_t bytes, cudaStream_t) {
  return simt::allocate(pointer, bytes, simt::Kind::device, &state().default_pool);
}
cudaError_t cudaFreeAsync(void* pointer, cudaStream_t) { return simt::release(pointer, false); }
cudaError_t cudaMallocFromPoolAsync(void** pointer, std::size_t bytes, cudaMemPool_t pool, cudaStream_t) {
  {
    auto& s = state();
    std::lock_guard lock(s.mutex);
    if (pool != &s.default_pool && s.pools.count(pool) == 0) return record(cudaErrorInvalidValue);
  }
  return simt::allocate(pointer, bytes, simt::Kind::device, pool);
}
cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool, const cudaMemPoolProps* properties) {
  if (pool == nullptr || properties == nullptr || properties->location.type != cudaMemLocationTypeDevice ||
      properties->location.id != 0) {
    return record(cudaErrorInvalidValue);
  }
  return simt::create_handle(&simt::State::pools, pool);
}
cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool) {
  return simt::destroy_handle(&simt::State::pools, pool, cudaErrorInvalidValue);
}
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attribute, void* value) {
  if (pool == nullptr || value == nullptr) return record(cudaErrorInvalidValue);
  auto& s = state();
  std::lock_guard lock(s.mutex);
  if (attribute != cudaMemPoolAttrReleaseThreshold) return record(cudaErrorInvalidValue);
  pool->release_threshold = static_cast<std::size_t>(*static_cast<std::uint64_t*>(value));
  return cudaSuccess;
}
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attribute, void* value) {
  if (pool == nullptr || value == nullptr) return record(cudaErrorInvalidValue);
  auto& s = state();
  std::lock_guard lock(s.mutex);
  auto* out = static_cast<std::uint64_t*>(value);
  switch (attribute) {
    case cudaMemPoolAttrReleaseThreshold: *out = pool->release_threshold; break;
    case cudaMemPoolAttrReservedMemCurrent: *out = pool->reserved; break;
    case cudaMemPoolAttrUsedMemCurrent: *out = pool->used; break;
    default: return record(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, std::size_t keep_bytes) {
  if (pool == nullptr) return record(cudaErrorInvalidValue);
  auto& s = state();
  std::lock_guard lock(s.mutex);
  pool->reserved = std::max(pool->used, std::min(pool->reserved, keep_bytes));
  return cudaSuccess;
}
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
  if (pool == nullptr) return record(cudaErrorInvalidValue);
  if (device != 0) return record(cudaErrorInvalidDevice);
  *pool = &state().default_pool;
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) { return cudaStreamCreateWithFlags(stream, cudaStreamDefault); }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
  if (stream == nullptr) return record(cudaErrorInvalidValue);
  return simt::create_handle(&simt::State::streams, stream, flags);
}
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  return simt::destroy_handle(&simt::State::streams, stream, cudaErrorInvalidResourceHandle);
}
cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  auto& s = state();
  std::lock_guard lock(s.mutex);
  return simt::valid_stream(s, stream) ? cudaSuccess : record(cudaErrorInvalidResourceHandle);
}
cudaError_t cudaStreamQuery(cudaStream_t stream) { return cudaStreamSynchronize(stream); }
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int) {
  auto& s = state();
  std::lock_guard lock(s.mutex);
  if (!simt::valid_stream(s, stream) || s.events.count(event) == 0) return record(cudaErrorInvalidResourceHandle);
  return cudaSuccess;
}
cudaError_t cudaStreamGetDevice(cudaStream_t stream, int* device) {
  if (device == nullptr) return record(cudaErrorInvalidValue);
  auto& s = state();
  std::lock_guard lock(s.mutex);
  if (!simt::valid_stream(s, stream)) return record(cudaErrorInvalidResourceHandle);
  *device = 0;
  return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, cudaEventDefault); }
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  if (event == nullptr) return record(cudaErrorInvalidValue);
  return simt::create_handle(&simt::State::events, event, flags);
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  auto& s = state();
  std::lock_guard lock(s.mutex);
  if (s.events.count(event) == 0 || !simt::valid_stream(s, stream)) return record(cudaErrorInvalidResourceHandle);
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t event) { return cudaEventQuery(event); }
cudaError_t cudaEventQuery(cudaEvent_t event) {
  auto& s = state();
  std::lock_guard lock(s.mutex);
  return s.events.count(event) != 0 ? cudaSuccess : record(cudaErrorInvalidResourceHandle);
}
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  return simt::destroy_handle(&simt::State::events, event, cudaErrorInvalidResourceHandle);
}
cudaError_t cudaEventElapsedTime(float* milliseconds, cudaEvent_t start, cudaEvent_t end) {
  if (milliseconds == nullptr) return record(cudaErrorInvalidValue);
  auto& s = state();
  std::lock_guard lock(s.mutex);
  if (s.events.count(start) == 0 || s.events.count(end) == 0) return record(cudaErrorInvalidResourceHandle);
  *milliseconds = 0.0f;  // the simt build measures nothing
  return cudaSuccess;
}
