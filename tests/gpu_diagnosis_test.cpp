// SPDX-License-Identifier: Apache-2.0
// The words a user gets when a GPU is present but this build cannot use it: every outcome of the
// device probe, built by hand, so that each message is checked on machines without a GPU.
#include "device/gpu.hpp"

#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "dpselect/dpselect.hpp"

namespace dpselect::detail {
namespace {

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

GpuProbe probe_of(GpuProbeOutcome outcome) {
  GpuProbe probe;
  probe.outcome = outcome;
  return probe;
}

TEST(GpuDiagnosis, NothingToSayWhenUsableOrAbsent) {
  EXPECT_EQ(describe_unusable_gpu(probe_of(GpuProbeOutcome::usable)), "");
  EXPECT_EQ(describe_unusable_gpu(probe_of(GpuProbeOutcome::no_gpu)), "");
}

TEST(GpuDiagnosis, MissingKernelNamesTheDeviceTheBuildAndTheFix) {
  GpuProbe probe = probe_of(GpuProbeOutcome::no_kernel_image);
  probe.device_name = "NVIDIA A100-SXM4-80GB";
  probe.compute_major = 8;
  probe.compute_minor = 0;
  probe.built_architectures = "90";
  const std::string text = describe_unusable_gpu(probe);
  EXPECT_EQ(text,
            "this build has no kernel for the GPU NVIDIA A100-SXM4-80GB (compute capability 8.0) "
            "(built for CUDA architectures 90), so Backend::Auto runs on the CPU; rebuild with "
            "-DCMAKE_CUDA_ARCHITECTURES=native (pip: CMAKE_ARGS=-DCMAKE_CUDA_ARCHITECTURES=native) or with a "
            "list that includes 80");
}

TEST(GpuDiagnosis, MissingKernelWithoutDeviceDetails) {
  const std::string text = describe_unusable_gpu(probe_of(GpuProbeOutcome::no_kernel_image));
  EXPECT_TRUE(Contains(text, "no kernel for the GPU (built for CUDA architectures unknown)"));
  EXPECT_TRUE(Contains(text, "-DCMAKE_CUDA_ARCHITECTURES=native"));
  EXPECT_FALSE(Contains(text, "list that includes"));
}

TEST(GpuDiagnosis, BuildWithoutCuda) {
  const std::string text = describe_unusable_gpu(probe_of(GpuProbeOutcome::backend_not_built));
  EXPECT_TRUE(Contains(text, "an NVIDIA GPU is present but this build has no CUDA backend"));
  EXPECT_TRUE(Contains(text, "DPSELECT_CUDA=OFF or without nvcc on PATH"));
  EXPECT_TRUE(Contains(text, "so Backend::Auto runs on the CPU"));
  EXPECT_TRUE(Contains(text, "install the CUDA Toolkit"));
}

TEST(GpuDiagnosis, DriverOlderThanTheRuntime) {
  GpuProbe probe = probe_of(GpuProbeOutcome::driver_too_old);
  probe.driver_cuda_version = 12040;
  probe.runtime_cuda_version = 13000;
  EXPECT_EQ(describe_unusable_gpu(probe),
            "the NVIDIA driver supports CUDA 12.4 but this build's CUDA runtime is 13.0, so "
            "Backend::Auto runs on the CPU; update the NVIDIA driver, or rebuild with a CUDA Toolkit no newer "
            "than 12.4");
}

TEST(GpuDiagnosis, DriverLibraryMissing) {
  const std::string text = describe_unusable_gpu(probe_of(GpuProbeOutcome::driver_missing));
  EXPECT_TRUE(Contains(text, "libcuda.so"));
  EXPECT_TRUE(Contains(text, "so Backend::Auto runs on the CPU"));
}

TEST(GpuDiagnosis, NoStreamOrderedAllocator) {
  GpuProbe probe = probe_of(GpuProbeOutcome::no_memory_pools);
  probe.device_name = "GRID T4-4C";
  probe.compute_major = 7;
  probe.compute_minor = 5;
  const std::string text = describe_unusable_gpu(probe);
  EXPECT_TRUE(Contains(text, "the GPU GRID T4-4C (compute capability 7.5) does not support stream-ordered "
                              "memory allocation (cudaMallocAsync)"));
  EXPECT_TRUE(Contains(text, "update the NVIDIA driver"));
}

TEST(GpuDiagnosis, OtherRuntimeErrorsQuoteCuda) {
  GpuProbe probe = probe_of(GpuProbeOutcome::runtime_error);
  probe.error_text = "all CUDA-capable devices are busy or unavailable";
  EXPECT_EQ(describe_unusable_gpu(probe),
            "CUDA could not be initialised (all CUDA-capable devices are busy or unavailable), so "
            "Backend::Auto runs on the CPU; check the GPU and driver with nvidia-smi");
  EXPECT_TRUE(Contains(describe_unusable_gpu(probe_of(GpuProbeOutcome::runtime_error)), "(unknown error)"));
}

// On a machine where no NVIDIA GPU is present (every CI machine), there is nothing to explain and
// a release with Backend::Auto on the CPU carries no reason. On a machine with a GPU the reason
// depends on that GPU and this build: skipped.
TEST(GpuDiagnosis, ReportCarriesNoReasonWithoutGpu) {
  if (nvidia_gpu_present_to_os() || gpu_usable()) GTEST_SKIP() << "an NVIDIA GPU is present";
  EXPECT_EQ(gpu_unusable_reason(), "");
  Context context = Context::with_fixed_seed(3);
  SelectionParams params;
  params.epsilon = 1.0;
  params.sensitivity = 1.0;
  const std::vector<float> utilities = {1.0f, 2.0f, 3.0f};
  const Selection pick = select(context, std::span<const float>(utilities), params);
  EXPECT_EQ(pick.report.executed_on, ExecutedOn::cpu);
  EXPECT_EQ(pick.report.cpu_fallback_reason, "");
}

}  // namespace
}  // namespace dpselect::detail
