// SPDX-License-Identifier: Apache-2.0
// Reading the (user, key) contributions of `dpselect keys`: CSV with a header line (RFC 4180:
// quoted fields, "" inside quotes, LF or CRLF line ends), or a NumPy .npy integer array of shape
// (n, 2) whose columns are the users and the keys. Every problem is a CliError naming the option,
// the file and the line (CSV) before anything is released; an id the file holds is never quoted
// (user ids are personal data), only where it is and what is wrong with it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dpselect::cli {

enum class PairsFormat { by_extension, csv, npy };

// What an id column holds. Integers are 64-bit: decimal text in the range of int64 (a sign
// allowed) in CSV, any integer dtype in a .npy; text ids are the field's bytes (valid UTF-8) after
// CSV unquoting.
enum class IdKind { by_format, integer, text };

struct PairsOption {
  std::string path;  // "-" reads standard input
  PairsFormat format = PairsFormat::by_extension;
  std::string user_column = "user";
  std::string key_column = "key";
  bool columns_given = false;  // --user-column or --key-column typed: refused for a .npy
  IdKind users = IdKind::by_format;  // by_format: integer
  IdKind keys = IdKind::by_format;   // by_format: text for CSV, integer for a .npy
};

std::string_view to_string(PairsFormat format);

struct PairsInput {
  PairsFormat format = PairsFormat::csv;  // as resolved
  std::string element_type;               // the .npy descr ("<i8"); empty for CSV
  IdKind users = IdKind::integer;         // as resolved
  IdKind keys = IdKind::text;             // as resolved
  bool signed_integers = true;            // how integer keys print: int64 or uint64
  std::uint64_t pairs = 0;
  // Integer users as uint64 (two's complement for negative ids: a bijection on int64), or text
  // users numbered by dictionary_codes.
  std::vector<std::uint64_t> user_ids;
  std::vector<std::uint64_t> integer_keys;  // integer keys, as the users
  // Text keys: key i is key_bytes[key_ends[i - 1], key_ends[i]) (key_ends[-1] = 0).
  std::string key_bytes;
  std::vector<std::uint64_t> key_ends;

  std::vector<std::string_view> key_views() const;
};

// Reads and checks every pair of `option`; at least one pair is required. The format: a .npy by
// its magic bytes, else --format, else by the extension (.npy, else CSV).
PairsInput read_pairs(const PairsOption& option);

// How a released text key is written on a line: as it is, or as a quoted CSV field when it holds
// a comma, a double quote, a line end, or leading or trailing blanks (so that one line is one key).
std::string key_as_csv_field(std::string_view key);

}  // namespace dpselect::cli
