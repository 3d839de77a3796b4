// SPDX-License-Identifier: Apache-2.0
// Quantiles on the GPU give the CPU's bits (GPU machines only): positions sorted on the device
// against the host's, the interval pass (stage 1) against the CPU pass score for score, releases
// over device data and over host data with Backend::Gpu against Backend::Cpu, several quantiles
// over device data against host data, a NaN in device memory refused by index, the positions of
// float32 device data read back across the mapping's chunks, and the device data freed with them. Nothing here is statistical: every check is an equality that a
// single differing bit breaks. Compiled by nvcc (as a .cu copy) in CUDA builds; in CPU-only builds
// the tests are registered and skip.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dpselect/device_memory.hpp"
#include "dpselect/quantiles.hpp"
#include "dpselect/select.hpp"
#include "device/gpu.hpp"
#include "quantiles/gpu.hpp"
#include "quantiles/quantiles_internal.hpp"

#include "support/device_code.hpp"

#if DPSELECT_TEST_DEVICE_CODE
#include <cuda_runtime.h>
#endif

namespace {

#if !DPSELECT_TEST_DEVICE_CODE
TEST(QuantilesGpu, DevicePositionsEqualHostPositions) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(QuantilesGpu, IntervalPassEqualsCpuScoreForScore) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(QuantilesGpu, SameReleaseOnCpuAndGpu) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(QuantilesGpu, SeveralQuantilesOverDeviceDataEqualHost) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(QuantilesGpu, NanOnDeviceIsRefusedNamingItsIndex) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(QuantilesGpu, HostPointerIsRefused) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(QuantilesGpu, DevicePositionsAreFreedWithTheData) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(QuantilesGpu, FloatPositionsReadBackAcrossChunks) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(QuantilesGpu, PermuteAndFlipPassAndReleasesEqualCpu) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
#else

using dpselect::QuantileData;
using dpselect::QuantileRange;

// Host values copied to device memory for the test's lifetime.
template <class T>
class DeviceCopy {
 public:
  explicit DeviceCopy(const std::vector<T>& host) : size_(host.size()) {
    if (cudaMalloc(&data_, size_ * sizeof(T)) != cudaSuccess ||
        cudaMemcpy(data_, host.data(), size_ * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess) {
      throw std::runtime_error("test: cannot copy the values to the device");
    }
  }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  ~DeviceCopy() { cudaFree(data_); }
  dpselect::DeviceSpan<const T> span() const { return {data_, size_}; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

constexpr QuantileRange kRange{0.0, 1000.0};

// n values over [-100, 1100) around kRange (about 17% clipped), with ties (every 7th value repeats
// an earlier one) and, where n allows, the values whose positions are easiest to get wrong: +-inf,
// +-0, a denormal, the range's ends, a grid point and its neighbours, +-1e300 (inf as a float).
std::vector<double> test_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> uniform(-100.0, 1100.0);
  std::vector<double> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    values[i] = i >= 7 && i % 7 == 0 ? values[random() % i] : uniform(random);
  }
  const double on_grid = kRange.grid().point(123'456'789);
  const double special[] = {-std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::infinity(),
                            -0.0,
                            0.0,
                            1e-310,
                            kRange.lower,
                            kRange.upper,
                            on_grid,
                            std::nextafter(on_grid, 0.0),
                            std::nextafter(on_grid, 2000.0),
                            1e300,
                            -1e300};
  for (std::size_t k = 0; k < std::size(special) && k < n; ++k) values[(k * 7919 + 3) % n] = special[k];
  return values;
}

std::vector<float> as_floats(const std::vector<double>& values) {
  return std::vector<float>(values.begin(), values.end());
}

// Sizes: one value, a CUB single-tile sort, tile and group boundaries of the pass (1,024
// candidates a tile, so n + 1 intervals straddle one), and CUB's multi-pass sort (2^20 + 7).
constexpr std::size_t kSizes[] = {1, 2, 1023, 1024, 4099, (std::size_t{1} << 20) + 7};

dpselect::QuantileParams params_for(double epsilon, dpselect::Backend backend,
                                    dpselect::RecordNeighbours neighbours =
                                        dpselect::RecordNeighbours::replace_one_record) {
  dpselect::QuantileParams params;
  params.range = kRange;
  params.epsilon = epsilon;
  params.neighbours = neighbours;
  params.backend = backend;
  return params;
}

TEST(QuantilesGpu, DevicePositionsEqualHostPositions) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  // kRange, a range of huge magnitude, and one so narrow that the grid's step is raised to keep
  // consecutive points apart (fewer than 2^40 + 1 points).
  const QuantileRange ranges[] = {kRange, {-1e288, 1e288}, {1.0, 1.0 + 1e-9}};
  for (const QuantileRange& range : ranges) {
    for (const std::size_t n : kSizes) {
      std::vector<double> values = test_values(n, 11 + n);
      if (range.upper == 1.0 + 1e-9) {
        for (double& value : values) value = 1.0 + (value - 500.0) * 1e-12;
      }
      const QuantileData host(std::span<const double>(values), range);
      const DeviceCopy<double> device_values(values);
      const QuantileData device = QuantileData::from_device(device_values.span(), range, nullptr);
      EXPECT_TRUE(device.on_device());
      EXPECT_EQ(device.size(), n);
      EXPECT_EQ(device.grid().size, host.grid().size);
      EXPECT_EQ(device.sorted_positions(), host.sorted_positions()) << "double, n " << n << ", upper " << range.upper;

      const std::vector<float> floats = as_floats(values);
      const QuantileData host_floats(std::span<const float>(floats), range);
      const DeviceCopy<float> device_floats(floats);
      const QuantileData device_from_floats = QuantileData::from_device(device_floats.span(), range, nullptr);
      EXPECT_EQ(device_from_floats.sorted_positions(), host_floats.sorted_positions())
          << "float, n " << n << ", upper " << range.upper;
    }
  }
}

// float32 device data keep their sorted values; reading the positions back maps them on the
// device in chunks of 2^24, or on the host below 2^16 of them (kernels/quantiles.cu): all of them
// (across chunk ends), and windows from an offset read either way.
TEST(QuantilesGpu, FloatPositionsReadBackAcrossChunks) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  const std::size_t n = (std::size_t{1} << 25) + 5;  // two whole chunks and a few positions
  const std::vector<float> floats = as_floats(test_values(n, 29));
  const QuantileData host(std::span<const float>(floats), kRange);
  const DeviceCopy<float> device_floats(floats);
  const QuantileData device = QuantileData::from_device(device_floats.span(), kRange, nullptr);
  EXPECT_TRUE(device.sorted_positions() == host.sorted_positions());
  // The windows hold slots (a grid position, and whether the value sits on the point), as the
  // host's sorted slots.
  const std::vector<std::uint64_t> expected = dpselect::detail::sorted_slots(host);
  const std::uint64_t first = (std::uint64_t{1} << 24) - 2;
  for (const std::uint64_t count : {std::uint64_t{5}, (std::uint64_t{1} << 16) - 1, std::uint64_t{1} << 16}) {
    const std::vector<std::uint64_t> window =
        dpselect::detail::gpu_read_quantile_positions(device.storage(), first, count);
    EXPECT_TRUE(window == std::vector<std::uint64_t>(expected.begin() + first, expected.begin() + first + count))
        << count << " positions";
  }
}

