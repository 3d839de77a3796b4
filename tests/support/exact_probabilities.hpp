// SPDX-License-Identifier: Apache-2.0
// Exact output distributions of the three noisy-max mechanisms, in long double, for the
// statistical tests. Scores s_i are utilities already multiplied by the score scale (noise of
// unit scale); -inf marks an excluded candidate (probability 0).
#pragma once

#include <cmath>
#include <algorithm>
#include <cstddef>
#include <vector>

namespace dpselect::testing {

// Exponential mechanism: softmax of the scores.
inline std::vector<long double> exact_exponential(const std::vector<long double>& scores) {
  long double top = -INFINITY;
  for (long double s : scores) top = std::fmax(top, s);
  std::vector<long double> p(scores.size());
  long double total = 0;
  for (std::size_t i = 0; i < scores.size(); ++i) total += p[i] = std::exp(scores[i] - top);
  for (long double& x : p) x /= total;
  return p;
}

// Permute-and-flip = arg-max of s_i + Exp(1). P(r) = int_{x0}^inf e^-x prod_{j != r}
// (1 - a_j e^-x) dx with a_j = e^{s_j - s_r} and x0 = max(0, max_j s_j - s_r); expanding the
// product over subsets T gives sum_T (-1)^|T| prod_T a_j e^{-(|T|+1) x0} / (|T|+1).
inline std::vector<long double> exact_permute_and_flip(const std::vector<long double>& scores) {
  std::vector<std::size_t> active;
  for (std::size_t i = 0; i < scores.size(); ++i)
    if (std::isfinite(scores[i])) active.push_back(i);
  std::vector<long double> p(scores.size(), 0.0L);
  const std::size_t m = active.size();
  for (std::size_t r : active) {
    std::vector<long double> a;
    long double x0 = 0;
    for (std::size_t j : active) {
      if (j == r) continue;
      a.push_back(std::exp(scores[j] - scores[r]));
      x0 = std::fmax(x0, scores[j] - scores[r]);
    }
    long double sum = 0;
    for (unsigned long subset = 0; subset < (1ul << (m - 1)); ++subset) {
      long double product = 1;
      int size = 0;
      for (std::size_t k = 0; k + 1 < m; ++k) {
        if (subset & (1ul << k)) {
          product *= a[k];
          ++size;
        }
      }
      const long double term = product * std::exp(-(size + 1) * x0) / (size + 1);
      sum += (size % 2 == 0) ? term : -term;
    }
    p[r] = sum;
  }
  return p;
}

// Permute-and-flip as McKenna & Sheldon (2020, Alg. 1) define it, for many candidates: visit the
// candidates in a uniformly random order and accept r with probability p_r = e^{s_r - max s}
// (the best is always accepted, so one pass ends it). r is output when it is accepted and every
// candidate before it was not: the set before r is a uniform subset of size k, k uniform in
// [0, N - 1], so P(r) = p_r (1/N) sum_k e_k / C(N - 1, k), e_k the elementary symmetric polynomials
// of {1 - p_j : j != r}. O(N^3), no cancellation (every term is positive).
inline std::vector<long double> exact_permute_and_flip_by_permutations(const std::vector<long double>& scores) {
  std::vector<long double> reject;  // 1 - p_j of the candidates that are not excluded
  std::vector<std::size_t> active;
  long double best = -INFINITY;
  for (long double s : scores) best = std::fmax(best, s);
  for (std::size_t i = 0; i < scores.size(); ++i) {
    if (std::isfinite(scores[i])) {
      active.push_back(i);
      reject.push_back(1.0L - std::exp(scores[i] - best));
    }
  }
  const std::size_t n = active.size();
  std::vector<long double> p(scores.size(), 0.0L);
  for (std::size_t r = 0; r < n; ++r) {
    std::vector<long double> e(n, 0.0L);  // e[k]: degree k over the others
    e[0] = 1.0L;
    std::size_t seen = 0;
    for (std::size_t j = 0; j < n; ++j) {
      if (j == r) continue;
      ++seen;
      for (std::size_t k = seen; k >= 1; --k) e[k] += e[k - 1] * reject[j];
    }
    long double sum = 0.0L;
    long double binomial = 1.0L;  // C(n - 1, k)
    for (std::size_t k = 0; k < n; ++k) {
      sum += e[k] / binomial;
      binomial = binomial * static_cast<long double>(n - 1 - k) / static_cast<long double>(k + 1);
    }
    p[active[r]] = (1.0L - reject[r]) * sum / static_cast<long double>(n);
  }
  return p;
}

// Report-noisy-max with Laplace(1) noise: P(r) = int f(x) prod_{j != r} F(x + s_r - s_j) dx,
// integrated with 20-point Gauss-Legendre on pieces of width <= 1/8 between the kinks at 0 and
// s_j - s_r, over [-60, 60 + spread] (the tails beyond carry < e^-59).
inline std::vector<long double> exact_laplace_noisy_max(const std::vector<long double>& scores) {
  static const long double nodes[10] = {
      0.0765265211334973337546404L, 0.2277858511416450780804962L, 0.3737060887154195606725482L,
      0.5108670019508270980043641L, 0.6360536807265150254528367L, 0.7463319064601507926143051L,
      0.8391169718222188233945291L, 0.9122344282513259058677524L, 0.9639719272779137912676661L,
      0.9931285991850949247861224L};
  static const long double weights[10] = {
      0.1527533871307258506980843L, 0.1491729864726037467878287L, 0.1420961093183820513292983L,
      0.1316886384491766268984945L, 0.1181945319615184173123774L, 0.1019301198172404350367501L,
      0.0832767415767047487247581L, 0.0626720483341090635695065L, 0.0406014298003869413310400L,
      0.0176140071391521183118620L};
  auto laplace_cdf = [](long double x) {
    return x < 0 ? 0.5L * std::exp(x) : 1.0L - 0.5L * std::exp(-x);
  };
  std::vector<long double> p(scores.size(), 0.0L);
  for (std::size_t r = 0; r < scores.size(); ++r) {
    if (!std::isfinite(scores[r])) continue;
    std::vector<long double> kinks = {-60.0L, 0.0L};
    long double hi = 60.0L;
    for (std::size_t j = 0; j < scores.size(); ++j) {
      if (j == r || !std::isfinite(scores[j])) continue;
      kinks.push_back(scores[j] - scores[r]);
      hi = std::fmax(hi, 60.0L + scores[j] - scores[r]);
    }
    kinks.push_back(hi);
    std::sort(kinks.begin(), kinks.end());
    auto integrand = [&](long double x) {
      long double value = 0.5L * std::exp(-std::fabs(x));
      for (std::size_t j = 0; j < scores.size(); ++j) {
        if (j == r || !std::isfinite(scores[j])) continue;
        value *= laplace_cdf(x + scores[r] - scores[j]);
      }
      return value;
    };
    long double total = 0;
    for (std::size_t k = 0; k + 1 < kinks.size(); ++k) {
      const long double lo = std::fmax(kinks[k], -60.0L);
      const long double up = kinks[k + 1];
      if (!(up > lo)) continue;
      const int pieces = static_cast<int>(std::ceil((up - lo) * 8));
      const long double width = (up - lo) / pieces;
      for (int piece = 0; piece < pieces; ++piece) {
        const long double mid = lo + (piece + 0.5L) * width;
        for (int q = 0; q < 10; ++q) {
          const long double dx = 0.5L * width * nodes[q];
          total += 0.5L * width * weights[q] * (integrand(mid - dx) + integrand(mid + dx));
        }
      }
    }
    p[r] = total;
  }
  return p;
}

}  // namespace dpselect::testing
