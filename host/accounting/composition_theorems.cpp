// SPDX-License-Identifier: Apache-2.0
// The textbook composition theorems of Dwork & Roth: basic composition of a list of releases and
// advanced composition of k equal ones. The optimal and zCDP routes have files of their own.
#include <cmath>
#include <string>

#include "accounting/accounting_internal.hpp"
#include "dpselect/errors.hpp"

namespace dpselect::detail::accounting {

double advanced_epsilon(std::uint64_t k, double epsilon, double delta_slack) {
  const double count = static_cast<double>(k);
  // Dwork & Roth Thm 3.20 (Dwork, Rothblum & Vadhan 2010): eps sqrt(2k ln(1/delta')) + k eps (e^eps - 1).
  return epsilon * std::sqrt(2.0 * count * -std::log(delta_slack)) + count * epsilon * std::expm1(epsilon);
}

}  // namespace dpselect::detail::accounting

namespace dpselect {
using namespace detail::accounting;

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

}  // namespace dpselect
