// SPDX-License-Identifier: Apache-2.0
// GPU benchmarks of private quantiles over device data (Google Benchmark, CUDA): the
// target is QuantileData::from_device + select_quantile over 10^9 float32 values in device memory
// within 2x of a CUB radix sort of the same array.
//
//   gpu_quantile_cub_sort/<type>/n:<n>    cub::DeviceRadixSort::SortKeys of the n values (all key
//                                         bits) into a second buffer, temp storage allocated
//                                         once outside the timed region: the baseline
//   gpu_quantile_prepare/<type>/pool:<p>/n:<n>
//                                         QuantileData::from_device over the same array: NaN
//                                         scan, sort, grid positions; the data destroyed after
//                                         each iteration. pool:default keeps the library's pool
//                                         release threshold (1 GiB: the positions' memory is
//                                         mapped afresh by every call, as for a first call);
//                                         pool:kept raises it to keep everything mapped
//   gpu_quantile_select/<type>/n:<n>      select_quantile (median, epsilon 1) over data
//                                         prepared once: the interval pass over n + 1
//                                         intervals and the read of the chosen interval's ends
//   gpu_quantile_total/<type>/n:<n>       both, as one user call sequence (pool:default)
//
// Counters: items_per_second (values), and cub_sort_ratio = the mean time per iteration over the
// CUB sort's time for the same type and n (the median of 5 sorts, measured once per size): the
// target is gpu_quantile_total/float/... cub_sort_ratio <= 2.
//
// Timing: the CUB sort and the preparation run on the benchmark's stream, timed with CUDA events
// around them (L2 flushed before each). The releases run their pass on streams of the library's
// own, which events on ours would not bracket: select and total are timed on the host clock
// around the whole synchronizing call (a few microseconds more than events would show, against
// milliseconds at the sizes that matter).
//
// Sizes: 2^k values for each k in --quantile_log2n=K1,K2,... (or the environment variable
// DPSELECT_QUANTILE_BENCH_LOG2N; default 20,24,27,30). k = 30 needs about 20 GiB of device memory
// for floats (input, sorted copy and CUB's alternate buffer, positions) and 28 GiB for doubles.
// Values: a splitmix64 hash of the index mapped to [0, 1000) (gpu_bench_support.cuh), over the
// public range [0, 1000].
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench_params.hpp"
#include "dpselect/device_memory.hpp"
#include "dpselect/quantiles.hpp"
#include "gpu_bench_support.cuh"

