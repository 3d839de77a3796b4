// SPDX-License-Identifier: Apache-2.0
// What the GPU benchmark programs share: the device environment (stream, events, L2 flush
// buffer, the measured copy and read bandwidths), device input arrays, timing and reporting.
// Included by every .cu file of dpselect_bench_gpu; one environment per process.
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cuda/std/cstdint>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_params.hpp"
#include "dpselect/detail/kernel_launch.cuh"
#include "dpselect/select.hpp"

namespace dpselect_bench::gpu {

#define BENCH_CUDA_CHECK(call)                                                           \
  do {                                                                                   \
    const cudaError_t bench_status_ = (call);                                            \
    if (bench_status_ != cudaSuccess) {                                                  \
      throw std::runtime_error(std::string("CUDA error ") + cudaGetErrorName(bench_status_) + \
                               " (" + cudaGetErrorString(bench_status_) + ") in " #call " at " + \
                               __FILE__ + ":" + std::to_string(__LINE__));               \
    }                                                                                    \
  } while (0)



inline dpselect::SelectionParams gpu_params(dpselect::Mechanism mechanism) {
  return dpselect_bench::bench_params(mechanism, dpselect::Backend::Gpu);
}

// ---------------------------------------------------------------------------------------------
// Device data

__host__ __device__ inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// data[i] = a hash of i mapped to [0, 1000): never a constant or zero-filled array.
template <class T>
__global__ void fill_kernel(T* data, std::uint64_t n, std::uint64_t seed) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const std::uint64_t h = splitmix64(i ^ seed);
    if constexpr (sizeof(T) == 4) {
      data[i] = static_cast<T>(static_cast<float>(h >> 40) * 0x1p-24f * 1000.0f);
    } else {
      data[i] = static_cast<T>(static_cast<double>(h >> 11) * 0x1p-53 * 1000.0);
    }
  }
}

// The one input array alive at a time (the largest, 2^32 doubles, is 32 GiB); benchmarks are registered so
// that all that use one (type, n) run consecutively.
struct DeviceArray {
  void* data = nullptr;
  std::uint64_t n = 0;
  std::size_t element_bytes = 0;
};

// ---------------------------------------------------------------------------------------------
// Process-wide GPU state, set up once in main when a device is usable.

struct GpuEnvironment {
  bool usable = false;
  std::string unusable_reason = "no usable CUDA device";
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  void* flush_buffer = nullptr;
  std::size_t flush_bytes = 0;
  void* copy_destination = nullptr;  // scratch for the memcpy baseline, grown on demand
  std::size_t copy_destination_bytes = 0;
  void* argmax_out = nullptr;  // [max value: 8 bytes][index: 8 bytes]
  cuda::std::int64_t* host_result = nullptr;  // pinned, for the result copies
  DeviceArray array;
  double copy_bandwidth = 0.0;  // bytes (read + written) per second of a D2D cudaMemcpy
  double read_bandwidth = 0.0;  // bytes read per second by read_kernel
  unsigned int* read_sink = nullptr;
  cudaDeviceProp properties{};
};

inline GpuEnvironment& env() {
  static GpuEnvironment instance;
  return instance;
}

template <class T>
const T* device_array(std::uint64_t n) {
  GpuEnvironment& e = env();
  if (e.array.data != nullptr && e.array.n == n && e.array.element_bytes == sizeof(T)) {
    return static_cast<const T*>(e.array.data);
  }
  if (e.array.data != nullptr) {
    BENCH_CUDA_CHECK(cudaFree(e.array.data));
    e.array = DeviceArray{};
  }
  void* data = nullptr;
  BENCH_CUDA_CHECK(cudaMalloc(&data, n * sizeof(T)));
  e.array = DeviceArray{data, n, sizeof(T)};
  const unsigned int blocks = static_cast<unsigned int>(
      std::min<std::uint64_t>((n + 255) / 256, static_cast<std::uint64_t>(e.properties.multiProcessorCount) * 32));
  dpselect::detail::launch_kernel<fill_kernel<T>>(blocks, 256, 0, e.stream, static_cast<T*>(data), n, kDataSeed);
  BENCH_CUDA_CHECK(cudaPeekAtLastError());
  BENCH_CUDA_CHECK(cudaStreamSynchronize(e.stream));
  return static_cast<const T*>(data);
}

