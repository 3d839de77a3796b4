// SPDX-License-Identifier: Apache-2.0
#include "index_output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <sys/stat.h>
#include <utility>

#include "cli_error.hpp"
#include "job.hpp"
#include "numbers.hpp"

namespace dpselect::cli {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the .npy writer writes '<u8' and '<i8' as the host stores them");

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() > suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// NumPy format version 1.0: magic, version, header length, then a Python dict literal padded with
// spaces and ended by a newline so that the data starts at a multiple of 64 bytes.
std::string npy_header(const std::vector<std::uint64_t>& shape, NpyElement element) {
  std::string dict = std::string("{'descr': '") + (element == NpyElement::int64 ? "<i8" : "<u8") +
                     "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) dict += format_number(shape[i]) + (shape.size() == 1 ? "," : i + 1 < shape.size() ? ", " : "");
  dict += "), }";
  constexpr std::size_t prefix = 10;  // magic (6) + version (2) + header length (2)
  const std::size_t padded = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict.append(padded - prefix - dict.size() - 1, ' ');
  dict += '\n';
  const std::size_t length = dict.size();
  std::string header("\x93NUMPY\x01\x00", 8);
  header += static_cast<char>(length & 0xFF);
  header += static_cast<char>(length >> 8);
  return header + dict;
}

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

// After the release: status 1 (main), not the 2 of bad input that promises nothing was released.
std::runtime_error write_error(const std::string& path, const std::string& what) {
  return std::runtime_error("dpselect: --output " + path + ": " + what + ": " + std::strerror(errno));
}

// The contents of an index file; false if a write failed.
bool write_indices(std::FILE* out, IndexFileFormat format, const std::vector<std::vector<std::uint64_t>>& releases,
                   NpyElement element) {
  bool ok = true;
  if (format == IndexFileFormat::npy) {
    std::vector<std::uint64_t> shape;
    if (releases.size() != 1) shape.push_back(releases.size());
    shape.push_back(releases.empty() ? 0 : releases.front().size());
    const std::string header = npy_header(shape, element);
    ok = std::fwrite(header.data(), 1, header.size(), out) == header.size();
    for (const auto& indices : releases) {
      ok = ok && std::fwrite(indices.data(), sizeof(std::uint64_t), indices.size(), out) == indices.size();
    }
  } else {
    char line[24];
    for (const auto& indices : releases) {
      for (const std::uint64_t index : indices) {
        char* end = std::to_chars(line, line + sizeof line - 1, index).ptr;
        *end++ = '\n';
        ok = ok && std::fwrite(line, 1, static_cast<std::size_t>(end - line), out) == static_cast<std::size_t>(end - line);
      }
    }
  }
  return ok;
}

// Gives the file `from` the name `to` unless a file of that name exists (one that appeared since
// the check): renameat2 with RENAME_NOREPLACE, or, on a file system without it, link() (which
// fails with EEXIST instead of replacing) and unlink(). False, with errno set, when it failed.
bool rename_without_replacing(const std::string& from, const std::string& to) {
#if defined(__linux__) && defined(RENAME_NOREPLACE)
  if (renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) return false;
#endif
  if (link(from.c_str(), to.c_str()) != 0) return false;
  unlink(from.c_str());
  return true;
}

}  // namespace

struct IndexFile::Temporary {
  std::string path;  // empty once it was renamed
  int descriptor = -1;

  Temporary(std::string temporary_path, int open_descriptor)
      : path(std::move(temporary_path)), descriptor(open_descriptor) {}
  Temporary(const Temporary&) = delete;
  Temporary& operator=(const Temporary&) = delete;
  ~Temporary() {
    if (descriptor >= 0) close(descriptor);
    if (!path.empty()) unlink(path.c_str());
  }
};

IndexFile::IndexFile(std::string file_path, IndexFileFormat file_format)
    : path(std::move(file_path)), format(file_format) {}
IndexFile::IndexFile(IndexFile&&) noexcept = default;
IndexFile& IndexFile::operator=(IndexFile&&) noexcept = default;
IndexFile::~IndexFile() = default;

void IndexFile::write(const std::function<bool(std::FILE*)>& fill) {
  if (job_place().rank != 0) return;  // one file per job
  if (!temporary_) throw std::logic_error("dpselect: --output " + path + " written twice");
  // Taken out first, so that it is removed after the stream below is closed, whatever happens.
  const std::unique_ptr<Temporary> temporary = std::move(temporary_);
  std::unique_ptr<std::FILE, FileCloser> out(fdopen(temporary->descriptor, "wb"));
  if (!out) throw write_error(path, "cannot open");
  temporary->descriptor = -1;  // the stream closes it
  if (!fill(out.get()) || std::fflush(out.get()) != 0 || fsync(fileno(out.get())) != 0) {
    throw write_error(path, "cannot write");
  }
  if (std::fclose(out.release()) != 0) throw write_error(path, "cannot write");
  if (!rename_without_replacing(temporary->path, path)) throw write_error(path, "cannot create it");
  temporary->path.clear();
}

IndexFile checked_index_file(const std::string& option, const std::string& path) {
  IndexFile file(path, IndexFileFormat::npy);
  if (ends_with(path, ".npy")) {
    file.format = IndexFileFormat::npy;
  } else if (ends_with(path, ".txt")) {
    file.format = IndexFileFormat::text;
  } else {
    throw CliError(option + " must name a .npy or .txt file (got '" + path + "')");
  }
  // lstat: a dangling symbolic link is a name that exists too (renaming onto it would fail).
  struct stat existing {};
  if (lstat(path.c_str(), &existing) == 0) {
    throw CliError(option + " " + path + ": the file exists already; it is never overwritten (remove it or choose another name)");
  }
  // The temporary file is made now, before anything is read or released, so that a folder that
  // cannot take the file (missing, not writable, /proc) is refused while nothing is spent. Rank
  // 0 alone writes; every rank learns of its failure.
  const std::size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  file.temporary_ = on_every_rank([&]() -> std::unique_ptr<IndexFile::Temporary> {
    if (job_place().rank != 0) return nullptr;
    std::string temporary = path + ".tmp-XXXXXX";
    const int descriptor = mkstemp(temporary.data());
    if (descriptor < 0) {
      throw CliError(option + " " + path + ": cannot write in the folder " + folder + ": " + std::strerror(errno));
    }
    auto made = std::make_unique<IndexFile::Temporary>(std::move(temporary), descriptor);
    // mkstemp makes the file private (0600); give it the permissions a new file normally gets.
    const mode_t mask = umask(0);
    umask(mask);
    fchmod(descriptor, 0666 & ~mask);
    return made;
  });
  return file;
}

void write_index_file(IndexFile& file, const std::vector<std::vector<std::uint64_t>>& releases,
                      NpyElement element) {
  file.write([&](std::FILE* out) { return write_indices(out, file.format, releases, element); });
}

void write_lines_file(IndexFile& file, const std::vector<std::vector<std::string>>& releases) {
  file.write([&](std::FILE* out) {
    bool ok = true;
    for (std::size_t r = 0; r < releases.size(); ++r) {
      if (r > 0) ok = ok && std::fputc('\n', out) != EOF;
      for (const std::string& line : releases[r]) {
        ok = ok && std::fwrite(line.data(), 1, line.size(), out) == line.size() && std::fputc('\n', out) != EOF;
      }
    }
    return ok;
  });
}

}  // namespace dpselect::cli