// The two passes' shards, field by field (the scores bit for bit); executed_on aside.
void expect_same_shard(const dpselect::ShardResult& cpu, const dpselect::ShardResult& gpu, const std::string& what) {
  EXPECT_EQ(gpu.best_index, cpu.best_index) << what;
  EXPECT_EQ(std::bit_cast<std::uint64_t>(gpu.best_score), std::bit_cast<std::uint64_t>(cpu.best_score)) << what;
  EXPECT_EQ(std::bit_cast<std::uint64_t>(gpu.max_abs_shifted_utility),
            std::bit_cast<std::uint64_t>(cpu.max_abs_shifted_utility))
      << what;
  EXPECT_EQ(gpu.candidates, cpu.candidates) << what;
  EXPECT_EQ(gpu.first_invalid_index, cpu.first_invalid_index) << what;
  EXPECT_EQ(gpu.executed_on, dpselect::ExecutedOn::gpu) << what;
}

// Host arrays stream through the device in chunks of `bytes` while it lives (then the default).
class StreamingChunkForTesting {
 public:
  explicit StreamingChunkForTesting(std::uint64_t bytes) {
    dpselect::detail::set_host_streaming_bytes_for_testing(bytes, 0);
  }
  StreamingChunkForTesting(const StreamingChunkForTesting&) = delete;
  StreamingChunkForTesting& operator=(const StreamingChunkForTesting&) = delete;
  ~StreamingChunkForTesting() { dpselect::detail::set_host_streaming_bytes_for_testing(0, 0); }
};

