// SPDX-License-Identifier: Apache-2.0
// Text input: one number per line, as people write and export it (a byte-order mark, CRLF line
// ends, a '+' sign), and a clear refusal of binary data given as text.
#include <algorithm>
#include <charconv>
#include <cstring>

#include "input_reading.hpp"

namespace dpselect::cli {
namespace {

constexpr std::string_view utf8_byte_order_mark = "\xEF\xBB\xBF";

// A byte no text file of numbers holds (blanks and line ends aside).
bool is_control_byte(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return (byte < 0x20 && std::strchr("\t\n\v\f\r", c) == nullptr) || byte == 0x7f;
}

// Binary data is not echoed: its bytes would garble the terminal and mean nothing to the reader.
[[noreturn]] void refuse_binary(const std::string& location) {
  throw CliError(location +
                 "looks binary, not text; give its format with --format f32, f64 or npy");
}

// The number a line spells: std::from_chars, which takes no '+', after an optional '+'.
std::from_chars_result parse_number(std::string_view line, double& value) {
  std::string_view digits = line;
  if (digits.front() == '+') {
    digits.remove_prefix(1);
    // "+-1" and "++1" are not numbers.
    if (digits.empty() || digits.front() == '+' || digits.front() == '-') {
      return {line.data(), std::errc::invalid_argument};
    }
  }
  return std::from_chars(digits.data(), digits.data() + digits.size(), value);
}

}  // namespace

std::vector<double> parse_text(std::string_view text, const std::string& label, ValueKind kind) {
  if (text.starts_with(utf8_byte_order_mark)) text.remove_prefix(utf8_byte_order_mark.size());
  // A NUL anywhere, even in a comment, means binary data (every raw float file of more than a
  // few values has one); found before any line is parsed so that no binary bytes are quoted.
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    const auto line = 1 + std::count(text.begin(), text.begin() + nul, '\n');
    refuse_binary(label + ":" + std::to_string(line) + ": ");
  }

  std::vector<double> values;
  values.reserve(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  std::uint64_t line_number = 0;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view whole_line = text.substr(start, end - start);
    const std::string_view line = trim(whole_line);
    start = end + 1;
    ++line_number;
    const auto location = [&] { return label + ":" + std::to_string(line_number) + ": "; };
    // The line is never quoted: it is the user's data. Its column (1-based, in bytes) says where.
    const auto column = [&](const char* at) { return std::to_string(at - whole_line.data() + 1); };
    // A CR inside a line: CR-only line ends (classic Mac OS) make the file one line, which would
    // be refused as not a number, or, after a comment, skipped whole.
    const auto refuse_bare_carriage_return = [&] {
      if (const std::size_t at = line.find('\r'); at != std::string_view::npos) {
        throw CliError(location() + "a carriage return (CR) not followed by a line feed at column " +
                       column(line.data() + at) + "; lines end with LF or CRLF (convert CR-only line ends)");
      }
    };
    if (line.empty()) continue;
    if (line.front() == '#') {
      refuse_bare_carriage_return();
      continue;
    }

    double value = 0.0;
    auto [parsed_end, error] = parse_number(line, value);
    if (error == std::errc() && parsed_end == line.data() + line.size()) {
      std::string problem = domain_violation(value, kind);
      if (problem.empty()) {
        values.push_back(value);
        continue;
      }
      // Only NaN and +-inf are named, as the command writes them (never the line's own spelling).
      throw CliError(location() + problem + quoted_if_not_finite(value, "'" + format_number(value) + "'"));
    }
    if (std::any_of(line.begin(), line.end(), is_control_byte)) refuse_binary(location());
    refuse_bare_carriage_return();
    if (error == std::errc::result_out_of_range) {
      throw CliError(location() + "number out of the range of double at column " + column(line.data()));
    }
    const char* stop = error == std::errc() ? parsed_end : line.data();
    throw CliError(location() + "not a number at column " + column(stop) +
                   "; a line holds one number (such as 12, -0.5 or 1e3), a # comment, or nothing");
  }
  require_values(values.size(), label);
  return values;
}

}  // namespace dpselect::cli
