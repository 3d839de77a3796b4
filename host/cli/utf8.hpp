// SPDX-License-Identifier: Apache-2.0
// UTF-8 as the command's readers check it (text keys) and its text reports print it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace dpselect::cli {

// The length of the UTF-8 sequence at the start of `bytes` (1 for ASCII), with its code point in
// `code`; 0 for an invalid or truncated sequence, an overlong form, a UTF-16 surrogate or a code
// point beyond U+10FFFF. `bytes` is not empty.
inline std::size_t utf8_sequence_length(std::string_view bytes, std::uint32_t& code) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
  const unsigned char lead = byte(0);
  std::size_t length = 0;
  if (lead < 0x80) {
    code = lead;
    return 1;
  }
  if ((lead & 0xE0) == 0xC0) {
    length = 2, code = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, code = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, code = lead & 0x07;
  } else {
    return 0;
  }
  if (length > bytes.size()) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i) & 0x3F);
  }
  constexpr std::uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
  const bool valid = code >= least[length] && !(code >= 0xD800 && code <= 0xDFFF) && code <= 0x10FFFF;
  return valid ? length : 0;
}

}  // namespace dpselect::cli
