// SPDX-License-Identifier: Apache-2.0
// The public noise math gives the same bits whatever flags the including translation unit was
// compiled with. GCC contracts a * b + c into one fused multiply-add by default
// (-ffp-contract=fast) wherever the target has FMA (-mfma, -march=native, every aarch64), which
// would make a consumer's CPU path round differently from the library's and from the GPU's.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <vector>

#include "noise_math_probe.hpp"

namespace {

using namespace dpselect_contraction_probe;

bool cpu_has_fma() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("fma");
#else
  return true;  // aarch64 and the others build the "fma" copy for what they have
#endif
}

// 400,001 arguments spread over the ranges the noise transforms use: (0, 1) for the logs of
// uniforms and the exponential's range.
std::vector<double> arguments(double low, double high) {
  constexpr int count = 400'001;
  std::vector<double> values(count);
  for (int i = 0; i < count; ++i) values[i] = low + (high - low) * (i + 0.5) / count;
  return values;
}

using Probe = void (*)(const double*, double*, std::size_t);

// How many results differ in any bit between the two compilations.
std::size_t differing_bits(Probe unfused, Probe fma_fast, const std::vector<double>& in) {
  std::vector<double> expected(in.size()), got(in.size());
  unfused(in.data(), expected.data(), in.size());
  fma_fast(in.data(), got.data(), in.size());
  std::size_t differing = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    differing += std::bit_cast<std::uint64_t>(expected[i]) != std::bit_cast<std::uint64_t>(got[i]);
  }
  return differing;
}

TEST(Contraction, PortableLogIsTheSameUnderFmaFastContraction) {
  if (!cpu_has_fma()) GTEST_SKIP() << "this CPU has no FMA: the fused build cannot run here";
  EXPECT_EQ(differing_bits(log_values_unfused, log_values_fma_fast, arguments(1e-300, 1.0)), 0u);
  EXPECT_EQ(differing_bits(log_values_unfused, log_values_fma_fast, arguments(1.0, 1e6)), 0u);
}

TEST(Contraction, PortableLog1mIsTheSameUnderFmaFastContraction) {
  if (!cpu_has_fma()) GTEST_SKIP() << "this CPU has no FMA: the fused build cannot run here";
  EXPECT_EQ(differing_bits(log1m_values_unfused, log1m_values_fma_fast, arguments(1e-12, 0.5)), 0u);
}

TEST(Contraction, PortableExpIsTheSameUnderFmaFastContraction) {
  if (!cpu_has_fma()) GTEST_SKIP() << "this CPU has no FMA: the fused build cannot run here";
  EXPECT_EQ(differing_bits(exp_values_unfused, exp_values_fma_fast, arguments(-700.0, 700.0)), 0u);
}

}  // namespace