inline void* copy_destination(std::size_t bytes) {
  GpuEnvironment& e = env();
  if (e.copy_destination_bytes < bytes) {
    if (e.copy_destination != nullptr) BENCH_CUDA_CHECK(cudaFree(e.copy_destination));
    e.copy_destination = nullptr;
    e.copy_destination_bytes = 0;
    BENCH_CUDA_CHECK(cudaMalloc(&e.copy_destination, bytes));
    e.copy_destination_bytes = bytes;
  }
  return e.copy_destination;
}

// Evicts L2 and waits for the stream to go idle; never inside a timed region.
inline void flush_l2() {
  GpuEnvironment& e = env();
  BENCH_CUDA_CHECK(cudaMemsetAsync(e.flush_buffer, 0x5a, e.flush_bytes, e.stream));
  BENCH_CUDA_CHECK(cudaStreamSynchronize(e.stream));
}

inline void record_start() { BENCH_CUDA_CHECK(cudaEventRecord(env().start, env().stream)); }

// Records the stop event, waits for it and returns the elapsed seconds since record_start().
inline double record_stop_seconds() {
  GpuEnvironment& e = env();
  BENCH_CUDA_CHECK(cudaEventRecord(e.stop, e.stream));
  BENCH_CUDA_CHECK(cudaEventSynchronize(e.stop));
  float milliseconds = 0.0f;
  BENCH_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, e.start, e.stop));
  return static_cast<double>(milliseconds) * 1e-3;
}

// Reads `vectors` 16-byte vectors and folds them into one word per thread, stored only when it
// equals a value the fold almost never takes (a store the compiler cannot drop, which in practice
// never happens): the plain read of the same bytes that fraction_of_read_bandwidth refers to.
// (A template so that every .cu file of the program can include it.)
template <class Vector>
__global__ void read_kernel(const Vector* data, std::uint64_t vectors, unsigned int* sink) {
  unsigned int folded = 0;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors;
       i += stride) {
    const Vector v = data[i];
    folded ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (folded == 0x9E3779B9u) *sink = folded;
}

// Enqueues read_kernel over `bytes` (a multiple of 16) at `data`: enough resident blocks to fill
// the device.
inline void enqueue_read(const void* data, std::size_t bytes) {
  GpuEnvironment& e = env();
  const std::uint64_t vectors = bytes / 16;
  const unsigned int blocks = static_cast<unsigned int>(std::max<std::uint64_t>(
      1, std::min<std::uint64_t>((vectors + 255) / 256, static_cast<std::uint64_t>(e.properties.multiProcessorCount) * 8)));
  dpselect::detail::launch_kernel<read_kernel<uint4>>(blocks, 256, 0, e.stream, static_cast<const uint4*>(data),
                                                      vectors, e.read_sink);
  BENCH_CUDA_CHECK(cudaPeekAtLastError());
}

// Best-of-5 device-to-device copy of 1 GiB, L2 flushed before each: the measured bandwidth
// reference (bytes read + bytes written per second).
inline double measure_copy_bandwidth() {
  constexpr std::size_t kBytes = std::size_t{1} << 30;
  GpuEnvironment& e = env();
  void* source = nullptr;
  BENCH_CUDA_CHECK(cudaMalloc(&source, kBytes));
  void* destination = copy_destination(kBytes);
  BENCH_CUDA_CHECK(cudaMemsetAsync(source, 0x3c, kBytes, e.stream));
  BENCH_CUDA_CHECK(cudaMemcpyAsync(destination, source, kBytes, cudaMemcpyDeviceToDevice, e.stream));
  double best = 0.0;
  for (int repetition = 0; repetition < 5; ++repetition) {
    flush_l2();
    record_start();
    BENCH_CUDA_CHECK(
        cudaMemcpyAsync(destination, source, kBytes, cudaMemcpyDeviceToDevice, e.stream));
    const double seconds = record_stop_seconds();
    best = std::max(best, 2.0 * static_cast<double>(kBytes) / seconds);
  }
  BENCH_CUDA_CHECK(cudaFree(source));
  return best;
}

