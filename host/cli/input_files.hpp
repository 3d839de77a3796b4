// SPDX-License-Identifier: Apache-2.0
// Reading the numbers the command works on: text (one number per line), raw little-endian
// float32 / float64, and NumPy .npy files, from a file or from standard input ("-"). Every
// problem is a CliError naming the option, the file ("<stdin>" for standard input) and the line
// (text) or element index (binary).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "cli_error.hpp"
#include "dpselect/chunked_values.hpp"

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
  // A raw or .npy file (not standard input, not a slice) is checked in one pass a chunk at a time
  // and then left in the file: InputValues::chunked reads it again. Text is read whole.
  bool chunked = false;
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

// Values read (and checked) at once in a chunked input's checking pass and by each release: 32 MB
// of double, whatever the file's size.
inline constexpr std::uint64_t chunk_values = std::uint64_t{1} << 22;

// The values of a raw f32/f64 or .npy file read again a chunk at a time, never held whole: an
// input larger than memory. Reads with pread on a descriptor of its own, from any thread (one at
// a time).
class ChunkedFile {
 public:
  // `descriptor`: an open file, owned from here on (closed with the last copy). `data_offset`:
  // where the values start (after a .npy header). `stored`: "<f4", "<f8", "<i4" or "<i8".
  ChunkedFile(int descriptor, std::string label, std::uint64_t data_offset, std::string stored, std::uint64_t total);

  // float32 data, read as float (as a whole read keeps it); everything else is read as double.
  bool holds_floats() const { return stored_ == "<f4"; }
  std::uint64_t total() const { return total_; }
  // Values [first, first + out.size()), converted as a whole read converts them. The float
  // overload only where holds_floats(). Throws CliError naming the file if it cannot be read (it
  // shrank since it was opened, say).
  void read(std::uint64_t first, std::span<float> out) const;
  void read(std::uint64_t first, std::span<double> out) const;
  // The library's view of the values (chunked_values.hpp), `chunk_values` at a time; refers to
  // this object, which must outlive it.
  template <class T>
  ChunkedValues<T> chunked_values() const {
    return {total_, [this](std::uint64_t first, std::span<T> out) { read(first, out); }, chunk_values};
  }

 private:
  struct Descriptor;
  void read_bytes(std::uint64_t offset, void* destination, std::uint64_t bytes) const;
  std::shared_ptr<const Descriptor> descriptor_;
  std::string label_;
  std::uint64_t data_offset_;
  std::string stored_;
  std::uint64_t total_;
};

struct InputValues {
  InputFormat format = InputFormat::text;  // as resolved
  std::string element_type = {};           // "float64", "float32", or the .npy descr ("<i8")
  std::vector<std::uint64_t> shape = {};   // .npy only; a 2-D array is held in C order
  // float32 data stays float (the library widens it exactly); everything else is double.
  std::variant<std::vector<float>, std::vector<double>> values = {};
  // Where `values` lie in the whole input: from value `first` on, of `total` values (a slice;
  // without one, first = 0 and total = size()).
  std::uint64_t first = 0;
  std::uint64_t total = 0;
  // Set where the input was opened chunked (InputOption::chunked): `values` is then empty and the
  // values are read through it, all `total` of them.
  std::shared_ptr<const ChunkedFile> chunked = nullptr;

  std::size_t size() const;
  // The values as doubles (moved out when they already are).
  std::vector<double> take_doubles();
};

// Calls `use(source)` with the values of `input` as the library takes them: a span of the values
// held (std::span<const float> or <const double>), or the chunked file's ChunkedValues.
template <class Use>
decltype(auto) with_values(const InputValues& input, Use&& use) {
  if (input.chunked) {
    return input.chunked->holds_floats() ? use(input.chunked->chunked_values<float>())
                                         : use(input.chunked->chunked_values<double>());
  }
  return std::visit([&](const auto& values) { return use(std::span(values)); }, input.values);
}

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

// The error for an input too large for the memory the process may take, naming the option and the
// file: thrown by read_values, and by a command whose own copy of a chunked input (sorted bids,
// quantile positions) does not fit.
OutOfMemory out_of_memory_reading(std::string_view option, std::string_view path);

// `prepare()`, with an allocation failure turned into out_of_memory_reading(option, path).
template <class Prepare>
auto prepared_from(std::string_view option, std::string_view path, Prepare&& prepare) {
  try {
    return prepare();
  } catch (const std::bad_alloc&) {
    throw out_of_memory_reading(option, path);
  }
}

}  // namespace dpselect::cli
