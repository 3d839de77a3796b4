// SPDX-License-Identifier: Apache-2.0
// A host pointer passed as device memory is refused with InvalidArgument before any charge,
// instead of a kernel raising cudaErrorIllegalAddress, which is sticky and would leave the CUDA
// context unusable for the rest of the process (GPU machines only; registered and skipped
// elsewhere). Devices that read pageable host memory (HMM, Grace Hopper) accept it instead.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "dpselect/dpselect.hpp"

#include "support/device_code.hpp"

#if DPSELECT_TEST_DEVICE_CODE
#include <cuda_runtime.h>
#endif

namespace {

#if !DPSELECT_TEST_DEVICE_CODE
TEST(DevicePointer, HostMemoryIsRefusedBeforeTheCharge) {
  GTEST_SKIP() << "CPU-only build: no CUDA backend";
}
#else

bool device_reads_pageable_memory() {
  int device = 0;
  int pageable = 0;
  return cudaGetDevice(&device) == cudaSuccess &&
         cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, device) == cudaSuccess &&
         pageable != 0;
}

TEST(DevicePointer, HostMemoryIsRefusedBeforeTheCharge) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  if (device_reads_pageable_memory()) GTEST_SKIP() << "this device reads pageable host memory";
  auto accountant = std::make_shared<dpselect::PrivacyAccountant>(dpselect::PrivacyBound{10.0, 0.0});
  dpselect::Context context = dpselect::Context::with_fixed_seed(7);
  context.charge_to(accountant);

  std::vector<float> host_utilities(1000, 1.0f);
  dpselect::SelectionParams selection;
  selection.epsilon = 1.0;
  selection.sensitivity = 1.0;
  EXPECT_THROW(dpselect::select(context,
                                dpselect::DeviceSpan<const float>{host_utilities.data(), host_utilities.size()},
                                selection, nullptr),
               dpselect::InvalidArgument);

  std::vector<double> host_values(1000, 0.0);
  dpselect::NoiseVectorParams noise{.epsilon = 1.0};
  EXPECT_THROW(dpselect::add_noise(context, dpselect::DeviceSpan<double>{host_values.data(), host_values.size()},
                                   noise, nullptr),
               dpselect::InvalidArgument);
  dpselect::SecureNoiseParams secure{.epsilon = 1.0, .sensitivity = 1.0};
  EXPECT_THROW(dpselect::add_secure_noise(context, dpselect::DeviceSpan<double>{host_values.data(), host_values.size()},
                                          secure, nullptr),
               dpselect::InvalidArgument);
  EXPECT_EQ(accountant->spent().epsilon, 0.0);

  // The context and the device still work: nothing sticky was left behind.
  float* device_utilities = nullptr;
  ASSERT_EQ(cudaMalloc(&device_utilities, host_utilities.size() * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(device_utilities, host_utilities.data(), host_utilities.size() * sizeof(float),
                       cudaMemcpyHostToDevice),
            cudaSuccess);
  const dpselect::Selection pick = dpselect::select(
      context, dpselect::DeviceSpan<const float>{device_utilities, host_utilities.size()}, selection, nullptr);
  EXPECT_LT(pick.index, host_utilities.size());
  EXPECT_EQ(accountant->spent().epsilon, 1.0);
  cudaFree(device_utilities);
}

#endif

}  // namespace
