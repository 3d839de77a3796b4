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
#include <vector>

#include "dpselect/dpselect.hpp"

#if DPSELECT_TEST_GPU && defined(__CUDACC__)
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

// Evaluates a functor shard on the test's backend.
template <class UtilityFn>
ShardResult evaluate_functor_on_backend(Release& release, const UtilityFn& utility, IndexRange range) {
#if DPSELECT_TEST_GPU && defined(__CUDACC__)
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
#if defined(__CUDACC__)
  __host__ __device__
#endif
  double operator()(std::uint64_t index) const {
    return detail::fma_rn(slope, static_cast<double>(index % 1009), offset);
  }
};

}  // namespace dpselect::testing
