#include "input_files.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "cli_error.hpp"
#include "numbers.hpp"

// Raw and .npy data are read straight into the vectors, which is only right on little-endian
// hosts (every platform the library targets).
static_assert(std::endian::native == std::endian::little, "input_files.cpp assumes little-endian");

namespace dpselect::cli {
namespace {

// One open file read in as few calls as possible (a whole array is one fread).
class BinaryFile {
 public:
  explicit BinaryFile(const std::string& path)
      : path_(path), file_(std::fopen(path.c_str(), "rb")) {
    if (!file_) throw CliError(path + ": cannot open: " + std::strerror(errno));
    struct stat status {};
    if (fstat(fileno(file_.get()), &status) != 0) {
      throw CliError(path + ": cannot read: " + std::strerror(errno));
    }
    if (!S_ISREG(status.st_mode)) throw CliError(path + ": not a regular file");
    size_ = static_cast<std::uint64_t>(status.st_size);
  }

  std::uint64_t size() const { return size_; }
  std::uint64_t position() const { return position_; }

  void read(void* destination, std::uint64_t bytes) {
    if (bytes == 0) return;
    if (std::fread(destination, 1, bytes, file_.get()) != bytes) {
      throw CliError(path_ + ": cannot read " + std::to_string(bytes) + " bytes at offset " +
                     std::to_string(position_) +
                     (std::ferror(file_.get()) ? std::string(": ") + std::strerror(errno)
                                               : std::string(": file too short")));
    }
    position_ += bytes;
  }

  template <class T>
  std::vector<T> read_array(std::uint64_t count) {
    std::vector<T> values(count);
    read(values.data(), count * sizeof(T));
    return values;
  }

 private:
  struct Closer {
    void operator()(std::FILE* file) const { std::fclose(file); }
  };
  std::string path_;
  std::unique_ptr<std::FILE, Closer> file_;
  std::uint64_t size_ = 0;
  std::uint64_t position_ = 0;
};

// Empty when `value` is acceptable, else what is wrong with it. (Called once per value of files
// of 10^8 values: nothing is built unless the value is refused.)
std::string domain_violation(double value, ValueKind kind) {
  std::string_view requirement;
  switch (kind.domain) {
    case ValueDomain::finite_nonnegative:
      if (!(std::isfinite(value) && value >= 0.0)) requirement = " must be finite and >= 0";
      break;
    case ValueDomain::finite:
      if (!std::isfinite(value)) requirement = " must be finite";
      break;
    case ValueDomain::below_plus_infinity:
      if (std::isnan(value) || value == INFINITY) requirement = " must not be NaN or +inf";
      break;
  }
  if (!requirement.empty()) return std::string(kind.noun).append(requirement);
  // -inf (an excluded candidate) is not a magnitude.
  if (kind.magnitude_bound > 0.0 && std::isfinite(value) &&
      std::fabs(value) > kind.magnitude_bound) {
    return std::string(kind.noun) + " must be within " + std::string(kind.bound_option) + " " +
           format_number(kind.magnitude_bound) + " in magnitude";
  }
  return {};
}

// What a refused value is quoted as: " (got nan)", or nothing for a finite one. A finite value is
// data (a bid, a utility, a query answer: often an aggregate such as a count) and an error
// message is no place for it; the file and line or element already say where it is.
std::string quoted_if_not_finite(double value, const std::string& text) {
  return std::isfinite(value) ? std::string() : " (got " + text + ")";
}

void require_values(std::size_t count, const std::string& path) {
  if (count == 0) throw CliError(path + ": no values in the file");
}

template <class T>
void check_elements(const std::vector<T>& values, const std::string& path, ValueKind kind) {
  require_values(values.size(), path);
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::string problem = domain_violation(static_cast<double>(values[i]), kind);
    if (!problem.empty()) {
      const auto value = static_cast<double>(values[i]);
      throw CliError(path + ": element " + std::to_string(i) + ": " + problem +
                     quoted_if_not_finite(value, format_number(value)));
    }
  }
}

std::string_view trim(std::string_view text) {
  constexpr std::string_view blanks = " \t\r\v\f";
  std::size_t first = text.find_first_not_of(blanks);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(blanks) - first + 1);
}

// The offending text of a line as it goes into a one-line message: bounded, printable.
std::string quoted_excerpt(std::string_view text) {
  constexpr std::size_t longest = 60;
  std::string excerpt(text.substr(0, longest));
  for (char& c : excerpt) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return "'" + excerpt + (text.size() > longest ? "...'" : "'");
}

