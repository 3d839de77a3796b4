// SPDX-License-Identifier: Apache-2.0
// Privacy accounting: composition theorems, the optimal privacy profile of Kairouz, Oh &
// Viswanath, the zCDP conversions of Canonne, Kamath & Steinke, budget splitting and the
// thread-safe accountant. Every bound is an upper bound of the exact value (see the header for the
// rounding policy); the error margins are derived next to the code that needs them.
#include "dpselect/accounting.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <limits>
#include <string>

#include "dpselect/errors.hpp"
#include "accounting/calibration_cache.hpp"
#include "engine/validation.hpp"

namespace dpselect {
namespace {

// The optimal profile and the zCDP infima are long computations; they run in long double and
// carry error margins written for a 64-bit significand (unit roundoff 2^-64). A wider long double
// only makes the margins more generous.
using Real = long double;
static_assert(std::numeric_limits<Real>::digits >= 64,
              "accounting.cpp derives its error margins for a long double with a 64-bit significand");

// One unit in the last place of a long double, relative: 2^-63 (>= twice the unit roundoff).
constexpr Real kRealUlp = 0x1p-63L;
constexpr Real kInfinity = std::numeric_limits<Real>::infinity();
constexpr double kDoubleInfinity = std::numeric_limits<double>::infinity();

// Counts of releases are used as doubles; up to 2^53 they are exact.
constexpr std::uint64_t kCountLimit = std::uint64_t{1} << 53;

// The accountant skips the optimal route beyond this many equal releases: its profile costs
// O(sqrt(k)) terms per evaluation (about 3e4 terms here), and advanced composition and zCDP are
// within a few percent of it at such k. Skipping a route only loosens the bound.
constexpr std::uint64_t kOptimalRouteCountLimit = 10'000'000;

// Shares from the splitting functions sum to at most total * (1 - 2^-50): summing a few dozen
// ulps' worth of rounding, in any order, then cannot cross the total.
constexpr double kSplitHeadroom = 0x1p-50;

// rho is formed in double (eps^2/2 or eps^2/8, then summed); the accountant inflates it by this
// relative amount, more than the few ulps those operations can lose, before converting it.
constexpr double kRhoHeadroom = 0x1p-50;

// Relative precision of the inverses (optimal_composition_epsilon, per_release_epsilon).
constexpr double kInverseTolerance = 0x1p-40;

// ---- validation -------------------------------------------------------------------------------

void validate_count(std::string_view name, std::uint64_t k) {
  if (k < 1 || k > kCountLimit) {
    throw InvalidArgument("dpselect: " + std::string(name) + " must be in [1, 2^53] (got " + std::to_string(k) + ")");
  }
}

void validate_epsilon(std::string_view name, double epsilon) { detail::validate_positive_finite(name, epsilon); }

void validate_nonnegative_epsilon(std::string_view name, double epsilon) {
  if (!std::isfinite(epsilon) || !(epsilon >= 0.0)) detail::throw_invalid(name, "finite and >= 0", epsilon);
}

void validate_delta(std::string_view name, double delta) {
  if (!(delta >= 0.0 && delta < 1.0)) detail::throw_invalid(name, "in [0, 1)", delta);
}

void validate_open_delta(std::string_view name, double delta) {
  if (!(delta > 0.0 && delta < 1.0)) detail::throw_invalid(name, "in (0, 1)", delta);
}

void validate_budget(const PrivacyBound& budget) {
  validate_epsilon("budget.epsilon", budget.epsilon);
  validate_delta("budget.delta", budget.delta);
}

// Pure and exponential-mechanism releases only: those are the ones with a per-release epsilon alone.
void validate_pure_kind(ReleaseKind kind) {
  if (kind != ReleaseKind::pure && kind != ReleaseKind::exponential_mechanism) {
    throw InvalidArgument("dpselect: kind must be pure or exponential_mechanism (got " +
                          std::string(to_string(kind)) + ")");
  }
}

// `prefix` names the entry ("charges[2].") when several are validated together.
void validate_release(ReleaseKind kind, double epsilon, double delta, const std::string& prefix = {}) {
  validate_epsilon(prefix + "epsilon", epsilon);
  switch (kind) {
    case ReleaseKind::pure:
    case ReleaseKind::exponential_mechanism:
      if (delta != 0.0) detail::throw_invalid(prefix + "delta", "0 for a pure or exponential-mechanism release", delta);
      return;
    case ReleaseKind::approximate:
      validate_delta(prefix + "delta", delta);
      return;
  }
  throw InvalidArgument("dpselect: " + prefix + "kind must be pure, exponential_mechanism or approximate (got " +
                        std::to_string(static_cast<int>(kind)) + ")");
}

// ---- rounding ---------------------------------------------------------------------------------

// The smallest double >= value.
double round_up(Real value) {
  double rounded = static_cast<double>(value);
  if (static_cast<Real>(rounded) < value) rounded = std::nextafter(rounded, kDoubleInfinity);
  return rounded;
}

// k * epsilon rounded up (k <= 2^53 is an exact double, so fma gives the sign of the exact error).
double product_round_up(std::uint64_t k, double epsilon) {
  const double k_double = static_cast<double>(k);
  const double product = k_double * epsilon;
  return std::fma(k_double, epsilon, -product) > 0.0 ? std::nextafter(product, kDoubleInfinity) : product;
}

// ---- Loader's binomial terms ------------------------------------------------------------------
// Catherine Loader, "Fast and accurate computation of binomial probabilities" (2000): the log of
// a binomial probability as Stirling-series remainders and deviance terms, without the
// cancellation of lgamma(k+1) - lgamma(l+1) - lgamma(k-l+1) (about 1.3e7 for k = 10^6).

constexpr Real kLogSqrtTwoPi = 0.918938533204672741780329736405617639861L;
constexpr Real kTwoPi = 6.283185307179586476925286766559005768394L;

// stirlerr(n) = ln n! - [(n + 1/2) ln n - n + ln sqrt(2 pi)].
Real stirling_remainder(std::uint64_t n) {
  const Real x = static_cast<Real>(n);
  if (n <= 30) {
    // lgammal(31) ~ 74.7: the difference is accurate to about 1e-17 absolute.
    return std::lgamma(x + 1.0L) - (x + 0.5L) * std::log(x) + x - kLogSqrtTwoPi;
  }
  // The Stirling series sum_m B_2m / (2m (2m-1) n^(2m-1)) (Abramowitz & Stegun 6.1.41); after the
  // n^-13 term the next one is below 3617/122400/30^15 ~ 2e-24.
  const Real inverse_square = 1.0L / (x * x);
  constexpr Real c1 = 1.0L / 12, c3 = 1.0L / 360, c5 = 1.0L / 1260, c7 = 1.0L / 1680, c9 = 1.0L / 1188,
                 c11 = 691.0L / 360360, c13 = 1.0L / 156;
  return (c1 - inverse_square *
                   (c3 - inverse_square *
                             (c5 - inverse_square * (c7 - inverse_square * (c9 - inverse_square * (c11 - inverse_square * c13)))))) /
         x;
}

// bd0(x, mean) = x ln(x / mean) + mean - x >= 0, by Loader's series near x = mean.
Real binomial_deviance(Real x, Real mean) {
  if (x == 0.0L) return mean;
  if (std::fabs(x - mean) < 0.1L * (x + mean)) {
    // x ln(x/m) + m - x = (x - m) v + 2x sum_{j>=1} v^(2j+1)/(2j+1), v = (x - m)/(x + m).
    Real v = (x - mean) / (x + mean);
    Real sum = (x - mean) * v;
    Real power = 2.0L * x * v;
    const Real v_squared = v * v;
    for (int j = 1; j < 200; ++j) {
      power *= v_squared;
      const Real next = sum + power / (2 * j + 1);
      if (next == sum) break;
      sum = next;
    }
    return sum;
  }
  return x * std::log(x / mean) + mean - x;
}

// ---- the optimal privacy profile (Kairouz, Oh & Viswanath 2015, Thm 3.3) ----------------------
// delta(eps_g) = sum_{l=0}^{k} C(k,l) p^(k-l) q^l max(0, 1 - e^(eps_g - (k-2l) eps)),
// p = e^eps/(1+e^eps), q = 1/(1+e^eps): the privacy profile of k-fold randomized response, the
// worst case over all k-fold (adaptive) compositions of eps-DP mechanisms.
//
// Term l is positive only while (k - 2l) eps > eps_g, i.e. for l <= L < k/2. Its log
//   T(l) = ln[C(k,l) q^l p^(k-l)] + ln(1 - e^(eps_g - (k-2l) eps))
// is concave in l (the binomial is log-concave, and ln(1 - e^x) is concave and decreasing in x),
// so the terms rise to one peak and fall. The sum starts at the peak and walks outward until the
// remaining terms are bounded by a geometric series (valid because the ratios of consecutive
// terms only fall, by concavity) below 2^-70 of the sum; that bound is then added. So the sum
// never misses mass, costs O(sqrt(k)) terms, and works in logs (delta down to e^-11000).
class OptimalProfile {
 public:
  OptimalProfile(std::uint64_t k, double epsilon) : k_(k), epsilon_(epsilon) {
    const Real e = epsilon;
    log_p_ = -std::log1p(std::exp(-e));  // ln p = -ln(1 + e^-eps)
    log_q_ = -e + log_p_;                // q = p e^-eps
    mean_q_ = static_cast<Real>(k) * std::exp(log_q_);
    mean_p_ = static_cast<Real>(k) * std::exp(log_p_);
    // The binomial(k, q) mode, floor((k+1) q): the peak lies at or below it.
    const Real mode = std::floor((static_cast<Real>(k) + 1.0L) * std::exp(log_q_));
    mode_ = mode >= static_cast<Real>(k) ? k : static_cast<std::uint64_t>(mode);
  }

