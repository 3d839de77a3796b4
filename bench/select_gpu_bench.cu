// GPU benchmarks of dpselect (Google Benchmark, CUDA).
//
//   gpu_select/<type>/<mechanism>/<generator>/n:<n>   dpselect::select over a DeviceSpan<const T>
//   gpu_cub_argmax/<type>/n:<n>           cub::DeviceReduce::ArgMax over the same array, plus
//                                         the 16-byte copy of its result to the host: the cost
//                                         of a non-private arg-max (the lower bound to beat)
//   gpu_memcpy_d2d/<type>/n:<n>           cudaMemcpyAsync device-to-device of the same bytes
//   gpu_functor/<mechanism>/<generator>/n:<n>   dpselect::select_functor (select.cuh) over a
//                                         __host__ __device__ quadratic utility, no memory reads
//   gpu_sparse_vector/double/n:<n>        dpselect::sparse_vector_batch over a DeviceSpan: every
//                                         query below the threshold (the full scan)
//   gpu_noise_vector/<distribution>/<generator>/n:<n>
//                                         dpselect::add_noise over a DeviceSpan<double> in
//                                         place (validation scan + noise kernel; bytes: 3 n
//                                         doubles)
//
// Timing: CUDA events around each call on a dedicated stream, reported with
// state.SetIterationTime (UseManualTime). Before every timed iteration, outside the timed
// region, L2 is flushed by a cudaMemsetAsync of a buffer larger than L2 and the stream is
// synchronized, so every iteration reads its input from HBM and starts from an idle stream.
// dpselect::select returns the selected index to the host (it synchronizes the stream), so
// its time is the full call as a user sees it: host launch overhead, the fused pass, the merge
// and the copy of the result back. The ArgMax baseline likewise includes its result copy.
//
// Counters:
//   bytes_per_second            bytes of utilities read (memcpy: bytes read + bytes written)
//   items_per_second            candidates per second (= candidates_per_s)
//   fraction_of_copy_bandwidth  bytes_per_second / the device-to-device copy bandwidth
//                               (read + write) measured once at start-up on 1 GiB
//
// When no CUDA device is usable every benchmark reports "no usable CUDA device" as skipped.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cub/device/device_reduce.cuh>
#include <cuda/std/cstdint>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_params.hpp"
#include "dpselect/select.cuh"
#include "dpselect/noise_vector.hpp"
#include "dpselect/sparse_vector.hpp"

namespace {

using dpselect_bench::kContextSeed;
using dpselect_bench::kDataSeed;
using dpselect_bench::kGenerators;
using dpselect_bench::kMechanisms;

#define BENCH_CUDA_CHECK(call)                                                           \
  do {                                                                                   \
    const cudaError_t bench_status_ = (call);                                            \
    if (bench_status_ != cudaSuccess) {                                                  \
      throw std::runtime_error(std::string("CUDA error ") + cudaGetErrorName(bench_status_) + \
                               " (" + cudaGetErrorString(bench_status_) + ") in " #call " at " + \
                               __FILE__ + ":" + std::to_string(__LINE__));               \
    }                                                                                    \
  } while (0)



dpselect::SelectionParams gpu_params(dpselect::Mechanism mechanism) {
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

// The one input array alive at a time (the largest is 8 GiB); benchmarks are registered so
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
  cudaDeviceProp properties{};
};

GpuEnvironment& env() {
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
  fill_kernel<T><<<blocks, 256, 0, e.stream>>>(static_cast<T*>(data), n, kDataSeed);
  BENCH_CUDA_CHECK(cudaPeekAtLastError());
  BENCH_CUDA_CHECK(cudaStreamSynchronize(e.stream));
  return static_cast<const T*>(data);
}

void* copy_destination(std::size_t bytes) {
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
void flush_l2() {
  GpuEnvironment& e = env();
  BENCH_CUDA_CHECK(cudaMemsetAsync(e.flush_buffer, 0x5a, e.flush_bytes, e.stream));
  BENCH_CUDA_CHECK(cudaStreamSynchronize(e.stream));
}

void record_start() { BENCH_CUDA_CHECK(cudaEventRecord(env().start, env().stream)); }

// Records the stop event, waits for it and returns the elapsed seconds since record_start().
double record_stop_seconds() {
  GpuEnvironment& e = env();
  BENCH_CUDA_CHECK(cudaEventRecord(e.stop, e.stream));
  BENCH_CUDA_CHECK(cudaEventSynchronize(e.stop));
  float milliseconds = 0.0f;
  BENCH_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, e.start, e.stop));
  return static_cast<double>(milliseconds) * 1e-3;
}