std::vector<double> parse_text(std::string_view text, const std::string& path, ValueKind kind) {
  std::vector<double> values;
  values.reserve(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  std::uint64_t line_number = 0;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = std::min(text.find('\n', start), text.size());
    std::string_view line = trim(text.substr(start, end - start));
    start = end + 1;
    ++line_number;
    if (line.empty() || line.front() == '#') continue;

    double value = 0.0;
    auto [parsed_end, error] = std::from_chars(line.data(), line.data() + line.size(), value);
    std::string location = path + ":" + std::to_string(line_number) + ": ";
    if (error == std::errc::result_out_of_range) {
      throw CliError(location + "number out of the range of double: " + quoted_excerpt(line));
    }
    if (error != std::errc() || parsed_end != line.data() + line.size()) {
      throw CliError(location + "not a number: " + quoted_excerpt(line));
    }
    std::string problem = domain_violation(value, kind);
    if (!problem.empty()) {
      throw CliError(location + problem + quoted_if_not_finite(value, quoted_excerpt(line)));
    }
    values.push_back(value);
  }
  require_values(values.size(), path);
  return values;
}

InputValues read_text(const std::string& path, ValueKind kind) {
  BinaryFile file(path);
  std::string text(file.size(), '\0');
  file.read(text.data(), text.size());
  return {InputFormat::text, "float64", {}, parse_text(text, path, kind)};
}

template <class T>
InputValues read_raw(const std::string& path, InputFormat format, ValueKind kind) {
  BinaryFile file(path);
  const char* type_name = sizeof(T) == 4 ? "float32" : "float64";
  if (file.size() % sizeof(T) != 0) {
    // Sizes and shapes are not quoted: for bids they give the number of bidders.
    throw CliError(path + ": file size is not a multiple of " + std::to_string(sizeof(T)) +
                   " bytes (raw " + type_name + ")");
  }
  std::vector<T> values = file.read_array<T>(file.size() / sizeof(T));
  check_elements(values, path, kind);
  return {format, type_name, {}, std::move(values)};
}

// ---- NumPy .npy (format versions 1.0, 2.0 and 3.0) ----

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::uint64_t> shape;
};

// The text after `'key':` in the header's Python dict literal.
std::string_view npy_field(std::string_view dict, std::string_view key, const std::string& path) {
  const std::string quoted_key = std::string(1, '\'').append(key).append(1, '\'');
  std::size_t at = dict.find(quoted_key);
  if (at == std::string_view::npos) {
    throw CliError(path + ": .npy header has no '" + std::string(key) + "'");
  }
  std::string_view rest = trim(dict.substr(at + quoted_key.size()));
  if (rest.empty() || rest.front() != ':') throw CliError(path + ": malformed .npy header");
  return trim(rest.substr(1));
}

std::vector<std::uint64_t> parse_npy_shape(std::string_view field, const std::string& path) {
  std::size_t close = field.find(')');
  if (field.empty() || field.front() != '(' || close == std::string_view::npos) {
    throw CliError(path + ": malformed .npy shape");
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
      throw CliError(path + ": malformed .npy shape " + quoted_excerpt(field.substr(0, close + 1)));
    }
    shape.push_back(*extent);
  }
  return shape;
}

NpyHeader read_npy_header(BinaryFile& file, const std::string& path) {
  constexpr char magic[] = "\x93NUMPY";
  unsigned char preamble[8];
  if (file.size() < sizeof preamble) throw CliError(path + ": not a .npy file (too short)");
  file.read(preamble, sizeof preamble);
  if (std::memcmp(preamble, magic, 6) != 0) throw CliError(path + ": not a .npy file (bad magic)");
  const unsigned version = preamble[6];
  if (version < 1 || version > 3) {
    throw CliError(path + ": unsupported .npy format version " + std::to_string(version));
  }
  // Version 1 stores the header length in 2 bytes, versions 2 and 3 in 4 (little-endian).
  unsigned char length_bytes[4] = {0, 0, 0, 0};
  file.read(length_bytes, version == 1 ? 2 : 4);
  const std::uint32_t header_length = length_bytes[0] | (length_bytes[1] << 8) |
                                      (length_bytes[2] << 16) |
                                      (static_cast<std::uint32_t>(length_bytes[3]) << 24);
  if (header_length > file.size() - file.position()) {
    throw CliError(path + ": truncated .npy header");
  }
  std::string dict(header_length, '\0');
  file.read(dict.data(), dict.size());

  NpyHeader header;
  std::string_view descr = npy_field(dict, "descr", path);
  const bool quoted = !descr.empty() && (descr.front() == '\'' || descr.front() == '"');
  const std::size_t descr_end = quoted ? descr.find(descr.front(), 1) : std::string_view::npos;
  if (descr_end == std::string_view::npos) {
    throw CliError(path + ": .npy descr is not a plain dtype string");
  }
  header.descr = std::string(descr.substr(1, descr_end - 1));
  std::string_view fortran = npy_field(dict, "fortran_order", path);
  header.fortran_order = fortran.starts_with("True");
  if (!header.fortran_order && !fortran.starts_with("False")) {
    throw CliError(path + ": malformed .npy fortran_order");
  }
  header.shape = parse_npy_shape(npy_field(dict, "shape", path), path);
  return header;
}

