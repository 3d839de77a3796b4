// SPDX-License-Identifier: Apache-2.0
// Generalized Gaussian (GG) mechanism: delta by numerical privacy-loss accounting, sigma by
// bisection, and the expected l_inf error (Ganesh & Zhao 2021).
//
// Worst-case neighbours. Neighbouring inputs move the answer vector by v with |v_i| <= 1. For
// p >= 1 the GG density is symmetric and log-concave, so the location family GG(mu) has a
// monotone likelihood ratio; the Neyman-Pearson tests are thresholds and the trade-off function
// of (GG(0), GG(s)) is T_s(a) = F(F^{-1}(1 - a) - |s|), decreasing in |s| (Dong, Roth & Su 2022,
// "Gaussian differential privacy", JRSS-B, Prop. A.3 / the log-concave location-family example).
// So the pair (GG(0), GG(s)) is a garbling of (GG(0), GG(1)) for |s| <= 1 (Blackwell), and the
// tensor product of trade-off functions is monotone in each factor (Dong, Roth & Su, Lemma C.2),
// so the k-dimensional pair (GG(0)^k, GG(v)) is dominated by the shift v = (1, ..., 1). The
// pair is symmetric (x -> 1 - x swaps it), so one direction suffices.
//
// Privacy loss. With P = GG(0), Q = GG(1) per coordinate, x ~ P:
//   L = ln p(x)/q(x) = (|x - 1|^p - |x|^p) / sigma^p,   equal in law (x -> -x) to
//   G = (|x + 1|^p - |x|^p) / sigma^p, nondecreasing in x for p >= 1 (|x|^p is convex),
// and delta(eps) = E_P[(1 - e^{eps - S})_+] with S the sum of k iid copies of L (the hockey-stick
// divergence written over the privacy-loss distribution, e.g. Koskela, Jalko, Prediger & Honkela
// 2021, eq. (2.2); Sommer, Meiser & Mohammadi 2019).
//
// Discretization (pessimistic, so delta is an upper bound). A distribution is kept as P-masses on
// the grid {i h} (the Q-mass of an atom at l is e^{-l} times its P-mass) plus a P-mass at +inf.
//  * "Connect the dots" (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022): an atom (P-mass m,
//    Q-mass m e^{-l}) with a <= l <= b is split into atoms at a and b that keep both its P- and
//    Q-mass: m_a = m (e^{-l} - e^{-b}) / (e^{-a} - e^{-b}), m_b = m - m_a. Merging the two back is
//    post-processing, so the split pair dominates; directly, (m - e^eps q)_+ <= (m_a - e^eps q_a)_+
//    + (m_b - e^eps q_b)_+. The error is second order in h, so k copies cost ~ k h^2, not k h.
//    Used for the single-coordinate law (integrated over each grid cell) and for every coarsening
//    of the grid (h -> 2^r h) between convolutions.
//  * Lower tail: P-mass below the window is moved up to the window's lowest point (rounding a
//    loss up dominates: (1 - e^{eps - l})_+ is nondecreasing in l). Upper tail: P-mass above the
//    window goes to +inf (counted fully in delta). Single-coordinate tails use the bound
//    Gamma(a, y) <= y^{a-1} e^{-y} for a = 1/p <= 1, so the masses put there are upper bounds.
//  * Composition: exact convolution of the grid PMFs by repeated squaring (O(log k) convolutions),
//    coarsening the grid by 2 whenever it exceeds kMaxPoints.
// Every step replaces the pair by one that dominates it, so the exact-arithmetic result is an
// upper bound on the true delta.
//
// Floating-point error (rigorous). Direct convolution of nonnegative vectors: each output is a sum
// of n nonnegative products, with relative error <= gamma_{n+1} = (n+1)u / (1 - (n+1)u) (Higham,
// "Accuracy and Stability of Numerical Algorithms", Lemma 3.1 and eq. (3.5)), u = 2^-53. Each
// vector carries a bound rel with computed = exact (1 + theta), |theta| <= rel entrywise; a
// convolution gives (1 + rel_a)(1 + rel_b)(1 + gamma) - 1, a coarsening (1 + rel)(1 + 12u) - 1
// (an exp and an expm1 quotient, correctly rounded to a few ulps). For k = 2^32 and 1024 points
// rel stays below ~1e-3 (k = 10^7: ~2e-6); the final delta is divided by (1 - rel) and raised by the evaluation
// error. This is why the convolutions are direct (no FFT): FFT errors are absolute (relative to
// the largest entry) and would be amplified by up to k through the composition.
// Not rigorously bounded: the 8-point Gauss-Legendre quadrature of the density over each grid
// cell (cells are tiny and split at the kinks x = -1, 0, so the error is far below 1e-16
// relative; the tests check the total mass against 1).
#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "accounting/calibration_cache.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/generalized_gaussian.hpp"
#include "validation/validation.hpp"