  // ln delta(eps_g) plus a bound on its rounding error: never below the exact value. -inf when
  // delta = 0 (eps_g >= k eps).
  Real log_delta_upper(double epsilon_total) const {
    if (!(exponent(0, epsilon_total) < 0.0L)) return -kInfinity;
    const std::uint64_t last = last_positive_term(epsilon_total);
    // Binary search for the peak on [0, min(last, mode)] (concavity: the increments fall).
    std::uint64_t low = 0;
    std::uint64_t high = std::min(last, mode_);
    while (low < high) {
      const std::uint64_t mid = low + (high - low) / 2;
      if (log_term(mid + 1, epsilon_total).value > log_term(mid, epsilon_total).value) {
        low = mid + 1;
      } else {
        high = mid;
      }
    }
    const Term peak = log_term(low, epsilon_total);
    Real sum = 1.0L;  // terms relative to the peak
    Real largest_error = peak.error;
    std::uint64_t terms = 1;
    const auto walk = [&](bool downward) {
      Real previous = peak.value;
      std::uint64_t l = low;
      while (downward ? l > 0 : l < last) {
        l = downward ? l - 1 : l + 1;
        const Term term = log_term(l, epsilon_total);
        if (term.value == -kInfinity) return;  // this and every later term is 0 (concavity)
        const Real relative = std::exp(term.value - peak.value);
        sum += relative;
        ++terms;
        largest_error = std::max(largest_error, term.error);
        const Real ratio = std::exp(term.value - previous);
        previous = term.value;
        if (ratio < 1.0L) {
          const Real remaining = static_cast<Real>(downward ? l : last - l);
          const Real tail = relative * std::min(remaining * ratio, ratio / (1.0L - ratio));
          if (tail <= 0x1p-70L * sum) {
            sum += tail;
            return;
          }
        }
      }
    };
    walk(true);
    walk(false);
    // Error budget: each term's own bound (the peak's enters every relative term too, hence 2x),
    // the rounding of `terms` additions and exponentials, and the final log and addition.
    const Real margin = 2.0L * largest_error + 0x1p-60L * (static_cast<Real>(terms) + 64.0L) +
                        0x1p-60L * (std::fabs(peak.value) + 1.0L);
    return peak.value + std::log(sum) + margin;
  }

