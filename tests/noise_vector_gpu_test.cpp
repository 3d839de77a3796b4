// SPDX-License-Identifier: Apache-2.0
// Noise vectors on the GPU give the CPU's bits (GPU machines only): add_noise on device memory and
// with Backend::Gpu on host memory against the CPU pass, for every distribution and both
// generators, and portable_exp / portable_log on the device against the host. Compiled by nvcc
// (as a .cu copy) in CUDA builds; in CPU-only builds the tests are registered and skip.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "dpselect/continuous_noise.hpp"
#include "dpselect/noise_vector.hpp"
#include "dpselect/select.hpp"

#include "support/device_code.hpp"

#if DPSELECT_TEST_DEVICE_CODE
#include <cuda_runtime.h>

#include "dpselect/detail/kernel_launch.cuh"
#endif

namespace {

#if !DPSELECT_TEST_DEVICE_CODE
TEST(NoiseVectorGpu, DeviceNoiseEqualsHostNoise) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(NoiseVectorGpu, PortableExpAndLogMatchOnDevice) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
#else

using dpselect::NoiseDistribution;
using dpselect::NoiseVectorParams;

std::vector<double> test_values(std::size_t n) {
  std::vector<double> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<double>(i % 1000) * 0.37 - 150.0;
  return values;
}

int bit_mismatches(const std::vector<double>& a, const std::vector<double>& b) {
  int mismatches = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    mismatches += std::bit_cast<std::uint64_t>(a[i]) != std::bit_cast<std::uint64_t>(b[i]);
  }
  return mismatches;
}

TEST(NoiseVectorGpu, DeviceNoiseEqualsHostNoise) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  const NoiseVectorParams cases[] = {
      {.distribution = NoiseDistribution::laplace, .epsilon = 0.7},
      {.distribution = NoiseDistribution::gaussian, .epsilon = 0.7, .delta = 1e-6, .sensitivity = 2.0},
      {.distribution = NoiseDistribution::generalized_gaussian, .epsilon = 0.7, .delta = 1e-6, .p = 1.5},
      {.distribution = NoiseDistribution::generalized_gaussian, .epsilon = 0.7, .delta = 1e-6, .p = 32.0},
  };
  for (const dpselect::Generator generator : {dpselect::Generator::chacha20, dpselect::Generator::philox}) {
    for (NoiseVectorParams params : cases) {
      // More values than one grid holds (8192 blocks x 256 threads) for Laplace: the grid-stride loop.
      const std::size_t n = params.distribution == NoiseDistribution::laplace ? (std::size_t{1} << 21) + 3 : 100003;
      const std::vector<double> original = test_values(n);

      std::vector<double> on_cpu = original;
      params.backend = dpselect::Backend::Cpu;
      dpselect::Context cpu_context = dpselect::Context::with_fixed_seed(2027, generator);
      const dpselect::NoiseVectorReport cpu_report = dpselect::add_noise(cpu_context, on_cpu, params);

      params.backend = dpselect::Backend::Auto;
      double* device = nullptr;
      ASSERT_EQ(cudaMalloc(&device, n * sizeof(double)), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(device, original.data(), n * sizeof(double), cudaMemcpyHostToDevice), cudaSuccess);
      dpselect::Context gpu_context = dpselect::Context::with_fixed_seed(2027, generator);
      const dpselect::NoiseVectorReport gpu_report =
          dpselect::add_noise(gpu_context, dpselect::DeviceSpan<double>{device, n}, params, nullptr);
      std::vector<double> on_gpu(n);
      ASSERT_EQ(cudaMemcpy(on_gpu.data(), device, n * sizeof(double), cudaMemcpyDeviceToHost), cudaSuccess);
      cudaFree(device);
      EXPECT_EQ(gpu_report.stream, cpu_report.stream);
      EXPECT_EQ(gpu_report.scale, cpu_report.scale);
      EXPECT_EQ(gpu_report.executed_on, dpselect::ExecutedOn::gpu);
      EXPECT_EQ(bit_mismatches(on_cpu, on_gpu), 0)
          << dpselect::to_string(params.distribution) << " p " << params.p << " " << dpselect::to_string(generator);

      // Host memory through the GPU (Backend::Gpu): copied in and out, same bits.
      std::vector<double> through_gpu = original;
      params.backend = dpselect::Backend::Gpu;
      dpselect::Context host_gpu_context = dpselect::Context::with_fixed_seed(2027, generator);
      const dpselect::NoiseVectorReport host_gpu_report = dpselect::add_noise(host_gpu_context, through_gpu, params);
      EXPECT_EQ(host_gpu_report.executed_on, dpselect::ExecutedOn::gpu);
      EXPECT_EQ(bit_mismatches(on_cpu, through_gpu), 0);
    }
  }
}

__global__ void exp_log_kernel(const double* x, unsigned count, double* exp_out, double* log_out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) {
    exp_out[i] = dpselect::detail::portable_exp(x[i]);
    log_out[i] = x[i] > 0 ? dpselect::detail::portable_log(x[i]) : 0.0;
  }
}

TEST(NoiseVectorGpu, PortableExpAndLogMatchOnDevice) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  std::vector<double> x;
  for (int i = 0; i <= 400000; ++i) {
    x.push_back(-745.0 + 1460.0 * i / 400000.0);
    x.push_back(std::ldexp(1.0 + i / 400000.0, -1000 + i / 200));
  }
  const unsigned count = static_cast<unsigned>(x.size());
  double* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, 3 * count * sizeof(double)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(device, x.data(), count * sizeof(double), cudaMemcpyHostToDevice), cudaSuccess);
  dpselect::detail::launch_kernel<exp_log_kernel>((count + 255) / 256, 256, 0, nullptr, device, count, device + count,
                                                  device + 2 * count);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<double> exp_device(count);
  std::vector<double> log_device(count);
  ASSERT_EQ(cudaMemcpy(exp_device.data(), device + count, count * sizeof(double), cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(log_device.data(), device + 2 * count, count * sizeof(double), cudaMemcpyDeviceToHost),
            cudaSuccess);
  cudaFree(device);
  std::vector<double> exp_host(count);
  std::vector<double> log_host(count);
  for (unsigned i = 0; i < count; ++i) {
    exp_host[i] = dpselect::detail::portable_exp(x[i]);
    log_host[i] = x[i] > 0 ? dpselect::detail::portable_log(x[i]) : 0.0;
  }
  EXPECT_EQ(bit_mismatches(exp_host, exp_device), 0);
  EXPECT_EQ(bit_mismatches(log_host, log_device), 0);
}

#endif

}  // namespace
