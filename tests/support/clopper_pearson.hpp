// SPDX-License-Identifier: Apache-2.0
// One-sided binomial checks for empirical accuracy theorems ("the failure fraction is <= beta
// within Clopper-Pearson slack").
#pragma once

#include <cmath>
#include <cstdint>

namespace dpselect::testing {

// P[Binomial(trials, p) >= failures], summed in long double from log-gamma terms.
inline long double binomial_upper_tail(std::int64_t trials, long double p, std::int64_t failures) {
  long double total = 0;
  for (std::int64_t j = failures; j <= trials; ++j) {
    const long double log_term = std::lgamma(static_cast<long double>(trials) + 1) -
                                 std::lgamma(static_cast<long double>(j) + 1) -
                                 std::lgamma(static_cast<long double>(trials - j) + 1) + j * std::log(p) +
                                 (trials - j) * std::log1p(-p);
    total += std::exp(log_term);
  }
  return total;
}

// True when `failures` out of `trials` is consistent with a failure probability <= beta: the
// one-sided Clopper-Pearson lower confidence bound at level 1 - 1e-6 is <= beta, i.e.
// P[Binomial(trials, beta) >= failures] >= 1e-6. A mechanism that meets the theorem fails
// this with probability <= 1e-6.
inline bool within_clopper_pearson(std::int64_t failures, std::int64_t trials, double beta) {
  return failures == 0 || binomial_upper_tail(trials, beta, failures) >= 1e-6L;
}

}  // namespace dpselect::testing
