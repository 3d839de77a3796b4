// SPDX-License-Identifier: Apache-2.0
// GPU benchmarks of dpselect (Google Benchmark, CUDA).
//
//   gpu_select/<type>/<mechanism>/<generator>/n:<n>   dpselect::select over a DeviceSpan<const T>
//   gpu_select_shape/float/<shape>/<mechanism>/<generator>/n:<n>  the same over utilities in
//                                         an order that a screen finds hard: steep_ascending,
//                                         linear_ascending, gentle_ascending, all_equal
//   gpu_cub_argmax/<type>/n:<n>           cub::DeviceReduce::ArgMax over the same array, plus
//                                         the 16-byte copy of its result to the host: the cost
//                                         of a non-private arg-max (the lower bound to beat)
//   gpu_memcpy_d2d/<type>/n:<n>           cudaMemcpyAsync device-to-device of the same bytes
//   gpu_select_host/<type>/n:<n>          dpselect::select over a std::span in pageable host
//                                         memory, Backend::Gpu: the array streamed through
//                                         pinned staging, each chunk's copy overlapping the pass
//                                         over the last (host clock)
//   gpu_h2d_pinned/<type>/n:<n>           cudaMemcpyAsync of the same bytes from page-locked
//                                         host memory: the bus's bandwidth, what
//                                         gpu_select_host can at best reach
//   gpu_read/<type>/n:<n>                 a plain read of the same bytes (16-byte loads)
//   gpu_rows, gpu_repeated, gpu_pricing   batched_gpu_bench.cu
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
//   fraction_of_read_bandwidth  bytes_per_second / the plain-read bandwidth measured once at
//                               start-up on 1 GiB (the peak a one-pass selection can reach)
//
// When no CUDA device is usable every benchmark reports "no usable CUDA device" as skipped.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cub/device/device_reduce.cuh>
#include <cuda/std/cstdint>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_params.hpp"
#include "gpu_bench_support.cuh"
#include "dpselect/select.cuh"
#include "dpselect/noise_vector.hpp"
#include "dpselect/sparse_vector.hpp"

namespace {

using dpselect_bench::kContextSeed;
using dpselect_bench::kDataSeed;
using dpselect_bench::kGenerators;
using dpselect_bench::kMechanisms;

using namespace dpselect_bench::gpu;

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

// Float utilities of a shape that a screen finds hard (docs/performance.md, "Data shapes"):
// rising in index order, steeply (u(i) = i: each group of 32 beats the one before by 16 noise
// scales at epsilon = 1), linearly (u(i) = i / 32: each group beats the one before by half a
// noise scale) or gently (u(i) = i / 1024: a new best every few groups), or all equal (every
// candidate ties: the noise alone decides).
enum class Shape { steep_ascending, linear_ascending, gentle_ascending, all_equal };
const char* shape_name(Shape shape) {
  switch (shape) {
    case Shape::steep_ascending: return "steep_ascending";
    case Shape::linear_ascending: return "linear_ascending";
    case Shape::gentle_ascending: return "gentle_ascending";
    case Shape::all_equal: return "all_equal";
  }
  return "?";
}
__global__ void fill_shape_kernel(float* data, std::uint64_t n, Shape shape) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const double x = static_cast<double>(i);
    data[i] = shape == Shape::steep_ascending    ? static_cast<float>(x)
              : shape == Shape::linear_ascending ? static_cast<float>(x / 32)
              : shape == Shape::gentle_ascending ? static_cast<float>(x / 1024)
                                                 : 7.0f;
  }
}

// A mechanism over n float utilities of `shape` in device memory: against the uniform array of
// gpu_select/float at the same n (the same run), the cost of the data's order.
void bm_select_shape(benchmark::State& state, Shape shape, dpselect::Mechanism mechanism,
                     dpselect::Generator generator, std::uint64_t n) {
  guarded(state, [&](benchmark::State& st) {
    GpuEnvironment& e = env();
    float* data = nullptr;
    BENCH_CUDA_CHECK(cudaMalloc(&data, n * sizeof(float)));
    const unsigned int blocks = static_cast<unsigned int>(
        std::min<std::uint64_t>((n + 255) / 256, static_cast<std::uint64_t>(e.properties.multiProcessorCount) * 32));
    dpselect::detail::launch_kernel<fill_shape_kernel>(blocks, 256, 0, e.stream, data, n, shape);
    BENCH_CUDA_CHECK(cudaPeekAtLastError());
    BENCH_CUDA_CHECK(cudaStreamSynchronize(e.stream));
    const dpselect::DeviceSpan<const float> span{data, n};
    try {
      time_releases(st, mechanism, generator, n, n * sizeof(float),
                    [&](dpselect::Context& ctx, const dpselect::SelectionParams& params) {
                      return dpselect::select(ctx, span, params, e.stream);
                    });
    } catch (...) {
      cudaFree(data);
      throw;
    }
    BENCH_CUDA_CHECK(cudaFree(data));
  });
}

