// Reading the numbers the command works on: text (one number per line), raw little-endian
// float32 / float64, and NumPy .npy files. Every problem is a CliError naming the file and the
// line (text) or element index (binary).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace dpselect::cli {

enum class InputFormat { by_extension, text, f32, f64, npy };

std::string_view to_string(InputFormat format);
// .npy -> npy, .f32 -> f32, .f64 -> f64, anything else -> text; an explicit format wins.
InputFormat resolve_format(InputFormat requested, std::string_view path);

// The values a file may hold.
enum class ValueDomain {
  finite_nonnegative,   // bids and prices
  finite,               // query answers: any sign, but NaN and +-inf are refused
  below_plus_infinity,  // utilities: -inf excludes a candidate; NaN and +inf are refused
};

// What one value of a file is, for checking and for error messages.
struct ValueKind {
  std::string_view noun;  // "bid", "price", "utility", "query answer"
  ValueDomain domain;
  // A public bound on |value| given by the option `bound_option` (0: none). A finite value
  // beyond it is refused here, so that the message names the file and the line.
  double magnitude_bound = 0.0;
  std::string_view bound_option = {};
};
inline constexpr ValueKind bid_values{"bid", ValueDomain::finite_nonnegative};
inline constexpr ValueKind price_values{"price", ValueDomain::finite_nonnegative};
// -inf is a valid utility: it excludes a candidate (a public constraint).
inline constexpr ValueKind utility_values{"utility", ValueDomain::below_plus_infinity};
// The true answers f_i(D) of the sparse vector technique's queries.
inline constexpr ValueKind query_answer_values{"query answer", ValueDomain::finite};

struct InputValues {
  InputFormat format = InputFormat::text;  // as resolved
  std::string element_type;                // "float64", "float32", or the .npy descr ("<i8")
  std::vector<std::uint64_t> shape;        // .npy only; a 2-D array is flattened in C order
  // float32 data stays float (the library widens it exactly); everything else is double.
  std::variant<std::vector<float>, std::vector<double>> values;

  std::size_t size() const;
  // The values as doubles (moved out when they already are).
  std::vector<double> take_doubles();
};

// Reads and checks every value of `path`. At least one value is required.
InputValues read_values(const std::string& path, InputFormat format, ValueKind kind);

}  // namespace dpselect::cli