 private:
  struct Term {
    Real value;  // T(l)
    Real error;  // a bound on |computed T(l) - T(l)|
  };

  // eps_g - (k - 2l) eps: term l is positive exactly when this is negative. The product is kept
  // exactly as a double-double (fma gives its rounding error; k - 2l <= 2^53 is an exact double),
  // so the result has a relative error of an ulp or two even next to the boundary eps_g =
  // (k - 2l) eps, where 1 - e^x ~ |x| would otherwise inherit an absolute error of (k - 2l) eps ulps.
  Real exponent(std::uint64_t l, double epsilon_total) const {
    const double multiple = static_cast<double>(k_ - 2 * l);
    const double product = multiple * epsilon_;
    const double product_error = std::fma(multiple, epsilon_, -product);
    return (static_cast<Real>(epsilon_total) - static_cast<Real>(product)) - static_cast<Real>(product_error);
  }

  // The largest l with a positive term (l = 0 has one when the caller checked exponent(0) < 0).
  std::uint64_t last_positive_term(double epsilon_total) const {
    const std::uint64_t below_half = (k_ - 1) / 2;  // l < k/2
    const Real estimate = std::ceil((static_cast<Real>(k_) - static_cast<Real>(epsilon_total) / epsilon_) / 2.0L) - 1.0L;
    std::uint64_t l = estimate <= 0.0L ? 0 : std::min(below_half, static_cast<std::uint64_t>(estimate));
    while (l < below_half && exponent(l + 1, epsilon_total) < 0.0L) ++l;
    while (l > 0 && !(exponent(l, epsilon_total) < 0.0L)) --l;
    return l;
  }

  Term log_term(std::uint64_t l, double epsilon_total) const {
    const Real k = static_cast<Real>(k_);
    const Real x = static_cast<Real>(l);
    Real log_binomial;
    if (l == 0) {
      log_binomial = k * log_p_;
    } else if (mean_q_ == 0.0L) {
      return {-kInfinity, 0.0L};  // q underflowed (eps > ~11000): only l = 0 has mass
    } else {
      // Loader: ln[C(k,l) q^l p^(k-l)] = stirlerr(k) - stirlerr(l) - stirlerr(k-l)
      //   - bd0(l, kq) - bd0(k-l, kp) + ln sqrt(k / (2 pi l (k-l))).
      log_binomial = stirling_remainder(k_) - stirling_remainder(l) - stirling_remainder(k_ - l) -
                     binomial_deviance(x, mean_q_) - binomial_deviance(k - x, mean_p_) +
                     0.5L * std::log(k / (kTwoPi * x * (k - x)));
    }
    const Real shift = exponent(l, epsilon_total);  // < 0
    const Real log_factor = std::log(-std::expm1(shift));
    // Errors: the binomial part rounds each of its O(1) pieces, whose sizes are bounded by
    // |log_binomial| + 2 ln(k+1) + 16 (generous 32 ulps); kq and kp carry a relative error of a
    // few ulps, which moves bd0 by |l - kq| ulps each; the shift has a relative error of 2 ulps,
    // which moves ln(1 - e^x) by at most 2 ulps (|x| e^x / (1 - e^x) <= 1), plus the rounding of
    // expm1, log and the final addition.
    const Real error = 32.0L * kRealUlp * (std::fabs(log_binomial) + 2.0L * std::log1p(k) + 16.0L) +
                       4.0L * kRealUlp * std::fabs(x - mean_q_) + 8.0L * kRealUlp * (std::fabs(log_factor) + 1.0L);
    return {log_binomial + log_factor, error};
  }

