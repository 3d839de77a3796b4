// SPDX-License-Identifier: Apache-2.0
// Noise from an exponential race: the transforms of the group-maximum screen (docs/group_maximum.md),
// the same bits on the CPU and the GPU.
//
// A group of m = 32 candidates draws V (its largest uniform is V^(1/m)), the position J of that
// maximum, and W_j for the others. In the exponential domain, with E_V = -ln V and E'_j = -ln W_j
// (both from split_uniform, noise.hpp), the group's T_j = -ln U_j are
//     T_J = E_V / m,      T_j = E_V / m + E'_j  (j != J),
// the exponential race: the minimum of m Exp(1) is Exp(1)/m, and by memorylessness the others
// exceed it by independent Exp(1) (Renyi 1953, "On the theory of order statistics"; Maddison,
// Tarlow & Minka 2014, "A* Sampling", section 2). Each mechanism's noise is a decreasing function
// of T, computed here without a power and without a subtraction near 1:
//     Gumbel (exponential mechanism)       -ln T
//     exponential (permute-and-flip)       -ln(1 - e^-T)
//     Laplace (report-noisy-max)           -ln(2 (1 - e^-T)) for T < ln 2, else ln 2 - T.
// The selection engine draws every candidate's noise this way (screened_scoring.hpp); these building
// blocks are tested for accuracy against long double and for the joint law
// (tests/exponential_race_test.cpp).
#pragma once

#include "dpselect/detail/host_device.hpp"
#include "dpselect/detail/portable_exp.hpp"
#include "dpselect/detail/portable_log.hpp"

namespace dpselect::detail {

inline constexpr double kRaceGroupSize = 32.0;  // m: a power of two, so E_V / m is exact
inline constexpr double kRaceLn2 = 0.69314718055994530942;

// 1 - e^-t (= -expm1(-t)) for t >= 0, to a few ulps relative to the result wherever it is
// normal: the small-t end, where 1 - e^-t ~ t, is the large-noise tail that decides privacy, and
// 1 - portable_exp(-t) would lose all its relative accuracy there.
//   t > 1/2: 1 - e^-t >= 0.39, so the subtraction from 1 costs at most ~2 ulps.
//   t <= 1/2: the Taylor series in nested form, t (1 - t/2 (1 - t/3 (... (1 - t/17)))): every
//     nested factor lies in [3/4, 1] and is formed from a product below 1/4, so the roundings
//     stay within a few ulps; the first omitted term is t^18 / 18! <= t * 2^-17 / 18! < t * 2^-69.
// Measured: under 4 ulps against long double, and never more than 2 ulps below its value at a
// smaller t (tests/exponential_race_test.cpp).
DPSELECT_HD DPSELECT_FORCEINLINE double one_minus_exp_minus(double t) {
  if (t > 0.5) return sub_rn(1.0, portable_exp(-t));
  double nested = 1.0;
  DPSELECT_UNROLL
  for (int k = 17; k >= 2; --k) nested = sub_rn(1.0, mul_rn(div_rn(t, static_cast<double>(k)), nested));
  return mul_rn(t, nested);
}

// T_J and T_j of a group from E_V and E'_j.
DPSELECT_HD DPSELECT_FORCEINLINE double race_leader(double e_v) { return mul_rn(e_v, 1.0 / kRaceGroupSize); }
DPSELECT_HD DPSELECT_FORCEINLINE double race_follower_time(double leader_time, double e_prime) {
  return add_rn(leader_time, e_prime);
}
DPSELECT_HD DPSELECT_FORCEINLINE double race_follower(double e_v, double e_prime) {
  return race_follower_time(race_leader(e_v), e_prime);
}

// The standard noises of a race time t > 0 (a normal double).
DPSELECT_HD DPSELECT_FORCEINLINE double gumbel_from_race(double t) { return -portable_log(t); }
DPSELECT_HD DPSELECT_FORCEINLINE double exponential_from_race(double t) {
  return -portable_log(one_minus_exp_minus(t));
}
DPSELECT_HD DPSELECT_FORCEINLINE double laplace_from_race(double t) {
  return t < kRaceLn2 ? -portable_log(mul_rn(2.0, one_minus_exp_minus(t))) : sub_rn(kRaceLn2, t);
}

}  // namespace dpselect::detail
