// SPDX-License-Identifier: Apache-2.0
#include "numbers.hpp"

#include <charconv>

namespace dpselect::cli {
namespace {

template <class Number>
std::optional<Number> parse_whole(std::string_view text) {
  Number value{};
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

template <class Number>
std::string format_shortest(Number value) {
  char buffer[32];
  return std::string(buffer, std::to_chars(buffer, buffer + sizeof buffer, value).ptr);
}

}  // namespace

std::optional<double> parse_double(std::string_view text) { return parse_whole<double>(text); }
std::optional<std::uint64_t> parse_uint64(std::string_view text) {
  return parse_whole<std::uint64_t>(text);
}

std::string format_number(double value) { return format_shortest(value); }
std::string format_number(std::uint64_t value) { return format_shortest(value); }

}  // namespace dpselect::cli
