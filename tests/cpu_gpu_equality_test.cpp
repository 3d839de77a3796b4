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

#include <cmath>
#include <span>
#include <vector>

#include "dpselect/dpselect.hpp"

#if defined(__CUDACC__)
#include <cuda_runtime.h>

#include "dpselect/select.cuh"
#endif

namespace {

#if !defined(__CUDACC__)
TEST(CpuGpuEquality, TenThousandSeededReleases) {
  GTEST_SKIP() << "CPU-only build: no CUDA backend to compare with";
}
TEST(CpuGpuEquality, TopK) { GTEST_SKIP() << "CPU-only build: no CUDA backend to compare with"; }
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
  params.per_pick.epsilon = 2.0;
  params.per_pick.sensitivity = 1.0;
  params.k = k;
  params.per_pick.backend = dpselect::Backend::Cpu;
  dpselect::Context cpu_context = dpselect::Context::with_fixed_seed(seed);
  const dpselect::TopKSelection cpu = dpselect::select_top_k(cpu_context, std::span<const T>(host), params);
  params.per_pick.backend = dpselect::Backend::Gpu;
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
  params.per_pick.epsilon = 1.0;
  params.per_pick.sensitivity = 1.0;
  params.k = dpselect::kGpuTopKMaxK + 1;
  dpselect::Context context = dpselect::Context::with_fixed_seed(1);
  EXPECT_EQ(dpselect::select_top_k(context, std::span<const double>(utilities), params).report.per_pick.executed_on,
            dpselect::ExecutedOn::cpu);
}
#endif

}  // namespace
