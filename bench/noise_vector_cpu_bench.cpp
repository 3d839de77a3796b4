// SPDX-License-Identifier: Apache-2.0
// CPU benchmarks of noise vectors (registered by select_cpu_bench.cpp's main).
//
//   cpu_noise_vector/<distribution>/<generator>/n:<n>   add_noise on n doubles in host memory,
//       all cores: the finiteness scan, the charge-free release and the noise pass (epsilon 1,
//       delta 1e-6 where needed, p = 1.5 for the generalized Gaussian). The generalized Gaussian's
//       calibration (cached by the library after its first call) is done before timing.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "bench_params.hpp"
#include "dpselect/noise_vector.hpp"
#include "noise_vector_bench.hpp"

namespace {

void bm_noise_vector(benchmark::State& state, dpselect::NoiseDistribution distribution,
                     dpselect::Generator generator, std::uint64_t n) {
  dpselect::NoiseVectorParams params;
  params.distribution = distribution;
  params.epsilon = 1.0;
  params.delta = distribution == dpselect::NoiseDistribution::laplace ? 0.0 : 1e-6;
  params.p = 1.5;
  params.backend = dpselect::Backend::Cpu;
  std::vector<double> values(n, 0.0);
  dpselect::noise_vector_scale(params, n);  // calibration outside the timed loop
  dpselect::Context context = dpselect::Context::with_fixed_seed(dpselect_bench::kContextSeed, generator);
  for (auto _ : state) {
    const dpselect::NoiseVectorReport report = dpselect::add_noise(context, values, params);
    benchmark::DoNotOptimize(report);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(n));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(n) * 16);
}

}  // namespace

void register_noise_vector_benchmarks() {
  for (const dpselect::NoiseDistribution distribution :
       {dpselect::NoiseDistribution::laplace, dpselect::NoiseDistribution::gaussian,
        dpselect::NoiseDistribution::generalized_gaussian}) {
    for (const dpselect::Generator generator : {dpselect::Generator::chacha20, dpselect::Generator::philox}) {
      for (const std::uint64_t n : {std::uint64_t{1} << 20, std::uint64_t{10'000'000}}) {
        benchmark::RegisterBenchmark(("cpu_noise_vector/" + std::string(dpselect::to_string(distribution)) + "/" +
                                      std::string(dpselect::to_string(generator)) + "/n:" + std::to_string(n))
                                         .c_str(),
                                     [=](benchmark::State& state) { bm_noise_vector(state, distribution, generator, n); })
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
}
