// SPDX-License-Identifier: Apache-2.0
#include "output.hpp"
#include "utf8.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <stdexcept>

#include "numbers.hpp"

namespace dpselect::cli {

// A nested record or a list owns its records through pointers, so a Record& handed out by
// add_record/add_list_item stays valid while more fields are added.
struct Record::Field {
  std::string key;
  FieldKind kind = FieldKind::scalar;
  Scalar value;
  // After the value (scalar, one-line array) or as the text label (record, list item).
  std::string note;
  std::vector<std::unique_ptr<Record>> records;
  std::vector<Scalar> values;  // array
  std::vector<std::string> text_values;  // array: the values as text output writes them, if given
  std::string item_label;      // array, one line per value: "item_label i: value_label v"
  std::string value_label;
};

Record::Record(std::string title) : title_(std::move(title)) {}
Record::Record(Record&&) noexcept = default;
Record& Record::operator=(Record&&) noexcept = default;
Record::~Record() = default;

Record::Field& Record::new_field(std::string key, FieldKind kind, std::string note) {
  Field& field = fields_.emplace_back();
  field.key = std::move(key);
  field.kind = kind;
  field.note = std::move(note);
  return field;
}

Record& Record::add(std::string key, Scalar value, std::string note) {
  new_field(std::move(key), FieldKind::scalar, std::move(note)).value = std::move(value);
  return *this;
}

Record& Record::add_array(std::string key, std::vector<Scalar> values, std::string note,
                          std::string item_label, std::string value_label) {
  Field& field = new_field(std::move(key), FieldKind::array, std::move(note));
  field.values = std::move(values);
  field.item_label = std::move(item_label);
  field.value_label = std::move(value_label);
  return *this;
}

Record& Record::add_array_with_text(std::string key, std::vector<Scalar> values,
                                    std::vector<std::string> text_values, std::string note) {
  Field& field = new_field(std::move(key), FieldKind::array, std::move(note));
  field.values = std::move(values);
  field.text_values = std::move(text_values);
  return *this;
}

Record& Record::add_record(std::string key, std::string heading) {
  Field& field = new_field(std::move(key), FieldKind::record, std::move(heading));
  return *field.records.emplace_back(std::make_unique<Record>());
}

Record& Record::add_list_item(const std::string& key, std::string item_label) {
  auto list = std::find_if(fields_.begin(), fields_.end(), [&](const Field& field) {
    return field.kind == FieldKind::list && field.key == key;
  });
  Field& field =
      list != fields_.end() ? *list : new_field(key, FieldKind::list, std::move(item_label));
  return *field.records.emplace_back(std::make_unique<Record>());
}

namespace {

std::string text_label(std::string label) {
  std::replace(label.begin(), label.end(), '_', ' ');
  return label;
}

std::string text_value(const Scalar& value) {
  struct Formatter {
    std::string operator()(bool flag) const { return flag ? "true" : "false"; }
    std::string operator()(std::uint64_t integer) const { return format_number(integer); }
    std::string operator()(double number) const { return format_number(number); }
    std::string operator()(const std::string& text) const { return text; }
  };
  return std::visit(Formatter{}, value);
}

// A scalar as the text output writes it: strings escaped for the terminal.
std::string text_output_value(const Scalar& value) {
  if (const auto* text = std::get_if<std::string>(&value)) return escaped_for_terminal(*text);
  return text_value(value);
}

// The length of the UTF-8 sequence at the start of `bytes` that encodes a code point other than a
// C1 control, or 0 when there is none (an invalid or truncated sequence, an overlong form, a
// surrogate, a code point beyond U+10FFFF, U+0080 to U+009F).
std::size_t printable_utf8_length(std::string_view bytes) {
  std::uint32_t code = 0;
  const std::size_t length = utf8_sequence_length(bytes, code);
  return length >= 2 && code > 0x9F ? length : 0;
}

void append_json_string(std::string& out, const std::string& text) {
  out += '"';
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      constexpr char hex[] = "0123456789abcdef";
      out += "\\u00";
      out += hex[(c >> 4) & 0xf];
      out += hex[c & 0xf];
    } else {
      out += c;
    }
  }
  out += '"';
}

void append_json_value(std::string& out, const Scalar& value) {
  if (const auto* text = std::get_if<std::string>(&value)) {
    append_json_string(out, *text);
  } else if (const auto* number = std::get_if<double>(&value); number && !std::isfinite(*number)) {
    out += "null";  // JSON has no NaN or infinity
  } else {
    out += text_value(value);
  }
}

void indent(std::string& out, int depth) { out.append(2 * static_cast<std::size_t>(depth), ' '); }

}  // namespace