// Host utilities, filled once per size and type (pageable memory, as a caller's array is).
template <class T>
const std::vector<T>& host_array(std::uint64_t n) {
  static std::vector<T> host;
  if (host.size() != n) {
    host.assign(n, T{});
    for (std::uint64_t i = 0; i < n; ++i) host[i] = static_cast<T>(static_cast<double>(splitmix64(kDataSeed + i) >> 40) * 0x1p-20);
  }
  return host;
}

// The whole call on the host clock: its copies and passes run on the library's own streams, not
// on the benchmark's, so events there would not bracket them. No L2 flush: the data comes over
// the bus.
template <class T>
void bm_select_host(benchmark::State& state, std::uint64_t n) {
  guarded(state, [&](benchmark::State& st) {
    const std::vector<T>& host = host_array<T>(n);
    dpselect::Context ctx = dpselect::Context::with_fixed_seed(kContextSeed, dpselect::Generator::philox);
    const dpselect::SelectionParams params = gpu_params(dpselect::Mechanism::exponential);
    for (auto _ : st) {
      const auto start = std::chrono::steady_clock::now();
      const dpselect::Selection selection = dpselect::select(ctx, std::span<const T>(host), params);
      const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
      if (selection.report.executed_on != dpselect::ExecutedOn::gpu || selection.index >= n) {
        st.SkipWithError("selection did not run on the GPU or returned an index out of range");
        break;
      }
      benchmark::DoNotOptimize(selection.index);
      st.SetIterationTime(elapsed.count());
    }
    report(st, n, n * sizeof(T));
  });
}

template <class T>
void bm_h2d_pinned(benchmark::State& state, std::uint64_t n) {
  guarded(state, [&](benchmark::State& st) {
    GpuEnvironment& e = env();
    const std::size_t bytes = n * sizeof(T);
    void* pinned = nullptr;
    BENCH_CUDA_CHECK(cudaMallocHost(&pinned, bytes));
    const std::unique_ptr<void, cudaError_t (*)(void*)> release(pinned, cudaFreeHost);
    std::memset(pinned, 0x3c, bytes);
    void* device = copy_destination(bytes);
    for (auto _ : st) {
      record_start();
      BENCH_CUDA_CHECK(cudaMemcpyAsync(device, pinned, bytes, cudaMemcpyHostToDevice, e.stream));
      st.SetIterationTime(record_stop_seconds());
    }
    report(st, n, bytes);
  });
}

// The plain read of the array's bytes (read_kernel): what a memory-bound one-pass selection
// could at best reach.
template <class T>
void bm_read(benchmark::State& state, std::uint64_t n) {
  guarded(state, [&](benchmark::State& st) {
    const T* data = device_array<T>(n);
    for (auto _ : st) {
      flush_l2();
      record_start();
      enqueue_read(data, n * sizeof(T));
      st.SetIterationTime(record_stop_seconds());
    }
    report(st, n, n * sizeof(T));
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
  for (int log2n = 20; log2n <= 32; log2n += 2) {
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
    benchmark::RegisterBenchmark((std::string("gpu_read/") + type_name + "/" + size_label(n)).c_str(),
                                 [n](benchmark::State& state) { bm_read<T>(state, n); })
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
  for (const std::uint64_t n : {std::uint64_t{1} << 24, std::uint64_t{1} << 30}) {
    for (const Shape shape :
         {Shape::steep_ascending, Shape::linear_ascending, Shape::gentle_ascending, Shape::all_equal}) {
      for (const dpselect::Mechanism mechanism : kMechanisms) {
        for (const dpselect::Generator generator : kGenerators) {
          benchmark::RegisterBenchmark((std::string("gpu_select_shape/float/") + shape_name(shape) + "/" +
                                        std::string(dpselect::to_string(mechanism)) + "/" +
                                        std::string(dpselect::to_string(generator)) + "/" + size_label(n))
                                           .c_str(),
                                       [shape, mechanism, generator, n](benchmark::State& state) {
                                         bm_select_shape(state, shape, mechanism, generator, n);
                                       })
              ->UseManualTime()
              ->Unit(benchmark::kMicrosecond);
        }
      }
    }
  }
  for (const std::uint64_t n : {std::uint64_t{1} << 24, std::uint64_t{1} << 26, std::uint64_t{1} << 28}) {
    benchmark::RegisterBenchmark(("gpu_select_host/float/" + size_label(n)).c_str(),
                                 [n](benchmark::State& state) { bm_select_host<float>(state, n); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("gpu_select_host/double/" + size_label(n)).c_str(),
                                 [n](benchmark::State& state) { bm_select_host<double>(state, n); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("gpu_h2d_pinned/float/" + size_label(n)).c_str(),
                                 [n](benchmark::State& state) { bm_h2d_pinned<float>(state, n); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
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
  benchmark::AddCustomContext("read_bandwidth_bytes_per_s", std::to_string(static_cast<long long>(e.read_bandwidth)));
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
  register_batched_benchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  teardown_gpu();
  return 0;
}
