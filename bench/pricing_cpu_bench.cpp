// SPDX-License-Identifier: Apache-2.0
// CPU benchmarks of private pricing (registered by select_cpu_bench.cpp's main).
//
//   cpu_pricing/per_price/bids:<n>/prices:<m>      grid, per-price noise (the fused pass)
//   cpu_pricing/bid_intervals/bids:<n>/prices:<m>  the same grid sampled by bid intervals
//   cpu_pricing/range/bids:<n>                     the continuous range (2^40 + 1 prices)
//
// Bids are log-normal (median 20, sigma 1, as in `dpselect demo`) and sorted once outside the
// timed loop; prices span [0.01, 400]. candidates_per_s counts grid prices, so the two grid
// samplers are compared on the same candidate set; bids_per_s is the bid-interval sampler's work.
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>
#include <vector>

#include "bench_params.hpp"
#include "dpselect/pricing.hpp"
#include "pricing_bench.hpp"

namespace {

dpselect::PricingParams pricing_params(dpselect::GridSampler sampler, std::uint64_t bids) {
  dpselect::PricingParams params;
  params.epsilon = 1.0;
  params.backend = dpselect::Backend::Cpu;
  params.grid_sampler = sampler;
  params.max_bidders = 2 * bids;  // a public bound: data-independent slack, as in real use
  return params;
}

template <class Candidates>
void bm_pricing(benchmark::State& state, std::uint64_t bids, const Candidates& candidates,
                std::uint64_t prices, dpselect::GridSampler sampler) {
  try {
    const dpselect::Bids& data = dpselect_bench::lognormal_bids(bids);
    dpselect::Context context = dpselect::Context::with_fixed_seed(dpselect_bench::kContextSeed);
    const dpselect::PricingParams params = pricing_params(sampler, bids);
    for (auto _ : state) {
      const dpselect::PriceSelection pick = dpselect::select_price(context, data, candidates, params);
      benchmark::DoNotOptimize(pick.price);
    }
    const double iterations = static_cast<double>(state.iterations());
    state.counters["candidates_per_s"] =
        benchmark::Counter(iterations * static_cast<double>(prices), benchmark::Counter::kIsRate);
    state.counters["bids_per_s"] =
        benchmark::Counter(iterations * static_cast<double>(bids), benchmark::Counter::kIsRate);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

std::string count_label(std::uint64_t n) {
  const int exponent = static_cast<int>(std::lround(std::log10(static_cast<double>(n))));
  return "1e" + std::to_string(exponent);
}

}  // namespace

void register_pricing_benchmarks() {
  using dpselect::GridSampler;
  constexpr std::uint64_t kBids[] = {1'000'000, 10'000'000};
  constexpr std::uint64_t kPrices[] = {100'000'000, 10'000'000'000};
  for (const std::uint64_t bids : kBids) {
    for (const std::uint64_t prices : kPrices) {
      const dpselect::PriceGrid grid{0.01, 400.0, (400.0 - 0.01) / static_cast<double>(prices - 1)};
      const std::string suffix = "/bids:" + count_label(bids) + "/prices:" + count_label(prices);
      for (const auto& [name, sampler] :
           {std::pair{"per_price", GridSampler::per_price_noise}, std::pair{"bid_intervals", GridSampler::bid_intervals}}) {
        benchmark::RegisterBenchmark(("cpu_pricing/" + std::string(name) + suffix).c_str(),
                                     [=](benchmark::State& state) { bm_pricing(state, bids, grid, grid.size(), sampler); })
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
    const dpselect::PriceRange range{0.0, 400.0};
    benchmark::RegisterBenchmark(("cpu_pricing/range/bids:" + count_label(bids)).c_str(),
                                 [=](benchmark::State& state) {
                                   bm_pricing(state, bids, range, range.grid().size(), GridSampler::bid_intervals);
                                 })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
}
