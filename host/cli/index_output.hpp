// SPDX-License-Identifier: Apache-2.0
// Released indices (or keys) written compactly to a file (--output FILE) instead of into the
// report: a NumPy .npy array of little-endian uint64 or int64 (1-D for one release, one row per
// release otherwise) or text, one index (or key) per line.
//
// An existing file is never overwritten (CliError before anything is released), and nothing is
// ever half-written: the indices go to a temporary file in the same folder, which is then linked
// to FILE (failing if FILE appeared in the meantime) and removed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dpselect::cli {

enum class IndexFileFormat { npy, text };

struct IndexFile {
  std::string path;
  IndexFileFormat format = IndexFileFormat::npy;
};

// `path` as given to `option` (e.g. "--output"): it must end in .npy or .txt and not exist yet.
// Throws CliError naming the option and the path otherwise.
IndexFile checked_index_file(const std::string& option, const std::string& path);

// Writes `releases` (each the indices of one release, all of the same length) to `file`: a 1-D
// .npy array when there is one release, else 2-D (releases x indices). Throws std::runtime_error
// (status 1: the release was made) when the file cannot be written; nothing is left behind then.
// `element`: the .npy array's type, uint64 or int64 (the bits of `releases` as they are).
enum class NpyElement { uint64, int64 };
void write_index_file(const IndexFile& file, const std::vector<std::vector<std::uint64_t>>& releases,
                      NpyElement element = NpyElement::uint64);

// Writes `releases` (each a list of lines without their line ends) to the text `file`, one line
// each, the releases apart by an empty line; the same guarantees as write_index_file.
void write_lines_file(const IndexFile& file, const std::vector<std::vector<std::string>>& releases);

}  // namespace dpselect::cli
