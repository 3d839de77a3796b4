// SPDX-License-Identifier: Apache-2.0
// What a command prints, built once as an ordered tree of named values and rendered either as
// indented "label: value" text or as JSON, so the two outputs can never disagree.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace dpselect::cli {

// A JSON number (never NaN or infinite there: such a value is written as null), integer,
// boolean or string.
using Scalar = std::variant<bool, std::uint64_t, double, std::string>;

class Record {
 public:
  // `title` is the first line of the text output (not part of the JSON).
  explicit Record(std::string title = {});
  Record(Record&&) noexcept;
  Record& operator=(Record&&) noexcept;
  ~Record();

  // A value under the identifier `key` (text label: underscores as spaces). `note` follows the
  // value in text output only.
  Record& add(std::string key, Scalar value, std::string note = {});
  // A nested record; `heading` replaces the label in text output.
  Record& add_record(std::string key, std::string heading = {});
  // Appends a record to the list `key` (a JSON array); in text the items are labelled
  // "`item_label` 1", "`item_label` 2", ...
  Record& add_list_item(const std::string& key, std::string item_label);
  // A list of values under `key` (a JSON array). In text: one line "key: v0, v1, ..." followed
  // by `note`; or, when `item_label` is given, one line per value, "`item_label` i:
  // `value_label` v" with i counting from 0.
  Record& add_array(std::string key, std::vector<Scalar> values, std::string note = {},
                    std::string item_label = {}, std::string value_label = {});
  // A list of numbers under `key`, exact in JSON and written as `text_values` (one each: the same
  // numbers in a shorter spelling that reads back to them) in text output.
  Record& add_array_with_text(std::string key, std::vector<Scalar> values,
                              std::vector<std::string> text_values, std::string note = {});

  // A released value (or one release's values) as the command's answer: `text_line` comes
  // before the title in text output, `quiet_lines` are all that --quiet prints (one value a line).
  // Not part of the JSON, where the same values sit in their fields.
  void add_answer(std::string text_line, std::vector<std::string> quiet_lines);

  std::string to_text() const;
  std::string to_json() const;
  std::string to_quiet() const;

 private:
  enum class FieldKind { scalar, record, list, array };
  struct Field;
  Field& new_field(std::string key, FieldKind kind, std::string note);
  void write_text(std::string& out, int depth) const;
  void write_json(std::string& out, int depth) const;
  static void write_text_array(std::string& out, int depth, const Field& field);
  std::string title_;
  std::vector<std::string> answer_lines_;
  std::vector<std::string> quiet_lines_;
  std::vector<Field> fields_;
};

// A string of the text output as it is written (a released key, a file name): a backslash
// doubled, and as \xNN every byte a terminal could act on: control bytes (below 0x20, and 0x7f),
// C1 controls (U+0080 to U+009F, both bytes) and bytes that are not part of valid UTF-8. A key
// holding ESC [ 2 J cannot clear the screen or rewrite the lines of the report around it, and
// the escaping is unambiguous. JSON escapes strings by its own rules; --quiet writes values as
// they are, for pipelines.
std::string escaped_for_terminal(std::string_view text);

enum class OutputMode {
  text,   // the answer first, then the details
  json,   // everything, machine-readable
  quiet,  // only the released values, one per line, for shell pipelines
};

// Writes `report` to stdout in `mode`.
void print(const Record& report, OutputMode mode);

}  // namespace dpselect::cli
