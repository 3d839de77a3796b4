// SPDX-License-Identifier: Apache-2.0
// Raw and .npy files read a chunk at a time (input_files.hpp: ChunkedFile), so that an input of
// 10^9 values is checked and released without being held whole.
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <vector>

#include "input_reading.hpp"

static_assert(std::endian::native == std::endian::little, "chunked_file.cpp assumes little-endian");

namespace dpselect::cli {

struct ChunkedFile::Descriptor {
  int fd = -1;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

ChunkedFile::ChunkedFile(int descriptor, std::string label, std::uint64_t data_offset, std::string stored,
                         std::uint64_t total)
    : label_(std::move(label)), data_offset_(data_offset), stored_(std::move(stored)), total_(total) {
  auto owned = std::make_shared<Descriptor>();
  owned->fd = descriptor;
  descriptor_ = std::move(owned);
}

void ChunkedFile::read_bytes(std::uint64_t offset, void* destination, std::uint64_t bytes) const {
  auto* out = static_cast<char*>(destination);
  while (bytes > 0) {
    const ssize_t got = ::pread(descriptor_->fd, out, bytes, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw CliError(label_ + ": cannot read: " + std::strerror(errno));
    // No byte counts in the message: for bids they give the number of bidders.
    if (got == 0) throw CliError(label_ + ": the file ended before its size when opened (it shrank while being read)");
    out += got;
    offset += static_cast<std::uint64_t>(got);
    bytes -= static_cast<std::uint64_t>(got);
  }
}

void ChunkedFile::read(std::uint64_t first, std::span<float> out) const {
  if (!holds_floats()) throw CliError(label_ + ": float32 values read from a file of " + stored_);
  read_bytes(data_offset_ + first * sizeof(float), out.data(), out.size_bytes());
}

void ChunkedFile::read(std::uint64_t first, std::span<double> out) const {
  const std::uint64_t offset = data_offset_ + first * static_cast<std::uint64_t>(stored_.back() - '0');
  // Other element types are converted as a whole read converts them (integers exactly below 2^53).
  const auto widened = [&]<class Stored>(Stored) {
    std::vector<Stored> stored(out.size());
    read_bytes(offset, stored.data(), stored.size() * sizeof(Stored));
    std::copy(stored.begin(), stored.end(), out.begin());
  };
  if (stored_ == "<f8") {
    read_bytes(offset, out.data(), out.size_bytes());
  } else if (stored_ == "<f4") {
    widened(float{});
  } else if (stored_ == "<i4") {
    widened(std::int32_t{});
  } else {
    widened(std::int64_t{});
  }
}

void check_chunked(const ChunkedFile& file, const std::string& label, ValueKind kind) {
  const auto check_all = [&]<class T>(std::vector<T> buffer) {
    for (std::uint64_t first = 0; first < file.total(); first += buffer.size()) {
      const std::span<T> chunk(buffer.data(), std::min<std::uint64_t>(buffer.size(), file.total() - first));
      file.read(first, chunk);
      check_elements(std::span<const T>(chunk), label, kind, first);
    }
  };
  const std::uint64_t held = std::min(chunk_values, file.total());
  if (file.holds_floats()) {
    check_all(std::vector<float>(held));
  } else {
    check_all(std::vector<double>(held));
  }
}

}  // namespace dpselect::cli