  std::uint64_t k_;
  double epsilon_;
  Real log_p_ = 0.0L;
  Real log_q_ = 0.0L;
  Real mean_q_ = 0.0L;  // k q
  Real mean_p_ = 0.0L;  // k p
  std::uint64_t mode_ = 0;
};

// The smallest x in (low, high] where h(x) <= 0, given h(low) > 0 >= h(high) and h falling:
// Illinois (modified regula falsi) with a bisection whenever four steps have not halved the
// bracket, stopped at a relative width of `tolerance`. Returns the feasible end, high.
template <class Function>
double smallest_feasible(double low, double high, Real h_low, Real h_high, double tolerance, Function h) {
  int retained_side = 0;
  double checkpoint_width = high - low;
  for (int iteration = 0; iteration < 400 && high - low > tolerance * high; ++iteration) {
    double mid;
    const bool stalled = iteration % 4 == 3 && high - low > 0.5 * checkpoint_width;
    if (iteration % 4 == 3) checkpoint_width = high - low;
    if (stalled || !std::isfinite(static_cast<double>(h_high)) || !std::isfinite(static_cast<double>(h_low))) {
      mid = low + (high - low) / 2;
    } else {
      mid = static_cast<double>(static_cast<Real>(high) -
                                h_high * (static_cast<Real>(high) - low) / (h_high - h_low));
      if (!(mid > low && mid < high)) mid = low + (high - low) / 2;
    }
    if (!(mid > low && mid < high)) break;  // adjacent doubles
    const Real h_mid = h(mid);
    if (h_mid <= 0.0L) {
      high = mid;
      h_high = h_mid;
      if (retained_side == 1) h_low /= 2;  // low kept twice: Illinois halving
      retained_side = 1;
    } else {
      low = mid;
      h_low = h_mid;
      if (retained_side == -1) h_high /= 2;
      retained_side = -1;
    }
  }
  return high;
}

// ln(target) lowered by its own rounding error, so `value <= it` implies value <= ln(target).
Real log_lower(double target) {
  const Real log_target = std::log(static_cast<Real>(target));
  return log_target - 2.0L * kRealUlp * (std::fabs(log_target) + 1.0L);
}

// The inverse of the profile, from the feasible side. `hints` are epsilon_totals worth trying as
// the first feasible point (other valid bounds, ascending); the first the profile accepts starts
// the search, so the result is never above it.
double optimal_epsilon(std::uint64_t k, double epsilon, double delta_total, std::span<const double> hints) {
  const double everything = product_round_up(k, epsilon);  // delta(k eps) = 0
  if (delta_total == 0.0) return everything;
  const OptimalProfile profile(k, epsilon);
  const Real log_target = log_lower(delta_total);
  const auto excess = [&](double epsilon_total) { return profile.log_delta_upper(epsilon_total) - log_target; };
  const Real excess_at_zero = excess(0.0);
  if (excess_at_zero <= 0.0L) return 0.0;
  double high = everything;
  Real excess_at_high = -kInfinity;
  for (const double hint : hints) {
    if (!(hint > 0.0 && hint < everything)) continue;
    const Real excess_at_hint = excess(hint);
    if (excess_at_hint <= 0.0L) {
      high = hint;
      excess_at_high = excess_at_hint;
      break;
    }
  }
  return smallest_feasible(0.0, high, excess_at_zero, excess_at_high, kInverseTolerance, excess);
}

// ---- zCDP conversions (Canonne, Kamath & Steinke 2020) ----------------------------------------

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

// ---- advanced composition ---------------------------------------------------------------------

double advanced_epsilon(std::uint64_t k, double epsilon, double delta_slack) {
  const double count = static_cast<double>(k);
  // Dwork & Roth Thm 3.20 (Dwork, Rothblum & Vadhan 2010): eps sqrt(2k ln(1/delta')) + k eps (e^eps - 1).
  return epsilon * std::sqrt(2.0 * count * -std::log(delta_slack)) + count * epsilon * std::expm1(epsilon);
}

// A ledger holding k releases of one kind at one epsilon.
detail::ReleaseLedger homogeneous_ledger(std::uint64_t k, double epsilon, ReleaseKind kind) {
  detail::ReleaseLedger ledger;
  (kind == ReleaseKind::pure ? ledger.pure_count : ledger.exponential_count) = k;
  ledger.one_epsilon = true;
  ledger.shared_epsilon = epsilon;
  return ledger;
}

}  // namespace

ReleaseKind release_kind(Mechanism mechanism) {
  switch (mechanism) {
    case Mechanism::exponential:
      return ReleaseKind::exponential_mechanism;
    case Mechanism::permute_and_flip:
    case Mechanism::laplace_noisy_max:
      return ReleaseKind::pure;
  }
  throw InvalidArgument("dpselect: mechanism must be exponential, permute_and_flip or laplace_noisy_max (got " +
                        std::to_string(static_cast<int>(mechanism)) + ")");
}

std::string_view to_string(ReleaseKind kind) {
  switch (kind) {
    case ReleaseKind::pure:
      return "pure";
    case ReleaseKind::exponential_mechanism:
      return "exponential_mechanism";
    case ReleaseKind::approximate:
      return "approximate";
  }
  return "unknown";
}

std::string_view to_string(CompositionRoute route) {
  switch (route) {
    case CompositionRoute::basic:
      return "basic";
    case CompositionRoute::advanced:
      return "advanced";
    case CompositionRoute::optimal_homogeneous:
      return "optimal_homogeneous";
    case CompositionRoute::zcdp:
      return "zcdp";
  }
  return "unknown";
}

// ---- composition of lists ---------------------------------------------------------------------

PrivacyBound basic_composition(std::span<const PrivacyBound> releases) {
  if (releases.empty()) {
    throw InvalidArgument("dpselect: releases must hold at least one release (got size 0)");
  }
  detail::CompensatedSum epsilon;
  detail::CompensatedSum delta;
  for (std::size_t i = 0; i < releases.size(); ++i) {
    const std::string name = "releases[" + std::to_string(i) + "]";
    validate_epsilon(name + ".epsilon", releases[i].epsilon);
    validate_delta(name + ".delta", releases[i].delta);
    epsilon.add(releases[i].epsilon);
    delta.add(releases[i].delta);
  }
  // Dwork & Roth Thm 3.16: epsilons add, deltas add.
  return {epsilon.value(), delta.value()};
}

PrivacyBound advanced_composition(std::uint64_t k, PrivacyBound per_release, double delta_slack) {
  validate_count("k", k);
  validate_epsilon("per_release.epsilon", per_release.epsilon);
  validate_delta("per_release.delta", per_release.delta);
  validate_open_delta("delta_slack", delta_slack);
  // Dwork & Roth Thm 3.20: the deltas of the k releases add, plus the slack delta'.
  return {advanced_epsilon(k, per_release.epsilon, delta_slack),
          static_cast<double>(k) * per_release.delta + delta_slack};
}

double optimal_composition_delta(std::uint64_t k, double epsilon, double epsilon_total) {
  validate_count("k", k);
  validate_epsilon("epsilon", epsilon);
  validate_nonnegative_epsilon("epsilon_total", epsilon_total);
  const Real log_delta = OptimalProfile(k, epsilon).log_delta_upper(epsilon_total);
  if (log_delta == -kInfinity) return 0.0;
  return std::min(1.0, round_up(std::exp(log_delta)));
}

double optimal_composition_epsilon(std::uint64_t k, double epsilon, double delta_total) {
  validate_count("k", k);
  validate_epsilon("epsilon", epsilon);
  validate_delta("delta_total", delta_total);
  return optimal_epsilon(k, epsilon, delta_total, {});
}

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

// ---- the best bound ---------------------------------------------------------------------------

namespace detail {

void CompensatedSum::add(double value) {
  // Neumaier's variant of Kahan summation: the rounding error of each addition is kept apart.
  const double total = sum + value;
  compensation += std::fabs(sum) >= std::fabs(value) ? (sum - total) + value : (value - total) + sum;
  sum = total;
}

void ReleaseLedger::add(ReleaseKind kind, double epsilon, double delta, std::uint64_t count) {
  const double copies = static_cast<double>(count);  // exact: count <= 2^53
  if (kind == ReleaseKind::approximate) {
    approximate_count += count;
    approximate_epsilon.add(copies * epsilon);
    approximate_delta.add(copies * delta);
    return;
  }
  if (pure_count + exponential_count == 0) {
    shared_epsilon = epsilon;
  } else if (epsilon != shared_epsilon) {
    one_epsilon = false;
  }
  dp_epsilon.add(copies * epsilon);
  if (kind == ReleaseKind::pure) {
    pure_count += count;
    rho.add(copies * (0.5 * epsilon * epsilon));  // Bun & Steinke 2016, Prop 1.4
  } else {
    exponential_count += count;
    rho.add(copies * (0.125 * epsilon * epsilon));  // Cesar & Rogers 2021 (eps-bounded-range)
  }
}

namespace {

// What the routes other than basic composition work with: the delta that approximate releases
// leave, and the epsilon they leave, each stepped down until adding the approximate part back
// cannot round above the budget.
struct Leftover {
  double epsilon;  // may be +inf (no epsilon budget: compose_homogeneous)
  double delta;
};

Leftover leftover(const PrivacyBound& budget, double approximate_epsilon, double approximate_delta) {
  double delta = budget.delta - approximate_delta;
  while (delta > 0.0 && approximate_delta + delta > budget.delta) delta = std::nextafter(delta, 0.0);
  double epsilon = budget.epsilon - approximate_epsilon;
  while (epsilon > 0.0 && std::isfinite(epsilon) && epsilon + approximate_epsilon > budget.epsilon) {
    epsilon = std::nextafter(epsilon, 0.0);
  }
  return {epsilon, delta};
}

// rho of the pure and exponential-mechanism releases (Bun & Steinke Prop 1.4; Cesar & Rogers),
// raised by kRhoHeadroom to cover its rounding. With one shared epsilon it is formed from the
// counts, so k equal charges give exactly what compose_homogeneous computes.
double ledger_rho(const ReleaseLedger& ledger) {
  const double eps = ledger.shared_epsilon;
  const double rho = ledger.one_epsilon ? static_cast<double>(ledger.pure_count) * (0.5 * eps * eps) +
                                              static_cast<double>(ledger.exponential_count) * (0.125 * eps * eps)
                                        : ledger.rho.value();
  return rho * (1.0 + kRhoHeadroom);
}

double ledger_basic_epsilon(const ReleaseLedger& ledger) {
  const std::uint64_t dp_count = ledger.pure_count + ledger.exponential_count;
  return ledger.one_epsilon ? static_cast<double>(dp_count) * ledger.shared_epsilon : ledger.dp_epsilon.value();
}

bool optimal_route_applies(const ReleaseLedger& ledger) {
  const std::uint64_t dp_count = ledger.pure_count + ledger.exponential_count;
  return ledger.one_epsilon && dp_count >= 1 && dp_count <= kOptimalRouteCountLimit;
}

}  // namespace

AccountedBound best_bound(const ReleaseLedger& ledger, const PrivacyBound& budget, ParameterChoice choice) {
  const std::uint64_t dp_count = ledger.pure_count + ledger.exponential_count;
  const double approximate_epsilon = ledger.approximate_epsilon.value();
  const double approximate_delta = ledger.approximate_delta.value();
  // Basic composition over everything (Dwork & Roth Thm 3.16).
  const double dp_basic = ledger_basic_epsilon(ledger);
  AccountedBound best{dp_basic + approximate_epsilon, approximate_delta, CompositionRoute::basic};
  // Past the largest double the other routes' arithmetic overflows (to 0, NaN or -inf) while their
  // true bounds are about the sum too (fits_budget): the sum, infinite, is the answer.
  if (dp_count == 0 || choice == ParameterChoice::adaptive || !std::isfinite(best.epsilon)) return best;

  // The other routes bound the pure and exponential-mechanism releases with whatever delta the
  // approximate ones leave, and add the approximate ones by basic composition.
  const Leftover left = leftover(budget, approximate_epsilon, approximate_delta);
  if (!(left.delta > 0.0)) return best;
  const double delta_used = approximate_delta + left.delta;
  const auto consider = [&](double dp_epsilon, CompositionRoute route) {
    const double epsilon = dp_epsilon + approximate_epsilon;
    if (epsilon < best.epsilon) best = {epsilon, delta_used, route};
  };
  // zCDP: rhos add (Bun & Steinke Lemma 1.7), converted by CKS Cor 13.
  const double zcdp = epsilon_from_zcdp_unchecked(ledger_rho(ledger), left.delta);
  if (ledger.one_epsilon) {
    // Every one of them is shared_epsilon-DP (the exponential mechanism too), so the theorems for
    // k equal eps-DP releases apply. The optimal profile is the tightest of them; advanced
    // composition stands in for it beyond its cost limit.
    const double advanced = advanced_epsilon(dp_count, ledger.shared_epsilon, left.delta);
    if (optimal_route_applies(ledger)) {
      // Start the search from the smallest other bound that the profile accepts; the leftover
      // epsilon is among them, so a release the budget check let in by this route is reported
      // within the budget.
      std::vector<double> hints = {advanced, zcdp, dp_basic, left.epsilon};
      std::sort(hints.begin(), hints.end());
      consider(optimal_epsilon(dp_count, ledger.shared_epsilon, left.delta, hints), CompositionRoute::optimal_homogeneous);
    }
    consider(zcdp, CompositionRoute::zcdp);
    consider(advanced, CompositionRoute::advanced);
  } else {
    consider(zcdp, CompositionRoute::zcdp);
  }
  return best;
}

bool fits_budget(const ReleaseLedger& ledger, const PrivacyBound& budget, ParameterChoice choice) {
  const std::uint64_t dp_count = ledger.pure_count + ledger.exponential_count;
  const double approximate_epsilon = ledger.approximate_epsilon.value();
  const double approximate_delta = ledger.approximate_delta.value();
  if (!(approximate_delta <= budget.delta)) return false;  // every route reports at least this
  const double basic_epsilon = ledger_basic_epsilon(ledger) + approximate_epsilon;
  // A sum past the largest double needs epsilon > 1e289 (counts are below 2^64), where each
  // release's privacy loss is +epsilon with probability ~1 and every route's bound is about the
  // sum too: beyond every finite budget. The routes' own arithmetic overflows to NaN or -inf
  // there, and once let such a charge through while recording nothing (3 releases at epsilon
  // 7e307; found by tests/fuzz/fuzz_parameters).
  if (!std::isfinite(basic_epsilon)) return false;
  if (basic_epsilon <= budget.epsilon) return true;
  if (dp_count == 0 || choice == ParameterChoice::adaptive) return false;
  const Leftover left = leftover(budget, approximate_epsilon, approximate_delta);
  if (!(left.delta > 0.0) || !(left.epsilon >= 0.0)) return false;
  // The cheap routes first; each test below is the very computation best_bound reports, so a
  // route that passes here is reported within the budget there.
  if (ledger.one_epsilon && advanced_epsilon(dp_count, ledger.shared_epsilon, left.delta) <= left.epsilon) return true;
  if (epsilon_from_zcdp_unchecked(ledger_rho(ledger), left.delta) <= left.epsilon) return true;
  if (optimal_route_applies(ledger)) {
    // The profile at the leftover epsilon, one evaluation instead of its inverse.
    if (product_round_up(dp_count, ledger.shared_epsilon) <= left.epsilon) return true;
    const OptimalProfile profile(dp_count, ledger.shared_epsilon);
    return profile.log_delta_upper(left.epsilon) <= log_lower(left.delta);
  }
  return false;
}

}  // namespace detail

AccountedBound compose_homogeneous(std::uint64_t k, double epsilon, ReleaseKind kind, double delta_budget) {
  validate_count("k", k);
  validate_epsilon("epsilon", epsilon);
  validate_pure_kind(kind);
  validate_delta("delta_budget", delta_budget);
  return detail::best_bound(homogeneous_ledger(k, epsilon, kind), {kDoubleInfinity, delta_budget},
                            ParameterChoice::fixed_in_advance);
}

// ---- splitting --------------------------------------------------------------------------------

double split_evenly(double epsilon_total, std::uint64_t k) {
  validate_epsilon("epsilon_total", epsilon_total);
  validate_count("k", k);
  const double cap = epsilon_total * (1.0 - kSplitHeadroom);
  const double count = static_cast<double>(k);
  double share = cap / count;
  // fma gives the sign of the exact k * share - cap: step down until the exact product fits.
  while (share > 0.0 && std::fma(count, share, -cap) > 0.0) share = std::nextafter(share, 0.0);
  if (!(share > 0.0)) detail::throw_invalid("epsilon_total", "large enough that epsilon_total / k is a positive double", epsilon_total);
  return share;
}

std::vector<double> split_by_weights(double epsilon_total, std::span<const double> weights) {
  validate_epsilon("epsilon_total", epsilon_total);
  if (weights.empty()) throw InvalidArgument("dpselect: weights must hold at least one weight (got size 0)");
  double largest = 0.0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    detail::validate_positive_finite("weights[" + std::to_string(i) + "]", weights[i]);
    largest = std::max(largest, weights[i]);
  }
  // Normalize by the largest weight first so the total cannot overflow.
  detail::CompensatedSum normalized_total;
  for (const double weight : weights) normalized_total.add(weight / largest);
  const double total_weight = normalized_total.value();
  double cap = epsilon_total * (1.0 - kSplitHeadroom);
  std::vector<double> shares(weights.size());
  for (int attempt = 0; attempt < 64; ++attempt) {
    detail::CompensatedSum sum;
    for (std::size_t i = 0; i < weights.size(); ++i) {
      shares[i] = cap * ((weights[i] / largest) / total_weight);
      if (!(shares[i] > 0.0)) {
        detail::throw_invalid("weights[" + std::to_string(i) + "]",
                              "large enough next to the largest weight that its share is a positive double", weights[i]);
      }
      sum.add(shares[i]);
    }
    // Each share is within a few ulps of its exact value, so the sum is within a few ulps of cap;
    // the headroom below epsilon_total absorbs that. Shrink further in the (unseen) other case.
    if (sum.value() <= epsilon_total * (1.0 - kSplitHeadroom / 2)) return shares;
    cap *= 1.0 - kSplitHeadroom;
  }
  // A denormal total: its shares round up past it and the headroom cannot shrink them (3 * 2^-1074
  // over weights {1, 1} gave two shares of 2 * 2^-1074; found in review of the fuzz invariants).
  detail::throw_invalid("epsilon_total", "large enough that its shares do not round past it", epsilon_total);
}

