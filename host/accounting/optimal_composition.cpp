// SPDX-License-Identifier: Apache-2.0
// Optimal composition of k equal eps-DP releases: the privacy profile of Kairouz, Oh & Viswanath
// (2015, Thm 3.3), evaluated in logs with Loader's binomial terms, and its inverse. Both are upper
// bounds of the exact values; the error margins are derived next to the code.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>

#include "accounting/accounting_internal.hpp"

namespace dpselect::detail::accounting {
namespace {

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

}  // namespace

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

bool optimal_profile_fits(std::uint64_t k, double epsilon, double epsilon_total, double delta_total) {
  return OptimalProfile(k, epsilon).log_delta_upper(epsilon_total) <= log_lower(delta_total);
}

}  // namespace dpselect::detail::accounting

namespace dpselect {
using namespace detail::accounting;

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

}  // namespace dpselect
