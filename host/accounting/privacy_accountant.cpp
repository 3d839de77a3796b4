// SPDX-License-Identifier: Apache-2.0
// The thread-safe accountant, and the names it speaks in: the release kind of each selection
// mechanism and the names of kinds and composition routes. The bounds it records come from
// best_bound.cpp.
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>

#include "accounting/accounting_internal.hpp"
#include "dpselect/errors.hpp"
#include "validation/validation.hpp"

namespace dpselect {
using namespace detail::accounting;

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