namespace {
double search_per_release_epsilon(std::uint64_t k, double target_epsilon, double target_delta, ReleaseKind kind);
}  // namespace

double per_release_epsilon(std::uint64_t k, double target_epsilon, double target_delta, ReleaseKind kind) {
  validate_count("k", k);
  validate_epsilon("target_epsilon", target_epsilon);
  validate_delta("target_delta", target_delta);
  validate_pure_kind(kind);
  // A deterministic search of milliseconds that callers repeat per release (m quantiles under
  // zCDP, say): memoized.
  static detail::CalibrationCache<std::tuple<std::uint64_t, double, double, ReleaseKind>, double> cache;
  return cache.get({k, target_epsilon, target_delta, kind},
                   [&] { return search_per_release_epsilon(k, target_epsilon, target_delta, kind); });
}

namespace {

double search_per_release_epsilon(std::uint64_t k, double target_epsilon, double target_delta, ReleaseKind kind) {
  const PrivacyBound target{target_epsilon, target_delta};
  // The accountant's own budget check: k charges at this epsilon are let in.
  const auto fits = [&](double epsilon) {
    return detail::fits_budget(homogeneous_ledger(k, epsilon, kind), target, ParameterChoice::fixed_in_advance);
  };
  // And the bound it then reports (compose_homogeneous) is within the target too.
  const auto reported_within = [&](double epsilon) {
    const AccountedBound bound = detail::best_bound(homogeneous_ledger(k, epsilon, kind), {kDoubleInfinity, target_delta},
                                                    ParameterChoice::fixed_in_advance);
    return bound.epsilon <= target_epsilon && bound.delta <= target_delta;
  };
  // The even split fits by basic composition (k * share <= target exactly, so the rounded product
  // does too). Double until a per-release epsilon does not fit, then bisect.
  const double even = split_evenly(target_epsilon, k);
  double low = even;
  double high = 2.0 * low;
  while (std::isfinite(high) && fits(high)) {
    low = high;
    high *= 2.0;
  }
  while (high - low > kInverseTolerance * low) {
    const double mid = low + (high - low) / 2;
    if (!(mid > low && mid < high)) break;
    (fits(mid) ? low : high) = mid;
  }
  // The inverse inside compose_homogeneous stops within a relative 2^-40 of the exact bound, so at
  // the very edge it may report a hair above the target: step down until both agree.
  for (int step = 0; step < 64 && low > even; ++step) {
    if (fits(low) && reported_within(low)) return low;
    low = std::max(even, low * (1.0 - 0x1p-38));
  }
  return even;
}

}  // namespace

