// SPDX-License-Identifier: Apache-2.0
// CPU benchmarks of partition selection (registered by select_cpu_bench.cpp's main), each next to
// its baseline in the same run:
//
//   cpu_partitions/parallel_sort/<shape>/n:<n>   the baseline: the n (user, key) pairs copied
//                                                 into one array and sorted on every core
//                                                 (libstdc++'s parallel mode, the sort the
//                                                 selection itself uses)
//   cpu_partitions/select/<shape>/n:<n>          select_partitions over the same pairs
//                                                 (truncated geometric, epsilon 1, delta 1e-6,
//                                                 max_partitions 1)
//   cpu_partitions/select_<strategy>/<shape>/n:<n>
//                                                 the weighted strategies (weighted_gaussian,
//                                                 policy_gaussian, dp_sips with its default 3
//                                                 rounds) over the same pairs, epsilon 1, delta
//                                                 1e-6, max_partitions 4
//
// Shapes, from a fixed seed, generated once outside the timed loop:
//   skewed          n / 4 users drawn at random, keys floor(10^6 u^4) (a few keys held by many
//                   users, most by few), so most users hold more than max_partitions keys
//   distinct_keys   every pair its own random 64-bit key: a coin per pair, the second sort as
//                   large as the first (the worst shape)
// pairs_per_s counts input pairs.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>
#if defined(__GLIBCXX__)
#include <parallel/algorithm>
#endif

#include "bench_params.hpp"
#include "dpselect/context.hpp"
#include "dpselect/partition_selection.hpp"
#include "partition_selection_bench.hpp"

namespace {

enum class Shape { skewed, distinct_keys };

struct Pairs {
  std::vector<std::uint64_t> users;
  std::vector<std::uint64_t> keys;
};

const Pairs& pairs_of(Shape shape, std::uint64_t n) {
  static std::map<std::pair<Shape, std::uint64_t>, std::unique_ptr<Pairs>> cache;
  auto& slot = cache[{shape, n}];
  if (!slot) {
    slot = std::make_unique<Pairs>();
    slot->users.resize(n);
    slot->keys.resize(n);
    std::mt19937_64 generator(dpselect_bench::kDataSeed ^ n ^ static_cast<std::uint64_t>(shape));
    const std::uint64_t users = std::max<std::uint64_t>(1, n / 4);
    for (std::uint64_t i = 0; i < n; ++i) {
      slot->users[i] = generator() % users;
      if (shape == Shape::skewed) {
        const double u = std::ldexp(static_cast<double>(generator() >> 11), -53);
        slot->keys[i] = static_cast<std::uint64_t>(1e6 * u * u * u * u);
      } else {
        slot->keys[i] = generator();
      }
    }
  }
  return *slot;
}

void set_rate(benchmark::State& state, std::uint64_t n) {
  state.counters["pairs_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * static_cast<double>(n), benchmark::Counter::kIsRate);
}

struct Pair {
  std::uint64_t user;
  std::uint64_t key;
  friend bool operator<(const Pair& a, const Pair& b) { return a.user != b.user ? a.user < b.user : a.key < b.key; }
};

void bm_parallel_sort(benchmark::State& state, Shape shape, std::uint64_t n) {
  const Pairs& pairs = pairs_of(shape, n);
  std::vector<Pair> sorted(n);
  for (auto _ : state) {
    for (std::uint64_t i = 0; i < n; ++i) sorted[i] = {pairs.users[i], pairs.keys[i]};
#if defined(__GLIBCXX__)
    __gnu_parallel::sort(sorted.begin(), sorted.end());
#else
    std::sort(sorted.begin(), sorted.end());
#endif
    benchmark::DoNotOptimize(sorted.data());
    benchmark::ClobberMemory();
  }
  set_rate(state, n);
}

void bm_select_with(benchmark::State& state, Shape shape, std::uint64_t n,
                    const dpselect::PartitionSelectionParams& params) {
  try {
    const Pairs& pairs = pairs_of(shape, n);
    dpselect::Context context = dpselect::Context::with_fixed_seed(dpselect_bench::kContextSeed);
    std::uint64_t released = 0;
    for (auto _ : state) {
      released = dpselect::select_partitions(context, pairs.users, pairs.keys, params).keys.size();
      benchmark::DoNotOptimize(released);
    }
    set_rate(state, n);
    state.counters["keys_released"] = static_cast<double>(released);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void bm_select(benchmark::State& state, Shape shape, std::uint64_t n) {
  bm_select_with(state, shape, n, {1.0, 1e-6, 1, dpselect::PartitionStrategy::truncated_geometric});
}

template <dpselect::PartitionStrategy strategy>
void bm_select_weighted(benchmark::State& state, Shape shape, std::uint64_t n) {
  bm_select_with(state, shape, n, {1.0, 1e-6, 4, strategy});
}

}  // namespace

void register_partition_selection_benchmarks() {
  const std::pair<Shape, const char*> shapes[] = {{Shape::skewed, "skewed"}, {Shape::distinct_keys, "distinct_keys"}};
  for (const auto& [shape, name] : shapes) {
    for (const std::uint64_t n : {std::uint64_t{1000000}, std::uint64_t{10000000}, std::uint64_t{100000000}}) {
      const std::string size = n == 1000000 ? "1e6" : n == 10000000 ? "1e7" : "1e8";
      const int repetitions = n >= 100000000 ? 3 : 5;
      using dpselect::PartitionStrategy;
      for (const auto& [kind, run] :
           {std::pair{"parallel_sort", &bm_parallel_sort}, std::pair{"select", &bm_select},
            std::pair{"select_weighted_gaussian", &bm_select_weighted<PartitionStrategy::weighted_gaussian>},
            std::pair{"select_policy_gaussian", &bm_select_weighted<PartitionStrategy::policy_gaussian>},
            std::pair{"select_dp_sips", &bm_select_weighted<PartitionStrategy::dp_sips>}}) {
        benchmark::RegisterBenchmark((std::string("cpu_partitions/") + kind + "/" + name + "/n:" + size).c_str(), run,
                                     shape, n)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime()
            ->Iterations(1)
            ->Repetitions(repetitions)
            ->ReportAggregatesOnly(true);
      }
    }
  }
}
