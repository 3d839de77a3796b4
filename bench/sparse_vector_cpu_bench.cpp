// SPDX-License-Identifier: Apache-2.0
// CPU benchmarks of the batched sparse vector (registered by select_cpu_bench.cpp's main).
//
//   cpu_sparse_vector/n:<n>   sparse_vector_batch over n query values in host memory, every one
//                             below the threshold (values in [0, 1000), T = 10^5): the full
//                             scan of the windowed parallel find-first, validation included.
#include <benchmark/benchmark.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "bench_params.hpp"
#include "dpselect/sparse_vector.hpp"
#include "sparse_vector_bench.hpp"

namespace {

const std::vector<double>& uniform_values(std::uint64_t n) {
  static std::map<std::uint64_t, std::vector<double>> cache;
  std::vector<double>& values = cache[n];
  if (values.empty()) {
    std::mt19937_64 rng(dpselect_bench::kDataSeed ^ n);
    std::uniform_real_distribution<double> dist(0.0, 1000.0);
    values.resize(n);
    for (double& value : values) value = dist(rng);
  }
  return values;
}

void bm_sparse_vector(benchmark::State& state, std::uint64_t n) {
  const std::vector<double>& values = uniform_values(n);
  dpselect::SparseVectorParams params;
  params.epsilon = 1.0;
  params.sensitivity = 1.0;
  params.threshold = 1e5;
  params.value_bound = 1000.0;
  dpselect::Context context = dpselect::Context::with_fixed_seed(dpselect_bench::kContextSeed);
  for (auto _ : state) {
    const dpselect::SparseVectorBatch batch = dpselect::sparse_vector_batch(context, values, params);
    if (batch.report.queries != n || !batch.above.empty()) {
      state.SkipWithError("the sparse vector did not scan every query below the threshold");
      break;
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(n));
  state.counters["queries_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * static_cast<double>(n), benchmark::Counter::kIsRate);
}

}  // namespace

void register_sparse_vector_benchmarks() {
  for (const std::uint64_t n : {std::uint64_t{1} << 20, std::uint64_t{10'000'000}, std::uint64_t{100'000'000}}) {
    benchmark::RegisterBenchmark(("cpu_sparse_vector/n:" + std::to_string(n)).c_str(),
                                 [n](benchmark::State& state) { bm_sparse_vector(state, n); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
}