// Stage 1 on the GPU against the CPU pass (QuantileIntervalUtilities::fill) with the same noise:
// over the whole [0, n] and over shards that start and end inside tiles, for device positions
// and for host positions (streamed over in one chunk, and in many), both generators, several q.
TEST(QuantilesGpu, IntervalPassEqualsCpuScoreForScore) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  using namespace dpselect::detail;
  // (n, positions per chunk when streamed in many): chunks that end inside tiles (1,024 intervals).
  const std::pair<std::size_t, std::uint64_t> cases[] = {{4099, 1023}, {(std::size_t{1} << 20) + 7, 65'535}};
  for (const auto& [n, chunk_positions] : cases) {
    const std::vector<double> values = test_values(n, 29 + n);
    const QuantileData host(std::span<const double>(values), kRange);
    const DeviceCopy<double> device_values(values);
    const QuantileData device = QuantileData::from_device(device_values.span(), kRange, nullptr);
    const std::vector<std::uint64_t> positions = sorted_slots(host);
    const dpselect::IndexRange ranges[] = {{0, n + 1}, {1, n / 2 + 5}, {n / 3, n + 1}, {n, n + 1}};
    for (const dpselect::Generator generator : {dpselect::Generator::chacha20, dpselect::Generator::philox}) {
      for (const double q : {0.0, 0.1, 0.5, 0.99, 1.0}) {
        // epsilon 0.05: scores spread over many intervals, so the winner depends on every bit.
        const SingleQuantilePlan plan = plan_single_quantile(params_for(0.05, dpselect::Backend::Gpu), host, q);
        dpselect::Context context = dpselect::Context::with_fixed_seed(97, generator);
        for (const dpselect::IndexRange range : ranges) {
          const dpselect::Release release = context.begin_release(plan.selection);
          const NoiseSpec spec = ReleaseAccess::noise_spec(release);
          const QuantileIntervalUtilities utilities{DataIntervals{positions, host.grid().size}, plan.target,
                                                    plan.score_scale};
          const dpselect::ShardResult cpu =
              cpu_evaluate_generated(spec, range, &QuantileIntervalUtilities::fill, &utilities);
          const std::string what = "n " + std::to_string(n) + ", q " + std::to_string(q) + ", range [" +
                                   std::to_string(range.begin) + ", " + std::to_string(range.end) + "), " +
                                   std::string(dpselect::to_string(generator));
          expect_same_shard(cpu, gpu_score_quantile_intervals(plan, spec, device.storage(), range), what + ", device");
          expect_same_shard(cpu, gpu_score_quantile_intervals(plan, spec, host.storage(), range), what + ", host");
          // Host positions in many chunks of an odd size: intervals whose two ends lie in
          // different chunks.
          const StreamingChunkForTesting small_chunks(chunk_positions * sizeof(std::uint64_t));
          expect_same_shard(cpu, gpu_score_quantile_intervals(plan, spec, host.storage(), range),
                            what + ", host in chunks");
        }
      }
    }
  }
}

// The atom pass on the GPU against the CPU's (QuantileIntervalUtilities::fill_atoms) with the same
// noise: integer data on a resolution-1 grid (every value an atom, runs of ties up to thousands
// long) and kRange's data (some values on points), from doubles and from floats in device memory.
TEST(QuantilesGpu, AtomPassEqualsCpuScoreForScore) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  using namespace dpselect::detail;
  const QuantileRange integers{0.0, 1000.0, 1.0};
  std::vector<double> counts((std::size_t{1} << 18) + 3);
  for (std::size_t i = 0; i < counts.size(); ++i) counts[i] = static_cast<double>((i * i) % 977 % 1001);
  const std::pair<std::vector<double>, QuantileRange> cases[] = {{counts, integers},
                                                                  {test_values(70'001, 5), kRange}};
  for (const auto& [values, range] : cases) {
    const std::size_t n = values.size();
    const QuantileData host(std::span<const double>(values), range);
    const DeviceCopy<double> device_values(values);
    const DeviceCopy<float> device_floats(as_floats(values));
    const QuantileData device = QuantileData::from_device(device_values.span(), range, nullptr);
    const QuantileData device_from_floats = QuantileData::from_device(device_floats.span(), range, nullptr);
    const QuantileData host_from_floats(std::span<const float>(as_floats(values)), range);
    const std::vector<std::uint64_t> slots = sorted_slots(host);
    const std::vector<std::uint64_t> float_slots = sorted_slots(host_from_floats);
    for (const double q : {0.0, 0.3, 0.5, 1.0}) {
      dpselect::QuantileParams params = params_for(0.05, dpselect::Backend::Gpu);
      params.range = range;
      const SingleQuantilePlan plan = plan_single_quantile(params, host, q);
      dpselect::Context context = dpselect::Context::with_fixed_seed(404);
      const dpselect::Release release = context.begin_release(plan.selection);
      const NoiseSpec spec = ReleaseAccess::noise_spec(release);
      const dpselect::IndexRange atoms{kAtomCandidateOffset, kAtomCandidateOffset + n};
      const auto cpu_atoms = [&](const std::vector<std::uint64_t>& sorted) {
        const QuantileIntervalUtilities utilities{DataIntervals{sorted, host.grid().size}, plan.target,
                                                  plan.score_scale};
        return cpu_evaluate_generated(spec, atoms, &QuantileIntervalUtilities::fill_atoms, &utilities);
      };
      const std::string what = "n " + std::to_string(n) + ", q " + std::to_string(q);
      expect_same_shard(cpu_atoms(slots), gpu_score_quantile_atoms(plan, spec, device.storage(), atoms, -kInfinity),
                        what + ", device");
      expect_same_shard(cpu_atoms(float_slots),
                        gpu_score_quantile_atoms(plan, spec, device_from_floats.storage(), atoms, -kInfinity),
                        what + ", float device");
    }
  }
}

// Where a release over host data with Backend::Gpu runs: the intervals on the GPU, and the atoms
// (values that sit on grid points) on the CPU.
dpselect::ExecutedOn host_data_on_gpu(const QuantileData& host) {
  return host.storage().has_values_on_points ? dpselect::ExecutedOn::cpu_and_gpu : dpselect::ExecutedOn::gpu;
}

// executed_on: gpu, or cpu_and_gpu for host data that hold values on grid points (their atoms are
// scored on the CPU, the intervals on the GPU).
void expect_same_release(const dpselect::QuantileRelease& cpu, const dpselect::QuantileRelease& gpu,
                         const std::string& what, dpselect::ExecutedOn executed_on = dpselect::ExecutedOn::gpu) {
  EXPECT_EQ(gpu.grid_index, cpu.grid_index) << what;
  EXPECT_EQ(std::bit_cast<std::uint64_t>(gpu.value), std::bit_cast<std::uint64_t>(cpu.value)) << what;
  EXPECT_EQ(gpu.report.stream, cpu.report.stream) << what;
  EXPECT_EQ(gpu.report.candidates, cpu.report.candidates) << what;
  EXPECT_EQ(gpu.report.epsilon_spent, cpu.report.epsilon_spent) << what;
  EXPECT_EQ(gpu.report.slack.epsilon, cpu.report.slack.epsilon) << what;
  EXPECT_EQ(gpu.report.executed_on, executed_on) << what;
  EXPECT_EQ(cpu.report.executed_on, dpselect::ExecutedOn::cpu) << what;
}

// Permute-and-flip's stage 1 on the GPU (every run scored) against the CPU pass (groups screened)
// with the same noise, field by field: integer data on a resolution-1 grid with ties and gaps
// (runs of many points below 150 and above 849), from doubles and floats in device memory and from
// host data (Backend::Gpu), both generators, several q. Then whole releases: CPU, host data on the
// GPU and device data give the same point.
TEST(QuantilesGpu, PermuteAndFlipPassAndReleasesEqualCpu) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  using namespace dpselect::detail;
  const QuantileRange integers{0.0, 1000.0, 1.0};
  for (const std::size_t n : {std::size_t{1}, std::size_t{1000}, (std::size_t{1} << 17) + 3}) {
    std::vector<double> values(n);
    for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<double>((i * i) % 977 % 700 + 150);
    const QuantileData host(std::span<const double>(values), integers);
    const DeviceCopy<double> device_values(values);
    const DeviceCopy<float> device_floats(as_floats(values));
    const QuantileData device = QuantileData::from_device(device_values.span(), integers, nullptr);
    const QuantileData device_from_floats = QuantileData::from_device(device_floats.span(), integers, nullptr);
    const std::vector<std::uint64_t> slots = sorted_slots(host);
    const bool has_atoms = host.storage().has_values_on_points;
    for (const double q : {0.0, 0.3, 0.5, 1.0}) {
      for (const dpselect::Generator generator : {dpselect::Generator::chacha20, dpselect::Generator::philox}) {
        dpselect::QuantileParams params = params_for(0.05, dpselect::Backend::Gpu);
        params.range = integers;
        params.mechanism = dpselect::Mechanism::permute_and_flip;
        const SingleQuantilePlan plan = plan_single_quantile(params, host, q);
        dpselect::Context context = dpselect::Context::with_fixed_seed(505, generator);
        const dpselect::Release release = context.begin_release(plan.selection);
        const NoiseSpec spec = ReleaseAccess::noise_spec(release);
        QuantileIntervalUtilities utilities{DataIntervals{slots, host.grid().size}, plan.target, plan.score_scale};
        utilities.has_atoms = has_atoms;
        const dpselect::ShardResult cpu = permute_and_flip_quantile_runs_cpu(utilities, spec);
        const std::string what = "n " + std::to_string(n) + ", q " + std::to_string(q) + ", " +
                                 std::string(dpselect::to_string(generator));
        expect_same_shard(cpu, gpu_permute_and_flip_quantile_runs(plan, spec, device.storage(), has_atoms),
                          what + ", device");
        expect_same_shard(cpu, gpu_permute_and_flip_quantile_runs(plan, spec, device_from_floats.storage(), has_atoms),
                          what + ", float device");
        expect_same_shard(cpu, gpu_permute_and_flip_quantile_runs(plan, spec, host.storage(), has_atoms),
                          what + ", host");
      }
    }
    for (const double q : {0.1, 0.5, 0.9}) {
      dpselect::QuantileParams params = params_for(0.5, dpselect::Backend::Cpu);
      params.range = integers;
      params.mechanism = dpselect::Mechanism::permute_and_flip;
      dpselect::QuantileParams on_gpu = params;
      on_gpu.backend = dpselect::Backend::Gpu;
      dpselect::QuantileParams automatic = params;
      automatic.backend = dpselect::Backend::Auto;
      dpselect::Context cpu_context = dpselect::Context::with_fixed_seed(606);
      dpselect::Context host_gpu_context = dpselect::Context::with_fixed_seed(606);
      dpselect::Context device_context = dpselect::Context::with_fixed_seed(606);
      for (int r = 0; r < 5; ++r) {
        const std::string what = "n " + std::to_string(n) + ", q " + std::to_string(q) + ", release " +
                                 std::to_string(r);
        const dpselect::QuantileRelease cpu = dpselect::select_quantile(cpu_context, host, q, params);
        expect_same_release(cpu, dpselect::select_quantile(host_gpu_context, host, q, on_gpu), what + ", host");
        expect_same_release(cpu, dpselect::select_quantile(device_context, device, q, automatic), what + ", device");
      }
    }
  }
}

// The public entry point: host data on the CPU, host data with Backend::Gpu, device data (Auto),
// from doubles and from floats, both neighbour relations: the same release, on 20 streams each
// (4 for the largest n).
TEST(QuantilesGpu, SameReleaseOnCpuAndGpu) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  for (const std::size_t n : kSizes) {
    const int releases = n > 10'000 ? 4 : 20;  // each on a fresh stream
    const std::vector<double> values = test_values(n, 43 + n);
    const std::vector<float> floats = as_floats(values);
    const DeviceCopy<double> device_values(values);
    const DeviceCopy<float> device_floats(floats);
    const QuantileData host(std::span<const double>(values), kRange);
    const QuantileData host_from_floats(std::span<const float>(floats), kRange);
    const QuantileData device = QuantileData::from_device(device_values.span(), kRange, nullptr);
    const QuantileData device_from_floats = QuantileData::from_device(device_floats.span(), kRange, nullptr);
    for (const dpselect::RecordNeighbours neighbours :
         {dpselect::RecordNeighbours::replace_one_record, dpselect::RecordNeighbours::add_or_remove_record}) {
      const dpselect::QuantileParams on_cpu = params_for(0.5, dpselect::Backend::Cpu, neighbours);
      const dpselect::QuantileParams on_gpu = params_for(0.5, dpselect::Backend::Gpu, neighbours);
      const dpselect::QuantileParams automatic = params_for(0.5, dpselect::Backend::Auto, neighbours);
      for (const double q : {0.25, 0.5, 0.9}) {
        for (const dpselect::Generator generator : {dpselect::Generator::chacha20, dpselect::Generator::philox}) {
          dpselect::Context cpu_context = dpselect::Context::with_fixed_seed(2031, generator);
          dpselect::Context host_gpu_context = dpselect::Context::with_fixed_seed(2031, generator);
          dpselect::Context device_context = dpselect::Context::with_fixed_seed(2031, generator);
          dpselect::Context float_cpu_context = dpselect::Context::with_fixed_seed(2031, generator);
          dpselect::Context float_device_context = dpselect::Context::with_fixed_seed(2031, generator);
          for (int release = 0; release < releases; ++release) {
            const std::string what = "n " + std::to_string(n) + ", q " + std::to_string(q) + ", " +
                                     std::string(dpselect::to_string(neighbours)) + ", " +
                                     std::string(dpselect::to_string(generator)) + ", release " +
                                     std::to_string(release);
            const dpselect::QuantileRelease cpu = dpselect::select_quantile(cpu_context, host, q, on_cpu);
            expect_same_release(cpu, dpselect::select_quantile(host_gpu_context, host, q, on_gpu), what + ", host",
                                host_data_on_gpu(host));
            expect_same_release(cpu, dpselect::select_quantile(device_context, device, q, automatic),
                                what + ", device");
            expect_same_release(dpselect::select_quantile(float_cpu_context, host_from_floats, q, on_cpu),
                                dpselect::select_quantile(float_device_context, device_from_floats, q, automatic),
                                what + ", float device");
          }
        }
      }
    }
  }
}

// A resolution grid (integer data, every value an atom): the same release on the CPU, with
// Backend::Gpu over host data, and over device doubles and floats.
TEST(QuantilesGpu, SameReleaseOnCpuAndGpuOverAResolutionGrid) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  const QuantileRange range{0.0, 20000.0, 1.0};
  std::vector<double> prices(53'941);
  for (std::size_t i = 0; i < prices.size(); ++i) prices[i] = static_cast<double>(326 + (i * 7919) % 18'498 % 9'000);
  const DeviceCopy<double> device_values(prices);
  const DeviceCopy<float> device_floats(as_floats(prices));
  const QuantileData host(std::span<const double>(prices), range);
  const QuantileData device = QuantileData::from_device(device_values.span(), range, nullptr);
  const QuantileData device_from_floats = QuantileData::from_device(device_floats.span(), range, nullptr);
  for (const double epsilon : {0.1, 1.0, 10.0}) {
    dpselect::QuantileParams on_cpu = params_for(epsilon, dpselect::Backend::Cpu);
    dpselect::QuantileParams on_gpu = params_for(epsilon, dpselect::Backend::Gpu);
    dpselect::QuantileParams automatic = params_for(epsilon, dpselect::Backend::Auto);
    on_cpu.range = on_gpu.range = automatic.range = range;
    dpselect::Context cpu_context = dpselect::Context::with_fixed_seed(77);
    dpselect::Context host_gpu_context = dpselect::Context::with_fixed_seed(77);
    dpselect::Context device_context = dpselect::Context::with_fixed_seed(77);
    dpselect::Context float_context = dpselect::Context::with_fixed_seed(77);
    for (const double q : {0.1, 0.5, 0.9}) {
      const std::string what = "epsilon " + std::to_string(epsilon) + ", q " + std::to_string(q);
      const dpselect::QuantileRelease cpu = dpselect::select_quantile(cpu_context, host, q, on_cpu);
      expect_same_release(cpu, dpselect::select_quantile(host_gpu_context, host, q, on_gpu), what + ", host",
                                host_data_on_gpu(host));
      expect_same_release(cpu, dpselect::select_quantile(device_context, device, q, automatic), what + ", device");
      expect_same_release(cpu, dpselect::select_quantile(float_context, device_from_floats, q, automatic),
                          what + ", float device");
    }
  }
}

// JointExp, recursive splitting and the independent methods read the positions on the host (copied
// from the device once): the same release from device data as from host data.
TEST(QuantilesGpu, SeveralQuantilesOverDeviceDataEqualHost) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  const std::vector<double> values = test_values(20'011, 61);
  const DeviceCopy<double> device_values(values);
  const QuantileData host(std::span<const double>(values), kRange);
  const QuantileData device = QuantileData::from_device(device_values.span(), kRange, nullptr);
  const std::vector<double> qs = {0.1, 0.25, 0.5, 0.75, 0.9};
  for (const dpselect::QuantilesMethod method :
       {dpselect::QuantilesMethod::joint_exponential, dpselect::QuantilesMethod::recursive_splitting,
        dpselect::QuantilesMethod::independent_basic, dpselect::QuantilesMethod::independent_zcdp}) {
    dpselect::QuantilesParams params;
    params.base = params_for(1.0, dpselect::Backend::Auto);
    params.method = method;
    params.delta = method == dpselect::QuantilesMethod::independent_zcdp ? 1e-6 : 0.0;
    dpselect::Context host_context = dpselect::Context::with_fixed_seed(73);
    dpselect::Context device_context = dpselect::Context::with_fixed_seed(73);
    for (int release = 0; release < 5; ++release) {
      const dpselect::QuantilesRelease expected = dpselect::select_quantiles(host_context, host, qs, params);
      const dpselect::QuantilesRelease actual = dpselect::select_quantiles(device_context, device, qs, params);
      EXPECT_EQ(actual.grid_indices, expected.grid_indices) << dpselect::to_string(method) << ", release " << release;
      EXPECT_EQ(actual.values, expected.values) << dpselect::to_string(method);
      EXPECT_EQ(actual.streams, expected.streams) << dpselect::to_string(method);
      EXPECT_EQ(actual.epsilon_spent, expected.epsilon_spent) << dpselect::to_string(method);
    }
  }
}

// The first NaN's index, wherever the threads meet the NaNs, in the host path's words.
TEST(QuantilesGpu, NanOnDeviceIsRefusedNamingItsIndex) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  const std::size_t n = (std::size_t{1} << 20) + 7;
  for (const std::size_t first_nan : {std::size_t{0}, std::size_t{777}, n - 1}) {
    std::vector<double> values = test_values(n, 5);
    values[first_nan] = std::numeric_limits<double>::quiet_NaN();
    if (first_nan + 1 < n) values[n - 1] = std::numeric_limits<double>::quiet_NaN();  // later NaNs too
    if (first_nan + 300'000 < n) values[first_nan + 300'000] = std::numeric_limits<double>::quiet_NaN();
    const std::vector<float> floats = as_floats(values);
    std::string host_message;
    try {
      QuantileData host(std::span<const double>(values), kRange);
      ADD_FAILURE() << "the host path accepted a NaN";
    } catch (const dpselect::InvalidArgument& error) {
      host_message = error.what();
    }
    const std::string name = "data[" + std::to_string(first_nan) + "]";
    EXPECT_NE(host_message.find(name), std::string::npos) << host_message;

    const DeviceCopy<double> device_values(values);
    const DeviceCopy<float> device_floats(floats);
    try {
      static_cast<void>(QuantileData::from_device(device_values.span(), kRange, nullptr));
      ADD_FAILURE() << "a NaN at " << first_nan << " was accepted (double)";
    } catch (const dpselect::InvalidArgument& error) {
      EXPECT_EQ(std::string(error.what()), host_message);
    }
    try {
      static_cast<void>(QuantileData::from_device(device_floats.span(), kRange, nullptr));
      ADD_FAILURE() << "a NaN at " << first_nan << " was accepted (float)";
    } catch (const dpselect::InvalidArgument& error) {
      EXPECT_EQ(std::string(error.what()), host_message);
    }
  }
  // The device still works: nothing sticky was left behind.
  const std::vector<double> values = test_values(1000, 6);
  const DeviceCopy<double> device_values(values);
  EXPECT_EQ(QuantileData::from_device(device_values.span(), kRange, nullptr).sorted_positions(),
            QuantileData(std::span<const double>(values), kRange).sorted_positions());
}

