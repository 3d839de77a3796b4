// SPDX-License-Identifier: Apache-2.0
// CPU benchmarks of private quantiles (registered by select_cpu_bench.cpp's main).
//
//   cpu_quantile/median/n:<n>           one median from raw host values: the sort of the grid
//                                       positions included (QuantileData + select_quantile)
//   cpu_quantile/release_only/n:<n>     one median from prepared data (the interval pass alone)
//   cpu_quantile/deciles/<method>/n:<n> nine deciles from prepared data, by each method
//
// Values are log-normal (median 20, sigma 1) from a fixed seed, generated once outside the timed
// loop; the range is [0, 1000]. The target: 10^8 values in under 2 s on 2 cores, sort
// included (cpu_quantile/median/n:1e8). values_per_s counts input values.
#include <benchmark/benchmark.h>

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_params.hpp"
#include "dpselect/quantiles.hpp"
#include "quantile_bench.hpp"

namespace {

constexpr dpselect::QuantileRange kRange{0.0, 1000.0};

const std::vector<double>& lognormal_values(std::uint64_t n) {
  static std::map<std::uint64_t, std::unique_ptr<std::vector<double>>> cache;
  auto& slot = cache[n];
  if (!slot) {
    slot = std::make_unique<std::vector<double>>(n);
    std::mt19937_64 generator(dpselect_bench::kDataSeed);
    std::lognormal_distribution<double> lognormal(std::log(20.0), 1.0);
    for (double& value : *slot) value = lognormal(generator);
  }
  return *slot;
}

dpselect::QuantileParams quantile_params() {
  dpselect::QuantileParams params;
  params.range = kRange;
  params.epsilon = 1.0;
  params.backend = dpselect::Backend::Cpu;
  return params;
}

void set_rate(benchmark::State& state, std::uint64_t n) {
  state.counters["values_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * static_cast<double>(n), benchmark::Counter::kIsRate);
}

void bm_median_with_sort(benchmark::State& state, std::uint64_t n) {
  try {
    const std::vector<double>& values = lognormal_values(n);
    dpselect::Context context = dpselect::Context::with_fixed_seed(dpselect_bench::kContextSeed);
    for (auto _ : state) {
      const dpselect::QuantileData data(std::span<const double>(values), kRange);
      benchmark::DoNotOptimize(dpselect::select_quantile(context, data, 0.5, quantile_params()).value);
    }
    set_rate(state, n);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void bm_median_release_only(benchmark::State& state, std::uint64_t n) {
  try {
    const dpselect::QuantileData data(std::span<const double>(lognormal_values(n)), kRange);
    dpselect::Context context = dpselect::Context::with_fixed_seed(dpselect_bench::kContextSeed);
    for (auto _ : state) {
      benchmark::DoNotOptimize(dpselect::select_quantile(context, data, 0.5, quantile_params()).value);
    }
    set_rate(state, n);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void bm_deciles(benchmark::State& state, std::uint64_t n, dpselect::QuantilesMethod method) {
  try {
    const dpselect::QuantileData data(std::span<const double>(lognormal_values(n)), kRange);
    dpselect::Context context = dpselect::Context::with_fixed_seed(dpselect_bench::kContextSeed);
    dpselect::QuantilesParams params;
    params.base = quantile_params();
    params.method = method;
    params.delta = method == dpselect::QuantilesMethod::independent_zcdp ? 1e-6 : 0.0;
    const std::vector<double> deciles = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
    for (auto _ : state) {
      benchmark::DoNotOptimize(dpselect::select_quantiles(context, data, deciles, params).values.data());
    }
    set_rate(state, n);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

std::string count_label(std::uint64_t n) {
  return "1e" + std::to_string(static_cast<int>(std::lround(std::log10(static_cast<double>(n)))));
}

}  // namespace

void register_quantile_benchmarks() {
  for (const std::uint64_t n : {std::uint64_t{1'000'000}, std::uint64_t{10'000'000}, std::uint64_t{100'000'000}}) {
    benchmark::RegisterBenchmark(("cpu_quantile/median/n:" + count_label(n)).c_str(),
                                 [=](benchmark::State& state) { bm_median_with_sort(state, n); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("cpu_quantile/release_only/n:" + count_label(n)).c_str(),
                                 [=](benchmark::State& state) { bm_median_release_only(state, n); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  using dpselect::QuantilesMethod;
  for (const QuantilesMethod method : {QuantilesMethod::joint_exponential, QuantilesMethod::recursive_splitting,
                                      QuantilesMethod::independent_basic, QuantilesMethod::independent_zcdp}) {
    for (const std::uint64_t n : {std::uint64_t{100'000}, std::uint64_t{1'000'000}}) {
      benchmark::RegisterBenchmark(
          ("cpu_quantile/deciles/" + std::string(dpselect::to_string(method)) + "/n:" + count_label(n)).c_str(),
          [=](benchmark::State& state) { bm_deciles(state, n, method); })
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
}