namespace {

using dpselect_bench::kContextSeed;

using namespace dpselect_bench::gpu;

constexpr dpselect::QuantileRange kRange{0.0, 1000.0};

// CUB's radix sort with 32-bit offsets where the count allows, as kernels/quantiles.cu sorts.
template <class T>
cudaError_t cub_sort(void* temp, std::size_t& temp_bytes, const T* in, T* out, std::uint64_t n, cudaStream_t stream) {
  if (n <= std::numeric_limits<std::uint32_t>::max()) {
    return cub::DeviceRadixSort::SortKeys(temp, temp_bytes, in, out, static_cast<std::uint32_t>(n), 0,
                                          static_cast<int>(8 * sizeof(T)), stream);
  }
  return cub::DeviceRadixSort::SortKeys(temp, temp_bytes, in, out, n, 0, static_cast<int>(8 * sizeof(T)), stream);
}

// The median of 5 CUB sorts of the (type, n) array, measured once: the ratio's denominator.
template <class T>
double cub_sort_seconds(std::uint64_t n) {
  static std::map<std::uint64_t, double> measured;
  if (const auto found = measured.find(n); found != measured.end()) return found->second;
  const T* data = device_array<T>(n);
  DeviceBuffer out(n * sizeof(T));
  std::size_t temp_bytes = 0;
  BENCH_CUDA_CHECK(cub_sort<T>(nullptr, temp_bytes, data, static_cast<T*>(out.data), n, env().stream));
  DeviceBuffer temp(temp_bytes);
  std::vector<double> seconds;
  for (int repetition = 0; repetition < 6; ++repetition) {  // the first warms up
    seconds.push_back(timed_sort([&] {
      BENCH_CUDA_CHECK(cub_sort<T>(temp.data, temp_bytes, data, static_cast<T*>(out.data), n, env().stream));
    }));
  }
  seconds.erase(seconds.begin());
  std::nth_element(seconds.begin(), seconds.begin() + 2, seconds.end());
  return measured[n] = seconds[2];
}

// Reports the mean seconds per iteration (`total_seconds` over the iterations) over the CUB sort's.
void report_ratio(benchmark::State& state, std::uint64_t n, double total_seconds, double cub_seconds) {
  report(state, n, 0);
  if (state.iterations() > 0) {
    state.counters["cub_sort_ratio"] = total_seconds / static_cast<double>(state.iterations()) / cub_seconds;
  }
}

template <class T>
void bm_cub_sort(benchmark::State& state, std::uint64_t n) {
  guarded(state, [&](benchmark::State& st) {
    const T* data = device_array<T>(n);
    DeviceBuffer out(n * sizeof(T));
    std::size_t temp_bytes = 0;
    BENCH_CUDA_CHECK(cub_sort<T>(nullptr, temp_bytes, data, static_cast<T*>(out.data), n, env().stream));
    DeviceBuffer temp(temp_bytes);
    for (auto _ : st) {
      st.SetIterationTime(timed_sort([&] {
        BENCH_CUDA_CHECK(cub_sort<T>(temp.data, temp_bytes, data, static_cast<T*>(out.data), n, env().stream));
      }));
    }
    report(st, n, 0);
  });
}

// Sets the library pool's release threshold for the benchmark's lifetime.
class PoolThreshold {
 public:
  explicit PoolThreshold(std::uint64_t bytes) : previous_(dpselect::device_memory_release_threshold()) {
    dpselect::set_device_memory_release_threshold(bytes);
  }
  PoolThreshold(const PoolThreshold&) = delete;
  PoolThreshold& operator=(const PoolThreshold&) = delete;
  ~PoolThreshold() {
    dpselect::set_device_memory_release_threshold(previous_);
    dpselect::trim_device_memory(previous_);
  }

