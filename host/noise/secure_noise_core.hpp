// SPDX-License-Identifier: Apache-2.0
// One coordinate of the floating-point-safe ("secure") Laplace and Gaussian noise, shared by the
// CPU loop (host/noise/secure_noise.cpp), the GPU kernel (kernels/secure_noise.cu) and the NumericSparse
// answers (host/sparse_vector/sparse_vector_internal.hpp), so all three give the same double for the same bits.
//
// output = g * (clamp(rint(x / g)) + N), N an exact integer sample (noise/discrete_samplers.hpp):
// a deterministic function of the integer z = clamp(rint(x / g)) + N, so the floating-point
// arithmetic after the sample is post-processing and cannot leak (Mironov 2012; the plan's
// sensitivity already covers the rounding of x, see secure_noise.hpp).
#pragma once

#include <cstdint>

#include "dpselect/detail/host_device.hpp"
#include "dpselect/random_key.hpp"
#include "noise/discrete_samplers.hpp"

namespace dpselect::detail {

// |rint(x / g)| is clamped to this (a 1-Lipschitz map, so the sensitivity is unchanged); with the
// noise (|N| < 2^60, discrete_samplers.hpp) the sum stays inside int64.
inline constexpr double kSecureGridClamp = 0x1p62;

// Everything a coordinate needs; trivially copyable (kernels take it by value).
struct SecureNoiseCore {
  RandomKey key{};
  std::uint64_t stream = 0;
  std::uint64_t first_position = 0;  // coordinate i reads [first + i 2^20, first + (i+1) 2^20)
  double granularity = 0.0;          // g, a power of two
  std::uint64_t num = 1;             // Laplace: scale t = num / den; Gaussian: sigma^2 = num / den
  std::uint64_t den = 1;
  bool gaussian = false;
};

DPSELECT_HD DPSELECT_FORCEINLINE double rint_hd(double x) {
#if defined(__CUDA_ARCH__)
  return rint(x);  // round half to even, like the host's default rounding mode
#else
  return __builtin_rint(x);
#endif
}

DPSELECT_HD DPSELECT_FORCEINLINE double i64_to_double_rn(std::int64_t x) {
#if defined(__CUDA_ARCH__)
  return __ll2double_rn(static_cast<long long>(x));
#else
  return static_cast<double>(x);
#endif
}

// rint(x / g) as an integer, clamped to [-2^62, 2^62]. x finite; g a power of two (x / g exact
// unless it underflows, and then it rounds to 0 either way).
DPSELECT_HD DPSELECT_FORCEINLINE std::int64_t secure_grid_index(double x, double granularity) {
  double q = rint_hd(div_rn(x, granularity));
  q = q > kSecureGridClamp ? kSecureGridClamp : (q < -kSecureGridClamp ? -kSecureGridClamp : q);
  return static_cast<std::int64_t>(q);
}

// The integer noise of coordinate `index`; sets *exhausted (never clears it) on a spent budget.
DPSELECT_HD DPSELECT_FORCEINLINE std::int64_t secure_integer_noise(const SecureNoiseCore& core, std::uint64_t index,
                                                                   bool* exhausted) {
  discrete_core::SamplerBits bits = discrete_core::bits_for_item(core.key, core.stream, core.first_position, index);
  const std::int64_t n = core.gaussian ? discrete_core::discrete_gaussian(bits, core.num, core.den)
                                       : discrete_core::discrete_laplace(bits, core.den, core.num);
  if (bits.exhausted) *exhausted = true;
  return n;
}

// The released value of coordinate `index` with true value x (finite).
// A coordinate whose noise ran out of random bits comes out NaN: never its rounded true value.
DPSELECT_HD DPSELECT_FORCEINLINE double secure_coordinate(const SecureNoiseCore& core, std::uint64_t index, double x,
                                                          bool* exhausted) {
  bool spent = false;
  const std::int64_t noise = secure_integer_noise(core, index, &spent);
  if (spent) {
    *exhausted = true;
    return double_from_bits(0x7FF8000000000000ull);  // NaN
  }
  const std::int64_t z = secure_grid_index(x, core.granularity) + noise;
  return mul_rn(core.granularity, i64_to_double_rn(z));  // g a power of two: exact unless |z| > 2^53
}

}  // namespace dpselect::detail
