// SPDX-License-Identifier: Apache-2.0
// CPU and GPU give the same index for the same key (GPU machines only).
//
// Both backends evaluate the same IEEE operation sequence (portable_log.hpp, explicit fma,
// non-contracting device intrinsics), so their noisy scores are bit-identical and no pick may
// differ: the test allows zero mismatches over 10^4 seeded releases and compares the winning
// scores bit for bit.
// Compiled by nvcc (as a .cu copy) in CUDA builds; in CPU-only builds the test is still
// registered and reports itself skipped.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dpselect/dpselect.hpp"

#include "support/device_code.hpp"

#if DPSELECT_TEST_DEVICE_CODE
#include <cuda_runtime.h>

#include "dpselect/select.cuh"
#include "rows/gpu.hpp"
#endif

namespace {

#if !DPSELECT_TEST_DEVICE_CODE
TEST(CpuGpuEquality, TenThousandSeededReleases) {
  GTEST_SKIP() << "CPU-only build: no CUDA backend to compare with";
}
TEST(CpuGpuEquality, TopK) { GTEST_SKIP() << "CPU-only build: no CUDA backend to compare with"; }
TEST(CpuGpuEquality, DataShapesThatChallengeTheScreen) {
  GTEST_SKIP() << "CPU-only build: no CUDA backend to compare with";
}
TEST(CpuGpuEquality, RowsOfRisingUtilities) { GTEST_SKIP() << "CPU-only build: no CUDA backend to compare with"; }
TEST(CpuGpuEquality, RowsInEveryLayout) { GTEST_SKIP() << "CPU-only build: no CUDA backend to compare with"; }
TEST(CpuGpuEquality, ReferenceLoadedByTheKernel) {
  GTEST_SKIP() << "CPU-only build: no CUDA backend to compare with";
}
#else

// Utilities in [0, 4) from an integer hash of the index: exact integer arithmetic and a
// power-of-two scaling, so host and device produce the same doubles (CPU/GPU equality needs a
// bit-reproducible functor; sin() differs between glibc and CUDA).
struct HashedUtility {
  __host__ __device__ double operator()(std::uint64_t i) const {
    std::uint64_t z = i + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1p-51;
  }
};

TEST(CpuGpuEquality, TenThousandSeededReleases) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  const dpselect::Mechanism mechanisms[] = {dpselect::Mechanism::exponential,
                                            dpselect::Mechanism::permute_and_flip,
                                            dpselect::Mechanism::laplace_noisy_max};
  std::vector<float> host(4099);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(std::cos(0.05 * i) * 3);
  float* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, host.size() * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(device, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  int mismatches = 0;
  for (std::uint64_t seed = 0; seed < 10'000; ++seed) {
    dpselect::SelectionParams params;
    params.mechanism = mechanisms[seed % 3];
    params.epsilon = 0.5 + (seed % 7);
    params.sensitivity = 1.0;
    params.monotone = seed % 2;
    params.backend = dpselect::Backend::Cpu;
    dpselect::Context cpu_context = dpselect::Context::with_fixed_seed(seed);
    dpselect::Release cpu = cpu_context.begin_release(params);
    dpselect::ShardResult cpu_result = cpu.evaluate(std::span<const float>(host), 1000);
    params.backend = dpselect::Backend::Gpu;
    dpselect::Context gpu_context = dpselect::Context::with_fixed_seed(seed);
    dpselect::Release gpu = gpu_context.begin_release(params);
    dpselect::ShardResult gpu_result =
        gpu.evaluate(dpselect::DeviceSpan<const float>{device, host.size()}, 1000, cudaStreamPerThread);
    if (seed % 10 == 0) {  // functor path over a larger range too
      const dpselect::IndexRange range{1ull << 35, (1ull << 35) + 100'000};
      params.backend = dpselect::Backend::Cpu;
      dpselect::Context c2 = dpselect::Context::with_fixed_seed(seed);
      dpselect::Release r_cpu = c2.begin_release(params);
      const auto f_cpu = dpselect::evaluate_functor_on_cpu(r_cpu, HashedUtility{}, range);
      params.backend = dpselect::Backend::Gpu;
      dpselect::Context g2 = dpselect::Context::with_fixed_seed(seed);
      dpselect::Release r_gpu = g2.begin_release(params);
      const auto f_gpu = dpselect::evaluate_functor(r_gpu, HashedUtility{}, range, cudaStreamPerThread);
      mismatches += f_cpu.best_index != f_gpu.best_index || f_cpu.best_score != f_gpu.best_score;
    }
    mismatches += cpu_result.best_index != gpu_result.best_index ||
                  cpu_result.best_score != gpu_result.best_score;
    EXPECT_EQ(gpu.finish(gpu_result).report.executed_on, dpselect::ExecutedOn::gpu);
  }
  cudaFree(device);
  EXPECT_EQ(mismatches, 0);
}

// Top-k: the GPU pass (host memory in chunks, and device memory) returns the CPU's k indices in
// the CPU's order, for k from 1 to the GPU's limit, on ranges that fill many blocks.
template <class T>
void expect_top_k_equal(std::uint64_t n, std::uint64_t k, std::uint64_t seed) {
  std::vector<T> host(n);
  for (std::uint64_t i = 0; i < n; ++i) host[i] = static_cast<T>(HashedUtility{}(i ^ seed) * 8.0);
  T* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, n * sizeof(T)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(device, host.data(), n * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  dpselect::TopKParams params;
  params.selection.epsilon = 2.0;
  params.selection.sensitivity = 1.0;
  params.k = k;
  params.selection.backend = dpselect::Backend::Cpu;
  dpselect::Context cpu_context = dpselect::Context::with_fixed_seed(seed);
  const dpselect::TopKSelection cpu = dpselect::select_top_k(cpu_context, std::span<const T>(host), params);
  params.selection.backend = dpselect::Backend::Gpu;
  dpselect::Context host_context = dpselect::Context::with_fixed_seed(seed);
  const dpselect::TopKSelection gpu_host = dpselect::select_top_k(host_context, std::span<const T>(host), params);
  dpselect::Context device_context = dpselect::Context::with_fixed_seed(seed);
  const dpselect::TopKSelection gpu_device =
      dpselect::select_top_k(device_context, dpselect::DeviceSpan<const T>{device, n}, params, cudaStreamPerThread);
  cudaFree(device);
  EXPECT_EQ(gpu_host.indices, cpu.indices) << "n " << n << " k " << k;
  EXPECT_EQ(gpu_device.indices, cpu.indices) << "n " << n << " k " << k;
  EXPECT_EQ(gpu_host.report.per_pick.executed_on, dpselect::ExecutedOn::gpu);
  EXPECT_EQ(gpu_device.report.per_pick.executed_on, dpselect::ExecutedOn::gpu);
}

TEST(CpuGpuEquality, TopK) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  for (const std::uint64_t k : {1u, 7u, 256u, 1024u}) {
    expect_top_k_equal<float>(5'000, k, 3 + k);
    expect_top_k_equal<double>(3'000'017, k, 5 + k);
  }
  // Past one host chunk (2^26 utilities): the chunks' lists are merged.
  expect_top_k_equal<float>((std::uint64_t{1} << 26) + 12'345, 100, 9);
  // Auto with k above the GPU's limit runs on the CPU.
  std::vector<double> utilities(5'000, 1.0);
  dpselect::TopKParams params;
  params.selection.epsilon = 1.0;
  params.selection.sensitivity = 1.0;
  params.k = dpselect::kGpuTopKMaxK + 1;
  dpselect::Context context = dpselect::Context::with_fixed_seed(1);
  EXPECT_EQ(dpselect::select_top_k(context, std::span<const double>(utilities), params).report.per_pick.executed_on,
            dpselect::ExecutedOn::cpu);
}
// Utilities whose order defeats a threshold built in scan order, and ties that only the lowest
// index may break: the screen threshold the GPU shares across warps and launches and seeds from
// each tile's widest group must leave the answer the CPU's, bit for bit.
enum class Shape { steep, gentle, descending, all_equal, plateaus };
const char* shape_name(Shape shape) {
  switch (shape) {
    case Shape::steep: return "steep";
    case Shape::gentle: return "gentle";
    case Shape::descending: return "descending";
    case Shape::all_equal: return "all_equal";
    case Shape::plateaus: return "plateaus";
  }
  return "?";
}
template <class T>
std::vector<T> shaped_utilities(Shape shape, std::uint64_t n) {
  std::vector<T> u(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(i);
    switch (shape) {
      case Shape::steep: u[i] = static_cast<T>(x); break;  // exact in float below 2^24
      case Shape::gentle: u[i] = static_cast<T>(x / 1024); break;
      case Shape::descending: u[i] = static_cast<T>((static_cast<double>(n) - x) / 32); break;
      case Shape::all_equal: u[i] = static_cast<T>(3); break;
      case Shape::plateaus: u[i] = static_cast<T>(static_cast<double>((i / 4096) % 7)); break;  // many equal maxima
    }
  }
  return u;
}

template <class T>
void expect_shape_equal(Shape shape, std::uint64_t n, dpselect::Mechanism mechanism, dpselect::Generator generator,
                        std::uint64_t seed) {
  const std::vector<T> host = shaped_utilities<T>(shape, n);
  T* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, n * sizeof(T)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(device, host.data(), n * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  dpselect::SelectionParams params;
  params.mechanism = mechanism;
  params.epsilon = 1.0;
  params.sensitivity = 1.0;
  const auto evaluate = [&](dpselect::Backend backend, bool on_device) {
    params.backend = backend;
    dpselect::Context context = dpselect::Context::with_fixed_seed(seed, generator);
    dpselect::Release release = context.begin_release(params);
    return on_device ? release.evaluate(dpselect::DeviceSpan<const T>{device, n}, 0, cudaStreamPerThread)
                     : release.evaluate(std::span<const T>(host), 0);
  };
  const dpselect::ShardResult cpu = evaluate(dpselect::Backend::Cpu, false);
  const dpselect::ShardResult gpu_device = evaluate(dpselect::Backend::Gpu, true);
  const dpselect::ShardResult gpu_host = evaluate(dpselect::Backend::Gpu, false);  // streamed in chunks
  cudaFree(device);
  const std::string label = std::string(shape_name(shape)) + " n " + std::to_string(n) + " mechanism " +
                            std::to_string(static_cast<int>(mechanism)) + " seed " + std::to_string(seed);
  EXPECT_EQ(gpu_device.best_index, cpu.best_index) << label;
  EXPECT_EQ(gpu_device.best_score, cpu.best_score) << label;
  EXPECT_EQ(gpu_host.best_index, cpu.best_index) << label << " (host array)";
  EXPECT_EQ(gpu_host.best_score, cpu.best_score) << label << " (host array)";
}

TEST(CpuGpuEquality, DataShapesThatChallengeTheScreen) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  const dpselect::Mechanism mechanisms[] = {dpselect::Mechanism::exponential, dpselect::Mechanism::permute_and_flip,
                                            dpselect::Mechanism::laplace_noisy_max};
  std::uint64_t seed = 100;
  for (const Shape shape : {Shape::steep, Shape::gentle, Shape::descending, Shape::all_equal, Shape::plateaus}) {
    for (const dpselect::Mechanism mechanism : mechanisms) {
      for (const dpselect::Generator generator : {dpselect::Generator::chacha20, dpselect::Generator::philox}) {
        // Many blocks per launch; past one streamed chunk of a host array (2^23 floats), so that
        // the chunks' launches share the threshold word.
        expect_shape_equal<float>(shape, (std::uint64_t{1} << 24) + 4099, mechanism, generator, ++seed);
        expect_shape_equal<double>(shape, 300'007, mechanism, generator, ++seed);
      }
    }
  }
}

// select over device memory takes the scores' reference from the first utility in the kernel
// (NoiseSpec::reference_on_device): the same index and the same data-dependent slack as select
// over the same utilities on the CPU, bit for bit, at offsets where r = 0 would round the scores,
// with a first utility of -inf (r = 0) and with a public reference (not read from the data).
template <class T>
void expect_reference_equal(double offset, T first, std::optional<double> public_reference,
                            dpselect::Mechanism mechanism, dpselect::Generator generator, std::uint64_t seed) {
  const std::uint64_t n = 70'001;
  std::vector<T> host(n);
  for (std::uint64_t i = 0; i < n; ++i) host[i] = static_cast<T>(offset + static_cast<double>((i * 7919) % 1024) / 8);
  host[0] = first;
  T* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, n * sizeof(T)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(device, host.data(), n * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  dpselect::SelectionParams params;
  params.mechanism = mechanism;
  params.epsilon = 2.0;
  params.sensitivity = 1.0;
  params.utility_reference = public_reference;
  params.backend = dpselect::Backend::Cpu;
  dpselect::Context cpu_context = dpselect::Context::with_fixed_seed(seed, generator);
  const dpselect::Selection cpu = dpselect::select(cpu_context, std::span<const T>(host), params);
  params.backend = dpselect::Backend::Gpu;
  dpselect::Context gpu_context = dpselect::Context::with_fixed_seed(seed, generator);
  const dpselect::Selection gpu =
      dpselect::select(gpu_context, dpselect::DeviceSpan<const T>{device, n}, params, cudaStreamPerThread);
  cudaFree(device);
  const std::string label = "offset " + std::to_string(offset) + " first " + std::to_string(first) +
                            (public_reference ? " public reference" : "") + " mechanism " +
                            std::string(dpselect::to_string(mechanism)) + " seed " + std::to_string(seed);
  EXPECT_EQ(gpu.index, cpu.index) << label;
  EXPECT_EQ(std::bit_cast<std::uint64_t>(gpu.report.slack.epsilon), std::bit_cast<std::uint64_t>(cpu.report.slack.epsilon))
      << label;
  EXPECT_EQ(gpu.report.executed_on, dpselect::ExecutedOn::gpu) << label;
}

TEST(CpuGpuEquality, ReferenceLoadedByTheKernel) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  std::uint64_t seed = 500;
  for (const dpselect::Mechanism mechanism : {dpselect::Mechanism::exponential, dpselect::Mechanism::permute_and_flip,
                                              dpselect::Mechanism::laplace_noisy_max}) {
    for (const dpselect::Generator generator : {dpselect::Generator::chacha20, dpselect::Generator::philox}) {
      for (const double offset : {0.0, 1e6, 1e12, 1e15, -1e15}) {
        expect_reference_equal<double>(offset, offset + 3.5, std::nullopt, mechanism, generator, ++seed);
        expect_reference_equal<double>(offset, -INFINITY, std::nullopt, mechanism, generator, ++seed);
        expect_reference_equal<double>(offset, offset, offset - 7.0, mechanism, generator, ++seed);
      }
      expect_reference_equal<float>(1e6, 1e6f + 3.5f, std::nullopt, mechanism, generator, ++seed);
      expect_reference_equal<float>(1e6, -INFINITY, std::nullopt, mechanism, generator, ++seed);
    }
  }
}

TEST(CpuGpuEquality, RowsOfRisingUtilities) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  // A warp per row (2,000 columns; and 5,000 columns over 4,096 rows, enough for a warp per long
  // row on any device of up to 256 SMs) and 64 rows of 100,000 columns cut into segments of
  // a block each: each row's threshold word, in shared or device memory, is its own.
  for (const std::uint64_t cols : {std::uint64_t{2000}, std::uint64_t{5000}, std::uint64_t{100'000}}) {
    const std::uint64_t rows = cols == 5000 ? 4096 : 64;
    std::vector<float> host(rows * cols);
    for (std::uint64_t r = 0; r < rows; ++r) {
      for (std::uint64_t c = 0; c < cols; ++c) {
        // Rising rows, and rows that fall: a row's best must not leak into the next row's screen.
        host[r * cols + c] = static_cast<float>(r % 2 == 0 ? c : cols - c) * 0.25f;
      }
    }
    float* device = nullptr;
    ASSERT_EQ(cudaMalloc(&device, host.size() * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(device, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
    dpselect::SelectionParams params;
    params.epsilon = 1.0;
    params.sensitivity = 1.0;
    params.backend = dpselect::Backend::Cpu;
    dpselect::Context cpu_context = dpselect::Context::with_fixed_seed(77);
    const dpselect::RowsSelection cpu =
        dpselect::select_rows(cpu_context, dpselect::HostMatrix<const float>{host.data(), rows, cols}, params);
    params.backend = dpselect::Backend::Gpu;
    dpselect::Context gpu_context = dpselect::Context::with_fixed_seed(77);
    const dpselect::RowsSelection gpu = dpselect::select_rows(
        gpu_context, dpselect::DeviceMatrix<const float>{device, rows, cols}, params, cudaStreamPerThread);
    cudaFree(device);
    for (std::uint64_t r = 0; r < rows; ++r) {
      EXPECT_EQ(gpu.selections[r].index, cpu.selections[r].index) << "cols " << cols << " row " << r;
      EXPECT_EQ(gpu.selections[r].report.executed_on, dpselect::ExecutedOn::gpu);
    }
  }
}

// Forces one layout of the rows pass for a test and restores the automatic choice after it.
class ForcedRowsLayout {
 public:
  ForcedRowsLayout(dpselect::detail::RowsLayout layout, unsigned segments) {
    dpselect::detail::set_rows_layout_for_testing(layout, segments);
  }
  ForcedRowsLayout(const ForcedRowsLayout&) = delete;
  ForcedRowsLayout& operator=(const ForcedRowsLayout&) = delete;
  ~ForcedRowsLayout() { dpselect::detail::set_rows_layout_for_testing(dpselect::detail::RowsLayout::automatic, 0); }
};

// Rows r of `cols` utilities: rising (r % 3 == 0), falling (1) or hashed (2), so that a row's best
// sits at its end, at its start or anywhere, and a best left over from the row before would screen
// out the next row's.
template <class T>
std::vector<T> mixed_rows(std::uint64_t rows, std::uint64_t cols) {
  std::vector<T> host(rows * cols);
  const HashedUtility hashed;
  for (std::uint64_t r = 0; r < rows; ++r) {
    for (std::uint64_t c = 0; c < cols; ++c) {
      const double u = r % 3 == 0 ? static_cast<double>(c) * 0.25
                       : r % 3 == 1 ? static_cast<double>(cols - c) * 0.25
                                    : hashed(r * cols + c) * 64.0;
      host[r * cols + c] = static_cast<T>(u);
    }
  }
  return host;
}

// Every row of the CPU path and of the GPU pass in `layout` (its segments), device memory, per-row
// epsilons.
template <class T>
void expect_rows_equal_in_layout(dpselect::detail::RowsLayout layout, unsigned segments, std::uint64_t rows,
                                 std::uint64_t cols, dpselect::Mechanism mechanism, dpselect::Generator generator) {
  const std::vector<T> host = mixed_rows<T>(rows, cols);
  std::vector<double> epsilons(rows);
  for (std::uint64_t r = 0; r < rows; ++r) epsilons[r] = 0.25 + 0.5 * static_cast<double>(r % 4);
  T* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, host.size() * sizeof(T)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  dpselect::SelectionParams params;
  params.mechanism = mechanism;
  params.epsilon = 1.0;
  params.sensitivity = 1.0;
  params.backend = dpselect::Backend::Cpu;
  dpselect::Context cpu_context = dpselect::Context::with_fixed_seed(rows * 1000 + cols, generator);
  const dpselect::RowsSelection cpu =
      dpselect::select_rows(cpu_context, dpselect::HostMatrix<const T>{host.data(), rows, cols}, params, epsilons);
  params.backend = dpselect::Backend::Gpu;
  dpselect::Context gpu_context = dpselect::Context::with_fixed_seed(rows * 1000 + cols, generator);
  std::optional<dpselect::RowsSelection> gpu;
  {
    const ForcedRowsLayout forced(layout, segments);
    gpu = dpselect::select_rows(gpu_context, dpselect::DeviceMatrix<const T>{device, rows, cols}, params, epsilons,
                                cudaStreamPerThread);
  }
  cudaFree(device);
  ASSERT_EQ(gpu->selections.size(), rows);
  for (std::uint64_t r = 0; r < rows; ++r) {
    EXPECT_EQ(gpu->selections[r].index, cpu.selections[r].index) << "row " << r;
    EXPECT_EQ(gpu->selections[r].report.candidates, cols) << "row " << r;
    EXPECT_EQ(gpu->selections[r].report.executed_on, dpselect::ExecutedOn::gpu);
  }
}

TEST(CpuGpuEquality, RowsInEveryLayout) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  using dpselect::detail::RowsLayout;
  struct Layout {
    RowsLayout layout;
    unsigned segments;
  };
  // Segments: 2; 3 (5000 columns are 5 tiles: segments of 1, 2 and 2); 40 (one tile each over
  // 40,003 columns, and as many segments as tiles in the shorter rows).
  const Layout layouts[] = {{RowsLayout::thread_per_row, 0}, {RowsLayout::warp_per_row, 0},
                            {RowsLayout::block_per_row, 0},  {RowsLayout::segmented, 2},
                            {RowsLayout::segmented, 3},      {RowsLayout::segmented, 40}};
  // One candidate; a partial group; two groups (the automatic thread team's limit) and one more
  // candidate; a tile and one more; rows of many tiles, with a partial last one.
  const std::uint64_t shapes[][2] = {{3, 1}, {7, 33}, {5, 65}, {4, 1025}, {6, 5000}, {2, 40'003}};
  const dpselect::Mechanism mechanisms[] = {dpselect::Mechanism::exponential, dpselect::Mechanism::permute_and_flip,
                                            dpselect::Mechanism::laplace_noisy_max};
  const dpselect::Generator generators[] = {dpselect::Generator::chacha20, dpselect::Generator::philox};
  unsigned k = 0;
  for (const Layout& layout : layouts) {
    for (const auto& shape : shapes) {
      for (const dpselect::Generator generator : generators) {
        // Each shape and generator once per layout, with float and double and the mechanisms in turn.
        const dpselect::Mechanism mechanism = mechanisms[k % 3];
        const bool as_float = (k + k / 2) % 2 == 0;
        SCOPED_TRACE(::testing::Message() << "layout " << static_cast<int>(layout.layout) << " segments "
                                          << layout.segments << ", " << shape[0] << " x " << shape[1] << ", "
                                          << dpselect::to_string(mechanism) << ", generator "
                                          << static_cast<int>(generator) << (as_float ? ", float" : ", double"));
        if (as_float) {
          expect_rows_equal_in_layout<float>(layout.layout, layout.segments, shape[0], shape[1], mechanism, generator);
        } else {
          expect_rows_equal_in_layout<double>(layout.layout, layout.segments, shape[0], shape[1], mechanism, generator);
        }
        ++k;
      }
    }
  }
}
#endif

}  // namespace