std::uint64_t npy_element_count(const NpyHeader& header, const std::string& path) {
  if (header.shape.empty() || header.shape.size() > 2) {
    throw CliError(path + ": .npy array has " + std::to_string(header.shape.size()) +
                   " dimensions (1 or 2 supported)");
  }
  if (header.fortran_order) {
    throw CliError(path + ": .npy array is in Fortran order (C order required)");
  }
  std::uint64_t count = 1;
  for (std::uint64_t extent : header.shape) {
    if (extent != 0 && count > UINT64_MAX / extent) throw CliError(path + ": .npy shape too large");
    count *= extent;
  }
  return count;
}

// Integers are converted to double (exact below 2^53).
template <class Stored>
std::vector<double> widened(const std::vector<Stored>& values) {
  return std::vector<double>(values.begin(), values.end());
}

InputValues read_npy(const std::string& path, ValueKind kind) {
  BinaryFile file(path);
  NpyHeader header = read_npy_header(file, path);
  const std::uint64_t count = npy_element_count(header, path);
  const bool supported = header.descr == "<f4" || header.descr == "<f8" || header.descr == "<i4" ||
                         header.descr == "<i8";
  if (!supported) {
    throw CliError(path + ": unsupported .npy dtype " + quoted_excerpt(header.descr) +
                   " (expected '<f4', '<f8', '<i4' or '<i8')");
  }
  const std::uint64_t element_size = static_cast<std::uint64_t>(header.descr.back() - '0');
  const std::uint64_t payload = file.size() - file.position();
  if (count > payload / element_size || payload != count * element_size) {
    throw CliError(path + ": .npy data does not match its shape (truncated or extra bytes)");
  }

  InputValues input{InputFormat::npy, header.descr, header.shape, std::vector<double>{}};
  if (header.descr == "<f4") {
    input.values = file.read_array<float>(count);
  } else if (header.descr == "<f8") {
    input.values = file.read_array<double>(count);
  } else if (header.descr == "<i4") {
    input.values = widened(file.read_array<std::int32_t>(count));
  } else {
    input.values = widened(file.read_array<std::int64_t>(count));
  }
  std::visit([&](const auto& values) { check_elements(values, path, kind); }, input.values);
  return input;
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

InputFormat resolve_format(InputFormat requested, std::string_view path) {
  if (requested != InputFormat::by_extension) return requested;
  if (path.ends_with(".npy")) return InputFormat::npy;
  if (path.ends_with(".f32")) return InputFormat::f32;
  if (path.ends_with(".f64")) return InputFormat::f64;
  return InputFormat::text;
}

std::size_t InputValues::size() const {
  return std::visit([](const auto& stored) { return stored.size(); }, values);
}

std::vector<double> InputValues::take_doubles() {
  if (auto* doubles = std::get_if<std::vector<double>>(&values)) return std::move(*doubles);
  return widened(std::get<std::vector<float>>(values));
}

InputValues read_values(const std::string& path, InputFormat format, ValueKind kind) {
  switch (resolve_format(format, path)) {
    case InputFormat::npy: return read_npy(path, kind);
    case InputFormat::f32: return read_raw<float>(path, InputFormat::f32, kind);
    case InputFormat::f64: return read_raw<double>(path, InputFormat::f64, kind);
    case InputFormat::text:
    case InputFormat::by_extension: break;
  }
  return read_text(path, kind);
}

}  // namespace dpselect::cli
