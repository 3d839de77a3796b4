// SPDX-License-Identifier: Apache-2.0
// The parameter checks of the accounting entry points (declared in accounting_internal.hpp): they
// run before any computation, with one stable message per bad value.
#include <cmath>
#include <string>

#include "accounting/accounting_internal.hpp"
#include "dpselect/errors.hpp"
#include "validation/validation.hpp"

namespace dpselect::detail::accounting {
namespace {

// Counts of releases are used as doubles; up to 2^53 they are exact.
constexpr std::uint64_t kCountLimit = std::uint64_t{1} << 53;

}  // namespace

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

void validate_pure_kind(ReleaseKind kind) {
  if (kind != ReleaseKind::pure && kind != ReleaseKind::exponential_mechanism) {
    throw InvalidArgument("dpselect: kind must be pure or exponential_mechanism (got " +
                          std::string(to_string(kind)) + ")");
  }
}

void validate_release(ReleaseKind kind, double epsilon, double delta, const std::string& prefix) {
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

}  // namespace dpselect::detail::accounting