// Best-of-5 device-to-device copy of 1 GiB, L2 flushed before each: the measured bandwidth
// reference (bytes read + bytes written per second).
double measure_copy_bandwidth() {
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

void setup_gpu() {
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
  e.copy_bandwidth = measure_copy_bandwidth();
  e.usable = true;
}

void teardown_gpu() {
  GpuEnvironment& e = env();
  // Best effort: errors here cannot change any reported number.
  if (e.array.data != nullptr) static_cast<void>(cudaFree(e.array.data));
  if (e.copy_destination != nullptr) static_cast<void>(cudaFree(e.copy_destination));
  if (e.flush_buffer != nullptr) static_cast<void>(cudaFree(e.flush_buffer));
  if (e.argmax_out != nullptr) static_cast<void>(cudaFree(e.argmax_out));
  if (e.host_result != nullptr) static_cast<void>(cudaFreeHost(e.host_result));
  if (e.start != nullptr) static_cast<void>(cudaEventDestroy(e.start));
  if (e.stop != nullptr) static_cast<void>(cudaEventDestroy(e.stop));
  if (e.stream != nullptr) static_cast<void>(cudaStreamDestroy(e.stream));
  e = GpuEnvironment{};
}

// ---------------------------------------------------------------------------------------------
// Reporting

// bytes: bytes of memory traffic per iteration counted in bytes_per_second (0: none).
void report(benchmark::State& state, std::uint64_t n, std::uint64_t bytes) {
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
  }
}