std::string escaped_for_terminal(std::string_view text) {
  constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  const auto append_escaped = [&](unsigned char byte) {
    out.append("\\x").append(1, hex[byte >> 4]).append(1, hex[byte & 0xf]);
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte == '\\') {
      out.append("\\\\");
      ++i;
    } else if (byte < 0x20 || byte == 0x7f) {
      append_escaped(byte);
      ++i;
    } else if (byte < 0x80) {
      out.push_back(text[i++]);
    } else if (const std::size_t length = printable_utf8_length(text.substr(i)); length > 0) {
      out.append(text.substr(i, length));
      i += length;
    } else if (byte == 0xC2 && i + 1 < text.size() && (static_cast<unsigned char>(text[i + 1]) & 0xE0) == 0x80) {
      append_escaped(byte);  // a C1 control, U+0080 to U+009F: both of its bytes
      append_escaped(static_cast<unsigned char>(text[i + 1]));
      i += 2;
    } else {
      append_escaped(byte);
      ++i;
    }
  }
  return out;
}

void Record::write_text(std::string& out, int depth) const {
  for (const Field& field : fields_) {
    switch (field.kind) {
      case FieldKind::scalar:
        indent(out, depth);
        out += text_label(field.key) + ": " + text_output_value(field.value);
        if (!field.note.empty()) out += "  (" + field.note + ")";
        out += '\n';
        break;
      case FieldKind::record:
        indent(out, depth);
        out += (field.note.empty() ? text_label(field.key) : field.note) + ":\n";
        field.records.front()->write_text(out, depth + 1);
        break;
      case FieldKind::list:
        for (std::size_t i = 0; i < field.records.size(); ++i) {
          indent(out, depth);
          out += field.note + " " + format_number(i + 1) + ":\n";
          field.records[i]->write_text(out, depth + 1);
        }
        break;
      case FieldKind::array: write_text_array(out, depth, field); break;
    }
  }
}

void Record::write_text_array(std::string& out, int depth, const Field& field) {
  if (!field.item_label.empty()) {
    const std::string value_label = field.value_label.empty() ? "" : field.value_label + " ";
    for (std::size_t i = 0; i < field.values.size(); ++i) {
      indent(out, depth);
      out += field.item_label + " " + format_number(i) + ": " + value_label +
             text_output_value(field.values[i]) + "\n";
    }
    return;
  }
  indent(out, depth);
  out += text_label(field.key) + ":";
  for (std::size_t i = 0; i < field.values.size(); ++i) {
    out += (i == 0 ? " " : ", ") +
           (field.text_values.empty() ? text_output_value(field.values[i]) : field.text_values[i]);
  }
  if (!field.note.empty()) out += "  (" + field.note + ")";
  out += '\n';
}

void Record::write_json(std::string& out, int depth) const {
  out += "{";
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    const Field& field = fields_[i];
    out += i == 0 ? "\n" : ",\n";
    indent(out, depth + 1);
    append_json_string(out, field.key);
    out += ": ";
    switch (field.kind) {
      case FieldKind::scalar: append_json_value(out, field.value); break;
      case FieldKind::record: field.records.front()->write_json(out, depth + 1); break;
      case FieldKind::list:
        out += "[";
        for (std::size_t k = 0; k < field.records.size(); ++k) {
          out += k == 0 ? "\n" : ",\n";
          indent(out, depth + 2);
          field.records[k]->write_json(out, depth + 2);
        }
        out += "\n";
        indent(out, depth + 1);
        out += "]";
        break;
      case FieldKind::array:
        out += "[";
        for (std::size_t k = 0; k < field.values.size(); ++k) {
          if (k > 0) out += ", ";
          append_json_value(out, field.values[k]);
        }
        out += "]";
        break;
    }
  }
  out += "\n";
  indent(out, depth);
  out += "}";
}

void Record::add_answer(std::string text_line, std::vector<std::string> quiet_lines) {
  answer_lines_.push_back(std::move(text_line));
  quiet_lines_.insert(quiet_lines_.end(), std::make_move_iterator(quiet_lines.begin()),
                      std::make_move_iterator(quiet_lines.end()));
}

std::string Record::to_text() const {
  std::string out;
  for (const std::string& line : answer_lines_) out += escaped_for_terminal(line) + "\n";
  if (!answer_lines_.empty()) out += "\n";
  if (!title_.empty()) out += title_ + "\n";
  write_text(out, 0);
  return out;
}

std::string Record::to_json() const {
  std::string out;
  write_json(out, 0);
  return out + "\n";
}

std::string Record::to_quiet() const {
  std::string out;
  for (const std::string& line : quiet_lines_) out += line + "\n";
  return out;
}

void print(const Record& report, OutputMode mode) {
  const std::string out = mode == OutputMode::json    ? report.to_json()
                          : mode == OutputMode::quiet ? report.to_quiet()
                                                      : report.to_text();
  // A lost report is a failure (status 1), not a success: the release was made and its budget
  // spent, but nobody saw the answer.
  if (std::fputs(out.c_str(), stdout) == EOF || std::fflush(stdout) != 0) {
    throw std::runtime_error(std::string("the release was made but its report could not be written "
                                         "to standard output: ") +
                             std::strerror(errno));
  }
}

}  // namespace dpselect::cli
