// SPDX-License-Identifier: Apache-2.0
// One test body, every backend: the backend-generic test sources are compiled twice, once with
// DPSELECT_TEST_GPU=0 (CPU backend) and once with DPSELECT_TEST_GPU=1 (GPU backend, as .cu files
// when CUDA is enabled). GPU instances skip — and are reported as skipped — when no CUDA device
// is usable.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <ostream>
#include <span>
#include <stdexcept>
#include <vector>

#include "dpselect/dpselect.hpp"

#include "device_code.hpp"

#if DPSELECT_TEST_GPU && DPSELECT_TEST_DEVICE_CODE
#include <cuda_runtime.h>

#include "dpselect/select.cuh"
#endif

namespace dpselect {
// Readable test names and failure messages in GoogleTest.
inline void PrintTo(Mechanism mechanism, std::ostream* out) { *out << to_string(mechanism); }
}  // namespace dpselect

namespace dpselect::testing {

inline constexpr bool kGpuBackend = DPSELECT_TEST_GPU != 0;
inline constexpr Backend kBackend = kGpuBackend ? Backend::Gpu : Backend::Cpu;
inline constexpr ExecutedOn kExecutedOn = kGpuBackend ? ExecutedOn::gpu : ExecutedOn::cpu;

inline SelectionParams params_for(Mechanism mechanism, double epsilon, double sensitivity,
                                  bool monotone = false) {
  SelectionParams params;
  params.mechanism = mechanism;
  params.epsilon = epsilon;
  params.sensitivity = sensitivity;
  params.monotone = monotone;
  params.backend = kBackend;
  return params;
}

class BackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kGpuBackend && !gpu_usable()) GTEST_SKIP() << "no usable CUDA device (GPU backend test)";
  }
};

// Utilities the releases of a test read: host memory on the CPU backend; device memory on the
// GPU backend (when compiled by nvcc), so the GPU instances exercise the DeviceSpan entry points.
template <class T>
class BackendUtilities {
 public:
  explicit BackendUtilities(const std::vector<T>& host) : host_(host) {
#if DPSELECT_TEST_GPU && DPSELECT_TEST_DEVICE_CODE
    if (cudaMalloc(&device_, host.size() * sizeof(T)) != cudaSuccess ||
        cudaMemcpy(device_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess) {
      throw std::runtime_error("test: cannot stage utilities on the device");
    }
#endif
  }
  BackendUtilities(const BackendUtilities&) = delete;
  BackendUtilities& operator=(const BackendUtilities&) = delete;
  ~BackendUtilities() {
#if DPSELECT_TEST_GPU && DPSELECT_TEST_DEVICE_CODE
    cudaFree(device_);
#endif
  }

  // The utilities as a rows x cols matrix: a DeviceMatrix on the GPU backend.
  RowsSelection select_rows_with(Context& context, std::uint64_t rows, std::uint64_t cols,
                                 const SelectionParams& params) const {
#if DPSELECT_TEST_GPU && DPSELECT_TEST_DEVICE_CODE
    return select_rows(context, DeviceMatrix<const T>{device_, rows, cols}, params, cudaStreamPerThread);
#else
    return select_rows(context, HostMatrix<const T>{host_.data(), rows, cols}, params);
#endif
  }

  Selection select_with(Context& context, const SelectionParams& params) const {
#if DPSELECT_TEST_GPU && DPSELECT_TEST_DEVICE_CODE
    return select(context, DeviceSpan<const T>{device_, host_.size()}, params, cudaStreamPerThread);
#else
    return select(context, std::span<const T>(host_), params);
#endif
  }

  // Utilities [first, first + count) evaluated by `shards` (a Release or a ReleaseTicket): from
  // device memory on the GPU backend.
  template <class Shards>
  ShardResult evaluate_with(Shards&& shards, std::uint64_t first, std::uint64_t count) const {
#if DPSELECT_TEST_GPU && DPSELECT_TEST_DEVICE_CODE
    return shards.evaluate(DeviceSpan<const T>{device_ + first, count}, first, cudaStreamPerThread);
#else
    return shards.evaluate(std::span<const T>(host_).subspan(first, count), first);
#endif
  }

 private:
  const std::vector<T>& host_;
  T* device_ = nullptr;
};

// Evaluates a functor shard on the test's backend.
template <class UtilityFn>
ShardResult evaluate_functor_on_backend(Release& release, const UtilityFn& utility, IndexRange range) {
#if DPSELECT_TEST_GPU && DPSELECT_TEST_DEVICE_CODE
  return evaluate_functor(release, utility, range, cudaStreamPerThread);
#else
  return evaluate_functor_on_cpu(release, utility, range);
#endif
}

// A utility vector as a functor (callable on host and device when compiled by nvcc). Written
// with an explicit fma so host and device compute the same bits (nvcc would otherwise contract
// a multiply-add on the device only).
struct Affine {
  double slope;
  double offset;
#if DPSELECT_TEST_GPU && DPSELECT_TEST_DEVICE_CODE
  __host__ __device__
#endif
  double operator()(std::uint64_t index) const {
    return detail::fma_rn(slope, static_cast<double>(index % 1009), offset);
  }
};

}  // namespace dpselect::testing
