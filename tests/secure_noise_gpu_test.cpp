// SPDX-License-Identifier: Apache-2.0
// Secure noise on the GPU (values in device memory) writes exactly the host's doubles for the
// same key and stream, and refuses bad values before its charge (GPU machines only). Compiled by
// nvcc (as a .cu copy) in CUDA builds; in CPU-only builds it is registered and reports itself skipped.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "dpselect/dpselect.hpp"

#include "support/device_code.hpp"

#if DPSELECT_TEST_DEVICE_CODE
#include <cuda_runtime.h>
#endif

namespace {

#if !DPSELECT_TEST_DEVICE_CODE
TEST(SecureNoiseGpu, DeviceEqualsHostBitForBit) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(SecureNoiseGpu, BadDeviceValuesAreRefusedBeforeTheCharge) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
#else

struct DeviceBuffer {
  explicit DeviceBuffer(const std::vector<double>& host) : size(host.size()) {
    EXPECT_EQ(cudaMalloc(&data, host.size() * sizeof(double)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(data, host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceBuffer() { cudaFree(data); }
  std::vector<double> read() const {
    std::vector<double> host(size);
    EXPECT_EQ(cudaMemcpy(host.data(), data, size * sizeof(double), cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }
  dpselect::DeviceSpan<double> span() const { return {data, size}; }
  double* data = nullptr;
  std::uint64_t size = 0;
};

TEST(SecureNoiseGpu, DeviceEqualsHostBitForBit) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  // Sizes around block boundaries, both distributions, both generators, on and off the grid.
  for (const std::size_t n : {std::size_t{1}, std::size_t{255}, std::size_t{257}, std::size_t{100'003}}) {
    std::vector<double> values(n);
    for (std::size_t i = 0; i < n; ++i) values[i] = std::round(1000.0 * std::sin(0.37 * i));
    for (const auto generator : {dpselect::Generator::chacha20, dpselect::Generator::philox}) {
      for (const auto distribution : {dpselect::SecureDistribution::laplace, dpselect::SecureDistribution::gaussian}) {
        for (const bool on_grid : {false, true}) {
          dpselect::SecureNoiseParams params;
          params.distribution = distribution;
          params.epsilon = 0.7;
          params.delta = distribution == dpselect::SecureDistribution::gaussian ? 1e-6 : 0.0;
          params.sensitivity = 3.0;
          params.inputs_on_grid = on_grid;
          std::vector<double> host = values;
          dpselect::Context host_context = dpselect::Context::with_fixed_seed(77, generator);
          const auto host_report = dpselect::add_secure_noise(host_context, host, params);
          DeviceBuffer device(values);
          dpselect::Context device_context = dpselect::Context::with_fixed_seed(77, generator);
          const auto device_report = dpselect::add_secure_noise(device_context, device.span(), params, nullptr);
          EXPECT_EQ(host_report.stream, device_report.stream);
          EXPECT_EQ(host_report.plan.granularity, device_report.plan.granularity);
          const std::vector<double> from_device = device.read();
          ASSERT_EQ(std::memcmp(host.data(), from_device.data(), n * sizeof(double)), 0) << "n " << n;
        }
      }
    }
  }
}

TEST(SecureNoiseGpu, BadDeviceValuesAreRefusedBeforeTheCharge) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  auto accountant = std::make_shared<dpselect::PrivacyAccountant>(dpselect::PrivacyBound{10.0, 0.0});
  dpselect::Context context = dpselect::Context::with_fixed_seed(1);
  context.charge_to(accountant);
  dpselect::SecureNoiseParams params;
  params.epsilon = 1.0;
  params.sensitivity = 1.0;
  DeviceBuffer with_nan(std::vector<double>{1.0, 2.0, std::nan(""), 4.0});
  EXPECT_THROW(dpselect::add_secure_noise(context, with_nan.span(), params, nullptr), dpselect::InvalidArgument);
  params.inputs_on_grid = true;
  DeviceBuffer off_grid(std::vector<double>{1.0, 0.1});
  EXPECT_THROW(dpselect::add_secure_noise(context, off_grid.span(), params, nullptr), dpselect::InvalidArgument);
  EXPECT_EQ(off_grid.read()[1], 0.1);
  EXPECT_EQ(accountant->release_count(), 0u);
}
#endif

}  // namespace
