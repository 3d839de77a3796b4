// SPDX-License-Identifier: Apache-2.0
// What the accounting files share: the long double their long computations run in, the checks
// every public entry point makes on its parameters, rounding up to a double, and the parts of one
// composition route that another file calls (the best bound tries every route, the budget split
// searches the best bound). Internal to host/accounting. Every bound these files compute is an
// upper bound of the exact value (see dpselect/accounting.hpp for the rounding policy); the error
// margins are derived next to the code that needs them.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>

#include "dpselect/accounting.hpp"

namespace dpselect::detail::accounting {

// The optimal profile and the zCDP infima are long computations; they run in long double and
// carry error margins written for a 64-bit significand (unit roundoff 2^-64). A wider long double
// only makes the margins more generous.
using Real = long double;
static_assert(std::numeric_limits<Real>::digits >= 64,
              "the accounting files derive their error margins for a long double with a 64-bit significand");

// One unit in the last place of a long double, relative: 2^-63 (>= twice the unit roundoff).
constexpr Real kRealUlp = 0x1p-63L;
constexpr Real kInfinity = std::numeric_limits<Real>::infinity();
constexpr double kDoubleInfinity = std::numeric_limits<double>::infinity();

// Relative precision of the inverses (optimal_composition_epsilon, per_release_epsilon).
constexpr double kInverseTolerance = 0x1p-40;

// ---- validation (accounting_validation.cpp) ---------------------------------------------------

// 1 <= k <= 2^53.
void validate_count(std::string_view name, std::uint64_t k);
// Finite and > 0.
void validate_epsilon(std::string_view name, double epsilon);
// Finite and >= 0.
void validate_nonnegative_epsilon(std::string_view name, double epsilon);
// In [0, 1).
void validate_delta(std::string_view name, double delta);
// In (0, 1).
void validate_open_delta(std::string_view name, double delta);
// The accountant's budget: epsilon finite and > 0, delta in [0, 1).
void validate_budget(const PrivacyBound& budget);
// Pure and exponential-mechanism releases only: those are the ones with a per-release epsilon alone.
void validate_pure_kind(ReleaseKind kind);
// A positive finite epsilon, and a delta that fits the kind: 0 for pure and exponential-mechanism
// releases, in [0, 1) for approximate ones. `prefix` names the entry ("charges[2].") when several
// are validated together.
void validate_release(ReleaseKind kind, double epsilon, double delta, const std::string& prefix = {});

// ---- rounding ---------------------------------------------------------------------------------

// The smallest double >= value.
inline double round_up(Real value) {
  double rounded = static_cast<double>(value);
  if (static_cast<Real>(rounded) < value) rounded = std::nextafter(rounded, kDoubleInfinity);
  return rounded;
}

// k * epsilon rounded up (k <= 2^53 is an exact double, so fma gives the sign of the exact error).
inline double product_round_up(std::uint64_t k, double epsilon) {
  const double k_double = static_cast<double>(k);
  const double product = k_double * epsilon;
  return std::fma(k_double, epsilon, -product) > 0.0 ? std::nextafter(product, kDoubleInfinity) : product;
}

// ---- defined in one file, called from another -------------------------------------------------

// Advanced composition's epsilon for k eps-DP releases and slack delta' (composition_theorems.cpp).
double advanced_epsilon(std::uint64_t k, double epsilon, double delta_slack);

// The smallest epsilon_total whose optimal profile is at most delta_total, from the feasible side,
// starting from the first of `hints` the profile accepts (optimal_composition.cpp).
double optimal_epsilon(std::uint64_t k, double epsilon, double delta_total, std::span<const double> hints);

// Whether the optimal profile of k eps-DP releases at epsilon_total is at most delta_total, decided
// from the safe side: one evaluation of the profile instead of its inverse (optimal_composition.cpp).
bool optimal_profile_fits(std::uint64_t k, double epsilon, double epsilon_total, double delta_total);

// epsilon_from_zcdp_tight without its parameter checks (zcdp_conversion.cpp).
double epsilon_from_zcdp_unchecked(double rho, double delta);

// A ledger holding k releases of one kind at one epsilon (best_bound.cpp).
ReleaseLedger homogeneous_ledger(std::uint64_t k, double epsilon, ReleaseKind kind);

}  // namespace dpselect::detail::accounting
