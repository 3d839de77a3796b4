// SPDX-License-Identifier: Apache-2.0
// Zero-concentrated DP: the zCDP of pure and exponential-mechanism releases, and rho-zCDP
// converted to (epsilon, delta)-DP, by Bun & Steinke's closed form or by the tighter conversion of
// Canonne, Kamath & Steinke (2020), minimized over the Renyi order in long double. The conversions
// return upper bounds; the error margins are derived next to the code.
#include <algorithm>
#include <cmath>

#include "accounting/accounting_internal.hpp"
#include "validation/validation.hpp"

namespace dpselect::detail::accounting {
namespace {

// The minimum over a = alpha - 1 > 0 of `bound(a)`, which must already include its rounding
// error: any a gives a valid bound, so an imperfect minimum is only less tight, never wrong. A
// grid of step 1/8 in ln a over +-25 around `center` (plus `extra`, another good a), then golden
// section around the best grid point.
template <class Bound>
Real minimize_over_order(Real center, Real extra, Bound bound) {
  Real best = extra > 0.0L ? bound(extra) : kInfinity;
  Real best_log_order = center;
  for (int step = -200; step <= 200; ++step) {
    const Real log_order = center + step / 8.0L;
    const Real value = bound(std::exp(log_order));
    if (value < best) {
      best = value;
      best_log_order = log_order;
    }
  }
  constexpr Real kGolden = 0.618033988749894848204586834365638118L;
  Real low = best_log_order - 0.125L;
  Real high = best_log_order + 0.125L;
  Real left = high - kGolden * (high - low);
  Real right = low + kGolden * (high - low);
  Real value_left = bound(std::exp(left));
  Real value_right = bound(std::exp(right));
  for (int iteration = 0; iteration < 80; ++iteration) {
    best = std::min({best, value_left, value_right});
    if (value_left < value_right) {
      high = right;
      right = left;
      value_right = value_left;
      left = high - kGolden * (high - low);
      value_left = bound(std::exp(left));
    } else {
      low = left;
      left = right;
      value_left = value_right;
      right = low + kGolden * (high - low);
      value_right = bound(std::exp(right));
    }
  }
  return std::min({best, value_left, value_right});
}

// Total variation between the outputs on neighbours is at most sqrt(1 - e^-KL) (Bretagnolle &
// Huber 1979) and KL <= rho under rho-zCDP (the alpha -> 1 limit of D_alpha <= alpha rho): a
// (0, tv)-DP guarantee. Rounded up.
Real total_variation_upper(double rho) {
  return std::sqrt(-std::expm1(-static_cast<Real>(rho))) * (1.0L + 4.0L * kRealUlp);
}

double delta_from_zcdp_unchecked(double rho, double epsilon) {
  const Real total_variation = total_variation_upper(rho);
  const Real r = rho;
  const Real e = epsilon;
  // CKS Cor 13 with a = alpha - 1:
  //   ln delta(a) = a ((1+a) rho - eps) - ln a + (1+a) ln(a/(1+a)),  ln(a/(1+a)) = -ln(1 + 1/a).
  const auto bound = [&](Real a) {
    const Real exponent = a * ((1.0L + a) * r - e);
    const Real log_order = std::log(a);
    const Real tilt = (1.0L + a) * std::log1p(1.0L / a);
    const Real value = exponent - log_order - tilt;
    return value + 8.0L * kRealUlp * (std::fabs(exponent) + a * ((1.0L + a) * r + e) + std::fabs(log_order) + tilt + 1.0L);
  };
  // The exponent a((1+a) rho - eps) is smallest near a = (eps - rho) / (2 rho).
  const Real center_order = std::max((e - r) / (2.0L * r), 1e-3L);
  const Real log_delta = minimize_over_order(std::log(center_order), 0.0L, bound);
  const Real delta = std::min(std::exp(log_delta), total_variation);
  return std::min(1.0, round_up(delta));
}

}  // namespace

double epsilon_from_zcdp_unchecked(double rho, double delta) {
  if (static_cast<Real>(delta) >= total_variation_upper(rho)) return 0.0;
  const Real r = rho;
  const Real log_inverse_delta = -std::log(static_cast<Real>(delta));
  // CKS Prop 12 / Cor 13 solved for epsilon, with a = alpha - 1:
  //   eps(a) = (1+a) rho + [ln(1/delta) + a ln(a/(1+a)) - ln(1+a)] / a
  //          = (1+a) rho + ln(1/delta)/a - ln(1 + 1/a) - ln(1+a)/a   (no cancellation for large a).
  const auto bound = [&](Real a) {
    const Real linear = (1.0L + a) * r;
    const Real tail = log_inverse_delta / a;
    const Real order_log = std::log1p(1.0L / a);
    const Real order_ratio = std::log1p(a) / a;
    const Real value = linear + tail - order_log - order_ratio;
    // Each of the four pieces and the three additions round by an ulp or two of their size.
    return value + 8.0L * kRealUlp * (linear + tail + order_log + order_ratio + 1.0L);
  };
  // The optimum is near a = sqrt(ln(1/delta)/rho), where Bun & Steinke's rho + 2 sqrt(rho ln(1/delta))
  // is also minimized; trying that a too keeps this never above their bound.
  const Real bun_steinke_order = std::sqrt(log_inverse_delta / r);
  const Real minimum = minimize_over_order(std::log(bun_steinke_order), bun_steinke_order, bound);
  return minimum <= 0.0L ? 0.0 : round_up(minimum);
}

}  // namespace dpselect::detail::accounting

namespace dpselect {
using namespace detail::accounting;

double zcdp_of_pure(double epsilon) {
  validate_epsilon("epsilon", epsilon);
  // Bun & Steinke 2016, Prop 1.4: eps-DP implies (eps^2/2)-zCDP.
  return 0.5 * epsilon * epsilon;
}

double zcdp_of_exponential_mechanism(double epsilon) {
  validate_epsilon("epsilon", epsilon);
  // Cesar & Rogers 2021: eps-bounded-range (the exponential mechanism) implies (eps^2/8)-zCDP.
  return 0.125 * epsilon * epsilon;
}

double delta_from_zcdp(double rho, double epsilon) {
  detail::validate_positive_finite("rho", rho);
  validate_nonnegative_epsilon("epsilon", epsilon);
  return delta_from_zcdp_unchecked(rho, epsilon);
}

double epsilon_from_zcdp_tight(double rho, double delta) {
  detail::validate_positive_finite("rho", rho);
  validate_open_delta("delta", delta);
  return epsilon_from_zcdp_unchecked(rho, delta);
}

double epsilon_from_zcdp(double rho, double delta) {
  detail::validate_positive_finite("rho", rho);
  validate_open_delta("delta", delta);
  // Bun & Steinke 2016, Prop. 1.3: rho-zCDP implies (rho + 2 sqrt(rho ln(1/delta)), delta)-DP.
  return rho + 2.0 * std::sqrt(rho * std::log(1.0 / delta));
}

}  // namespace dpselect
