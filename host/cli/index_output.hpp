// SPDX-License-Identifier: Apache-2.0
// Released indices (or keys) written compactly to a file (--output FILE) instead of into the
// report: a NumPy .npy array of little-endian uint64 or int64 (1-D for one release, one row per
// release otherwise) or text, one index (or key) per line.
//
// An existing file is never overwritten, and nothing is ever half-written. Before anything is
// read or released, checked_index_file() creates a temporary file in FILE's folder (a folder
// that cannot take it is refused then, with nothing spent); after the releases the indices go
// there, and the temporary file is renamed to FILE, failing if FILE appeared in the meantime.
// On any failure, and when the command ends before writing, the temporary file is removed.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dpselect::cli {

enum class IndexFileFormat { npy, text };

// A new file to write, its temporary file already made (on rank 0 of a job, which alone writes:
// job.hpp). Dropped unwritten, it removes its temporary file.
class IndexFile {
 public:
  IndexFile(std::string path, IndexFileFormat format);
  IndexFile(IndexFile&&) noexcept;
  IndexFile& operator=(IndexFile&&) noexcept;
  ~IndexFile();

  std::string path;  // as the user named it
  IndexFileFormat format = IndexFileFormat::npy;

  // Fills the temporary file with `fill` (false: a write failed), makes sure it is on disk and
  // renames it to `path`; the temporary file is gone afterwards, whatever happened. Rank 0 of a
  // job writes, the others do nothing. Throws std::runtime_error (status 1: the release was
  // made) when the file cannot be written or named.
  void write(const std::function<bool(std::FILE*)>& fill);

 private:
  friend IndexFile checked_index_file(const std::string& option, const std::string& path);
  struct Temporary;  // its name and open descriptor; removes the file when destroyed
  std::unique_ptr<Temporary> temporary_;
};

// `path` as given to `option` (e.g. "--output"): it must end in .npy or .txt and not exist yet,
// and its folder must take a new file (the temporary file is created there now). Throws CliError
// naming the option and the path otherwise; in a job every rank throws it alike.
IndexFile checked_index_file(const std::string& option, const std::string& path);

// Writes `releases` (each the indices of one release, all of the same length) to `file`'s
// temporary file and renames it to `file.path`: a 1-D .npy array when there is one release, else
// 2-D (releases x indices). Throws std::runtime_error (status 1: the release was made) when the
// file cannot be written; nothing is left behind then.
// `element`: the .npy array's type, uint64 or int64 (the bits of `releases` as they are).
enum class NpyElement { uint64, int64 };
void write_index_file(IndexFile& file, const std::vector<std::vector<std::uint64_t>>& releases,
                      NpyElement element = NpyElement::uint64);

// Writes `releases` (each a list of lines without their line ends) to the text `file`, one line
// each, the releases apart by an empty line; the same guarantees as write_index_file.
void write_lines_file(IndexFile& file, const std::vector<std::vector<std::string>>& releases);

}  // namespace dpselect::cli