// ---- the accountant ---------------------------------------------------------------------------

PrivacyAccountant::PrivacyAccountant(PrivacyBound budget, ParameterChoice choice) : budget_(budget), choice_(choice) {
  validate_budget(budget);
  if (choice != ParameterChoice::fixed_in_advance && choice != ParameterChoice::adaptive) {
    throw InvalidArgument("dpselect: choice must be fixed_in_advance or adaptive (got " +
                          std::to_string(static_cast<int>(choice)) + ")");
  }
}

void PrivacyAccountant::charge(ReleaseKind kind, double epsilon, double delta) {
  const PrivacyCharge single{kind, epsilon, delta, 1};
  charge(std::span<const PrivacyCharge>(&single, 1));
}

namespace {

// "2 x pure at epsilon 0.1, delta 0, ..." for a refusal's message (the first three entries).
std::string describe_charges(std::span<const PrivacyCharge> charges) {
  std::string description;
  for (std::size_t i = 0; i < charges.size() && i < 3; ++i) {
    const PrivacyCharge& entry = charges[i];
    description += std::string(i ? ", " : "") + (entry.count > 1 ? std::to_string(entry.count) + " x " : "") +
                   std::string(to_string(entry.kind)) + " at epsilon " + detail::format_value(entry.epsilon) +
                   ", delta " + detail::format_value(entry.delta);
  }
  if (charges.size() > 3) description += ", ... (" + std::to_string(charges.size()) + " entries)";
  return description;
}

}  // namespace