bool device_reads_pageable_memory() {
  int device = 0;
  int pageable = 0;
  return cudaGetDevice(&device) == cudaSuccess &&
         cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, device) == cudaSuccess && pageable != 0;
}

// A host pointer passed as device memory: InvalidArgument before any kernel (whose illegal
// address would be sticky and end the process's CUDA context).
TEST(QuantilesGpu, HostPointerIsRefused) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  if (device_reads_pageable_memory()) GTEST_SKIP() << "this device reads pageable host memory";
  const std::vector<double> values = test_values(1000, 8);
  EXPECT_THROW(static_cast<void>(QuantileData::from_device(
                   dpselect::DeviceSpan<const double>{values.data(), values.size()}, kRange, nullptr)),
               dpselect::InvalidArgument);
}

// The positions live in the library's pool while the data (or a copy of it) does, and go back
// when the last copy is destroyed.
TEST(QuantilesGpu, DevicePositionsAreFreedWithTheData) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  const std::size_t n = std::size_t{1} << 22;
  const std::vector<double> values = test_values(n, 9);
  const DeviceCopy<double> device_values(values);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // every earlier stream-ordered free has run
  const std::uint64_t used_before = dpselect::device_memory_usage(device).used_bytes;
  {
    std::optional<QuantileData> data = QuantileData::from_device(device_values.span(), kRange, nullptr);
    const QuantileData copy = *data;
    data.reset();
    EXPECT_GE(dpselect::device_memory_usage(device).used_bytes, used_before + n * sizeof(std::uint64_t));
    EXPECT_EQ(copy.sorted_positions().size(), n);
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // the stream-ordered free has run
  EXPECT_EQ(dpselect::device_memory_usage(device).used_bytes, used_before);
}

#endif

}  // namespace
