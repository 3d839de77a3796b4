// SPDX-License-Identifier: Apache-2.0
#include "input_files.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <new>

#include "input_reading.hpp"

// Raw data is read straight into the vectors, which is only right on little-endian hosts (every
// platform the library targets).
static_assert(std::endian::native == std::endian::little, "input_files.cpp assumes little-endian");

namespace dpselect::cli {
namespace {

// The extension of `path`, lower case: ".NPY" names a .npy file as well.
std::string lower_case_extension(std::string_view path) {
  const std::size_t dot = path.rfind('.');
  if (dot == std::string_view::npos || path.find('/', dot) != std::string_view::npos) return {};
  std::string extension(path.substr(dot));
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return extension;
}

// An explicit format wins; then the .npy magic, which no text or raw file of numbers plausibly
// starts with; then the extension.
InputFormat resolve_format(InputFormat requested, std::string_view path, std::string_view head) {
  if (requested != InputFormat::by_extension) return requested;
  if (head.starts_with(npy_magic)) return InputFormat::npy;
  const std::string extension = lower_case_extension(path);
  if (extension == ".npy") return InputFormat::npy;
  if (extension == ".f32") return InputFormat::f32;
  if (extension == ".f64") return InputFormat::f64;
  return InputFormat::text;
}

InputValues read_text(InputBytes& bytes, ValueKind kind) {
  if (bytes.head().starts_with(npy_magic)) {
    throw CliError(bytes.label() +
                   ": a NumPy .npy file (by its magic bytes), not text; use --format npy or leave "
                   "--format out");
  }
  return {.format = InputFormat::text, .element_type = "float64", .values = parse_text(bytes.read_rest(), bytes.label(), kind)};
}

template <class T>
std::uint64_t raw_value_count(const InputBytes& bytes) {
  if (bytes.size() % sizeof(T) != 0) {
    // Sizes and shapes are not quoted: for bids they give the number of bidders.
    throw CliError(bytes.label() + ": file size is not a multiple of " + std::to_string(sizeof(T)) +
                   " bytes (raw " + (sizeof(T) == 4 ? "float32" : "float64") + ")");
  }
  const std::uint64_t total = bytes.size() / sizeof(T);
  require_values(total, bytes.label());
  return total;
}

template <class T>
InputValues read_raw(InputBytes& bytes, InputFormat format, ValueKind kind,
                     const std::optional<InputSlice>& slice) {
  const char* type_name = sizeof(T) == 4 ? "float32" : "float64";
  const std::uint64_t total = raw_value_count<T>(bytes);
  const ElementRange range =
      slice ? slice_elements(*slice, total, slice->row_width) : ElementRange{0, total};
  bytes.skip(range.first * sizeof(T));
  std::vector<T> values = bytes.read_array<T>(range.count);
  check_elements(values, bytes.label(), kind, range.first);
  InputValues input{.format = format, .element_type = type_name, .values = std::move(values)};
  input.first = range.first;
  input.total = total;
  return input;
}

// A raw or .npy input left in its file (`bytes` at its first value): every value checked in one
// pass, a chunk at a time, then read again by each release through `described.chunked`.
InputValues open_chunked(InputValues described, const InputBytes& bytes,
                         std::string stored, std::uint64_t total, ValueKind kind) {
  described.total = total;
  described.chunked = std::make_shared<const ChunkedFile>(bytes.duplicate_descriptor(), bytes.label(), bytes.position(),
                                                          std::move(stored), total);
  check_chunked(*described.chunked, bytes.label(), kind);
  return described;
}

// A text input read whole and checked, then cut to `slice` (text has no offsets to seek to).
InputValues cut(InputValues whole, const InputSlice& slice) {
  const ElementRange range = slice_elements(slice, whole.size(), slice.row_width);
  std::visit(
      [&](auto& values) {
        values.erase(values.begin() + static_cast<std::ptrdiff_t>(range.first + range.count), values.end());
        values.erase(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(range.first));
      },
      whole.values);
  whole.first = range.first;
  return whole;
}

// Refused before the data is read: the shape is in the header. (The shape is not quoted: for
// bids it gives the number of bidders.)
void check_dimensions(const NpyHeader& header, const InputOption& input, const std::string& label) {
  if (header.shape.size() != 2 || input.two_dimensional != TwoDimensional::refuse) return;
  std::string instead = input.two_dimensional_hint.empty() ? "use" : input.two_dimensional_hint + ", or";
  throw CliError(label + ": a 2-D array; " + instead +
                 " --flatten to read it row after row as one list");
}

}  // namespace

std::string_view to_string(InputFormat format) {
  switch (format) {
    case InputFormat::by_extension: return "by-extension";
    case InputFormat::text: return "text";
    case InputFormat::f32: return "f32";
    case InputFormat::f64: return "f64";
    case InputFormat::npy: return "npy";
  }
  return "unknown";
}

std::string_view display_path(std::string_view path) {
  return path == standard_input_path ? "<stdin>" : path;
}

std::string input_label(std::string_view option, std::string_view path) {
  return std::string(option).append(" ").append(display_path(path));
}

void require_one_standard_input(
    std::initializer_list<std::pair<std::string_view, std::string_view>> options) {
  std::vector<std::string_view> readers;
  for (const auto& [name, path] : options) {
    if (path == standard_input_path) readers.push_back(name);
  }
  if (readers.size() < 2) return;
  std::string names(readers.front());
  for (std::size_t i = 1; i < readers.size(); ++i) {
    names.append(i + 1 == readers.size() ? " and " : ", ").append(readers[i]);
  }
  throw CliError(names + (readers.size() == 2 ? " both" : " all") +
                 " read standard input ('-'), which can be read only once; give files to all "
                 "but one");
}

std::size_t InputValues::size() const {
  return std::visit([](const auto& stored) { return stored.size(); }, values);
}

std::vector<double> InputValues::take_doubles() {
  if (auto* doubles = std::get_if<std::vector<double>>(&values)) return std::move(*doubles);
  const auto& floats = std::get<std::vector<float>>(values);
  return std::vector<double>(floats.begin(), floats.end());
}

namespace {

InputValues read_values_or_throw(const InputOption& input, ValueKind kind) {
  if (input.slice && input.path == standard_input_path) {
    throw CliError(input_label(input.name, input.path) +
                   ": standard input cannot be split across the ranks of a distributed run; give a file");
  }
  InputBytes bytes(input.path, input_label(input.name, input.path));
  const bool chunked = input.chunked && !input.slice && input.path != standard_input_path;
  switch (resolve_format(input.format, input.path, bytes.head())) {
    case InputFormat::npy: {
      const NpyHeader header = read_npy_header(bytes);
      check_dimensions(header, input, bytes.label());
      if (chunked) {
        const std::uint64_t total = npy_value_count(bytes, header);
        return open_chunked({.format = InputFormat::npy, .element_type = header.descr, .shape = header.shape}, bytes,
                            header.descr, total, kind);
      }
      // A matrix kept as one is cut by its own rows.
      const bool matrix = header.shape.size() == 2 && input.two_dimensional == TwoDimensional::keep;
      std::optional<InputSlice> slice = input.slice;
      if (slice && matrix) slice->row_width = header.shape[1];
      return read_npy_data(bytes, header, kind, slice);
    }
    case InputFormat::f32:
      if (chunked) {
        return open_chunked({.format = InputFormat::f32, .element_type = "float32"}, bytes, "<f4",
                            raw_value_count<float>(bytes), kind);
      }
      return read_raw<float>(bytes, InputFormat::f32, kind, input.slice);
    case InputFormat::f64:
      if (chunked) {
        return open_chunked({.format = InputFormat::f64, .element_type = "float64"}, bytes, "<f8",
                            raw_value_count<double>(bytes), kind);
      }
      return read_raw<double>(bytes, InputFormat::f64, kind, input.slice);
    case InputFormat::text:
    case InputFormat::by_extension: break;
  }
  InputValues values = read_text(bytes, kind);
  values.total = values.size();
  return input.slice ? cut(std::move(values), *input.slice) : values;
}

}  // namespace

OutOfMemory out_of_memory_reading(std::string_view option, std::string_view path) {
  // The size is not quoted: for bids it gives the number of bidders.
  return OutOfMemory(input_label(option, path) +
                     ": not enough memory to read it (free memory, raise the limit set by "
                     "ulimit -v, or give a smaller input)");
}

InputValues read_values(const InputOption& input, ValueKind kind) {
  try {
    return read_values_or_throw(input, kind);
  } catch (const std::bad_alloc&) {
    throw out_of_memory_reading(input.name, input.path);
  }
}

}  // namespace dpselect::cli