namespace dpselect {
namespace {

using ld = long double;
constexpr double kU = DBL_EPSILON / 2;      // unit roundoff of double
constexpr ld kLdEps = LDBL_EPSILON;
constexpr int kSinglePoints = 1024;         // grid cells of the single-coordinate law
constexpr std::size_t kMaxPoints = 1024;    // grid points kept between convolutions
// The largest grid index magnitude kept: sums of two (a convolution's ends) stay far inside int64.
constexpr std::int64_t kMaxGridIndex = std::int64_t{1} << 60;
constexpr double kTailBudget = 1e-18;       // tail mass cut per truncation, times multiplicity
constexpr std::uint64_t kMaxK = std::uint64_t{1} << 32;

// 8-point Gauss-Legendre nodes and weights on [-1, 1] (Abramowitz & Stegun Table 25.4).
constexpr std::array<ld, 4> kGlNode = {0.183434642495649804939476142360184L, 0.525532409916328985817739049189246L,
                                       0.796666477413626739591553936475830L, 0.960289856497536231683560868569473L};
constexpr std::array<ld, 4> kGlWeight = {0.362683783378361982965150449277196L, 0.313706645877887287337962201986601L,
                                         0.222381034453374470544355994426241L, 0.101228536290376259152531354309962L};

double round_up(ld x) {
  double d = static_cast<double>(x);
  if (static_cast<ld>(d) < x) d = std::nextafter(d, std::numeric_limits<double>::infinity());
  return d;
}

// The largest epsilon the calibration takes: there the scale is already under 2e-3 of the
// sensitivity (p = 2); far beyond it the privacy-loss grid of one coordinate overflows its
// integer indices and the search for sigma runs for minutes (epsilon 1e100 on p = 2 did; found by
// tests/fuzz/fuzz_parameters, with undefined behaviour at epsilon 7e307).
constexpr double kMaxCalibratedEpsilon = 1e6;

void validate_calibrated_epsilon(double epsilon) {
  detail::validate_positive_finite("epsilon", epsilon);
  if (!(epsilon <= kMaxCalibratedEpsilon)) detail::throw_invalid("epsilon", "at most 1e6 for the generalized Gaussian", epsilon);
}

void validate_p(double p) {
  if (!std::isfinite(p) || !(p >= 1) || !(p <= 32)) detail::throw_invalid("p", "finite and in [1, 32]", p);
}

void validate_k(std::uint64_t k) {
  if (k < 1 || k > kMaxK) detail::throw_invalid("k", ">= 1 and <= 2^32", static_cast<double>(k));
}

void validate_delta(double delta) {
  if (!std::isfinite(delta) || !(delta > 0) || !(delta < 1)) detail::throw_invalid("delta", "in (0, 1)", delta);
}

// Regularized incomplete gamma P(a, y) and Q(a, y) = 1 - P (Numerical Recipes 6.2: series for
// y < a + 1, Lentz continued fraction otherwise), in long double.
ld log_gamma_prefactor(ld a, ld y) { return -y + a * std::log(y) - std::lgamma(a); }

ld gamma_series(ld a, ld y) {  // P(a, y), y < a + 1
  ld sum = 1 / a, term = 1 / a;
  for (int n = 1; n < 10000; ++n) {
    term *= y / (a + n);
    sum += term;
    if (term < sum * kLdEps) break;
  }
  return sum * std::exp(log_gamma_prefactor(a, y));
}

ld gamma_continued_fraction(ld a, ld y) {  // Q(a, y), y >= a + 1
  constexpr ld kTiny = 1e-4000L;
  ld b = y + 1 - a, c = 1 / kTiny, d = 1 / b, h = d;
  for (int i = 1; i < 10000; ++i) {
    const ld an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const ld del = d * c;
    h *= del;
    if (std::fabs(del - 1) < kLdEps) break;
  }
  return std::exp(log_gamma_prefactor(a, y)) * h;
}

// y = +inf (a (t / sigma)^p past long double's range) is the limit, not -inf + inf = NaN in the
// prefactor (found by tests/fuzz/fuzz_parameters through generalized_gaussian_abs_cdf).
ld gamma_p(ld a, ld y) {
  if (y <= 0) return 0;
  if (std::isinf(y)) return 1;
  return y < a + 1 ? gamma_series(a, y) : 1 - gamma_continued_fraction(a, y);
}

ld gamma_q(ld a, ld y) {
  if (y <= 0) return 1;
  if (std::isinf(y)) return 0;
  return y < a + 1 ? 1 - gamma_series(a, y) : gamma_continued_fraction(a, y);
}

// A privacy-loss distribution on the grid {i h}, h = h0 2^level.
struct Pld {
  double h0 = 0;
  int level = 0;
  std::int64_t lo = 0;    // grid index of m[0]
  std::vector<double> m;  // P-masses
  double inf = 0;         // P-mass at +infinity
  double rel = 0;         // |computed / exact - 1| <= rel for every mass
  double h() const { return std::ldexp(h0, level); }
  double total() const {
    double s = inf;
    for (double x : m) s += x;
    return s;
  }
};

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Coarsen to h0 2^new_level by connect-the-dots (see the file top).
void coarsen(Pld& d, int new_level) {
  if (new_level <= d.level) return;
  const std::int64_t r = std::int64_t{1} << (new_level - d.level);
  const double h = d.h();
  const double denom = -std::expm1(-static_cast<double>(r) * h);  // e^{-a} - e^{-b}, times e^{a}
  const std::int64_t new_lo = floor_div(d.lo, r);
  const std::int64_t new_hi = floor_div(d.lo + static_cast<std::int64_t>(d.m.size()) - 1, r) + 1;
  std::vector<double> out(static_cast<std::size_t>(new_hi - new_lo + 1), 0.0);
  for (std::size_t i = 0; i < d.m.size(); ++i) {
    if (d.m[i] == 0) continue;
    const std::int64_t idx = d.lo + static_cast<std::int64_t>(i);
    const std::int64_t a = floor_div(idx, r);
    const std::int64_t t = idx - a * r;
    const auto slot = static_cast<std::size_t>(a - new_lo);
    if (t == 0) {
      out[slot] += d.m[i];
      continue;
    }
    const double th = static_cast<double>(t) * h;
    // Doroshenko et al. 2022: m_b = m (e^{-a} - e^{-l}) / (e^{-a} - e^{-b}),
    //                         m_a = m (e^{-l} - e^{-b}) / (e^{-a} - e^{-b}).
    const double up = -std::expm1(-th) / denom;
    const double down = std::exp(-th) * -std::expm1(-static_cast<double>(r - t) * h) / denom;
    out[slot] += d.m[i] * down;
    out[slot + 1] += d.m[i] * up;
  }
  d.m = std::move(out);
  d.lo = new_lo;
  d.level = new_level;
  d.rel = (1 + d.rel) * (1 + 12 * kU) - 1;  // two rounded products/quotients and an add
}

// Moves at most `budget` P-mass from each tail: the lower tail up to the first kept point, the
// upper tail to +infinity. Both dominate (rounding losses up).
void truncate_tails(Pld& d, double budget) {
  std::size_t first = 0;
  double low = 0;
  while (first + 1 < d.m.size() && low + d.m[first] <= budget) low += d.m[first++];
  std::size_t last = d.m.size();
  double high = 0;
  while (last > first + 1 && high + d.m[last - 1] <= budget) high += d.m[--last];
  if (first == 0 && last == d.m.size()) return;
  std::vector<double> kept(d.m.begin() + static_cast<std::ptrdiff_t>(first),
                           d.m.begin() + static_cast<std::ptrdiff_t>(last));
  kept.front() += low;
  d.inf += high;
  d.m = std::move(kept);
  d.lo += static_cast<std::int64_t>(first);
  d.rel = (1 + d.rel) * (1 + 2 * kU) - 1;  // the two adds
}

// The smallest level >= `level` at which both ends of d's support have indices within
// kMaxGridIndex.
int level_for_indices(const Pld& d, int level) {
  const std::int64_t first = d.lo, last = d.lo + static_cast<std::int64_t>(d.m.size()) - 1;
  auto fits = [&](int at) {
    const int shift = at - d.level;
    if (shift >= 62) return true;
    return (std::max(first, -first) >> shift) <= kMaxGridIndex / 2 &&
           (std::max(last, -last) >> shift) <= kMaxGridIndex / 2;
  };
  while (!fits(level)) ++level;
  return level;
}

Pld convolve(Pld a, Pld b) {
  // A nearly deterministic loss (a tiny sigma: the loss 1/sigma^2 with a spread 1e-15 of it) sits
  // at grid indices far from 0 in few points, so no coarsening follows and its indices double with
  // each squaring, up to a signed overflow (found by tests/fuzz/fuzz_parameters at sigma 2^-52,
  // k = 4096). Coarsening first keeps them in range; coarsening only raises the bound.
  const int level = level_for_indices(b, level_for_indices(a, std::max(a.level, b.level)));
  coarsen(a, level);
  coarsen(b, level);
  Pld c;
  c.h0 = a.h0;
  c.level = level;
  c.lo = a.lo + b.lo;
  c.m.assign(a.m.size() + b.m.size() - 1, 0.0);
  const std::size_t nb = b.m.size();
  for (std::size_t i = 0; i < a.m.size(); ++i) {
    const double ai = a.m[i];
    if (ai == 0) continue;
    double* out = c.m.data() + i;
    const double* bb = b.m.data();
    for (std::size_t j = 0; j < nb; ++j) out[j] += ai * bb[j];
  }
  double ta = 0, tb = 0;
  for (double x : a.m) ta += x;
  for (double x : b.m) tb += x;
  // Any +inf loss makes the sum +inf: (a.inf)(everything) + (finite a)(b.inf), over-counted by at
  // most a.inf b.inf (an upper bound is what we need).
  c.inf = a.inf * (tb + b.inf) + ta * b.inf;
  const double n = static_cast<double>(std::min(a.m.size(), b.m.size()) + 2);
  const double gamma = n * kU / (1 - n * kU);  // Higham Lemma 3.1, sums of nonnegative terms
  c.rel = (1 + a.rel) * (1 + b.rel) * (1 + gamma) - 1;
  return c;
}

void shrink(Pld& d, double budget) {
  truncate_tails(d, budget);
  int level = d.level;
  while (d.m.size() > kMaxPoints) {
    coarsen(d, ++level);
    truncate_tails(d, budget);
  }
}

// The law of the single-coordinate privacy loss G = (|x+1|^p - |x|^p) / sigma^p, x ~ GG(p, sigma),
// discretized by connect-the-dots; tail mass <= tail_budget on each side.
Pld single_coordinate(double sigma, double p, double tail_budget) {
  const ld s = sigma, pp = p;
  const ld sp = std::pow(s, pp);
  const ld a_shape = 1 / pp;
  const ld norm = 1 / (2 * s * std::tgamma(1 + a_shape));  // GG density constant (Ganesh & Zhao 2021)
  auto g = [&](ld x) -> ld {  // |x + 1|^p - |x|^p without cancellation for |x| large
    if (x >= 1) return std::pow(x, pp) * std::expm1(pp * std::log1p(1 / x));
    if (x <= -2) return std::pow(-x, pp) * std::expm1(pp * std::log1p(1 / x));
    return std::pow(std::fabs(x + 1), pp) - std::pow(std::fabs(x), pp);
  };
  auto loss = [&](ld x) { return g(x) / sp; };
  auto loss_error = [&](ld x) {  // bound on the evaluation error of loss(x)
    return 64 * kLdEps * (std::pow(std::fabs(x + 1), pp) + std::pow(std::fabs(x), pp)) / sp;
  };
  auto density = [&](ld x) { return norm * std::exp(-std::pow(std::fabs(x) / s, pp)); };

  const bool laplace = p == 1;
  ld x_min, x_max, tail = 0;
  if (laplace) {
    x_min = -1;  // for p = 1, G = -1/sigma on x <= -1 and 1/sigma on x >= 0: two atoms
    x_max = 0;
  } else {
    // P[x > T] = Q(1/p, y) / 2 <= y^{1/p - 1} e^{-y} / (2 Gamma(1/p)) for y = (T/sigma)^p >= 1.
    const ld y = std::max<ld>(1, -std::log(tail_budget * 2 * std::tgamma(a_shape)));
    x_max = s * std::pow(y, a_shape);
    x_min = -x_max;
    tail = std::pow(y, a_shape - 1) * std::exp(-y) / (2 * std::tgamma(a_shape)) * (1 + 64 * kLdEps);
  }
  const ld l_min = laplace ? -1 / s : loss(x_min);
  const ld l_max = laplace ? 1 / s : loss(x_max);

  Pld d;
  d.h0 = static_cast<double>((l_max - l_min) / kSinglePoints);
  const ld h = d.h0;
  // A sigma so small that the losses leave long double's range, or their grid the indices': the
  // grid holds kSinglePoints steps between the ends, but a nearly deterministic loss (spread
  // 1e-17 of its value at sigma ~1e-18) puts them at indices past int64.
  const ld largest_index = kMaxGridIndex / 2;
  if (!(std::fabs(l_min / h) <= largest_index) || !(std::fabs(l_max / h) <= largest_index) || !(h > 0)) {
    detail::throw_invalid("sigma", "large enough for the privacy-loss grid of one coordinate", sigma);
  }
  d.lo = static_cast<std::int64_t>(std::floor(l_min / h)) - 1;
  const auto hi = static_cast<std::int64_t>(std::ceil(l_max / h)) + 1;
  std::vector<ld> acc(static_cast<std::size_t>(hi - d.lo + 1), 0.0L);

  // Adds P-mass at loss l (+ err, rounded up) split between the grid points around it.
  auto add_atom = [&](ld l, ld err, ld mass) {
    const auto i = static_cast<std::int64_t>(std::floor(l / h));
    const ld a = static_cast<ld>(i) * h;
    ld t = l - a + err + 8 * kLdEps * (std::fabs(a) + h);
    t = std::clamp<ld>(t, 0, h);
    const ld denom = -std::expm1(-h);
    const ld up = -std::expm1(-t) / denom;
    const ld down = std::exp(-t) * -std::expm1(-(h - t)) / denom;
    acc[static_cast<std::size_t>(i - d.lo)] += mass * down;
    acc[static_cast<std::size_t>(i + 1 - d.lo)] += mass * up;
  };
  auto inverse = [&](ld l) -> ld {  // x in [x_min, x_max] with loss(x) = l (loss increasing there)
    if (laplace) return std::clamp<ld>((l * s - 1) / 2, -1, 0);
    ld lo = x_min, hi_x = x_max;
    for (int it = 0; it < 200; ++it) {
      const ld mid = lo + (hi_x - lo) / 2;
      if (!(mid > lo && mid < hi_x)) break;
      (loss(mid) < l ? lo : hi_x) = mid;
    }
    return lo + (hi_x - lo) / 2;
  };
  auto integrate = [&](ld xa, ld xb) {  // Gauss-Legendre over [xa, xb]
    if (!(xb > xa)) return;
    const ld mid = (xa + xb) / 2, half = (xb - xa) / 2;
    for (int j = 0; j < 4; ++j) {
      for (int sign = -1; sign <= 1; sign += 2) {
        const ld x = mid + sign * half * kGlNode[j];
        add_atom(loss(x), loss_error(x), kGlWeight[j] * half * density(x));
      }
    }
  };
  ld x_prev = x_min;
  const auto first_cell = static_cast<std::int64_t>(std::floor(l_min / h));
  for (std::int64_t i = first_cell; static_cast<ld>(i) * h < l_max; ++i) {
    const ld upper = std::min<ld>(static_cast<ld>(i + 1) * h, l_max);
    const ld x_next = upper >= l_max ? x_max : std::max(x_prev, inverse(upper));
    // split at the kinks of g (x = -1 and x = 0), where Gauss-Legendre would lose accuracy
    ld cuts[4] = {x_prev, std::clamp<ld>(-1, x_prev, x_next), std::clamp<ld>(0, x_prev, x_next), x_next};
    for (int c = 0; c < 3; ++c) integrate(cuts[c], cuts[c + 1]);
    x_prev = x_next;
  }
  if (laplace) {
    add_atom(-1 / s, 8 * kLdEps / s, std::exp(-1 / s) / 2);  // P[x <= -1] = e^{-1/sigma} / 2
    add_atom(1 / s, 8 * kLdEps / s, 0.5L);                     // P[x >= 0] = 1/2
  } else {
    add_atom(l_min, loss_error(x_min), tail);  // x < -T: losses below l_min, rounded up
    d.inf = static_cast<double>(tail);         // x > T: to +infinity
  }
  d.m.resize(acc.size());
  for (std::size_t i = 0; i < acc.size(); ++i) d.m[i] = round_up(acc[i]);
  d.rel = 4 * kU;  // long double accumulation rounded to double
  return d;
}

Pld compose(double sigma, double p, std::uint64_t k) {
  const double kd = static_cast<double>(k);
  Pld base = single_coordinate(sigma, p, kTailBudget / kd);
  shrink(base, kTailBudget / kd);
  Pld result;
  bool have_result = false;
  std::uint64_t copies = 1;
  for (std::uint64_t left = k;;) {
    if (left & 1) {
      result = have_result ? convolve(result, base) : base;
      have_result = true;
      shrink(result, kTailBudget);
    }
    left >>= 1;
    if (left == 0) break;
    base = convolve(base, base);
    copies *= 2;
    // base is used k / copies more times at most, so its cut mass is scaled down by that.
    shrink(base, kTailBudget * static_cast<double>(copies) / kd);
  }
  return result;
}

double hockey_stick(const Pld& d, double epsilon) {
  const ld eps = epsilon, h = d.h();
  ld sum = 0, abs_err = 0;
  for (std::size_t i = 0; i < d.m.size(); ++i) {
    const ld l = static_cast<ld>(d.lo + static_cast<std::int64_t>(i)) * h;
    if (l <= eps || d.m[i] == 0) continue;
    sum += d.m[i] * -std::expm1(eps - l);  // (1 - e^{eps - l})_+
    abs_err += d.m[i] * (std::fabs(l) + eps) * 4 * kLdEps;  // error of l and of the expm1
  }
  const ld n = static_cast<ld>(d.m.size()) + 2;
  const ld rel = d.rel;
  // Exact pessimistic delta <= computed / (1 - rel); summation error gamma_n (long double).
  const ld bound = (sum + d.inf) * (1 + 2 * n * kLdEps) / (1 - rel) + abs_err;
  if (!(bound > 0)) return 0.0;
  return bound >= 1 ? 1.0 : round_up(bound);
}

}  // namespace

double generalized_gaussian_delta(double sigma, double p, std::uint64_t k, double epsilon) {
  detail::validate_positive_finite("sigma", sigma);
  validate_p(p);
  validate_k(k);
  detail::validate_positive_finite("epsilon", epsilon);
  return hockey_stick(compose(sigma, p, k), epsilon);
}

namespace {

// The search behind generalized_gaussian_sigma, after its checks. delta(sigma) decreases in sigma
// (Dong, Roth & Su 2022: a larger scale is a garbling), so: gallop from a starting guess to a
// bracket [lo, hi] with lo failing and hi passing, the factor squared each step, then bisect. Every
// step costs one privacy-loss composition (~0.1 s), so the number of steps is what matters: a walk
// by a fixed factor up to a refusal once took 349 s (found by tests/fuzz/fuzz_parameters); the
// gallop crosses the whole range of scales in about 20 steps, and the bisection takes about 20.
double calibrate_sigma(double epsilon, double delta, double p, std::uint64_t k) {
  // A sigma too small for the privacy-loss grid (reachable by a downward gallop's last step) is
  // refused by generalized_gaussian_delta: it counts as failing, which only moves the answer up.
  const auto ok = [&](double sigma) {
    try {
      return generalized_gaussian_delta(sigma, p, k, epsilon) <= delta;
    } catch (const InvalidArgument&) {
      return false;
    }
  };
  // The largest scale a noise vector accepts (noise_vector.cpp), and one whose sigma^p stays
  // inside long double's range (2^16384) for the loss grid: beyond it, refuse.
  const int largest_exponent = std::min(960, static_cast<int>(16000 / p));
  const double largest_sigma = std::ldexp(1.0, largest_exponent);
  // Starting guess: the Gaussian with the same variance (GG variance sigma^2 Gamma(3/p)/Gamma(1/p))
  // under the classical bound sqrt(2 ln(1.25/delta)) sqrt(k) / eps (Dwork & Roth 2014, Thm A.1).
  const double gauss_sd = std::sqrt(2 * std::log(1.25 / delta) * static_cast<double>(k)) / epsilon;
  double guess = gauss_sd / std::sqrt(std::tgamma(3 / p) / std::tgamma(1 / p));
  // (0, delta)-DP, so every epsilon, holds once the total variation between the two shifted laws
  // is at most delta: for a symmetric unimodal density f it is at most f(0) per unit shift and
  // coordinate (f(0) = 1 / (2 sigma Gamma(1 + 1/p))), k coordinates at most k times that. A tiny
  // epsilon would otherwise start the search near 1e300.
  guess = std::min({guess, static_cast<double>(k) / (2 * delta * std::tgamma(1 + 1 / p)), largest_sigma});
  double lo = guess, hi = guess;
  double factor = 1.25;
  if (ok(guess)) {
    for (;;) {
      // Below 1e-300 the loss grid is refused anyway (generalized_gaussian_delta): hi is the answer.
      if (!(hi > 1e-300)) return hi;
      lo = std::max(hi / factor, 1e-300);
      if (!ok(lo)) break;
      hi = lo;
      factor = std::min(factor * factor, 0x1p64);
    }
  } else {
    for (;;) {
      if (lo == largest_sigma) {
        detail::throw_invalid("delta", "large enough for a sigma of at most 2^" + std::to_string(largest_exponent) +
                                           " (2^960, or 2^(16000 / p) for p > 16.7)", delta);
      }
      hi = std::min(lo * factor, largest_sigma);
      if (ok(hi)) break;
      lo = hi;
      factor = std::min(factor * factor, 0x1p64);
    }
  }
  // Bisection on log sigma (the bracket can span many orders of magnitude) until it is narrow,
  // then on sigma; stop at relative width 1e-5 and return hi (the safe side).
  while ((hi - lo) > 1e-5 * hi) {
    const double mid = hi > 2 * lo ? std::sqrt(lo) * std::sqrt(hi) : lo + (hi - lo) / 2;
    (ok(mid) ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace

double generalized_gaussian_sigma(double epsilon, double delta, double p, std::uint64_t k) {
  validate_calibrated_epsilon(epsilon);
  validate_delta(delta);
  validate_p(p);
  validate_k(k);
  static detail::CalibrationCache<std::tuple<double, double, double, std::uint64_t>, double> cache;
  return cache.get({epsilon, delta, p, k}, [&] { return calibrate_sigma(epsilon, delta, p, k); });
}

double generalized_gaussian_abs_cdf(double t, double sigma, double p) {
  detail::validate_positive_finite("sigma", sigma);
  validate_p(p);
  if (std::isnan(t)) detail::throw_invalid("t", "not NaN", t);
  if (!(t > 0)) return 0.0;
  const ld y = std::pow(static_cast<ld>(t) / sigma, static_cast<ld>(p));
  return static_cast<double>(gamma_p(1 / static_cast<ld>(p), y));  // P(1/p, (t/sigma)^p)
}

double generalized_gaussian_expected_linf(double sigma, double p, std::uint64_t k) {
  detail::validate_positive_finite("sigma", sigma);
  validate_p(p);
  validate_k(k);
  const ld a = 1 / static_cast<ld>(p), kk = static_cast<ld>(k);
  // E max |x_i| = sigma * int_0^inf 1 - (1 - Q(1/p, u^p))^k du (u = t / sigma). Upper limit:
  // k Q <= k e^{-y} / Gamma(a) <= 1e-30 for y = u^p >= ln(k 1e30 / Gamma(a)).
  const ld y_max = std::max<ld>(1, std::log(kk * 1e30L / std::tgamma(a)));
  const ld u_max = std::pow(y_max, a);
  constexpr int kPanels = 4000;
  const ld width = u_max / kPanels;
  ld total = 0;
  for (int i = 0; i < kPanels; ++i) {
    const ld mid = (i + 0.5L) * width, half = width / 2;
    for (int j = 0; j < 4; ++j) {
      for (int sign = -1; sign <= 1; sign += 2) {
        const ld u = mid + sign * half * kGlNode[j];
        const ld q = gamma_q(a, std::pow(u, static_cast<ld>(p)));
        total += kGlWeight[j] * half * -std::expm1(kk * std::log1p(-q));  // 1 - F(u)^k
      }
    }
  }
  return static_cast<double>(sigma * total);
}

double generalized_gaussian_recommended_p(std::uint64_t k, bool composed_with_sparse_vector) {
  if (k < 1) detail::throw_invalid("k", ">= 1", static_cast<double>(k));
  const double kd = static_cast<double>(k);
  // Ganesh & Zhao 2021: p ~ ln ln k alone, ~ ln ln ln k composed with sparse vector.
  if (composed_with_sparse_vector) {
    const double lll = kd > std::exp(std::exp(1.0)) ? std::log(std::log(std::log(kd))) : 0.0;
    return std::max(1.0, lll);
  }
  const double ll = kd > std::exp(1.0) ? std::log(std::log(kd)) : 0.0;
  return std::max(2.0, ll);
}

GeneralizedGaussianChoice generalized_gaussian_best_p(double epsilon, double delta, std::uint64_t k,
                                                      std::span<const double> p_grid) {
  validate_calibrated_epsilon(epsilon);
  validate_delta(delta);
  validate_k(k);
  std::vector<double> grid(p_grid.begin(), p_grid.end());
  if (grid.empty()) {
    for (int i = 0; i <= 12; ++i) grid.push_back(1 + 0.25 * i);
  }
  for (double p : grid) validate_p(p);
  GeneralizedGaussianChoice best{0, 0, std::numeric_limits<double>::infinity()};
  for (double p : grid) {
    const double sigma = generalized_gaussian_sigma(epsilon, delta, p, k);
    const double err = generalized_gaussian_expected_linf(sigma, p, k);
    if (err < best.expected_linf) best = {p, sigma, err};
  }
  return best;
}

}  // namespace dpselect
