// SPDX-License-Identifier: Apache-2.0
// CPU benchmarks of dpselect (Google Benchmark).
//
//   cpu_select/<type>/<mechanism>/n:<n>    dpselect::select over a host utility array,
//                                          Backend::Cpu (all OpenMP threads); also n:1 (double,
//                                          exponential, ChaCha20): the cost of a call
//   cpu_functor/<mechanism>/n:<n>          dpselect::select_functor over a cheap quadratic
//                                          utility computed on the fly, Backend::Cpu
//   cpu_rows/float/rows:<r>/cols:<c>       select_rows over an r x c host matrix, Backend::Cpu;
//                                          r = 16384, c = 8: the cost of a release
//   cpu_repeated/double/n:8/releases:<r>   select_repeated: r releases over one row of 8
//                                          (the auditor's shape), Backend::Cpu
//   cpu_noise/<transform>                  one Philox block -> one noise draw, single thread
//   cpu_noise/chacha20_block               one ChaCha20 position (a quarter of a 20-round
//                                          block) per item, single thread, for comparison
//   cpu_pricing/...                        private pricing (pricing_cpu_bench.cpp)
//
// Selections run on OpenMP threads, so every selection benchmark uses wall-clock time
// (UseRealTime): items_per_second, bytes_per_second and candidates_per_s are per second of
// wall time, not per second of the benchmark thread's CPU time.
//
// The contexts are fixed-seed (reproducible noise); never use one for a real release.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "bench_params.hpp"
#include "dpselect/chacha20.hpp"
#include "dpselect/dpselect.hpp"
#include "partition_selection_bench.hpp"
#include "pricing_bench.hpp"
#include "quantile_bench.hpp"
#include "noise_vector_bench.hpp"
#include "sparse_vector_bench.hpp"

