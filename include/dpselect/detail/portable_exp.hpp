// SPDX-License-Identifier: Apache-2.0
// An exponential function that returns the same bits on the CPU and the GPU (the companion of
// portable_log.hpp, for the same reason: glibc's exp and CUDA's exp are different functions).
//
// This is fdlibm's e_exp.c algorithm (Sun Microsystems, 1993): x = k ln2 + r with |r| <= ln2/2
// (ln2 split into a 32-bit head and a tail so k*ln2_hi is exact), a degree-5 Remez polynomial in
// r^2 for r(e^r + 1)/(e^r - 1), then scaling by 2^k through the exponent bits. fdlibm documents an
// error below 1 ulp; tests/noise_vector_test.cpp (ContinuousNoise.PortableExpAccuracy) measures
// it against long double. Written with the non-contracting operations of host_device.hpp, so
// both compilers evaluate exactly the same sequence of IEEE roundings.
//
// Domain: finite x. x > 709.78 returns +inf; x < -708.39 (a result below the smallest normal
// double) returns 0 (flush to zero: no subnormal results, unlike fdlibm).
#pragma once

#include <cstdint>

#include "dpselect/detail/host_device.hpp"

namespace dpselect::detail {

inline constexpr double kExpOverflow = 7.09782712893383973096e+02;   // ln(DBL_MAX)
inline constexpr double kExpFlushToZero = -7.08396418532264106224e+02;  // ln(2^-1022)
inline constexpr double kInvLn2 = 1.44269504088896338700e+00;         // 0x3ff71547 652b82fe
inline constexpr double kExpLn2Hi = 6.93147180369123816490e-01;       // 0x3fe62e42 fee00000
inline constexpr double kExpLn2Lo = 1.90821492927058770002e-10;       // 0x3dea39ef 35793c76
inline constexpr double kExpP1 = 1.66666666666666019037e-01;          // 0x3FC55555 5555553E
inline constexpr double kExpP2 = -2.77777777770155933842e-03;         // 0xBF66C16C 16BEBD93
inline constexpr double kExpP3 = 6.61375632143793436117e-05;          // 0x3F11566A AF25DE2C
inline constexpr double kExpP4 = -1.65339022054652515390e-06;         // 0xBEBBBD41 C5D26BF1
inline constexpr double kExpP5 = 4.13813679705723846039e-08;          // 0x3E663769 72BEA4D0

// e^x for finite x (see the file comment for the ends of the range).
DPSELECT_HD DPSELECT_FORCEINLINE double portable_exp(double x) {
  if (x > kExpOverflow) return kInfinity;
  if (x < kExpFlushToZero) return 0.0;
  const std::uint64_t bits = double_bits(x);
  const std::uint32_t hx = static_cast<std::uint32_t>(bits >> 32) & 0x7fffffffu;
  const bool negative = (bits >> 63) != 0;
  int k = 0;
  double hi = 0.0;
  double lo = 0.0;
  double r = x;
  if (hx > 0x3fd62e42u) {  // |x| > ln2 / 2
    if (hx < 0x3FF0A2B2u) {  // and |x| < 1.5 ln2
      hi = negative ? add_rn(x, kExpLn2Hi) : sub_rn(x, kExpLn2Hi);
      lo = negative ? -kExpLn2Lo : kExpLn2Lo;
      k = negative ? -1 : 1;
    } else {
      // Truncation towards zero after adding +-1/2: round to nearest (C and CUDA convert alike).
      k = static_cast<int>(add_rn(mul_rn(kInvLn2, x), negative ? -0.5 : 0.5));
      const double t = static_cast<double>(k);
      hi = sub_rn(x, mul_rn(t, kExpLn2Hi));  // t * ln2_hi is exact: |k| < 2^11
      lo = mul_rn(t, kExpLn2Lo);
    }
    r = sub_rn(hi, lo);
  } else if (hx < 0x3e300000u) {  // |x| < 2^-28: e^x = 1 + x to within half an ulp
    return add_rn(1.0, x);
  }
  const double t = mul_rn(r, r);
  const double c = sub_rn(
      r, mul_rn(t, add_rn(kExpP1,
                          mul_rn(t, add_rn(kExpP2, mul_rn(t, add_rn(kExpP3, mul_rn(t, add_rn(kExpP4, mul_rn(t, kExpP5))))))))));
  if (k == 0) return sub_rn(1.0, sub_rn(div_rn(mul_rn(r, c), sub_rn(c, 2.0)), r));
  const double y = sub_rn(1.0, sub_rn(sub_rn(lo, div_rn(mul_rn(r, c), sub_rn(2.0, c))), hi));
  // y in [1/2, 2]; k in [-1022, 1024]: multiply by 2^k in two exact steps (2^k alone may not be
  // a normal double at the ends of the range).
  const int k1 = k / 2;
  const int k2 = k - k1;
  const double s1 = double_from_bits(static_cast<std::uint64_t>(1023 + k1) << 52);
  const double s2 = double_from_bits(static_cast<std::uint64_t>(1023 + k2) << 52);
  return mul_rn(mul_rn(y, s1), s2);
}

}  // namespace dpselect::detail