// Best-of-5 plain read (read_kernel) of 1 GiB, L2 flushed before each: bytes read per second.
inline double measure_read_bandwidth() {
  constexpr std::size_t kBytes = std::size_t{1} << 30;
  GpuEnvironment& e = env();
  void* source = copy_destination(kBytes);
  BENCH_CUDA_CHECK(cudaMemsetAsync(source, 0x3c, kBytes, e.stream));
  enqueue_read(source, kBytes);
  double best = 0.0;
  for (int repetition = 0; repetition < 5; ++repetition) {
    flush_l2();
    record_start();
    enqueue_read(source, kBytes);
    best = std::max(best, static_cast<double>(kBytes) / record_stop_seconds());
  }
  return best;
}

inline void setup_gpu() {
  GpuEnvironment& e = env();
  if (!dpselect::gpu_usable()) return;
  int device = 0;
  BENCH_CUDA_CHECK(cudaGetDevice(&device));
  BENCH_CUDA_CHECK(cudaGetDeviceProperties(&e.properties, device));
  BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&e.stream, cudaStreamNonBlocking));
  BENCH_CUDA_CHECK(cudaEventCreate(&e.start));
  BENCH_CUDA_CHECK(cudaEventCreate(&e.stop));
  e.flush_bytes = std::max<std::size_t>(std::size_t{256} << 20,
                                        std::size_t{4} * static_cast<std::size_t>(e.properties.l2CacheSize));
  BENCH_CUDA_CHECK(cudaMalloc(&e.flush_buffer, e.flush_bytes));
  BENCH_CUDA_CHECK(cudaMalloc(&e.argmax_out, 16));
  BENCH_CUDA_CHECK(cudaMallocHost(&e.host_result, 2 * sizeof(cuda::std::int64_t)));
  BENCH_CUDA_CHECK(cudaMalloc(&e.read_sink, sizeof(unsigned int)));
  e.copy_bandwidth = measure_copy_bandwidth();
  e.read_bandwidth = measure_read_bandwidth();
  e.usable = true;
}

inline void teardown_gpu() {
  GpuEnvironment& e = env();
  // Best effort: errors here cannot change any reported number.
  if (e.array.data != nullptr) static_cast<void>(cudaFree(e.array.data));
  if (e.copy_destination != nullptr) static_cast<void>(cudaFree(e.copy_destination));
  if (e.flush_buffer != nullptr) static_cast<void>(cudaFree(e.flush_buffer));
  if (e.argmax_out != nullptr) static_cast<void>(cudaFree(e.argmax_out));
  if (e.read_sink != nullptr) static_cast<void>(cudaFree(e.read_sink));
  if (e.host_result != nullptr) static_cast<void>(cudaFreeHost(e.host_result));
  if (e.start != nullptr) static_cast<void>(cudaEventDestroy(e.start));
  if (e.stop != nullptr) static_cast<void>(cudaEventDestroy(e.stop));
  if (e.stream != nullptr) static_cast<void>(cudaStreamDestroy(e.stream));
  e = GpuEnvironment{};
}

// ---------------------------------------------------------------------------------------------
// Reporting