// Runs body(state) unless the GPU is unusable; turns exceptions into skips.
template <class Body>
void guarded(benchmark::State& state, Body&& body) {
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
// Benchmarks

// Times one complete release per iteration (each draws a fresh stream, hence fresh noise),
// with L2 flushed before each, and checks the release ran on the GPU.
template <class RunRelease>
void time_releases(benchmark::State& st, dpselect::Mechanism mechanism, dpselect::Generator generator,
                   std::uint64_t n, std::uint64_t bytes_read, RunRelease run_release) {
  dpselect::Context ctx = dpselect::Context::with_fixed_seed(kContextSeed, generator);
  const dpselect::SelectionParams params = gpu_params(mechanism);
  for (auto _ : st) {
    flush_l2();
    record_start();
    const dpselect::Selection selection = run_release(ctx, params);
    const double seconds = record_stop_seconds();
    if (selection.report.executed_on != dpselect::ExecutedOn::gpu || selection.index >= n) {
      st.SkipWithError("selection did not run on the GPU or returned an index out of range");
      break;
    }
    benchmark::DoNotOptimize(selection.index);
    st.SetIterationTime(seconds);
  }
  report(st, n, bytes_read);
}

template <class T>
void bm_select_array(benchmark::State& state, dpselect::Mechanism mechanism, dpselect::Generator generator,
                     std::uint64_t n) {
  guarded(state, [&](benchmark::State& st) {
    const T* data = device_array<T>(n);
    const dpselect::DeviceSpan<const T> span{data, n};
    time_releases(st, mechanism, generator, n, n * sizeof(T),
                  [&](dpselect::Context& ctx, const dpselect::SelectionParams& params) {
                    return dpselect::select(ctx, span, params, env().stream);
                  });
  });
}

template <class T>
void bm_cub_argmax(benchmark::State& state, std::uint64_t n) {
  guarded(state, [&](benchmark::State& st) {
    GpuEnvironment& e = env();
    const T* data = device_array<T>(n);
    T* max_out = static_cast<T*>(e.argmax_out);
    auto* index_out = reinterpret_cast<cuda::std::int64_t*>(static_cast<char*>(e.argmax_out) + 8);
    std::size_t temp_bytes = 0;
    BENCH_CUDA_CHECK(cub::DeviceReduce::ArgMax(nullptr, temp_bytes, data, max_out, index_out,
                                               static_cast<cuda::std::int64_t>(n), e.stream));
    void* temp = nullptr;
    BENCH_CUDA_CHECK(cudaMalloc(&temp, std::max<std::size_t>(temp_bytes, 1)));
    try {
      for (auto _ : st) {
        flush_l2();
        record_start();
        BENCH_CUDA_CHECK(cub::DeviceReduce::ArgMax(temp, temp_bytes, data, max_out, index_out,
                                                   static_cast<cuda::std::int64_t>(n), e.stream));
        BENCH_CUDA_CHECK(cudaMemcpyAsync(e.host_result, e.argmax_out, 16, cudaMemcpyDeviceToHost,
                                         e.stream));
        const double seconds = record_stop_seconds();
        const cuda::std::int64_t index = e.host_result[1];
        if (index < 0 || static_cast<std::uint64_t>(index) >= n) {
          st.SkipWithError("cub::DeviceReduce::ArgMax returned an index out of range");
          break;
        }
        benchmark::DoNotOptimize(index);
        st.SetIterationTime(seconds);
      }
    } catch (...) {
      static_cast<void>(cudaFree(temp));
      throw;
    }
    BENCH_CUDA_CHECK(cudaFree(temp));
    report(st, n, n * sizeof(T));
  });
}

template <class T>
void bm_memcpy(benchmark::State& state, std::uint64_t n) {
  guarded(state, [&](benchmark::State& st) {
    GpuEnvironment& e = env();
    const std::size_t bytes = n * sizeof(T);
    const T* data = device_array<T>(n);
    void* destination = copy_destination(bytes);
    for (auto _ : st) {
      flush_l2();
      record_start();
      BENCH_CUDA_CHECK(cudaMemcpyAsync(destination, data, bytes, cudaMemcpyDeviceToDevice, e.stream));
      st.SetIterationTime(record_stop_seconds());
    }
    report(st, n, 2 * bytes);  // read + write
  });
}

// A cheap utility computed on the fly: -(i - n/3)^2 scaled into [-1000, 0].
struct Quadratic {
  double peak;
  double inv_n;
  __host__ __device__ double operator()(std::uint64_t i) const {
    const double d = (static_cast<double>(i) - peak) * inv_n;
    return -1000.0 * d * d;
  }
};

void bm_select_functor(benchmark::State& state, dpselect::Mechanism mechanism, dpselect::Generator generator,
                       std::uint64_t n) {
  guarded(state, [&](benchmark::State& st) {
    const Quadratic utility{static_cast<double>(n / 3), 1.0 / static_cast<double>(n)};
    time_releases(st, mechanism, generator, n, 0,
                  [&](dpselect::Context& ctx, const dpselect::SelectionParams& params) {
                    return dpselect::select_functor(ctx, utility, dpselect::IndexRange{0, n}, params,
                                                    env().stream);
                  });
  });
}

// ---------------------------------------------------------------------------------------------
// Registration

// The batched sparse vector over n query values in device memory with a threshold far above
// all of them (values in [0, 1000), T = 10^5): no "above" answer, so every query is scanned —
// the validation pass plus the windowed find-first. One release per iteration.
void bm_sparse_vector(benchmark::State& state, std::uint64_t n) {
  guarded(state, [&](benchmark::State& st) {
    const dpselect::DeviceSpan<const double> span{device_array<double>(n), n};
    dpselect::SparseVectorParams params;
    params.epsilon = 1.0;
    params.sensitivity = 1.0;
    params.threshold = 1e5;
    params.value_bound = 1000.0;
    dpselect::Context ctx = dpselect::Context::with_fixed_seed(kContextSeed);
    for (auto _ : st) {
      flush_l2();
      record_start();
      const dpselect::SparseVectorBatch batch = dpselect::sparse_vector_batch(ctx, span, params, env().stream);
      const double seconds = record_stop_seconds();
      if (batch.report.queries != n || !batch.above.empty()) {
        st.SkipWithError("the sparse vector did not scan every query below the threshold");
        break;
      }
      st.SetIterationTime(seconds);
    }
    // Two reads of the values: the validation scan and the find-first.
    report(st, n, 2 * n * sizeof(double));
  });
}

// add_noise on n doubles in device memory (the values are overwritten with noisy values in place,
// so this array is the last use of its (type, n)): the validation scan plus the noise kernel, with
// epsilon 1, delta 1e-6 where needed and p = 1.5. The generalized Gaussian's calibration is done
// (and cached by the library) before timing.
void bm_noise_vector(benchmark::State& state, dpselect::NoiseDistribution distribution, dpselect::Generator generator,
                     std::uint64_t n) {
  guarded(state, [&](benchmark::State& st) {
    const dpselect::DeviceSpan<double> span{const_cast<double*>(device_array<double>(n)), n};
    dpselect::NoiseVectorParams params;
    params.distribution = distribution;
    params.epsilon = 1.0;
    params.delta = distribution == dpselect::NoiseDistribution::laplace ? 0.0 : 1e-6;
    params.p = 1.5;
    dpselect::noise_vector_scale(params, n);
    dpselect::Context ctx = dpselect::Context::with_fixed_seed(kContextSeed, generator);
    for (auto _ : st) {
      flush_l2();
      record_start();
      const dpselect::NoiseVectorReport noise_report = dpselect::add_noise(ctx, span, params, env().stream);
      const double seconds = record_stop_seconds();
      benchmark::DoNotOptimize(noise_report);
      st.SetIterationTime(seconds);
    }
    // The validation scan reads the values; the kernel reads and writes them.
    report(st, n, 3 * n * sizeof(double));
  });
}

std::string size_label(std::uint64_t n) { return "n:" + std::to_string(n); }

template <class T>
void register_arrays(const char* type_name) {
  for (int log2n = 20; log2n <= 30; log2n += 2) {
    const std::uint64_t n = std::uint64_t{1} << log2n;
    for (const dpselect::Mechanism mechanism : kMechanisms) {
      for (const dpselect::Generator generator : kGenerators) {
        benchmark::RegisterBenchmark(
            (std::string("gpu_select/") + type_name + "/" + std::string(dpselect::to_string(mechanism)) +
             "/" + std::string(dpselect::to_string(generator)) + "/" + size_label(n))
                .c_str(),
            [mechanism, generator, n](benchmark::State& state) {
              bm_select_array<T>(state, mechanism, generator, n);
            })
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond);
      }
    }
    benchmark::RegisterBenchmark(
        (std::string("gpu_cub_argmax/") + type_name + "/" + size_label(n)).c_str(),
        [n](benchmark::State& state) { bm_cub_argmax<T>(state, n); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(
        (std::string("gpu_memcpy_d2d/") + type_name + "/" + size_label(n)).c_str(),
        [n](benchmark::State& state) { bm_memcpy<T>(state, n); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

void register_all() {
  register_arrays<float>("float");
  register_arrays<double>("double");
  for (int log2n = 20; log2n <= 30; log2n += 2) {
    const std::uint64_t n = std::uint64_t{1} << log2n;
    benchmark::RegisterBenchmark(("gpu_sparse_vector/double/" + size_label(n)).c_str(),
                                 [n](benchmark::State& state) { bm_sparse_vector(state, n); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
  for (const std::uint64_t n : {std::uint64_t{1} << 20, std::uint64_t{10'000'000}, std::uint64_t{1'000'000'000}}) {
    for (const dpselect::NoiseDistribution distribution :
         {dpselect::NoiseDistribution::laplace, dpselect::NoiseDistribution::gaussian,
          dpselect::NoiseDistribution::generalized_gaussian}) {
      for (const dpselect::Generator generator : {dpselect::Generator::chacha20, dpselect::Generator::philox}) {
        benchmark::RegisterBenchmark((std::string("gpu_noise_vector/") + std::string(dpselect::to_string(distribution)) +
                                      "/" + std::string(dpselect::to_string(generator)) + "/" + size_label(n))
                                         .c_str(),
                                     [=](benchmark::State& state) { bm_noise_vector(state, distribution, generator, n); })
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
  for (int log2n = 24; log2n <= 36; log2n += 2) {
    const std::uint64_t n = std::uint64_t{1} << log2n;
    for (const dpselect::Mechanism mechanism : kMechanisms) {
      for (const dpselect::Generator generator : kGenerators) {
        benchmark::RegisterBenchmark(
            (std::string("gpu_functor/") + std::string(dpselect::to_string(mechanism)) + "/" +
             std::string(dpselect::to_string(generator)) + "/" + size_label(n))
                .c_str(),
            [mechanism, generator, n](benchmark::State& state) {
              bm_select_functor(state, mechanism, generator, n);
            })
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
}

void add_context() {
  const GpuEnvironment& e = env();
  benchmark::AddCustomContext("dpselect_backend", "gpu");
  benchmark::AddCustomContext("gpu_usable", e.usable ? "true" : "false");
  if (!e.usable) {
    benchmark::AddCustomContext("gpu_unusable_reason", e.unusable_reason);
    return;
  }
  int driver = 0;
  int runtime = 0;
  static_cast<void>(cudaDriverGetVersion(&driver));
  static_cast<void>(cudaRuntimeGetVersion(&runtime));
  benchmark::AddCustomContext("gpu_name", e.properties.name);
  benchmark::AddCustomContext("gpu_compute_capability", std::to_string(e.properties.major) + "." +
                                                            std::to_string(e.properties.minor));
  benchmark::AddCustomContext("gpu_multiprocessors", std::to_string(e.properties.multiProcessorCount));
  benchmark::AddCustomContext("gpu_memory_bytes", std::to_string(e.properties.totalGlobalMem));
  benchmark::AddCustomContext("gpu_l2_bytes", std::to_string(e.properties.l2CacheSize));
  benchmark::AddCustomContext("cuda_driver_version", std::to_string(driver));
  benchmark::AddCustomContext("cuda_runtime_version", std::to_string(runtime));
  benchmark::AddCustomContext("l2_flush_bytes", std::to_string(e.flush_bytes));
  benchmark::AddCustomContext("d2d_copy_bandwidth_bytes_per_s",
                              std::to_string(static_cast<long long>(e.copy_bandwidth)));
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  try {
    setup_gpu();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "dpselect_bench_gpu: GPU set-up failed: %s\n", error.what());
    env().unusable_reason = std::string("GPU set-up failed: ") + error.what();
    env().usable = false;
  }
  if (env().usable) {
    std::fprintf(stderr, "dpselect_bench_gpu: %s, device-to-device copy bandwidth %.1f GB/s "
                 "(read + write, 1 GiB, best of 5)\n",
                 env().properties.name, env().copy_bandwidth * 1e-9);
  } else {
    std::fprintf(stderr, "dpselect_bench_gpu: %s; every benchmark will be skipped\n",
                 env().unusable_reason.c_str());
  }
  add_context();
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  teardown_gpu();
  return 0;
}
