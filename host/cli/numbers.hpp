// SPDX-License-Identifier: Apache-2.0
// Numbers to and from text, exactly: std::from_chars over the whole string (no locale, no
// leading or trailing junk) and std::to_chars shortest round-trip output.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dpselect::cli {

// The double that all of `text` spells ("1e-3", "inf", "nan" included), or nothing.
std::optional<double> parse_double(std::string_view text);
// The unsigned integer that all of `text` spells (digits only: no sign), or nothing.
std::optional<std::uint64_t> parse_uint64(std::string_view text);

// The shortest text that reads back to the same double.
std::string format_number(double value);
std::string format_number(std::uint64_t value);

}  // namespace dpselect::cli
