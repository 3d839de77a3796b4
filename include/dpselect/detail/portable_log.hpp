// SPDX-License-Identifier: Apache-2.0
// A natural logarithm that returns the same bits on the CPU and the GPU.
//
// glibc's log and CUDA's log are both accurate to about one ulp but they are different
// functions, so a noisy score computed on the host and on the device could differ in the last
// bit and, rarely, change an argmax. This is fdlibm's e_log.c algorithm (Sun Microsystems,
// 1993: reduction to log(1+f) with f in [sqrt(2)/2-1, sqrt(2)-1], s = f/(2+f), a degree-14
// polynomial in s), written with the non-contracting operations of host_device.hpp so both
// compilers evaluate exactly the same sequence of IEEE roundings. fdlibm documents an error
// below 1 ulp; tests/portable_log_test.cpp measures it against long double.
//
// Domain: positive, finite, normal doubles (all the noise transforms need). Nothing else is
// checked here; callers guarantee it.
#pragma once

#include <cstdint>

#include "dpselect/detail/host_device.hpp"

namespace dpselect::detail {

inline constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 3fe62e42 fee00000
inline constexpr double kLn2Lo = 1.90821492927058770002e-10;  // 3dea39ef 35793c76
inline constexpr double kLg1 = 6.666666666666735130e-01;      // 3FE55555 55555593
inline constexpr double kLg2 = 3.999999999940941908e-01;      // 3FD99999 9997FA04
inline constexpr double kLg3 = 2.857142874366239149e-01;      // 3FD24924 94229359
inline constexpr double kLg4 = 2.222219843214978396e-01;      // 3FCC71C5 1D8E78AF
inline constexpr double kLg5 = 1.818357216161805012e-01;      // 3FC74664 96CB03DE
inline constexpr double kLg6 = 1.531383769920937332e-01;      // 3FC39A09 D078C69F
inline constexpr double kLg7 = 1.479819860511658591e-01;      // 3FC2F112 DF3E5244

// k*ln(2) + log(1 + f) for f in [sqrt(2)/2 - 1, sqrt(2) - 1] (fdlibm's main path).
DPSELECT_HD DPSELECT_FORCEINLINE double log_reduced(int k, double f) {
  const double dk = static_cast<double>(k);
  const double s = div_rn(f, add_rn(2.0, f));
  const double z = mul_rn(s, s);
  const double w = mul_rn(z, z);
  const double t1 =
      mul_rn(w, add_rn(kLg2, mul_rn(w, add_rn(kLg4, mul_rn(w, kLg6)))));
  const double t2 = mul_rn(
      z, add_rn(kLg1, mul_rn(w, add_rn(kLg3, mul_rn(w, add_rn(kLg5, mul_rn(w, kLg7)))))));
  const double r = add_rn(t2, t1);
  const double hfsq = mul_rn(mul_rn(0.5, f), f);
  // dk*ln2_hi - ((hfsq - (s*(hfsq+R) + dk*ln2_lo)) - f)
  const double inner = add_rn(mul_rn(s, add_rn(hfsq, r)), mul_rn(dk, kLn2Lo));
  return sub_rn(mul_rn(dk, kLn2Hi), sub_rn(sub_rn(hfsq, inner), f));
}

// log(x) for positive normal finite x.
DPSELECT_HD DPSELECT_FORCEINLINE double portable_log(double x) {
  const std::uint64_t bits = double_bits(x);
  std::int32_t hx = static_cast<std::int32_t>(bits >> 32);
  const std::uint32_t lx = static_cast<std::uint32_t>(bits);
  int k = (hx >> 20) - 1023;
  hx &= 0x000fffff;
  // Normalise the mantissa m into [sqrt(2)/2, sqrt(2)): i is 0x100000 when m >= sqrt(2).
  const std::int32_t i = (hx + 0x95f64) & 0x100000;
  const std::uint64_t m_bits =
      (static_cast<std::uint64_t>(static_cast<std::uint32_t>(hx | (i ^ 0x3ff00000))) << 32) | lx;
  k += i >> 20;
  const double f = sub_rn(double_from_bits(m_bits), 1.0);  // exact (Sterbenz)
  return log_reduced(k, f);
}

// log(1 - v) for v in (0, 1/2], accurate for tiny v where 1 - v would round to 1.
DPSELECT_HD DPSELECT_FORCEINLINE double portable_log1m(double v) {
  // 1 - sqrt(2)/2: below it, f = -v is already in the reduced interval (k = 0).
  constexpr double kOneMinusSqrtHalf = 0.29289321881345247560;
  if (v < kOneMinusSqrtHalf) return log_reduced(0, -v);
  // 1 - v in (1/2, sqrt(2)/2]: log(1 - v) = log(2(1 - v)) - ln 2, and 2(1-v) - 1 = 1 - 2v is
  // exact because 2v is within a factor two of 1 (Sterbenz).
  return log_reduced(-1, sub_rn(1.0, mul_rn(2.0, v)));
}

}  // namespace dpselect::detail
