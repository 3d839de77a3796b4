// SPDX-License-Identifier: Apache-2.0
// GPU benchmarks of the batched entry points and pricing (part of dpselect_bench_gpu).
//
//   gpu_rows/float/rows:<r>/cols:<c>        dpselect::select_rows over a DeviceMatrix<const float>:
//                                           r releases, one per row, in one launch; bytes = the
//                                           matrix (compare with gpu_read of the same bytes)
//   gpu_repeated/double/n:<n>/releases:<m>  dpselect::select_repeated over n host utilities (the
//                                           auditor's batches): releases per second
//   gpu_top_k/float/k:<k>/n:<n>             dpselect::select_top_k over a DeviceSpan<const float>
//   gpu_pricing/per_price/bids:<b>/prices:<m>   dpselect::select_price over a grid of m prices
//                                           with Backend::Gpu (revenue computed in the fused pass)
//
// Timing as in select_gpu_bench.cu: CUDA events on the benchmark stream, L2 flushed before each
// iteration; every call is a complete set of releases that returns its results to the host.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gpu_bench_support.cuh"
#include "dpselect/pricing.hpp"
#include "dpselect/rows.hpp"
#include "dpselect/top_k.hpp"

namespace dpselect_bench::gpu {
namespace {

void bm_rows(benchmark::State& state, std::uint64_t rows, std::uint64_t cols) {
  guarded(state, [&](benchmark::State& st) {
    const std::uint64_t n = rows * cols;
    const dpselect::DeviceMatrix<const float> matrix{device_array<float>(n), rows, cols};
    dpselect::Context ctx = dpselect::Context::with_fixed_seed(kContextSeed);
    const dpselect::SelectionParams params = gpu_params(dpselect::Mechanism::exponential);
    for (auto _ : st) {
      flush_l2();
      record_start();
      const dpselect::RowsSelection picks = dpselect::select_rows(ctx, matrix, params, env().stream);
      const double seconds = record_stop_seconds();
      if (picks.selections.size() != rows || picks.selections.back().report.executed_on != dpselect::ExecutedOn::gpu) {
        st.SkipWithError("select_rows did not return one GPU release per row");
        break;
      }
      st.SetIterationTime(seconds);
    }
    report(st, n, n * sizeof(float));
    st.counters["rows"] = static_cast<double>(rows);
  });
}

void bm_repeated(benchmark::State& state, std::uint64_t n, std::uint64_t releases) {
  guarded(state, [&](benchmark::State& st) {
    std::vector<double> utilities(n);
    for (std::uint64_t i = 0; i < n; ++i) utilities[i] = static_cast<double>(i % 3);
    dpselect::Context ctx = dpselect::Context::with_fixed_seed(kContextSeed);
    const dpselect::SelectionParams params = gpu_params(dpselect::Mechanism::exponential);
    for (auto _ : st) {
      record_start();
      const dpselect::RowsSelection picks =
          dpselect::select_repeated(ctx, std::span<const double>(utilities), params, releases);
      const double seconds = record_stop_seconds();
      benchmark::DoNotOptimize(picks.selections.data());
      st.SetIterationTime(seconds);
    }
    st.counters["releases_per_s"] =
        benchmark::Counter(static_cast<double>(st.iterations() * releases), benchmark::Counter::kIsRate);
  });
}

// One-shot top-k over n device floats (compare with gpu_select/float/exponential at the same n).
void bm_top_k(benchmark::State& state, std::uint64_t k, std::uint64_t n) {
  guarded(state, [&](benchmark::State& st) {
    const dpselect::DeviceSpan<const float> span{device_array<float>(n), n};
    dpselect::Context ctx = dpselect::Context::with_fixed_seed(kContextSeed);
    dpselect::TopKParams params;
    params.selection = gpu_params(dpselect::Mechanism::exponential);
    params.k = k;
    for (auto _ : st) {
      flush_l2();
      record_start();
      const dpselect::TopKSelection top = dpselect::select_top_k(ctx, span, params, env().stream);
      const double seconds = record_stop_seconds();
      if (top.indices.size() != k || top.report.per_pick.executed_on != dpselect::ExecutedOn::gpu) {
        st.SkipWithError("select_top_k did not return k indices from the GPU");
        break;
      }
      st.SetIterationTime(seconds);
    }
    report(st, n, n * sizeof(float));
  });
}

void bm_pricing(benchmark::State& state, std::uint64_t bids, std::uint64_t prices) {
  guarded(state, [&](benchmark::State& st) {
    const dpselect::Bids& data = lognormal_bids(bids);
    const dpselect::PriceGrid grid{0.01, 400.0, (400.0 - 0.01) / static_cast<double>(prices - 1)};
    dpselect::PricingParams params;
    params.epsilon = 1.0;
    params.backend = dpselect::Backend::Gpu;
    params.grid_sampler = dpselect::GridSampler::per_price_noise;
    params.max_bidders = 2 * bids;
    dpselect::Context ctx = dpselect::Context::with_fixed_seed(kContextSeed);
    for (auto _ : st) {
      record_start();
      const dpselect::PriceSelection pick = dpselect::select_price(ctx, data, grid, params);
      const double seconds = record_stop_seconds();
      if (pick.report.executed_on != dpselect::ExecutedOn::gpu) {
        st.SkipWithError("select_price did not run on the GPU");
        break;
      }
      st.SetIterationTime(seconds);
    }
    report(st, grid.size(), 0);
  });
}

}  // namespace

void register_batched_benchmarks() {
  // select_rows: 1 ... 4096 rows x 32k ... 256k columns (32 x 256k: a decoding batch over a large
  // vocabulary).
  for (const std::uint64_t rows : {1u, 16u, 32u, 256u, 4096u}) {
    for (const std::uint64_t cols : {std::uint64_t{1} << 15, std::uint64_t{1} << 17, std::uint64_t{1} << 18}) {
      benchmark::RegisterBenchmark(("gpu_rows/float/rows:" + std::to_string(rows) + "/cols:" + std::to_string(cols)).c_str(),
                                   [=](benchmark::State& state) { bm_rows(state, rows, cols); })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
  for (const std::uint64_t n : {std::uint64_t{1} << 24, std::uint64_t{1} << 30}) {
    for (const std::uint64_t k : {1u, 16u, 128u, 1024u}) {
      benchmark::RegisterBenchmark(("gpu_top_k/float/k:" + std::to_string(k) + "/n:" + std::to_string(n)).c_str(),
                                   [=](benchmark::State& state) { bm_top_k(state, k, n); })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
  for (const std::uint64_t releases : {std::uint64_t{1} << 16, std::uint64_t{1} << 20}) {
    benchmark::RegisterBenchmark(("gpu_repeated/double/n:8/releases:" + std::to_string(releases)).c_str(),
                                 [=](benchmark::State& state) { bm_repeated(state, 8, releases); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  for (const std::uint64_t prices : {std::uint64_t{100'000'000}, std::uint64_t{1'000'000'000}, std::uint64_t{10'000'000'000}}) {
    benchmark::RegisterBenchmark(("gpu_pricing/per_price/bids:1000000/prices:" + std::to_string(prices)).c_str(),
                                 [=](benchmark::State& state) { bm_pricing(state, 1'000'000, prices); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace dpselect_bench::gpu
