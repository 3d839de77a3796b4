// SPDX-License-Identifier: Apache-2.0
// GPU benchmarks of partition selection over (user, key) pairs in device memory (Google
// Benchmark, CUDA): the target is select_partitions over 10^9 int64 pairs within 1.5x of a CUB
// radix sort of the pairs.
//
//   gpu_partitions_cub_sort/n:<n>   cub::DeviceRadixSort::SortKeys of the n pairs as 16-byte
//                                   records (user, then key: a decomposer over the two words)
//                                   into a second buffer, temp storage allocated once outside
//                                   the timed region: the baseline
//   gpu_partitions_select/n:<n>     select_partitions over the DeviceSpan users and keys
//                                   (truncated geometric, epsilon 1, delta 1e-6, max_partitions 1),
//                                   the released keys read back to the host
//   gpu_partitions_select_host/n:<n>    the same over the pairs in host memory (copied in)
//   gpu_partitions_chunked/n:<n>    the same over the pairs in host memory in about 4 chunks of whole
//                                   users (the path of pairs beyond the device's free memory,
//                                   forced here by the chunk test hook)
//
// Counters: items_per_second (pairs) and cub_sort_ratio = the mean time per iteration over the
// CUB sort's time for the same n (the median of 5 sorts, measured once per size).
//
// Timing: the sort on the benchmark's stream by CUDA events (L2 flushed before each); the
// selection by the host clock around the whole synchronizing call (it reads its counts and keys
// back between steps).
//
// Sizes: 2^k pairs for each k in --partitions_log2n=K1,K2,... (or DPSELECT_PARTITIONS_BENCH_LOG2N;
// default 20,24,27,30). k = 30 (1.07 x 10^9 pairs) needs about 16 GiB for the pairs and 48 GiB more
// at the selection's peak. Pairs: n / 4 users, user splitmix64(i) mod (n / 4), key floor(10^6 u^4)
// with u from splitmix64 (a few keys held by many users, most users over the bound), as the CPU
// benchmark's skewed shape.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>
#include <cuda/std/tuple>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bench_params.hpp"
#include "dpselect/context.hpp"
#include "dpselect/partition_selection.hpp"
#include "partition_selection/partition_passes.hpp"
#include "gpu_bench_support.cuh"

namespace {

using namespace dpselect_bench::gpu;

struct Pair {
  std::uint64_t user;
  std::uint64_t key;
};

struct PairDecomposer {
  __host__ __device__ ::cuda::std::tuple<std::uint64_t&, std::uint64_t&> operator()(Pair& pair) const {
    return {pair.user, pair.key};
  }
};

__global__ void fill_pairs_kernel(std::uint64_t* users, std::uint64_t* keys, Pair* pairs, std::uint64_t n) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t user_count = n / 4 > 0 ? n / 4 : 1;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const std::uint64_t user = splitmix64(2 * i) % user_count;
    const double u = static_cast<double>(splitmix64(2 * i + 1) >> 11) * 0x1p-53;
    const auto key = static_cast<std::uint64_t>(1e6 * u * u * u * u);
    users[i] = user;
    keys[i] = key;
    pairs[i] = Pair{user, key};
  }
}

// The pairs of size n, as two id arrays and as records; one size at a time (the largest fills most
// of the device).
struct DevicePairs {
  std::uint64_t n = 0;
  std::uint64_t* users = nullptr;
  std::uint64_t* keys = nullptr;
  Pair* pairs = nullptr;
  void release() {
    static_cast<void>(cudaFree(users));
    static_cast<void>(cudaFree(keys));
    static_cast<void>(cudaFree(pairs));
    *this = DevicePairs{};
  }
};

const DevicePairs& pairs_of(std::uint64_t n) {
  static DevicePairs held;
  if (held.n == n) return held;
  held.release();
  BENCH_CUDA_CHECK(cudaMalloc(&held.users, n * sizeof(std::uint64_t)));
  BENCH_CUDA_CHECK(cudaMalloc(&held.keys, n * sizeof(std::uint64_t)));
  BENCH_CUDA_CHECK(cudaMalloc(&held.pairs, n * sizeof(Pair)));
  dpselect::detail::launch_kernel<fill_pairs_kernel>(4096, 256, 0, env().stream, held.users, held.keys, held.pairs, n);
  BENCH_CUDA_CHECK(cudaGetLastError());
  BENCH_CUDA_CHECK(cudaStreamSynchronize(env().stream));
  held.n = n;
  return held;
}

cudaError_t cub_sort(void* temp, std::size_t& temp_bytes, Pair* in, Pair* out, std::uint64_t n) {
  if (n <= std::numeric_limits<std::uint32_t>::max()) {
    return cub::DeviceRadixSort::SortKeys(temp, temp_bytes, in, out, static_cast<std::uint32_t>(n), PairDecomposer{},
                                          env().stream);
  }
  return cub::DeviceRadixSort::SortKeys(temp, temp_bytes, in, out, n, PairDecomposer{}, env().stream);
}

