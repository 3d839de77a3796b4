// SPDX-License-Identifier: Apache-2.0
#include "validation/validation.hpp"

#include <charconv>
#include <cmath>

#include "dpselect/errors.hpp"
#include "selection/floating_point_slack.hpp"

namespace dpselect::detail {

std::string format_value(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

void throw_invalid(std::string_view name, std::string_view requirement, double value) {
  std::string message = "dpselect: ";
  message.append(name).append(" must be ").append(requirement).append(" (got ");
  message.append(format_value(value)).append(")");
  throw InvalidArgument(message);
}

void throw_epsilon_too_small_for_slack() {
  throw InvalidArgument("dpselect: epsilon is too small for double-precision noise on these utilities: "
                        "the floating-point slack would reach epsilon; use a larger epsilon, or give a "
                        "public bound on |utility| (utility_bound; for pricing, max_bidders) so that "
                        "this is checked from the bound before any data is read");
}

void validate_positive_finite(std::string_view name, double value) {
  if (!std::isfinite(value) || !(value > 0.0)) throw_invalid(name, "finite and > 0", value);
}

double validate_params(const SelectionParams& params) {
  validate_positive_finite("epsilon", params.epsilon);
  validate_positive_finite("sensitivity", params.sensitivity);
  if (!std::isfinite(params.utility_bound) || params.utility_bound < 0.0) {
    throw_invalid("utility_bound", "finite and >= 0 (0: no bound)", params.utility_bound);
  }
  if (params.utility_reference.has_value() && !std::isfinite(*params.utility_reference)) {
    throw_invalid("utility_reference", "finite (or not given)", *params.utility_reference);
  }
  return score_scale(params);
}

void validate_candidate_count(std::string_view name, std::uint64_t size, std::uint64_t first_index) {
  if (size == 0) {
    throw InvalidArgument("dpselect: " + std::string(name) +
                          " must hold at least one candidate (got size 0)");
  }
  if (first_index > kIndexLimit || size > kIndexLimit - first_index) {
    throw InvalidArgument("dpselect: first_index + size must be <= 2^63 (got first_index " +
                          std::to_string(first_index) + ", size " + std::to_string(size) + ")");
  }
}

double score_scale(const SelectionParams& params) {
  const double ratio = params.epsilon / params.sensitivity;
  // Dwork & Roth 2014, Thm 3.10 / McKenna & Sheldon / Dwork & Roth Claim 3.9: noise scale 2*Delta/eps in
  // general, Delta/eps when the utility is monotone (all three mechanisms).
  const double scale = params.monotone ? ratio : 0.5 * ratio;
  if (!std::isnormal(scale)) {
    throw_invalid(params.monotone ? "epsilon / sensitivity" : "epsilon / (2 * sensitivity)",
                  "a positive normal double", scale);
  }
  return scale;
}

}  // namespace dpselect::detail

namespace dpselect::detail {

double validate_release_params(const SelectionParams& params) {
  const double scale = validate_params(params);
  if (params.utility_bound > 0.0) {  // a public bound: the slack is known before any work
    const UtilityReference reference = params.utility_reference.value_or(0.0) != 0.0 ? UtilityReference::public_value
                                                                                      : UtilityReference::zero;
    const double slack_epsilon = floating_point_slack(params.epsilon, scale, params.sensitivity,
                                                      params.utility_bound, 1, reference)
                                     .epsilon;
    if (!(slack_epsilon < params.epsilon)) {
      throw_invalid("utility_bound",
                    "small enough that the floating-point slack (" + format_value(slack_epsilon) +
                        ") stays below epsilon",
                    params.utility_bound);
    }
  }
  return scale;
}

}  // namespace dpselect::detail

void dpselect::SelectionParams::validate() const { detail::validate_release_params(*this); }
