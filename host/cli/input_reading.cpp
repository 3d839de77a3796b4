// SPDX-License-Identifier: Apache-2.0
#include "input_reading.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

namespace dpselect::cli {
namespace {

std::string read_error(const std::string& label) {
  return label + ": cannot read: " + std::strerror(errno);
}

}  // namespace

InputBytes::InputBytes(const std::string& path, std::string label) : label_(std::move(label)) {
  if (path == standard_input_path) {
    // Read in blocks to the end: the size of a pipe is known only then.
    constexpr std::size_t block = std::size_t{1} << 20;
    for (;;) {
      const std::size_t filled = standard_input_.size();
      standard_input_.resize(filled + block);
      const std::size_t got = std::fread(standard_input_.data() + filled, 1, block, stdin);
      standard_input_.resize(filled + got);
      if (got < block) break;
    }
    if (std::ferror(stdin)) throw CliError(read_error(label_));
    size_ = standard_input_.size();
    head_ = standard_input_.substr(0, 8);
    return;
  }

  // O_NONBLOCK: opening a named pipe would otherwise wait for a writer forever before fstat could
  // refuse it (it has no effect on a regular file). The type is checked on the open descriptor,
  // so the file cannot be swapped between the check and the read.
  const int descriptor = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (descriptor < 0) throw CliError(label_ + ": cannot open: " + std::strerror(errno));
  file_.reset(::fdopen(descriptor, "rb"));
  if (!file_) {
    const int error = errno;
    ::close(descriptor);
    throw CliError(label_ + ": cannot open: " + std::strerror(error));
  }
  struct stat status {};
  if (fstat(descriptor, &status) != 0) throw CliError(read_error(label_));
  if (!S_ISREG(status.st_mode)) {
    throw CliError(label_ + ": not a regular file" +
                   (S_ISFIFO(status.st_mode) ? " (a pipe: give it on standard input, as - < PIPE)" : ""));
  }
  size_ = static_cast<std::uint64_t>(status.st_size);
  head_.resize(std::min<std::uint64_t>(size_, 8));
  read(head_.data(), head_.size());
  if (std::fseek(file_.get(), 0, SEEK_SET) != 0) throw CliError(read_error(label_));
  position_ = 0;
}

void InputBytes::read(void* destination, std::uint64_t bytes) {
  if (bytes == 0) return;
  if (bytes > size_ - position_) {
    throw CliError(label_ + ": cannot read " + std::to_string(bytes) + " bytes at offset " +
                   std::to_string(position_) + ": file too short");
  }
  if (!file_) {
    std::memcpy(destination, standard_input_.data() + position_, bytes);
  } else if (std::fread(destination, 1, bytes, file_.get()) != bytes) {
    // The file ended before the size fstat gave when it was opened: it shrank while being read.
    // No byte counts in the message: for bids they give the number of bidders.
    throw CliError(label_ + (std::ferror(file_.get())
                                 ? ": cannot read: " + std::string(std::strerror(errno))
                                 : std::string(": the file ended before its size when opened "
                                               "(it shrank while being read)")));
  }
  position_ += bytes;
}

void InputBytes::skip(std::uint64_t bytes) {
  if (bytes > size_ - position_) throw CliError(label_ + ": cannot skip past the end: file too short");
  if (file_ && std::fseek(file_.get(), static_cast<long>(position_ + bytes), SEEK_SET) != 0) {
    throw CliError(read_error(label_));
  }
  position_ += bytes;
}

ElementRange slice_elements(const InputSlice& slice, std::uint64_t total, std::uint64_t row_width) {
  // Values that make no whole rows are cut by values: the command then refuses them on every
  // rank with the message of one process (it sees the total).
  const std::uint64_t width = row_width == 0 || total % row_width != 0 ? 1 : row_width;
  const std::uint64_t units = total / width;
  const auto part = static_cast<std::uint64_t>(slice.part);
  const auto parts = static_cast<std::uint64_t>(slice.parts);
  const std::uint64_t begin = units / parts * part + std::min(part, units % parts);
  const std::uint64_t count = units / parts + (part < units % parts ? 1 : 0);
  return {begin * width, count * width};
}

std::string InputBytes::read_rest() {
  if (!file_ && position_ == 0) {
    position_ = size_;
    return std::move(standard_input_);
  }
  std::string rest(size_ - position_, '\0');
  read(rest.data(), rest.size());
  return rest;
}

int InputBytes::duplicate_descriptor() const {
  const int descriptor = file_ ? ::fcntl(::fileno(file_.get()), F_DUPFD_CLOEXEC, 0) : -1;
  if (descriptor < 0) throw CliError(label_ + ": cannot open: " + std::strerror(errno));
  return descriptor;
}

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
    case ValueDomain::not_nan:
      if (std::isnan(value)) requirement = " must not be NaN";
      break;
  }
  if (!requirement.empty()) return std::string(kind.noun).append(requirement);
  // -inf (an excluded candidate) is not a magnitude.
  if (kind.magnitude_bound > 0.0 && std::isfinite(value) &&
      !(std::fabs(value - kind.bound_center) <= kind.magnitude_bound)) {
    return std::string(kind.noun) + " must be within " + std::string(kind.bound_option) + " " +
           format_number(kind.magnitude_bound) +
           (kind.bound_center == 0.0 ? std::string(" in magnitude")
                                     : " of --utility-reference " + format_number(kind.bound_center));
  }
  return {};
}

std::string quoted_if_not_finite(double value, const std::string& text) {
  return std::isfinite(value) ? std::string() : " (got " + text + ")";
}

void require_values(std::size_t count, const std::string& label) {
  if (count == 0) throw CliError(label + ": no values in the file");
}

std::string dtype_in_message(std::string_view descr) {
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  const auto is_letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  // (std::strchr finds the terminating NUL too: hence the test of descr[0] against it.)
  const bool numpy_shaped = descr.size() >= 2 && descr.size() <= 4 && descr[0] != '\0' &&
                            std::strchr("<>|=", descr[0]) != nullptr && (is_letter(descr[1]) || descr[1] == '?') &&
                            std::all_of(descr.begin() + 2, descr.end(), is_digit);
  return numpy_shaped ? " '" + std::string(descr) + "'" : std::string();
}

std::string_view trim(std::string_view text) {
  constexpr std::string_view blanks = " \t\r\v\f";
  std::size_t first = text.find_first_not_of(blanks);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(blanks) - first + 1);
}

std::string quoted_excerpt(std::string_view text) {
  constexpr std::size_t longest = 60;
  constexpr char hex[] = "0123456789abcdef";
  std::string excerpt = "'";
  for (char c : text.substr(0, longest)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f) {
      excerpt.append("\\x").append(1, hex[byte >> 4]).append(1, hex[byte & 0xf]);
    } else {
      excerpt.push_back(c);
    }
  }
  return excerpt + (text.size() > longest ? "...'" : "'");
}

}  // namespace dpselect::cli
