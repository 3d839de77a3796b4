// SPDX-License-Identifier: Apache-2.0
// NumPy .npy input (format versions 1.0, 2.0 and 3.0): the header's Python dict literal, then
// the data read straight into the vectors.
#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>

#include "input_reading.hpp"

// .npy data is read straight into the vectors, which is only right on little-endian hosts (every
// platform the library targets).
static_assert(std::endian::native == std::endian::little, "npy_input.cpp assumes little-endian");

namespace dpselect::cli {
namespace {

// The text after `'key':` in the header's Python dict literal.
std::string_view npy_field(std::string_view dict, std::string_view key, const std::string& label) {
  const std::string quoted_key = std::string(1, '\'').append(key).append(1, '\'');
  std::size_t at = dict.find(quoted_key);
  if (at == std::string_view::npos) {
    throw CliError(label + ": .npy header has no '" + std::string(key) + "'");
  }
  std::string_view rest = trim(dict.substr(at + quoted_key.size()));
  if (rest.empty() || rest.front() != ':') throw CliError(label + ": malformed .npy header");
  return trim(rest.substr(1));
}

std::vector<std::uint64_t> parse_npy_shape(std::string_view field, const std::string& label) {
  std::size_t close = field.find(')');
  if (field.empty() || field.front() != '(' || close == std::string_view::npos) {
    throw CliError(label + ": malformed .npy shape");
  }
  std::vector<std::uint64_t> shape;
  std::string_view dimensions = field.substr(1, close - 1);
  while (!dimensions.empty()) {
    std::size_t comma = std::min(dimensions.find(','), dimensions.size());
    std::string_view item = trim(dimensions.substr(0, comma));
    dimensions.remove_prefix(std::min(comma + 1, dimensions.size()));
    if (item.empty()) continue;  // the trailing comma of "(10,)"
    std::optional<std::uint64_t> extent = parse_uint64(item);
    if (!extent) {
      // Not quoted: a shape is a count (of bids, say).
      throw CliError(label + ": malformed .npy shape");
    }
    shape.push_back(*extent);
  }
  return shape;
}

void check_layout(const NpyHeader& header, const std::string& label) {
  if (header.shape.empty() || header.shape.size() > 2) {
    throw CliError(label + ": .npy array has " + std::to_string(header.shape.size()) +
                   " dimensions (1 or 2 supported)");
  }
  if (header.fortran_order) {
    throw CliError(label + ": .npy array is in Fortran order (C order required)");
  }
}

std::uint64_t element_count(const NpyHeader& header, const std::string& label) {
  std::uint64_t count = 1;
  for (std::uint64_t extent : header.shape) {
    if (extent != 0 && count > UINT64_MAX / extent) throw CliError(label + ": .npy shape too large");
    count *= extent;
  }
  return count;
}

// Integers are converted to double (exact below 2^53).
template <class Stored>
std::vector<double> widened(const std::vector<Stored>& values) {
  return std::vector<double>(values.begin(), values.end());
}

}  // namespace

NpyHeader read_npy_header(InputBytes& bytes) {
  const std::string& label = bytes.label();
  unsigned char preamble[8];
  if (bytes.size() < sizeof preamble) throw CliError(label + ": not a .npy file (too short)");
  bytes.read(preamble, sizeof preamble);
  if (std::memcmp(preamble, npy_magic.data(), npy_magic.size()) != 0) {
    throw CliError(label + ": not a .npy file (bad magic)");
  }
  const unsigned version = preamble[6];
  if (version < 1 || version > 3) {
    throw CliError(label + ": unsupported .npy format version " + std::to_string(version));
  }
  // Version 1 stores the header length in 2 bytes, versions 2 and 3 in 4 (little-endian).
  unsigned char length_bytes[4] = {0, 0, 0, 0};
  bytes.read(length_bytes, version == 1 ? 2 : 4);
  const std::uint32_t header_length = length_bytes[0] | (length_bytes[1] << 8) |
                                      (length_bytes[2] << 16) |
                                      (static_cast<std::uint32_t>(length_bytes[3]) << 24);
  if (header_length > bytes.size() - bytes.position()) {
    throw CliError(label + ": truncated .npy header");
  }
  std::string dict(header_length, '\0');
  bytes.read(dict.data(), dict.size());

  NpyHeader header;
  std::string_view descr = npy_field(dict, "descr", label);
  const bool quoted = !descr.empty() && (descr.front() == '\'' || descr.front() == '"');
  const std::size_t descr_end = quoted ? descr.find(descr.front(), 1) : std::string_view::npos;
  if (descr_end == std::string_view::npos) {
    throw CliError(label + ": .npy descr is not a plain dtype string");
  }
  header.descr = std::string(descr.substr(1, descr_end - 1));
  std::string_view fortran = npy_field(dict, "fortran_order", label);
  header.fortran_order = fortran.starts_with("True");
  if (!header.fortran_order && !fortran.starts_with("False")) {
    throw CliError(label + ": malformed .npy fortran_order");
  }
  header.shape = parse_npy_shape(npy_field(dict, "shape", label), label);
  check_layout(header, label);
  return header;
}

std::uint64_t npy_value_count(const InputBytes& bytes, const NpyHeader& header) {
  const std::string& label = bytes.label();
  const std::uint64_t count = element_count(header, label);
  const bool supported = header.descr == "<f4" || header.descr == "<f8" || header.descr == "<i4" ||
                         header.descr == "<i8";
  if (!supported) {
    throw CliError(label + ": unsupported .npy dtype" + dtype_in_message(header.descr) +
                   " (expected '<f4', '<f8', '<i4' or '<i8')");
  }
  const std::uint64_t element_size = static_cast<std::uint64_t>(header.descr.back() - '0');
  const std::uint64_t payload = bytes.size() - bytes.position();
  if (count > payload / element_size || payload != count * element_size) {
    // No byte counts: for bids they give the number of bidders.
    throw CliError(label + ": .npy data does not match its shape (truncated or extra bytes)");
  }
  require_values(count, label);
  return count;
}

InputValues read_npy_data(InputBytes& bytes, const NpyHeader& header, ValueKind kind,
                          const std::optional<InputSlice>& slice) {
  const std::string& label = bytes.label();
  const std::uint64_t count = npy_value_count(bytes, header);
  const std::uint64_t element_size = static_cast<std::uint64_t>(header.descr.back() - '0');
  const ElementRange range =
      slice ? slice_elements(*slice, count, slice->row_width) : ElementRange{0, count};
  bytes.skip(range.first * element_size);

  InputValues input{.format = InputFormat::npy, .element_type = header.descr, .shape = header.shape};
  input.first = range.first;
  input.total = count;
  if (header.descr == "<f4") {
    input.values = bytes.read_array<float>(range.count);
  } else if (header.descr == "<f8") {
    input.values = bytes.read_array<double>(range.count);
  } else if (header.descr == "<i4") {
    input.values = widened(bytes.read_array<std::int32_t>(range.count));
  } else {
    input.values = widened(bytes.read_array<std::int64_t>(range.count));
  }
  std::visit([&](const auto& values) { check_elements(values, label, kind, range.first); }, input.values);
  return input;
}

}  // namespace dpselect::cli