namespace {

using dpselect_bench::kContextSeed;
using dpselect_bench::kDataSeed;
using dpselect_bench::kGenerators;
using dpselect_bench::kMechanisms;


// Candidate counts for the selection benchmarks: powers of two and one odd size (the odd size
// exercises the ragged last chunk).
const std::vector<std::uint64_t> kSizes = {std::uint64_t{1} << 16, std::uint64_t{1} << 20,
                                           std::uint64_t{1} << 24, 1'000'003};


dpselect::SelectionParams cpu_params(dpselect::Mechanism mechanism) {
  return dpselect_bench::bench_params(mechanism, dpselect::Backend::Cpu);
}

// Utilities uniform in [0, 1000), generated once per (type, size) and kept for the process
// (the benchmark function is called several times while Google Benchmark sizes the run).
template <class T>
const std::vector<T>& utilities(std::uint64_t n) {
  static std::map<std::uint64_t, std::unique_ptr<std::vector<T>>> cache;
  auto& slot = cache[n];
  if (!slot) {
    std::mt19937_64 rng(kDataSeed ^ n);
    std::uniform_real_distribution<T> dist(T(0), T(1000));
    slot = std::make_unique<std::vector<T>>(n);
    for (T& value : *slot) value = dist(rng);
  }
  return *slot;
}

void report_throughput(benchmark::State& state, std::uint64_t n, std::uint64_t bytes_per_item) {
  const auto items = static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(n);
  state.SetItemsProcessed(items);
  if (bytes_per_item != 0) state.SetBytesProcessed(items * static_cast<std::int64_t>(bytes_per_item));
  state.counters["candidates_per_s"] =
      benchmark::Counter(static_cast<double>(items), benchmark::Counter::kIsRate);
  state.counters["n"] = static_cast<double>(n);
}

template <class T>
void bm_select_array(benchmark::State& state, dpselect::Mechanism mechanism, dpselect::Generator generator,
                     std::uint64_t n) {
  try {
    const std::vector<T>& data = utilities<T>(n);
    const std::span<const T> span(data.data(), data.size());
    dpselect::Context ctx = dpselect::Context::with_fixed_seed(kContextSeed, generator);
    const dpselect::SelectionParams params = cpu_params(mechanism);
    for (auto _ : state) {
      // Each call draws a fresh stream of the context: fresh noise every iteration.
      const dpselect::Selection selection = dpselect::select(ctx, span, params);
      benchmark::DoNotOptimize(selection.index);
    }
    report_throughput(state, n, sizeof(T));
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// A cheap utility: -(i - n/3)^2 scaled into [-1000, 0].
struct Quadratic {
  double peak;
  double inv_n;
  double operator()(std::uint64_t i) const {
    const double d = (static_cast<double>(i) - peak) * inv_n;
    return -1000.0 * d * d;
  }
};

void bm_select_functor(benchmark::State& state, dpselect::Mechanism mechanism, dpselect::Generator generator,
                       std::uint64_t n) {
  try {
    const Quadratic utility{static_cast<double>(n / 3), 1.0 / static_cast<double>(n)};
    dpselect::Context ctx = dpselect::Context::with_fixed_seed(kContextSeed, generator);
    const dpselect::SelectionParams params = cpu_params(mechanism);
    for (auto _ : state) {
      const dpselect::Selection selection =
          dpselect::select_functor(ctx, utility, dpselect::IndexRange{0, n}, params);
      benchmark::DoNotOptimize(selection.index);
    }
    report_throughput(state, n, 0);  // nothing is read from memory
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// One-shot top-k (exponential mechanism) over n host floats, Backend::Cpu, all threads.
void bm_top_k(benchmark::State& state, std::uint64_t k, std::uint64_t n) {
  try {
    const std::vector<float>& data = utilities<float>(n);
    dpselect::Context ctx = dpselect::Context::with_fixed_seed(kContextSeed);
    dpselect::TopKParams params;
    params.selection = cpu_params(dpselect::Mechanism::exponential);
    params.k = k;
    for (auto _ : state) {
      const dpselect::TopKSelection top = dpselect::select_top_k(ctx, std::span<const float>(data), params);
      benchmark::DoNotOptimize(top.indices.data());
    }
    report_throughput(state, n, sizeof(float));
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// select_rows over a rows x cols host matrix (one release per row), Backend::Cpu, all threads.
void bm_rows(benchmark::State& state, std::uint64_t rows, std::uint64_t cols) {
  try {
    const std::vector<float>& data = utilities<float>(rows * cols);
    dpselect::Context ctx = dpselect::Context::with_fixed_seed(kContextSeed);
    const dpselect::SelectionParams params = cpu_params(dpselect::Mechanism::exponential);
    for (auto _ : state) {
      const dpselect::RowsSelection picks =
          dpselect::select_rows(ctx, dpselect::HostMatrix<const float>{data.data(), rows, cols}, params);
      benchmark::DoNotOptimize(picks.selections.data());
    }
    report_throughput(state, rows * cols, sizeof(float));
    state.counters["releases_per_s"] =
        benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsIterationInvariantRate);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// select_repeated: many releases over one short row (the auditor's shape), Backend::Cpu. Per
// release this is mostly bookkeeping, so it times the cost of a release, not of a candidate.
void bm_repeated(benchmark::State& state, std::uint64_t cols, std::uint64_t releases) {
  try {
    std::vector<double> row(cols);
    for (std::uint64_t i = 0; i < cols; ++i) row[i] = static_cast<double>(i % 3);
    dpselect::Context ctx = dpselect::Context::with_fixed_seed(kContextSeed);
    const dpselect::SelectionParams params = cpu_params(dpselect::Mechanism::exponential);
    for (auto _ : state) {
      const dpselect::RowsSelection picks =
          dpselect::select_repeated(ctx, std::span<const double>(row), params, releases);
      benchmark::DoNotOptimize(picks.selections.data());
    }
    state.counters["releases_per_s"] =
        benchmark::Counter(static_cast<double>(releases), benchmark::Counter::kIsIterationInvariantRate);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// Raw transforms, one thread. Each iteration draws a batch of kBatch blocks at consecutive
// positions of one stream, as the selection loop does.
constexpr std::uint64_t kBatch = 1024;
constexpr dpselect::PhiloxKey kKey = dpselect::PhiloxKey::from_seed(0x0123456789abcdefull);
constexpr dpselect::ChaChaKey kChaChaKey = dpselect::ChaChaKey::from_seed(0x0123456789abcdefull);
constexpr std::uint64_t kStream = 7;

enum class Transform { philox_block, chacha20_block, uniform_open, exponential, gumbel, laplace };

template <Transform kTransform>
void bm_noise(benchmark::State& state) {
  std::uint64_t position = 0;
  for (auto _ : state) {
    for (std::uint64_t k = 0; k < kBatch; ++k, ++position) {
      // chacha20_random_block computes a whole 64-byte block per position: what a caller
      // that reads positions independently (as the kernels do) pays.
      const dpselect::RandomBlock bits =
          kTransform == Transform::chacha20_block
              ? dpselect::chacha20_random_block(kChaChaKey, kStream, position)
              : dpselect::philox_block(kKey, kStream, position);
      if constexpr (kTransform == Transform::philox_block ||
                    kTransform == Transform::chacha20_block) {
        benchmark::DoNotOptimize(bits);
      } else if constexpr (kTransform == Transform::uniform_open) {
        benchmark::DoNotOptimize(dpselect::noise::uniform_open(bits));
      } else if constexpr (kTransform == Transform::exponential) {
        benchmark::DoNotOptimize(dpselect::noise::exponential(bits));
      } else if constexpr (kTransform == Transform::gumbel) {
        benchmark::DoNotOptimize(dpselect::noise::gumbel(bits));
      } else {
        benchmark::DoNotOptimize(dpselect::noise::laplace(bits));
      }
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(kBatch));
}

std::string size_label(std::uint64_t n) { return "n:" + std::to_string(n); }

void register_all() {
  for (const std::uint64_t n : kSizes) {
    for (const dpselect::Mechanism mechanism : kMechanisms) {
      for (const dpselect::Generator generator : kGenerators) {
        const std::string suffix = std::string(dpselect::to_string(mechanism)) + "/" +
                                   std::string(dpselect::to_string(generator)) + "/" + size_label(n);
        benchmark::RegisterBenchmark(("cpu_select/float/" + suffix).c_str(),
                                     [mechanism, generator, n](benchmark::State& state) {
                                       bm_select_array<float>(state, mechanism, generator, n);
                                     })
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("cpu_select/double/" + suffix).c_str(),
                                     [mechanism, generator, n](benchmark::State& state) {
                                       bm_select_array<double>(state, mechanism, generator, n);
                                     })
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
  // 2^30 float32 (4 GiB): the GPU benchmarks' headline size, for the GPU against the CPU.
  for (const dpselect::Mechanism mechanism : kMechanisms) {
    for (const dpselect::Generator generator : kGenerators) {
      const std::uint64_t n = std::uint64_t{1} << 30;
      benchmark::RegisterBenchmark(("cpu_select/float/" + std::string(dpselect::to_string(mechanism)) + "/" +
                                    std::string(dpselect::to_string(generator)) + "/" + size_label(n))
                                       .c_str(),
                                   [mechanism, generator, n](benchmark::State& state) {
                                     bm_select_array<float>(state, mechanism, generator, n);
                                   })
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  // One candidate: what a call costs beyond its candidates. bench/python_overhead.py compares it
  // (and n = 2^16) with the same release called from Python.
  benchmark::RegisterBenchmark("cpu_select/double/exponential/chacha20/n:1",
                               [](benchmark::State& state) {
                                 bm_select_array<double>(state, dpselect::Mechanism::exponential,
                                                         dpselect::Generator::chacha20, 1);
                               })
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  for (const std::uint64_t n : kSizes) {
    for (const dpselect::Mechanism mechanism : kMechanisms) {
      for (const dpselect::Generator generator : kGenerators) {
        benchmark::RegisterBenchmark(("cpu_functor/" + std::string(dpselect::to_string(mechanism)) + "/" +
                                      std::string(dpselect::to_string(generator)) + "/" + size_label(n))
                                         .c_str(),
                                     [mechanism, generator, n](benchmark::State& state) {
                                       bm_select_functor(state, mechanism, generator, n);
                                     })
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
  for (const std::uint64_t k : {1u, 16u, 128u, 1024u}) {
    const std::uint64_t n = std::uint64_t{1} << 24;
    benchmark::RegisterBenchmark(("cpu_top_k/float/k:" + std::to_string(k) + "/" + size_label(n)).c_str(),
                                 [k, n](benchmark::State& state) { bm_top_k(state, k, n); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  for (const std::uint64_t rows : {16u, 256u}) {
    const std::uint64_t cols = std::uint64_t{1} << 15;
    benchmark::RegisterBenchmark(
        ("cpu_rows/float/rows:" + std::to_string(rows) + "/cols:" + std::to_string(cols)).c_str(),
        [rows, cols](benchmark::State& state) { bm_rows(state, rows, cols); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  // Rows of few candidates (a batch of small private choices): the cost of a release, not of a
  // candidate, as for select_repeated below.
  benchmark::RegisterBenchmark("cpu_rows/float/rows:16384/cols:8",
                               [](benchmark::State& state) { bm_rows(state, 16384, 8); })
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("cpu_repeated/double/n:8/releases:65536",
                               [](benchmark::State& state) { bm_repeated(state, 8, 65536); })
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("cpu_noise/philox_block", bm_noise<Transform::philox_block>);
  benchmark::RegisterBenchmark("cpu_noise/chacha20_block", bm_noise<Transform::chacha20_block>);
  benchmark::RegisterBenchmark("cpu_noise/uniform_open", bm_noise<Transform::uniform_open>);
  benchmark::RegisterBenchmark("cpu_noise/exponential", bm_noise<Transform::exponential>);
  benchmark::RegisterBenchmark("cpu_noise/gumbel", bm_noise<Transform::gumbel>);
  benchmark::RegisterBenchmark("cpu_noise/laplace", bm_noise<Transform::laplace>);
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  register_pricing_benchmarks();
  register_quantile_benchmarks();
  register_partition_selection_benchmarks();
  register_sparse_vector_benchmarks();
  register_noise_vector_benchmarks();
  benchmark::AddCustomContext("dpselect_backend", "cpu");
  benchmark::AddCustomContext("omp_max_threads", std::to_string(omp_get_max_threads()));
  benchmark::AddCustomContext("hardware_concurrency",
                              std::to_string(std::thread::hardware_concurrency()));
  benchmark::AddCustomContext("dpselect_built_with_cuda",
                              dpselect::built_with_cuda() ? "true" : "false");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
