// SPDX-License-Identifier: Apache-2.0
// dpselect/device_memory.hpp as documented, on any build: the release threshold is recorded and
// read back (also without a GPU, where it applies to no pool yet), trimming is safe, and a usage
// query names its problem.
#include "dpselect/device_memory.hpp"  // first, so it is known to compile on its own

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

#include "dpselect/errors.hpp"
#include "dpselect/select.hpp"
#include "support/expect_invalid.hpp"

namespace dpselect {
namespace {

// Leaves the process-wide threshold as the test found it.
class DeviceMemorySettings : public ::testing::Test {
 protected:
  void TearDown() override { set_device_memory_release_threshold(saved_); }
  std::uint64_t saved_ = device_memory_release_threshold();
};

TEST_F(DeviceMemorySettings, DefaultIsOneGibibyte) {
  EXPECT_EQ(kDefaultDeviceMemoryReleaseThreshold, std::uint64_t{1} << 30);
}

TEST_F(DeviceMemorySettings, ThresholdIsReadBackAsSet) {
  for (const std::uint64_t bytes : {std::uint64_t{0}, std::uint64_t{12345}, std::uint64_t{1} << 33,
                                    std::numeric_limits<std::uint64_t>::max(), kDefaultDeviceMemoryReleaseThreshold}) {
    set_device_memory_release_threshold(bytes);
    EXPECT_EQ(device_memory_release_threshold(), bytes);
  }
}

TEST_F(DeviceMemorySettings, TrimIsSafeAtAnyTime) {
  EXPECT_NO_THROW(trim_device_memory());
  EXPECT_NO_THROW(trim_device_memory(std::uint64_t{1} << 20));
  EXPECT_NO_THROW(trim_device_memory(std::numeric_limits<std::uint64_t>::max()));
}

TEST_F(DeviceMemorySettings, ConcurrentSettersLeaveOneOfTheirValues) {
  constexpr int kThreads = 8;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 200; ++i) {
        set_device_memory_release_threshold(static_cast<std::uint64_t>(t) << 20);
        static_cast<void>(device_memory_release_threshold());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const std::uint64_t last = device_memory_release_threshold();
  EXPECT_EQ(last % (std::uint64_t{1} << 20), 0u);
  EXPECT_LT(last >> 20, static_cast<std::uint64_t>(kThreads));
}

TEST(DeviceMemoryUsage, WithoutAGpuTheQueryIsRefusedAsUnavailable) {
  if (gpu_usable()) GTEST_SKIP() << "a CUDA device is usable here (see the GPU tests)";
  EXPECT_THROW(device_memory_usage(0), BackendUnavailable);
  EXPECT_THROW(device_memory_usage(-1), BackendUnavailable);
}

TEST(DeviceMemoryUsage, ADeviceOutOfRangeIsNamed) {
  if (!gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  testing::expect_invalid_message([] { device_memory_usage(-1); }, {"device", "got -1"});
  testing::expect_invalid_message([] { device_memory_usage(4096); }, {"device", "got 4096"});
  EXPECT_NO_THROW(device_memory_usage(0));
}

}  // namespace
}  // namespace dpselect
