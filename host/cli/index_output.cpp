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
std::runtime_error write_error(const IndexFile& file, const std::string& what) {
  return std::runtime_error("dpselect: --output " + file.path + ": " + what + ": " + std::strerror(errno));
}

// The contents of an index file; false if a write failed.
bool write_indices(std::FILE* out, const IndexFile& file, const std::vector<std::vector<std::uint64_t>>& releases,
                   NpyElement element) {
  bool ok = true;
  if (file.format == IndexFileFormat::npy) {
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

// `file`, new, from rank 0 of a job (job.hpp): write(out) fills a temporary file in the same
// folder (false: a write failed), which is then linked to the file's name and removed.
template <class Write>
void write_new_file(const IndexFile& file, Write write) {
  if (job_place().rank != 0) return;  // one file per job
  std::string temporary = file.path + ".tmp-XXXXXX";
  const int descriptor = mkstemp(temporary.data());
  if (descriptor < 0) throw write_error(file, "cannot create a temporary file next to it");
  // mkstemp makes the file private (0600); give it the permissions a new file normally gets.
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(descriptor, 0666 & ~mask);
  std::unique_ptr<std::FILE, FileCloser> out(fdopen(descriptor, "wb"));
  if (!out) {
    close(descriptor);
    unlink(temporary.c_str());
    throw write_error(file, "cannot open");
  }
  try {
    if (!write(out.get()) || std::fflush(out.get()) != 0 || fsync(fileno(out.get())) != 0) {
      throw write_error(file, "cannot write");
    }
  } catch (...) {
    out.reset();
    unlink(temporary.c_str());
    throw;
  }
  out.reset();
  // link() fails with EEXIST instead of replacing a file that appeared since the check.
  const int linked = link(temporary.c_str(), file.path.c_str());
  const int link_errno = errno;
  unlink(temporary.c_str());
  if (linked != 0) {
    errno = link_errno;
    throw write_error(file, "cannot create it");
  }
}

}  // namespace

IndexFile checked_index_file(const std::string& option, const std::string& path) {
  IndexFile file{path, IndexFileFormat::npy};
  if (ends_with(path, ".npy")) {
    file.format = IndexFileFormat::npy;
  } else if (ends_with(path, ".txt")) {
    file.format = IndexFileFormat::text;
  } else {
    throw CliError(option + " must name a .npy or .txt file (got '" + path + "')");
  }
  // lstat: a dangling symbolic link is a name that exists too (linking over it would fail).
  struct stat existing {};
  if (lstat(path.c_str(), &existing) == 0) {
    throw CliError(option + " " + path + ": the file exists already; it is never overwritten (remove it or choose another name)");
  }
  // Checked now, before anything is read or released, rather than found when writing after it.
  const std::size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  if (access(folder.c_str(), W_OK | X_OK) != 0) {
    throw CliError(option + " " + path + ": cannot write in the folder " + folder + ": " +
                   std::strerror(errno));
  }
  return file;
}

void write_index_file(const IndexFile& file, const std::vector<std::vector<std::uint64_t>>& releases,
                      NpyElement element) {
  write_new_file(file, [&](std::FILE* out) { return write_indices(out, file, releases, element); });
}

void write_lines_file(const IndexFile& file, const std::vector<std::vector<std::string>>& releases) {
  write_new_file(file, [&](std::FILE* out) {
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
