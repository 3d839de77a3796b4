// SPDX-License-Identifier: Apache-2.0
// The (user, key) pairs of `dpselect keys` from CSV or a (n, 2) integer .npy (pairs_input.hpp).
// CSV is split here rather than by a library: only two columns are kept, and every error must
// name the file, the line and the column without echoing the field.
#include "pairs_input.hpp"
#include "utf8.hpp"

#include <charconv>
#include <cstring>
#include <deque>
#include <optional>

#include "dpselect/partition_selection.hpp"
#include "input_reading.hpp"

namespace dpselect::cli {
namespace {

constexpr std::string_view utf8_byte_order_mark = "\xEF\xBB\xBF";

bool is_valid_utf8(std::string_view text) {
  std::uint32_t code = 0;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence_length(text.substr(i), code);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

// A decimal int64 (a leading '+' or '-' allowed, blanks around it ignored), as uint64 bits.
std::optional<std::uint64_t> parse_integer_id(std::string_view field) {
  field = trim(field);
  if (field.size() > 1 && field.front() == '+' && field[1] != '-') field.remove_prefix(1);
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (field.empty() || error != std::errc() || end != field.data() + field.size()) return std::nullopt;
  return static_cast<std::uint64_t>(value);
}

// The records of CSV text, one at a time: each field unquoted (a quoted field with "" inside is
// unescaped into storage that lives until the next record).
class CsvRecords {
 public:
  CsvRecords(std::string_view text, std::string label) : text_(text), label_(std::move(label)) {
    if (text_.starts_with(utf8_byte_order_mark)) text_.remove_prefix(utf8_byte_order_mark.size());
  }

  // The next record that is not an empty line, or false at the end of the text.
  bool next(std::vector<std::string_view>& fields) {
    fields.clear();
    unescaped_.clear();
    while (position_ < text_.size() && (text_[position_] == '\n' || text_.substr(position_, 2) == "\r\n")) {
      position_ += text_[position_] == '\n' ? 1 : 2;
      ++line_;
    }
    if (position_ >= text_.size()) return false;
    record_line_ = line_;
    for (;;) {
      column_ = fields.size() + 1;
      fields.push_back(next_field());
      if (position_ >= text_.size()) return true;
      const char separator = text_[position_++];
      if (separator == '\n') {
        ++line_;
        return true;
      }
      // next_field stops only at a comma, a line end or the end of the text.
    }
  }

  // The line the last record began on (1-based).
  std::uint64_t line() const { return record_line_; }
  std::string where() const { return label_ + ":" + std::to_string(record_line_); }

 private:
  // Where the field being read is: the line it is on, and its column (1-based).
  std::string field_where(std::uint64_t line) const {
    return label_ + ":" + std::to_string(line) + ": column " + std::to_string(column_);
  }

  // A CR that ends no CRLF, outside quotes: most likely a file with CR-only line ends (classic Mac
  // OS), which read as one long line would be refused later with a misleading message.
  [[noreturn]] void refuse_bare_carriage_return() const {
    throw CliError(field_where(line_) +
                   ": a carriage return (CR) not followed by a line feed outside quotes; CSV lines end with LF or "
                   "CRLF (convert CR-only line ends), and a field holding a CR must be quoted");
  }

  std::string_view next_field() {
    if (position_ < text_.size() && text_[position_] == '"') return quoted_field();
    const std::size_t begin = position_;
    while (position_ < text_.size() && text_[position_] != ',' && text_[position_] != '\n') {
      if (text_[position_] == '"') {
        throw CliError(field_where(line_) + ": a double quote inside a field that is not quoted");
      }
      if (text_[position_] == '\r' && position_ + 1 < text_.size() && text_[position_ + 1] != '\n') {
        refuse_bare_carriage_return();
      }
      ++position_;
    }
    std::string_view field = text_.substr(begin, position_ - begin);
    if (field.ends_with('\r')) field.remove_suffix(1);  // the CR of a CRLF, or one that ends the text
    return field;
  }

  std::string_view quoted_field() {
    const std::uint64_t opened = line_;
    const std::size_t begin = ++position_;
    bool doubled_quotes = false;
    for (;;) {
      const std::size_t quote = text_.find('"', position_);
      if (quote == std::string_view::npos) {
        throw CliError(field_where(opened) + ": a quoted field is not closed");
      }
      for (std::size_t i = position_; i < quote; ++i) line_ += text_[i] == '\n';
      if (quote + 1 < text_.size() && text_[quote + 1] == '"') {
        doubled_quotes = true;
        position_ = quote + 2;
        continue;
      }
      position_ = quote + 1;
      std::string_view rest = text_.substr(position_);
      if (rest.starts_with("\r\n") || rest == "\r") ++position_;
      if (position_ < text_.size() && text_[position_] != ',' && text_[position_] != '\n') {
        if (text_[position_] == '\r') refuse_bare_carriage_return();
        throw CliError(field_where(line_) + ": text after the closing quote of a field");
      }
      const std::string_view inside = text_.substr(begin, quote - begin);
      if (!doubled_quotes) return inside;
      std::string& field = unescaped_.emplace_back();
      for (std::size_t i = 0; i < inside.size(); ++i) {
        field += inside[i];
        if (inside[i] == '"') ++i;  // the second quote of a pair
      }
      return field;
    }
  }

  std::string_view text_;
  std::string label_;
  std::size_t position_ = 0;
  std::uint64_t line_ = 1;
  std::uint64_t record_line_ = 1;
  std::size_t column_ = 1;  // of the field being read
  std::deque<std::string> unescaped_;  // stable references
};

// The position of the column `name` (the option that named it: `option`) in the header. The
// header's own names are not quoted: a file without a header line has its first record of data
// there (a user id and a key).
std::size_t column_of(const std::vector<std::string_view>& header, const std::string& name, const std::string& option,
                      const std::string& where, const PairsOption& pairs) {
  std::optional<std::size_t> found;
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (trim(header[i]) != name) continue;
    if (found) {
      throw CliError(where + ": the header names the column " + quoted_excerpt(name) + " twice (" + option +
                     "), as columns " + std::to_string(*found + 1) + " and " + std::to_string(i + 1));
    }
    found = i;
  }
  if (!found) {
    throw CliError(where + ": no column " + quoted_excerpt(name) + " (" + option + ") among the " +
                   std::to_string(header.size()) + (header.size() == 1 ? " column" : " columns") +
                   " of the header line; the first line must name the columns " + quoted_excerpt(pairs.user_column) +
                   " and " + quoted_excerpt(pairs.key_column) + " (--user-column, --key-column)");
  }
  return *found;
}

void append_text_id(std::string& bytes, std::vector<std::uint64_t>& ends, std::string_view field) {
  bytes.append(field);
  ends.push_back(bytes.size());
}

std::vector<std::string_view> views_of(const std::string& bytes, const std::vector<std::uint64_t>& ends) {
  std::vector<std::string_view> views(ends.size());
  std::uint64_t begin = 0;
  for (std::size_t i = 0; i < ends.size(); ++i) {
    views[i] = std::string_view(bytes).substr(begin, ends[i] - begin);
    begin = ends[i];
  }
  return views;
}

PairsInput read_csv_pairs(InputBytes& bytes, const PairsOption& option) {
  const std::string text = bytes.read_rest();
  const std::string& label = bytes.label();
  if (std::memchr(text.data(), '\0', text.size()) != nullptr) {
    throw CliError(label + ": holds a NUL byte: not CSV text (a .npy needs its magic bytes, or --format npy)");
  }
  PairsInput input;
  input.format = PairsFormat::csv;
  input.users = option.users == IdKind::by_format ? IdKind::integer : option.users;
  input.keys = option.keys == IdKind::by_format ? IdKind::text : option.keys;
  CsvRecords records(text, label);
  std::vector<std::string_view> fields;
  if (!records.next(fields)) throw CliError(label + ": no header line (CSV needs one naming its columns)");
  const std::string header_where = records.where();
  const std::size_t user_column = column_of(fields, option.user_column, "--user-column", header_where, option);
  const std::size_t key_column = column_of(fields, option.key_column, "--key-column", header_where, option);
  if (user_column == key_column) {
    throw CliError("--user-column and --key-column name the same column " + quoted_excerpt(option.user_column));
  }
  const std::size_t columns = fields.size();
  std::string user_bytes;
  std::vector<std::uint64_t> user_ends;
  while (records.next(fields)) {
    if (fields.size() != columns) {
      throw CliError(records.where() + ": " + std::to_string(fields.size()) + " fields, but the header has " +
                     std::to_string(columns));
    }
    const std::string_view user = fields[user_column], key = fields[key_column];
    // An integer id, or the error naming where it is (never what it is: an id is personal data).
    const auto integer_id = [&](std::string_view field, const char* what, const std::string& column,
                                const char* text_option) {
      const std::optional<std::uint64_t> id = parse_integer_id(field);
      if (!id) {
        throw CliError(records.where() + ": " + what + " (column " + quoted_excerpt(column) +
                       ") is not an integer in the range of int64 (" + text_option + " text takes any text)");
      }
      return *id;
    };
    if (input.users == IdKind::integer) {
      input.user_ids.push_back(integer_id(user, "the user id", option.user_column, "--user-ids"));
    } else {
      append_text_id(user_bytes, user_ends, user);
    }
    if (input.keys == IdKind::integer) {
      input.integer_keys.push_back(integer_id(key, "the key", option.key_column, "--key-type"));
    } else {
      if (!is_valid_utf8(key)) {
        throw CliError(records.where() + ": the key (column " + quoted_excerpt(option.key_column) +
                       ") is not valid UTF-8");
      }
      append_text_id(input.key_bytes, input.key_ends, key);
    }
    ++input.pairs;
  }
  if (input.users == IdKind::text) {
    const std::vector<std::string_view> users = views_of(user_bytes, user_ends);
    input.user_ids = dictionary_codes(users);
  }
  return input;
}

template <class Stored>
void read_npy_columns(InputBytes& bytes, PairsInput& input) {
  const std::vector<Stored> values = bytes.read_array<Stored>(2 * input.pairs);
  input.user_ids.resize(input.pairs);
  input.integer_keys.resize(input.pairs);
  for (std::uint64_t i = 0; i < input.pairs; ++i) {
    // Sign-extended to 64 bits first for the signed dtypes: negative ids as int64's bits.
    if constexpr (std::is_signed_v<Stored>) {
      input.user_ids[i] = static_cast<std::uint64_t>(static_cast<std::int64_t>(values[2 * i]));
      input.integer_keys[i] = static_cast<std::uint64_t>(static_cast<std::int64_t>(values[2 * i + 1]));
    } else {
      input.user_ids[i] = values[2 * i];
      input.integer_keys[i] = values[2 * i + 1];
    }
  }
}

PairsInput read_npy_pairs(InputBytes& bytes, const PairsOption& option) {
  const std::string& label = bytes.label();
  if (option.columns_given) {
    throw CliError("--user-column and --key-column apply to CSV; a .npy of pairs holds the users in column 0 and "
                   "the keys in column 1 (" + label + ")");
  }
  if (option.users == IdKind::text || option.keys == IdKind::text) {
    throw CliError(std::string(option.users == IdKind::text ? "--user-ids" : "--key-type") +
                   " text applies to CSV; a .npy of pairs holds integers (" + label + ")");
  }
  const NpyHeader header = read_npy_header(bytes);
  if (header.shape.size() != 2 || header.shape[1] != 2) {
    std::string shape = "(";
    for (std::size_t i = 0; i < header.shape.size(); ++i) {
      shape += (i ? ", " : "") + std::to_string(header.shape[i]);
    }
    shape += header.shape.size() == 1 ? ",)" : ")";
    throw CliError(label + ": a .npy of pairs has the shape (n, 2), a user and a key per row (got " +
                   (header.shape.size() == 2 ? "(n, " + std::to_string(header.shape[1]) + ")" : shape) + ")");
  }
  const std::string& descr = header.descr;
  static constexpr std::string_view integer_dtypes[] = {"<i8", "<u8", "<i4", "<u4", "<i2", "<u2", "|i1", "|u1"};
  if (std::find(std::begin(integer_dtypes), std::end(integer_dtypes), descr) == std::end(integer_dtypes)) {
    throw CliError(label + ": unsupported .npy dtype" + dtype_in_message(descr) +
                   " for pairs (expected a little-endian integer dtype: '<i8', '<u8', '<i4', '<u4', '<i2', '<u2', "
                   "'|i1' or '|u1')");
  }
  const std::uint64_t element_size = static_cast<std::uint64_t>(descr.back() - '0');
  const std::uint64_t rows = header.shape[0];
  const std::uint64_t payload = bytes.size() - bytes.position();
  if (rows > payload / (2 * element_size) || payload != rows * 2 * element_size) {
    throw CliError(label + ": .npy data does not match its shape (truncated or extra bytes)");
  }
  PairsInput input;
  input.format = PairsFormat::npy;
  input.element_type = descr;
  input.users = IdKind::integer;
  input.keys = IdKind::integer;
  input.signed_integers = descr[1] == 'i';
  input.pairs = rows;
  if (descr == "<i8") read_npy_columns<std::int64_t>(bytes, input);
  if (descr == "<u8") read_npy_columns<std::uint64_t>(bytes, input);
  if (descr == "<i4") read_npy_columns<std::int32_t>(bytes, input);
  if (descr == "<u4") read_npy_columns<std::uint32_t>(bytes, input);
  if (descr == "<i2") read_npy_columns<std::int16_t>(bytes, input);
  if (descr == "<u2") read_npy_columns<std::uint16_t>(bytes, input);
  if (descr == "|i1") read_npy_columns<std::int8_t>(bytes, input);
  if (descr == "|u1") read_npy_columns<std::uint8_t>(bytes, input);
  return input;
}

bool has_npy_extension(std::string_view path) {
  if (path.size() < 4) return false;
  std::string extension(path.substr(path.size() - 4));
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return extension == ".npy";
}

}  // namespace

std::string_view to_string(PairsFormat format) {
  switch (format) {
    case PairsFormat::by_extension:
      return "by extension";
    case PairsFormat::csv:
      return "csv";
    case PairsFormat::npy:
      return "npy";
  }
  return {};
}

std::vector<std::string_view> PairsInput::key_views() const { return views_of(key_bytes, key_ends); }

PairsInput read_pairs(const PairsOption& option) {
  InputBytes bytes(option.path, input_label("--data", option.path));
  const bool npy_magic_found = bytes.head().starts_with(npy_magic);
  PairsFormat format = option.format;
  if (format == PairsFormat::by_extension) {
    format = npy_magic_found || has_npy_extension(option.path) ? PairsFormat::npy : PairsFormat::csv;
  }
  if (format == PairsFormat::csv && npy_magic_found) {
    throw CliError(bytes.label() + ": starts with the .npy magic bytes: not CSV (use --format npy)");
  }
  PairsInput input = format == PairsFormat::npy ? read_npy_pairs(bytes, option) : read_csv_pairs(bytes, option);
  if (input.pairs == 0) throw CliError(bytes.label() + ": no (user, key) pairs");
  return input;
}

std::string key_as_csv_field(std::string_view key) {
  const bool plain = !key.empty() && key.find_first_of(",\"\r\n") == std::string_view::npos &&
                     key.front() != ' ' && key.front() != '\t' && key.back() != ' ' && key.back() != '\t';
  if (plain) return std::string(key);
  std::string field = "\"";
  for (const char c : key) {
    field += c;
    if (c == '"') field += '"';
  }
  return field + "\"";
}

}  // namespace dpselect::cli