double cub_sort_seconds(std::uint64_t n) {
  static std::map<std::uint64_t, double> measured;
  if (const auto found = measured.find(n); found != measured.end()) return found->second;
  const DevicePairs& data = pairs_of(n);
  DeviceBuffer out(n * sizeof(Pair));
  std::size_t temp_bytes = 0;
  BENCH_CUDA_CHECK(cub_sort(nullptr, temp_bytes, data.pairs, static_cast<Pair*>(out.data), n));
  DeviceBuffer temp(temp_bytes);
  std::vector<double> seconds;
  for (int repetition = 0; repetition < 6; ++repetition) {  // the first warms up
    seconds.push_back(timed_sort(
        [&] { BENCH_CUDA_CHECK(cub_sort(temp.data, temp_bytes, data.pairs, static_cast<Pair*>(out.data), n)); }));
  }
  seconds.erase(seconds.begin());
  std::nth_element(seconds.begin(), seconds.begin() + 2, seconds.end());
  return measured[n] = seconds[2];
}

void bm_cub_sort(benchmark::State& state, std::uint64_t n) {
  guarded(state, [&](benchmark::State& st) {
    const DevicePairs& data = pairs_of(n);
    DeviceBuffer out(n * sizeof(Pair));
    std::size_t temp_bytes = 0;
    BENCH_CUDA_CHECK(cub_sort(nullptr, temp_bytes, data.pairs, static_cast<Pair*>(out.data), n));
    DeviceBuffer temp(temp_bytes);
    for (auto _ : st) {
      st.SetIterationTime(timed_sort(
          [&] { BENCH_CUDA_CHECK(cub_sort(temp.data, temp_bytes, data.pairs, static_cast<Pair*>(out.data), n)); }));
    }
    report(st, n, 0);
  });
}

// The pairs of size n in host memory (the device's, copied back once per size).
struct HostPairs {
  std::uint64_t n = 0;
  std::vector<std::uint64_t> users;
  std::vector<std::uint64_t> keys;
};

const HostPairs& host_pairs_of(std::uint64_t n) {
  static HostPairs held;
  if (held.n == n) return held;
  const DevicePairs& data = pairs_of(n);
  held.users.resize(n);
  held.keys.resize(n);
  BENCH_CUDA_CHECK(cudaMemcpy(held.users.data(), data.users, n * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
  BENCH_CUDA_CHECK(cudaMemcpy(held.keys.data(), data.keys, n * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
  held.n = n;
  return held;
}

// Where the timed selections read their pairs.
enum class PairsIn { device, host, host_in_chunks };

void bm_select(benchmark::State& state, std::uint64_t n, PairsIn pairs_in) {
  guarded(state, [&](benchmark::State& st) {
    const double baseline = cub_sort_seconds(n);
    const DevicePairs& data = pairs_of(n);
    dpselect::Context context = dpselect::Context::with_fixed_seed(dpselect_bench::kContextSeed);
    const dpselect::PartitionSelectionParams params{1.0, 1e-6, 1, dpselect::PartitionStrategy::truncated_geometric,
                                                    dpselect::Backend::Gpu};
    const HostPairs* host = pairs_in == PairsIn::device ? nullptr : &host_pairs_of(n);
    const std::uint64_t chunk_pairs = pairs_in == PairsIn::host_in_chunks ? (n + 3) / 4 : 0;
    dpselect::detail::set_partition_chunk_pairs_for_testing(chunk_pairs);
    struct ChunksReset {
      ~ChunksReset() { dpselect::detail::set_partition_chunk_pairs_for_testing(0); }
    } reset_after;  // also after an exception
    double total = 0.0;
    std::uint64_t released = 0;
    for (auto _ : st) {
      const auto start = std::chrono::steady_clock::now();
      released = host != nullptr
                     ? dpselect::select_partitions(context, host->users, host->keys, params).keys.size()
                     : dpselect::select_partitions(context, dpselect::DeviceSpan<const std::uint64_t>{data.users, n},
                                                   dpselect::DeviceSpan<const std::uint64_t>{data.keys, n}, params,
                                                   env().stream)
                           .keys.size();
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      st.SetIterationTime(seconds);
      total += seconds;
    }
    report(st, n, 0);
    st.counters["keys_released"] = static_cast<double>(released);
    if (st.iterations() > 0) st.counters["cub_sort_ratio"] = total / static_cast<double>(st.iterations()) / baseline;
  });
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> log2_sizes;
  try {
    log2_sizes = parse_log2_sizes(
        take_sizes_flag(argc, argv, "--partitions_log2n=", "DPSELECT_PARTITIONS_BENCH_LOG2N"), "partition sizes");
  } catch (const std::exception& error) {
    std::fprintf(stderr, "dpselect_bench_partitions_gpu: %s\n", error.what());
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  begin_gpu_program("dpselect_bench_partitions_gpu");
  for (const int log2n : log2_sizes) {  // one size's pairs at a time: both benchmarks of a size together
    const std::uint64_t n = std::uint64_t{1} << log2n;
    const std::string size = "n:" + std::to_string(n);
    benchmark::RegisterBenchmark(("gpu_partitions_cub_sort/" + size).c_str(), bm_cub_sort, n)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    const std::pair<const char*, PairsIn> selections[] = {{"gpu_partitions_select/", PairsIn::device},
                                                          {"gpu_partitions_select_host/", PairsIn::host},
                                                          {"gpu_partitions_chunked/", PairsIn::host_in_chunks}};
    for (const auto& [name, pairs_in] : selections) {
      benchmark::RegisterBenchmark((name + size).c_str(), bm_select, n, pairs_in)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  teardown_gpu();
  return 0;
}
