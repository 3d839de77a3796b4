// SPDX-License-Identifier: Apache-2.0
// delta of the discrete and continuous Gaussian mechanisms, and the analytic Gaussian sigma.
//
// All three return values from the safe side: a delta is an upper bound (the exact value plus a
// bound on the long double rounding error, then rounded up to a double), and the sigma satisfies
// gaussian_delta(sigma) <= delta as computed here.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>

#include "accounting/calibration_cache.hpp"
#include "dpselect/discrete_noise.hpp"
#include "dpselect/errors.hpp"
#include "validation/validation.hpp"

namespace dpselect::discrete {
namespace {

constexpr long double kLdEps = LDBL_EPSILON;
constexpr long double kSqrt2 = 1.41421356237309504880168872420969808L;
constexpr long double kSqrtPi = 1.77245385090551602729816748334114518L;

double round_up(long double x) {
  double d = static_cast<double>(x);
  if (static_cast<long double>(d) < x) d = std::nextafter(d, std::numeric_limits<double>::infinity());
  return d;
}

double clamp_probability(long double x) {
  if (!(x > 0)) return 0.0;
  return x >= 1 ? 1.0 : round_up(x);
}

// ln P[N(0,1) > y]. erfcl stays a normal long double up to y ~ 150; beyond 140 use the asymptotic
// series erfc z = e^{-z^2} / (z sqrt(pi)) sum_m (-1)^m (2m-1)!! / (2 z^2)^m (Abramowitz & Stegun
// 7.1.23), whose truncation after m = 6 is below 1e-28 relative for z >= 99.
long double log_normal_upper_tail(long double y) {
  const long double z = y / kSqrt2;
  if (y < 140) return std::log(std::erfc(z) / 2);
  long double sum = 1;
  long double term = 1;
  for (int m = 1; m <= 6; ++m) {
    term *= -(2.0L * m - 1) / (2 * z * z);
    sum += term;
  }
  return -z * z - std::log(z * kSqrtPi) + std::log(sum) - std::log(2.0L);
}

// Compensated (Kahan) summation: the sums below can have ~10^7 terms.
struct KahanSum {
  long double sum = 0;
  long double carry = 0;
  void add(long double x) {
    const long double y = x - carry;
    const long double t = sum + y;
    carry = (t - sum) - y;
    sum = t;
  }
};

}  // namespace

double gaussian_delta(double sigma, double l2_sensitivity, double epsilon) {
  detail::validate_positive_finite("sigma", sigma);
  detail::validate_positive_finite("l2_sensitivity", l2_sensitivity);
  detail::validate_positive_finite("epsilon", epsilon);
  const long double eps = epsilon;
  const long double u = eps * sigma / l2_sensitivity;
  const long double v = static_cast<long double>(l2_sensitivity) / (2.0L * sigma);
  // Balle & Wang 2018 Thm 8: delta = Phi(v - u) - e^eps Phi(-v - u), v = Delta/(2 sigma),
  // u = eps sigma / Delta; Phi(v - u) = Q(u - v), Phi(-v - u) = Q(u + v) with Q the upper tail.
  const long double log_a = log_normal_upper_tail(u - v);
  const long double log_b = eps + log_normal_upper_tail(u + v);  // <= 0: (u+v)^2/2 >= 2uv = eps
  const long double a = std::exp(log_a);
  const long double b = std::exp(log_b);
  // exp(w) of a w with absolute error ~eps |w| has that relative error; 16 ulps for erfc and log.
  const long double error = kLdEps * (a * (16 + std::fabs(log_a)) + b * (16 + std::fabs(log_b) + eps));
  return clamp_probability(a - b + error);
}

double discrete_gaussian_delta(double sigma, std::int64_t sensitivity, double epsilon) {
  if (!std::isfinite(sigma) || !(sigma > 0) || sigma > 1e6) {
    detail::throw_invalid("sigma", "finite, > 0 and <= 1e6", sigma);
  }
  if (sensitivity < 1) detail::throw_invalid("sensitivity", ">= 1", static_cast<double>(sensitivity));
  detail::validate_positive_finite("epsilon", epsilon);
  const long double eps = epsilon;
  const long double s2 = static_cast<long double>(sigma) * sigma;
  // Terms with k^2 / (2 sigma^2) >= eps + 80 are left out: for k > K the terms fall faster than a
  // geometric series, so the left-out mass of either sum, over N >= 1, is <= e^-80 (1 + sigma).
  const long double k_real = std::ceil(sigma * std::sqrt(2 * (eps + 80))) + 1;
  if (!(k_real <= (1L << 25))) {
    detail::throw_invalid("sigma * sqrt(2 (epsilon + 80))", "<= 2^25 (the pmf sum's length)",
                          static_cast<double>(k_real));
  }
  const auto big_k = static_cast<std::int64_t>(k_real);
  // The normalizer needs no e^eps headroom: terms with k^2 / (2 sigma^2) >= 80 are left out, so it
  // is low by at most e^-80 (1 + sigma) relative, which only raises a - b below. (Summing it to K
  // cost seconds at a large epsilon whose tails were empty; found by tests/fuzz/fuzz_parameters.)
  const auto normalizer_k = std::min(big_k, static_cast<std::int64_t>(std::ceil(sigma * std::sqrt(160.0L))) + 1);
  KahanSum normalizer;
  for (std::int64_t k = -normalizer_k; k <= normalizer_k; ++k) {
    normalizer.add(std::exp(-static_cast<long double>(k) * k / (2 * s2)));
  }
  const long double delta_l = sensitivity;
  // CKS 2020 Thm 7: delta = P[Z > eps s2/D - D/2] - e^eps P[Z > eps s2/D + D/2], Z ~ N_Z(0, s2).
  const long double x1 = eps * s2 / delta_l - delta_l / 2;
  const long double x2 = eps * s2 / delta_l + delta_l / 2;
  auto tail = [&](long double x, long double shift) {
    KahanSum total;
    const long double first = std::floor(x) + 1;
    for (auto k = static_cast<std::int64_t>(std::max(first, -k_real)); k <= big_k; ++k) {
      // shift - k^2/(2 s2) <= 0 for k > x2 (AM-GM as in gaussian_delta), so no overflow.
      total.add(std::exp(shift - static_cast<long double>(k) * k / (2 * s2)));
    }
    return total.sum / normalizer.sum;
  };
  const long double a = x1 >= k_real ? 0.0L : tail(x1, 0);
  const long double b = x2 >= k_real ? 0.0L : tail(x2, eps);
  // Each exp has relative error ~eps_ld (eps + 82), the sums and the division a few eps_ld more.
  const long double rounding = 4 * kLdEps * (eps + 90) * (a + b);
  const long double truncation = 2 * std::exp(-80.0L) * (1 + static_cast<long double>(sigma));
  return clamp_probability(a - b + rounding + truncation);
}

namespace {

// Balle & Wang 2018 Algorithm 1 by bisection, after analytic_gaussian_sigma's checks.
double smallest_passing_sigma(double epsilon, double delta, double l2_sensitivity) {
  const auto ok = [&](double sigma) { return gaussian_delta(sigma, l2_sensitivity, epsilon) <= delta; };
  // Balle & Wang 2018 Algorithm 1 finds the sigma with delta(sigma) = delta; gaussian_delta
  // decreases in sigma, so bisection on doubles between a failing lo and a passing hi gives the
  // smallest passing double (up to the monotonicity of the rounded evaluation) from the safe side.
  double hi = l2_sensitivity;
  while (!ok(hi)) {
    hi *= 2;
    if (!std::isfinite(hi)) {
      // sigma grows like 0.4 l2_sensitivity / delta as epsilon -> 0: only a huge sensitivity
      // can push it past the double range.
      detail::throw_invalid("l2_sensitivity",
                            "small enough that sigma stays below the double range at this epsilon "
                            "and delta",
                            l2_sensitivity);
    }
  }
  double lo = hi;
  while (ok(lo)) {
    if (lo == std::numeric_limits<double>::denorm_min()) return lo;
    hi = lo;
    lo = std::max(lo / 2, std::numeric_limits<double>::denorm_min());
  }
  for (;;) {
    const double mid = lo + (hi - lo) / 2;
    if (!(mid > lo && mid < hi)) return hi;
    if (ok(mid)) hi = mid; else lo = mid;
  }
}

}  // namespace

double analytic_gaussian_sigma(double epsilon, double delta, double l2_sensitivity) {
  detail::validate_positive_finite("epsilon", epsilon);
  if (!std::isfinite(delta) || !(delta > 0) || !(delta < 1)) {
    detail::throw_invalid("delta", "in (0, 1)", delta);
  }
  detail::validate_positive_finite("l2_sensitivity", l2_sensitivity);
  static detail::CalibrationCache<std::tuple<double, double, double>, double> cache;
  return cache.get({epsilon, delta, l2_sensitivity},
                   [&] { return smallest_passing_sigma(epsilon, delta, l2_sensitivity); });
}

}  // namespace dpselect::discrete