 private:
  std::uint64_t previous_;
};

template <class T>
void bm_prepare(benchmark::State& state, std::uint64_t n, bool keep_pool) {
  guarded(state, [&](benchmark::State& st) {
    const double cub_seconds = cub_sort_seconds<T>(n);
    const dpselect::DeviceSpan<const T> span{device_array<T>(n), n};
    const PoolThreshold threshold(keep_pool ? std::numeric_limits<std::uint64_t>::max()
                                            : dpselect::kDefaultDeviceMemoryReleaseThreshold);
    double total_seconds = 0.0;
    for (auto _ : st) {
      flush_l2();
      record_start();
      std::optional<dpselect::QuantileData> data = dpselect::QuantileData::from_device(span, kRange, env().stream);
      const double seconds = record_stop_seconds();
      if (!data->on_device() || data->size() != n) {
        st.SkipWithError("the data were not prepared on the device");
        break;
      }
      data.reset();  // outside the timed region: the positions go back to the pool
      st.SetIterationTime(seconds);
      total_seconds += seconds;
    }
    report_ratio(st, n, total_seconds, cub_seconds);
  });
}

template <class T>
void bm_select(benchmark::State& state, std::uint64_t n) {
  guarded(state, [&](benchmark::State& st) {
    const double cub_seconds = cub_sort_seconds<T>(n);
    const dpselect::DeviceSpan<const T> span{device_array<T>(n), n};
    const dpselect::QuantileData data = dpselect::QuantileData::from_device(span, kRange, env().stream);
    dpselect::Context context = dpselect::Context::with_fixed_seed(kContextSeed);
    const dpselect::QuantileParams params{.range = kRange, .epsilon = 1.0};
    double total_seconds = 0.0;
    for (auto _ : st) {
      flush_l2();
      const auto start = std::chrono::steady_clock::now();
      const dpselect::QuantileRelease median = dpselect::select_quantile(context, data, 0.5, params);
      const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
      if (median.report.executed_on != dpselect::ExecutedOn::gpu) {
        st.SkipWithError("the release did not run on the GPU");
        break;
      }
      benchmark::DoNotOptimize(median.grid_index);
      st.SetIterationTime(elapsed.count());
      total_seconds += elapsed.count();
    }
    report_ratio(st, n, total_seconds, cub_seconds);
  });
}

template <class T>
void bm_total(benchmark::State& state, std::uint64_t n) {
  guarded(state, [&](benchmark::State& st) {
    const double cub_seconds = cub_sort_seconds<T>(n);
    const dpselect::DeviceSpan<const T> span{device_array<T>(n), n};
    dpselect::Context context = dpselect::Context::with_fixed_seed(kContextSeed);
    const dpselect::QuantileParams params{.range = kRange, .epsilon = 1.0};
    double total_seconds = 0.0;
    for (auto _ : st) {
      flush_l2();
      const auto start = std::chrono::steady_clock::now();
      std::optional<dpselect::QuantileData> data = dpselect::QuantileData::from_device(span, kRange, env().stream);
      const dpselect::QuantileRelease median = dpselect::select_quantile(context, *data, 0.5, params);
      const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
      data.reset();
      if (median.report.executed_on != dpselect::ExecutedOn::gpu) {
        st.SkipWithError("the release did not run on the GPU");
        break;
      }
      benchmark::DoNotOptimize(median.grid_index);
      st.SetIterationTime(elapsed.count());
      total_seconds += elapsed.count();
    }
    report_ratio(st, n, total_seconds, cub_seconds);
  });
}

// "20,24,30" -> {20, 24, 30}; each in [1, 34].
template <class T>
void register_type(const char* type_name, const std::vector<int>& log2_sizes) {
  // Registered in this order so that each (type, n) array is filled once (device_array keeps one).
  for (const int log2n : log2_sizes) {
    const std::uint64_t n = std::uint64_t{1} << log2n;
    const std::string suffix = std::string(type_name) + "/";
    const std::string size = "n:" + std::to_string(n);
    benchmark::RegisterBenchmark(("gpu_quantile_cub_sort/" + suffix + size).c_str(),
                                 [n](benchmark::State& state) { bm_cub_sort<T>(state, n); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    for (const bool keep_pool : {false, true}) {
      benchmark::RegisterBenchmark(
          ("gpu_quantile_prepare/" + suffix + (keep_pool ? "pool:kept/" : "pool:default/") + size).c_str(),
          [n, keep_pool](benchmark::State& state) { bm_prepare<T>(state, n, keep_pool); })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
    benchmark::RegisterBenchmark(("gpu_quantile_select/" + suffix + size).c_str(),
                                 [n](benchmark::State& state) { bm_select<T>(state, n); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("gpu_quantile_total/" + suffix + size).c_str(),
                                 [n](benchmark::State& state) { bm_total<T>(state, n); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> log2_sizes;
  try {
    log2_sizes = parse_log2_sizes(take_sizes_flag(argc, argv, "--quantile_log2n=", "DPSELECT_QUANTILE_BENCH_LOG2N"), "quantile sizes");
  } catch (const std::exception& error) {
    std::fprintf(stderr, "dpselect_bench_quantiles_gpu: %s\n", error.what());
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  begin_gpu_program("dpselect_bench_quantiles_gpu");
  register_type<float>("float", log2_sizes);
  register_type<double>("double", log2_sizes);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  teardown_gpu();
  return 0;
}
