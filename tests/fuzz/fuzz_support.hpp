// SPDX-License-Identifier: Apache-2.0
// What the libFuzzer targets share: a failed invariant ends the run with a message (libFuzzer
// saves the input as a crash), a private scratch folder, and the adversarial numbers that
// floating-point code gets wrong (NaN, infinities, denormals, signed zeros, the extremes).
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>

namespace dpselect::fuzz {

// Prints what failed and aborts: libFuzzer reports the input as a crash and saves it.
[[noreturn]] inline void fail(std::string_view what) {
  std::fprintf(stderr, "fuzz invariant violated: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

inline void check(bool holds, std::string_view what) {
  if (!holds) fail(what);
}

// A folder of this process's own, emptied at first use (the targets write their inputs and
// outputs there, never elsewhere).
inline const std::filesystem::path& scratch_directory() {
  static const std::filesystem::path directory = [] {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/dpselect-fuzz-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) fail("mkdtemp failed");
    return std::filesystem::path(pattern);
  }();
  return directory;
}

inline void write_file(const std::filesystem::path& path, const void* data, std::size_t size) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) fail("cannot create " + path.string());
  if (size != 0 && std::fwrite(data, 1, size, file) != size) fail("cannot write " + path.string());
  if (std::fclose(file) != 0) fail("cannot close " + path.string());
}

// Error messages are one line of printable ASCII: the library and the command quote bytes of a
// file as \xNN and never echo them raw.
inline bool printable_one_line(std::string_view message) {
  if (message.empty()) return false;
  for (const char c : message) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte > 0x7e) return false;
  }
  return true;
}

// One of the values floating-point code gets wrong, or (half the time) any double at all.
inline double adversarial_double(FuzzedDataProvider& data) {
  constexpr double kSpecial[] = {
      0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-300, -1e-300,
      std::numeric_limits<double>::denorm_min(), -std::numeric_limits<double>::denorm_min(),
      std::numeric_limits<double>::min(), std::numeric_limits<double>::max(), -std::numeric_limits<double>::max(),
      std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
      std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::quiet_NaN(),
      std::numeric_limits<double>::epsilon(), 1.0 + std::numeric_limits<double>::epsilon(),
      1e15, 9007199254740993.0, 1e308, 4294967296.0, 0.1, 1e-9};
  if (data.ConsumeBool()) return kSpecial[data.ConsumeIntegralInRange<std::size_t>(0, std::size(kSpecial) - 1)];
  return data.ConsumeFloatingPoint<double>();
}

}  // namespace dpselect::fuzz