void PrivacyAccountant::charge(std::span<const PrivacyCharge> charges) {
  const bool single = charges.size() == 1;
  for (std::size_t i = 0; i < charges.size(); ++i) {
    const PrivacyCharge& entry = charges[i];
    const std::string prefix = single ? std::string() : "charges[" + std::to_string(i) + "].";
    validate_release(entry.kind, entry.epsilon, entry.delta, prefix);
    validate_count(prefix + "count", entry.count);
  }
  if (charges.empty()) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  detail::ReleaseLedger next = ledger_;
  for (const PrivacyCharge& entry : charges) next.add(entry.kind, entry.epsilon, entry.delta, entry.count);
  if (!detail::fits_budget(next, budget_, choice_)) {
    const AccountedBound bound = detail::best_bound(next, budget_, choice_);
    throw BudgetExceeded("dpselect: " + std::string(single && charges[0].count == 1 ? "a release: " : "releases: ") +
                         describe_charges(charges) + " would bring the spent bound to (epsilon " +
                         detail::format_value(bound.epsilon) + ", delta " + detail::format_value(bound.delta) +
                         ") by " + std::string(to_string(bound.route)) + " composition, beyond the budget (epsilon " +
                         detail::format_value(budget_.epsilon) + ", delta " + detail::format_value(budget_.delta) +
                         "); nothing was recorded");
  }
  ledger_ = next;
  spent_is_current_ = false;
}

AccountedBound PrivacyAccountant::spent() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!spent_is_current_) {
    spent_ = detail::best_bound(ledger_, budget_, choice_);
    spent_is_current_ = true;
  }
  return spent_;
}

std::uint64_t PrivacyAccountant::release_count() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return ledger_.pure_count + ledger_.exponential_count + ledger_.approximate_count;
}

}  // namespace dpselect
