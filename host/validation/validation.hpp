// SPDX-License-Identifier: Apache-2.0
// Parameter validation shared by every entry point: runs before any stream is drawn, any
// allocation or any launch.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "dpselect/types.hpp"

namespace dpselect::detail {

// Shortest text that round-trips the double (so NaN, inf and 1e-320 read as themselves).
std::string format_value(double value);

// Throws InvalidArgument "dpselect: <name> must be <requirement> (got <value>)".
[[noreturn]] void throw_invalid(std::string_view name, std::string_view requirement, double value);

// The refusal of a release whose floating-point slack, computed from the data, would reach
// epsilon. One message for every sampler: the automatic pricing sampler chooses by the private
// number of bids, and a different wording per sampler would tell which one ran. Neither the
// slack nor max |utility| is quoted (for pricing the latter is the optimal revenue).
[[noreturn]] void throw_epsilon_too_small_for_slack();

void validate_positive_finite(std::string_view name, double value);
// Both return the release's calibration, score_scale(params): the one place where epsilon becomes
// a noise scale, computed once per check.
double validate_params(const SelectionParams& params);
// validate_params, and with a public utility_bound, that the floating-point slack it implies
// stays below epsilon: every check Context::begin_release makes, for entry points that charge a
// whole release (top-k, rows) before beginning it.
double validate_release_params(const SelectionParams& params);
// Candidates are numbered below 2^63 (noise_positions.hpp puts the detail blocks at 2^63 + index).
inline constexpr std::uint64_t kIndexLimit = std::uint64_t{1} << 63;

void validate_candidate_count(std::string_view name, std::uint64_t size, std::uint64_t first_index);

// eps/(2*Delta), or eps/Delta when monotone (sources on SelectionParams::monotone). Throws
// InvalidArgument if it is not a positive normal double.
double score_scale(const SelectionParams& params);

}  // namespace dpselect::detail
