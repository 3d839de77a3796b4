// SPDX-License-Identifier: Apache-2.0
// The error type of the command's own input checks (files, option values). main() reports it as
// one "dpselect: error: " line and exits with status 2, like a bad parameter from the library.
#pragma once

#include <stdexcept>
#include <string_view>

namespace dpselect::cli {

class CliError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Not enough memory to hold an input. Not bad input (the same file may load on a larger machine):
// main() reports it with status 1, from the process that met it.
class OutOfMemory : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The message of `error` without the "dpselect: " the library starts its messages with, for
// quoting it after the command's own prefix.
inline std::string_view message_of(const std::exception& error) {
  std::string_view message = error.what();
  constexpr std::string_view library_prefix = "dpselect: ";
  if (message.starts_with(library_prefix)) message.remove_prefix(library_prefix.size());
  return message;
}

}  // namespace dpselect::cli
