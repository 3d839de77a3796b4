// SPDX-License-Identifier: Apache-2.0
// The batched sparse vector on the GPU (values in device memory) gives exactly the CPU batch's
// answers for the same key, and refuses bad values before its charge (GPU machines only).
// Compiled by nvcc (as a .cu copy) in CUDA builds; in CPU-only builds it is still registered and
// reports itself skipped.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "dpselect/dpselect.hpp"

#include "support/device_code.hpp"

#if DPSELECT_TEST_DEVICE_CODE
#include <cuda_runtime.h>
#endif

namespace {

#if !DPSELECT_TEST_DEVICE_CODE
TEST(SparseVectorGpu, DeviceBatchEqualsHostBatch) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(SparseVectorGpu, WindowsWithoutAnswersAndRunsThatDoNotHalt) {
  GTEST_SKIP() << "CPU-only build: no CUDA backend";
}
TEST(SparseVectorGpu, BadDeviceValuesAreRefusedBeforeTheCharge) {
  GTEST_SKIP() << "CPU-only build: no CUDA backend";
}
#else

// Device memory holding a copy of `host`, freed at scope exit.
struct DeviceCopy {
  explicit DeviceCopy(const std::vector<double>& host) : size(host.size()) {
    EXPECT_EQ(cudaMalloc(&data, host.size() * sizeof(double)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(data, host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceCopy() { cudaFree(data); }
  dpselect::DeviceSpan<const double> span() const { return {data, size}; }
  double* data = nullptr;
  std::uint64_t size = 0;
};

dpselect::SparseVectorParams params_for(dpselect::SparseVectorAlgorithm algorithm, bool numeric, std::uint64_t c) {
  dpselect::SparseVectorParams params;
  params.epsilon = 1.0;
  params.sensitivity = 1.0;
  params.threshold = 10.0;
  params.max_positives = c;
  params.numeric = numeric;
  params.algorithm = algorithm;
  return params;
}

// 10^6 queries with values around the threshold, so that "above" answers come at irregular
// gaps, some close together (the runs halt early; the next test covers long windows).
TEST(SparseVectorGpu, DeviceBatchEqualsHostBatch) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  std::vector<double> values(1'000'000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = -20.0 + 25.0 * std::sin(0.001 * i) * std::sin(0.37 * i);
  const DeviceCopy device(values);
  int compared = 0;
  for (const auto algorithm : {dpselect::SparseVectorAlgorithm::dwork_roth, dpselect::SparseVectorAlgorithm::lyu_su_li}) {
    for (const bool numeric : {false, true}) {
      for (const std::uint64_t c : {std::uint64_t{1}, std::uint64_t{50}}) {
        for (std::uint64_t seed = 0; seed < 5; ++seed) {
          const dpselect::SparseVectorParams params = params_for(algorithm, numeric, c);
          dpselect::Context on_host = dpselect::Context::with_fixed_seed(seed);
          dpselect::Context on_device = dpselect::Context::with_fixed_seed(seed);
          const dpselect::SparseVectorBatch expected = dpselect::sparse_vector_batch(on_host, values, params);
          const dpselect::SparseVectorBatch actual =
              dpselect::sparse_vector_batch(on_device, device.span(), params, nullptr);
          ASSERT_EQ(expected.above.size(), actual.above.size());
          for (std::size_t j = 0; j < expected.above.size(); ++j) {
            EXPECT_EQ(expected.above[j].index, actual.above[j].index);
            EXPECT_EQ(expected.above[j].value, actual.above[j].value);  // bit for bit
          }
          EXPECT_EQ(expected.report.queries, actual.report.queries);
          EXPECT_EQ(expected.report.slack.epsilon, actual.report.slack.epsilon);
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, 40);
}

// Values far below the threshold with a few far above (at the edges of the GPU's windows and
// beyond), c larger than their number: windows with no "above", growing windows, and a run that
// does not halt (report.queries == n). T = 10, scales <= 8: -1000 is "below" and 100 "above"
// except with probability < e^-11 each (the equality holds either way).
TEST(SparseVectorGpu, WindowsWithoutAnswersAndRunsThatDoNotHalt) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  std::vector<double> values(1'000'000, -1000.0);
  for (const std::size_t i : {std::size_t{65'535}, std::size_t{65'536}, std::size_t{70'000},
                              std::size_t{(1u << 18) + 1}, std::size_t{900'000}}) {
    values[i] = 100.0;
  }
  const DeviceCopy device(values);
  for (const auto algorithm : {dpselect::SparseVectorAlgorithm::dwork_roth, dpselect::SparseVectorAlgorithm::lyu_su_li}) {
    for (const bool numeric : {false, true}) {
      const dpselect::SparseVectorParams params = params_for(algorithm, numeric, 8);
      dpselect::Context on_host = dpselect::Context::with_fixed_seed(3);
      dpselect::Context on_device = dpselect::Context::with_fixed_seed(3);
      const dpselect::SparseVectorBatch expected = dpselect::sparse_vector_batch(on_host, values, params);
      const dpselect::SparseVectorBatch actual = dpselect::sparse_vector_batch(on_device, device.span(), params, nullptr);
      EXPECT_EQ(expected.report.queries, values.size());
      EXPECT_FALSE(actual.report.halted);
      ASSERT_EQ(expected.above.size(), actual.above.size());
      for (std::size_t j = 0; j < expected.above.size(); ++j) {
        EXPECT_EQ(expected.above[j].index, actual.above[j].index);
        EXPECT_EQ(expected.above[j].value, actual.above[j].value);
      }
      EXPECT_EQ(expected.report.queries, actual.report.queries);
    }
  }
}

TEST(SparseVectorGpu, BadDeviceValuesAreRefusedBeforeTheCharge) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  auto accountant = std::make_shared<dpselect::PrivacyAccountant>(dpselect::PrivacyBound{10.0, 0.0});
  dpselect::Context context = dpselect::Context::with_fixed_seed(1);
  context.charge_to(accountant);
  dpselect::SparseVectorParams params = params_for(dpselect::SparseVectorAlgorithm::dwork_roth, false, 1);
  std::vector<double> values(100'000, 1.0);
  values[70'001] = std::nan("");
  values[90'000] = INFINITY;
  const DeviceCopy with_nan(values);
  try {
    dpselect::sparse_vector_batch(context, with_nan.span(), params, nullptr);
    ADD_FAILURE() << "no exception";
  } catch (const dpselect::InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("query value 70001"), std::string::npos) << error.what();
  }
  values[70'001] = 1.0;
  values[90'000] = 1.0;
  values[5] = 250.0;
  params.value_bound = 100.0;
  const DeviceCopy beyond_bound(values);
  try {
    dpselect::sparse_vector_batch(context, beyond_bound.span(), params, nullptr);
    ADD_FAILURE() << "no exception";
  } catch (const dpselect::InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("query value 5"), std::string::npos) << error.what();
  }
  EXPECT_EQ(accountant->release_count(), 0u);
}

#endif

}  // namespace
