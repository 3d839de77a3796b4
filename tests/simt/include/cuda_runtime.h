// SPDX-License-Identifier: Apache-2.0
// <cuda_runtime.h> for the simt build: the device side of CUDA C++ (simt/device.hpp) and the part
// of the runtime API the library and its tests call, for one nominal sm_90 device
// (tests/simt/runtime.cpp). Device memory is kept apart from host memory: a host pointer where
// device memory is expected is an error. Every stream operation runs when it is issued, which is
// one of the orders a device may run a stream's queue in, so stream and event order always hold.
// Test-tree only: found before the toolkit's header in the simt build's include path.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <utility>

#include "simt/device.hpp"

// The toolkit's own types and declarations of the runtime API (tests/simt/runtime.cpp defines the
// functions the library calls): code compiled here sees the same types as under nvcc, and libcu++
// (which includes this header where it finds it) agrees with it.
#include <cuda_runtime_api.h>

template <class T>
cudaError_t cudaMalloc(T** pointer, std::size_t bytes) {
  return cudaMalloc(reinterpret_cast<void**>(pointer), bytes);
}
template <class T>
cudaError_t cudaMallocHost(T** pointer, std::size_t bytes) {
  return cudaMallocHost(reinterpret_cast<void**>(pointer), bytes);
}
template <class T>
cudaError_t cudaHostAlloc(T** pointer, std::size_t bytes, unsigned int flags) {
  return cudaHostAlloc(reinterpret_cast<void**>(pointer), bytes, flags);
}
template <class T>
cudaError_t cudaMallocAsync(T** pointer, std::size_t bytes, cudaStream_t stream) {
  return cudaMallocAsync(reinterpret_cast<void**>(pointer), bytes, stream);
}
template <class T>
cudaError_t cudaMallocFromPoolAsync(T** pointer, std::size_t bytes, cudaMemPool_t pool, cudaStream_t stream) {
  return cudaMallocFromPoolAsync(reinterpret_cast<void**>(pointer), bytes, pool, stream);
}

// ---- Kernels ------------------------------------------------------------------------------------------------
namespace simt {
// A launch on `stream` (checked to be a live stream); records a configuration error as the
// runtime's last error instead of launching.
bool launch_configuration_ok(dim3 grid, dim3 block, std::size_t shared_bytes, cudaStream_t stream);
// The name a kernel is reported under: its address, resolved through the program's symbols
// where they are available.
std::string kernel_name(const void* kernel);
// The most dynamic shared memory set for `kernel` with cudaFuncSetAttribute (48 KiB by default).
std::size_t kernel_dynamic_shared_limit(const void* kernel);
void set_kernel_dynamic_shared_limit(const void* kernel, std::size_t bytes);
// Fails (simt::fail) unless [pointer, pointer + bytes) lies inside one device allocation: what a
// device-wide algorithm (the CUB shims) checks of each buffer it is given.
void require_device_memory(const void* pointer, std::size_t bytes, const char* what);

// The name of the kernel `Kernel`, as the compiler spells it ("ns::kernel<float, 256>").
template <auto Kernel>
const char* kernel_name_of() {
  static const std::string name = [](const std::string& text) {  // "... [with auto Kernel = ns::kernel<...>]"
    const std::size_t begin = text.find("Kernel = ");
    return begin == std::string::npos ? text : text.substr(begin + 9, text.rfind(']') - begin - 9);
  }(__PRETTY_FUNCTION__);
  return name.c_str();
}

// kernel<<<grid, block, shared_bytes, stream>>>(arguments...) for the simt build: the arguments
// are copied, as a device launch copies them, and the grid runs before the call returns.
template <class... Params, class... Args>
void launch_named(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared_bytes,
                  cudaStream_t stream, Args&&... arguments) {
  if (!launch_configuration_ok(grid, block, shared_bytes, stream)) return;
  const std::size_t limit = kernel_dynamic_shared_limit(reinterpret_cast<const void*>(kernel));
  if (shared_bytes > limit) {
    fail(std::string("kernel ") + name + " launched with " + std::to_string(shared_bytes) +
         " bytes of dynamic shared memory, above its limit of " + std::to_string(limit) + " (cudaFuncSetAttribute)");
  }
  std::tuple<std::decay_t<Params>...> copies(static_cast<Params>(std::forward<Args>(arguments))...);
  simt::launch(name, dim3_value{grid.x, grid.y, grid.z}, dim3_value{block.x, block.y, block.z}, shared_bytes,
               [&] { std::apply([&](const auto&... values) { kernel(values...); }, copies); });
}

// The launch of the kernel named at compile time (the library's launch helper,
// dpselect/detail/kernel_launch.cuh): diagnostics name it.
template <auto Kernel, class... Args>
void launch_kernel(dim3 grid, dim3 block, std::size_t shared_bytes, cudaStream_t stream, Args&&... arguments) {
  launch_named(kernel_name_of<Kernel>(), Kernel, grid, block, shared_bytes, stream, std::forward<Args>(arguments)...);
}
// The launch of a kernel given by its address (named through the program's symbols, where it
// has an exported one).
template <class... Params, class... Args>
void launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared_bytes, cudaStream_t stream,
                   Args&&... arguments) {
  const std::string name = kernel_name(reinterpret_cast<const void*>(kernel));
  launch_named(name.c_str(), kernel, grid, block, shared_bytes, stream, std::forward<Args>(arguments)...);
}
}  // namespace simt

template <class Kernel>
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attributes, Kernel* kernel) {
  if (attributes == nullptr || kernel == nullptr) return cudaErrorInvalidValue;
  *attributes = cudaFuncAttributes{};
  attributes->maxThreadsPerBlock = 1024;
  attributes->numRegs = 64;
  attributes->ptxVersion = 90;
  attributes->binaryVersion = 90;
  attributes->maxDynamicSharedSizeBytes =
      static_cast<int>(simt::kernel_dynamic_shared_limit(reinterpret_cast<const void*>(kernel)));
  return cudaSuccess;
}
template <class Kernel>
cudaError_t cudaFuncSetAttribute(Kernel* kernel, cudaFuncAttribute attribute, int value) {
  if (kernel == nullptr || value < 0) return cudaErrorInvalidValue;
  if (attribute == cudaFuncAttributeMaxDynamicSharedMemorySize) {
    if (value > 227 * 1024) return cudaErrorInvalidValue;  // sm_90's opt-in limit
    simt::set_kernel_dynamic_shared_limit(reinterpret_cast<const void*>(kernel), static_cast<std::size_t>(value));
  }
  return cudaSuccess;
}
template <class Kernel>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, Kernel* kernel, int block_threads,
                                                          std::size_t dynamic_shared_bytes) {
  if (blocks == nullptr || kernel == nullptr || block_threads <= 0 || block_threads > 1024) {
    return cudaErrorInvalidValue;
  }
  // A nominal sm_90: 2,048 threads a multiprocessor, and at most 32 blocks.
  int by_threads = 2048 / block_threads;
  if (dynamic_shared_bytes > 0) by_threads = std::min<int>(by_threads, static_cast<int>((228u << 10) / dynamic_shared_bytes));
  *blocks = std::max(0, std::min(by_threads, 32));
  return cudaSuccess;
}
