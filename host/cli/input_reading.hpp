// SPDX-License-Identifier: Apache-2.0
// What the input readers (text_input.cpp, npy_input.cpp, input_files.cpp) share: the bytes of a
// file or of standard input, and the checks of the values read from them. Internal to the
// command; input_files.hpp is the interface.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli_error.hpp"
#include "input_files.hpp"
#include "numbers.hpp"

namespace dpselect::cli {

// The bytes of one input, read in as few calls as possible (a whole array is one fread).
class InputBytes {
 public:
  // `path` "-" is standard input, read to its end here: a pipe has no size to plan by.
  // `label` names the input in every error ("--utilities scores.txt").
  InputBytes(const std::string& path, std::string label);

  const std::string& label() const { return label_; }
  std::uint64_t size() const { return size_; }
  std::uint64_t position() const { return position_; }
  // Up to the first 8 bytes, for recognising a format by its magic.
  std::string_view head() const { return head_; }

  void read(void* destination, std::uint64_t bytes);
  // Moves `bytes` ahead without reading them (a seek in a file).
  void skip(std::uint64_t bytes);
  template <class T>
  std::vector<T> read_array(std::uint64_t count) {
    std::vector<T> values(count);
    read(values.data(), count * sizeof(T));
    return values;
  }
  // Everything not read yet.
  std::string read_rest();
  // A descriptor of its own on the same open file (not standard input), for reading it again
  // where no other file can have taken its path's place: the caller closes it.
  int duplicate_descriptor() const;

 private:
  struct Closer {
    void operator()(std::FILE* file) const { std::fclose(file); }
  };
  std::string label_;
  std::unique_ptr<std::FILE, Closer> file_;  // null for standard input
  std::string standard_input_;               // all of it
  std::string head_;
  std::uint64_t size_ = 0;
  std::uint64_t position_ = 0;
};

inline constexpr std::string_view npy_magic = "\x93NUMPY";

// Empty when `value` is acceptable, else what is wrong with it. (Called once per value of files
// of 10^8 values: nothing is built unless the value is refused.)
std::string domain_violation(double value, ValueKind kind);
void require_values(std::size_t count, const std::string& label);

// What a refused value is quoted as: " (got nan)", or nothing for a finite one. A finite value is
// data (a bid, a utility, a query answer: often an aggregate such as a count) and an error
// message is no place for it; the file and line or element already say where it is.
std::string quoted_if_not_finite(double value, const std::string& text);

// Checks the values of a whole input, or of its slice from element `first` on (messages name
// elements by their place in the whole input).
template <class T>
void check_elements(std::span<const T> values, const std::string& label, ValueKind kind,
                    std::uint64_t first = 0) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::string problem = domain_violation(static_cast<double>(values[i]), kind);
    if (!problem.empty()) {
      const auto value = static_cast<double>(values[i]);
      throw CliError(label + ": element " + std::to_string(first + i) + ": " + problem +
                     quoted_if_not_finite(value, format_number(value)));
    }
  }
}

template <class T>
void check_elements(const std::vector<T>& values, const std::string& label, ValueKind kind,
                    std::uint64_t first = 0) {
  check_elements(std::span<const T>(values), label, kind, first);
}

// The checking pass of a chunked input: every value of `file`, a chunk at a time, as a whole read
// checks them.
void check_chunked(const ChunkedFile& file, const std::string& label, ValueKind kind);

// A .npy dtype as an error message names it: " '<f2'" when `descr` is shaped like a dtype NumPy
// writes (a byte order, a kind letter, a size), else nothing: the header is the file's, and
// arbitrary text there is not quoted.
std::string dtype_in_message(std::string_view descr);

// `text` without leading and trailing blanks (a CR of a CRLF line end included).
std::string_view trim(std::string_view text);
// Text the user typed (an option's value, a column name) as it goes into a one-line message:
// quoted, bounded, and every byte that is not printable ASCII written as \xNN. Never for the
// contents of an input: messages name a line, a column or an element instead.
std::string quoted_excerpt(std::string_view text);

// text_input.cpp: the numbers of text data, one a line.
std::vector<double> parse_text(std::string_view text, const std::string& label, ValueKind kind);

// npy_input.cpp: NumPy .npy, format versions 1.0, 2.0 and 3.0.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::uint64_t> shape;
};
// Reads the header, leaving `bytes` at the data; refuses anything but a 1-D or 2-D C-order array.
NpyHeader read_npy_header(InputBytes& bytes);
// The elements [first, first + count) of an input.
struct ElementRange {
  std::uint64_t first = 0;
  std::uint64_t count = 0;
};
// The number of values after the header, with `bytes` at the data: refuses a dtype other than
// '<f4', '<f8', '<i4' and '<i8', data that does not match the shape, and an empty array.
std::uint64_t npy_value_count(const InputBytes& bytes, const NpyHeader& header);
// The data, or only `slice` of it (nullopt: all of it).
InputValues read_npy_data(InputBytes& bytes, const NpyHeader& header, ValueKind kind,
                          const std::optional<InputSlice>& slice);

// The elements of `slice` of an input of `total` elements whose rows are `row_width` wide (0, or
// a width that does not divide the total: cut by elements).
ElementRange slice_elements(const InputSlice& slice, std::uint64_t total, std::uint64_t row_width);

}  // namespace dpselect::cli
