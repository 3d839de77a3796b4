// SPDX-License-Identifier: Apache-2.0
// Reading the numbers the command works on: text (one number per line), raw little-endian
// float32 / float64, and NumPy .npy files, from a file or from standard input ("-"). Every
// problem is a CliError naming the option, the file ("<stdin>" for standard input) and the line
// (text) or element index (binary).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace dpselect::cli {

enum class InputFormat { by_extension, text, f32, f64, npy };

std::string_view to_string(InputFormat format);

// The values a file may hold.
enum class ValueDomain {
  finite_nonnegative,   // bids and prices
  finite,               // query answers: any sign, but NaN and +-inf are refused
  below_plus_infinity,  // utilities: -inf excludes a candidate; NaN and +inf are refused
  not_nan,              // quantile data: +-inf are clipped to the range like any value outside it
};

// What one value of a file is, for checking and for error messages.
struct ValueKind {
  std::string_view noun;  // "bid", "price", "utility", "query answer"
  ValueDomain domain;
  // A public bound on |value - bound_center| given by the option `bound_option` (0: none). A
  // finite value beyond it is refused here, so that the message names the file and the line.
  double magnitude_bound = 0.0;
  double bound_center = 0.0;
  std::string_view bound_option = {};
};
inline constexpr ValueKind bid_values{"bid", ValueDomain::finite_nonnegative};
inline constexpr ValueKind price_values{"price", ValueDomain::finite_nonnegative};
// -inf is a valid utility: it excludes a candidate (a public constraint).
inline constexpr ValueKind utility_values{"utility", ValueDomain::below_plus_infinity};
// The true answers f_i(D) of the sparse vector technique's queries.
inline constexpr ValueKind query_answer_values{"query answer", ValueDomain::finite};
// The values whose quantiles are released: any number but NaN (clipped to the public range).
inline constexpr ValueKind quantile_data_values{"data value", ValueDomain::not_nan};

// What a command makes of a 2-D .npy array.
enum class TwoDimensional {
  // The command takes one list: refused, naming --flatten (a matrix silently read as one list
  // would mix its rows up with no warning).
  refuse,
  flatten,  // --flatten: read in C order, row after row
  keep,     // dpselect rows: the matrix it works on (its shape is in InputValues::shape)
};

// Part of an input, for one rank of a distributed run (job.hpp): the `part`-th of `parts` even
// contiguous shares of its values, or of its rows when `row_width` > 0 (a 2-D .npy kept as a
// matrix cuts by its own rows, whatever row_width says). Raw and .npy files are read only there
// (a seek, then one read); text has no offsets, so it is read whole and cut after checking.
struct InputSlice {
  int part = 0;
  int parts = 1;
  std::uint64_t row_width = 0;
};

// A file option as the user gave it.
struct InputOption {
  std::string name;  // "--utilities", as typed: errors name it
  std::string path;  // "-" reads standard input
  InputFormat format = InputFormat::by_extension;
  TwoDimensional two_dimensional = TwoDimensional::refuse;
  // What to use instead of a refused 2-D array ("use 'dpselect rows' for one pick per row"),
  // said before --flatten is offered.
  std::string two_dimensional_hint = {};
  // Read only this part (nullopt: all of it). Standard input cannot be cut: refused.
  std::optional<InputSlice> slice = std::nullopt;
};

// The file name "-" stands for standard input.
inline constexpr std::string_view standard_input_path = "-";
// How messages name a file: `path`, or "<stdin>" for "-".
std::string_view display_path(std::string_view path);
// How errors name an input: "--utilities scores.txt", "--bids <stdin>".
std::string input_label(std::string_view option, std::string_view path);
// Standard input can be read once: refuses (naming them) two or more options given "-".
// Each pair is an option's name and path.
void require_one_standard_input(
    std::initializer_list<std::pair<std::string_view, std::string_view>> options);

struct InputValues {
  InputFormat format = InputFormat::text;  // as resolved
  std::string element_type;                // "float64", "float32", or the .npy descr ("<i8")
  std::vector<std::uint64_t> shape;        // .npy only; a 2-D array is held in C order
  // float32 data stays float (the library widens it exactly); everything else is double.
  std::variant<std::vector<float>, std::vector<double>> values;
  // Where `values` lie in the whole input: from value `first` on, of `total` values (a slice;
  // without one, first = 0 and total = size()).
  std::uint64_t first = 0;
  std::uint64_t total = 0;

  std::size_t size() const;
  // The values as doubles (moved out when they already are).
  std::vector<double> take_doubles();
};

// Reads and checks every value of `input`. At least one value is required.
//
// The format: --format when given; otherwise a .npy by its magic bytes ("\x93NUMPY") whatever
// the file is called, then the extension without regard to case (.npy, .f32, .f64), else text.
// Standard input has no extension: raw f32/f64 from it need --format. An explicit --format is
// honoured, except that --format text on data that starts with the .npy magic is refused with
// a pointer to --format npy (it could only fail as text).
//
// Text: one number per line (a leading '+' allowed), blank lines and # comments skipped, a
// UTF-8 byte-order mark and CRLF line ends accepted. Data with a NUL byte, or a control byte
// on a number line, is refused as looking binary, and a CR that ends no CRLF (CR-only line
// ends) is refused as such. No message quotes the data: it names the line and the column.
InputValues read_values(const InputOption& input, ValueKind kind);

}  // namespace dpselect::cli