// bytes: bytes of memory traffic per iteration counted in bytes_per_second (0: none).
inline void report(benchmark::State& state, std::uint64_t n, std::uint64_t bytes) {
  const double iterations = static_cast<double>(state.iterations());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(n));
  state.counters["candidates_per_s"] =
      benchmark::Counter(iterations * static_cast<double>(n), benchmark::Counter::kIsRate);
  state.counters["n"] = static_cast<double>(n);
  if (bytes != 0) {
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(bytes));
    // (bytes / copy bandwidth) seconds per iteration, divided by the measured seconds.
    state.counters["fraction_of_copy_bandwidth"] = benchmark::Counter(
        iterations * static_cast<double>(bytes) / env().copy_bandwidth, benchmark::Counter::kIsRate);
    state.counters["fraction_of_read_bandwidth"] = benchmark::Counter(
        iterations * static_cast<double>(bytes) / env().read_bandwidth, benchmark::Counter::kIsRate);
  }
}

// Runs body(state) unless the GPU is unusable; turns exceptions into skips.
template <class Body>
inline void guarded(benchmark::State& state, Body&& body) {
  if (!env().usable) {
    state.SkipWithError(env().unusable_reason.c_str());
    return;
  }
  try {
    body(state);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// ---------------------------------------------------------------------------------------------
// The programs measured against a CUB sort (quantile_gpu_bench.cu, partition_selection_gpu_bench.cu)

// A device buffer for a baseline (freed at scope end; errors there cannot change a number).
struct DeviceBuffer {
  void* data = nullptr;
  explicit DeviceBuffer(std::size_t bytes) { BENCH_CUDA_CHECK(cudaMalloc(&data, std::max<std::size_t>(bytes, 1))); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { static_cast<void>(cudaFree(data)); }
};

// Runs `sort_once()` (enqueue one sort on env().stream) timed by events after an L2 flush.
template <class SortOnce>
double timed_sort(const SortOnce& sort_once) {
  flush_l2();
  record_start();
  sort_once();
  return record_stop_seconds();
}

// The log2 sizes of a comma-separated list ("20,24,30"); `what` names the list in errors.
inline std::vector<int> parse_log2_sizes(const std::string& text, const std::string& what) {
  std::vector<int> sizes;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, end - begin);
    char* rest = nullptr;
    const long value = std::strtol(item.c_str(), &rest, 10);
    if (item.empty() || *rest != '\0' || value < 1 || value > 34) {
      throw std::invalid_argument(what + ": '" + item + "' is not a log2 size in [1, 34]");
    }
    sizes.push_back(static_cast<int>(value));
    begin = end + 1;
  }
  return sizes;
}

// Takes `flag`... (e.g. "--quantile_log2n=") out of argv (Google Benchmark refuses flags it does
// not know); its value, else the environment variable `variable`, else "20,24,27,30".
inline std::string take_sizes_flag(int& argc, char** argv, const char* flag, const char* variable) {
  const char* from_environment = std::getenv(variable);
  std::string sizes = from_environment != nullptr ? from_environment : "20,24,27,30";
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], flag, std::strlen(flag)) == 0) {
      sizes = argv[i] + std::strlen(flag);
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  return sizes;
}

// Sets the GPU up (every benchmark skips when it cannot be), says which on stderr as `program`,
// and records it in the benchmark context.
inline void begin_gpu_program(const char* program) {
  try {
    setup_gpu();
  } catch (const std::exception& error) {
    env().unusable_reason = std::string("GPU set-up failed: ") + error.what();
    env().usable = false;
  }
  std::fprintf(stderr, "%s: %s\n", program,
               env().usable ? env().properties.name
                            : (env().unusable_reason + "; every benchmark will be skipped").c_str());
  benchmark::AddCustomContext("dpselect_backend", "gpu");
  benchmark::AddCustomContext("gpu_usable", env().usable ? "true" : "false");
  if (env().usable) benchmark::AddCustomContext("gpu_name", env().properties.name);
}

// Registered by batched_gpu_bench.cu: rows, repeated releases and pricing.
void register_batched_benchmarks();

}  // namespace dpselect_bench::gpu
