// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the command line of `dpselect` (host/cli/command_line.hpp): the input is
// the arguments, one a line, run through the same parsing, checks and releases as the command,
// against small files the target writes once into its scratch folder (the working folder of the
// run): u.txt, u.f32, u.f64, m.npy (3 x 4), bids.txt, prices.txt, answers.txt, data.txt, plus
// empty.txt and nan.txt; "-" reads standard input, which is /dev/null here. The target changes
// its working folder to that scratch folder, so give libFuzzer absolute paths (corpus folders,
// -artifact_prefix, -dict), as tests/fuzz/run_fuzzer.sh does.
//
// Invariants: the status is 0 (released), 2 (bad input or usage) or 1 only for a failure of the
// machine or of the output (memory, no GPU, an --output file that cannot be written); every
// failure writes exactly one line "dpselect: error: ..." of printable ASCII to stderr; nothing
// crashes, leaks or trips a sanitizer.
//
// The target refuses (returns at once) inputs it cannot run safely or quickly: the subcommands
// audit and demo (their work is sized by their own options, up to hours), any argument with a
// '/' (the command would read or write outside the scratch folder), and any number outside
// [1e-3, 1e3] in magnitude (besides 0 and the infinities and NaN), so that no input sizes a
// grid, a repeat count or a k beyond a few million steps of work. Validation of large values is
// the unit tests' job (tests/validation_test.cpp and the CLI tests).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "command_line.hpp"
#include "fuzz_support.hpp"

namespace {

using dpselect::fuzz::check;
using dpselect::fuzz::fail;

void write_text(const char* name, std::string_view text) {
  dpselect::fuzz::write_file(dpselect::fuzz::scratch_directory() / name, text.data(), text.size());
}

template <class T>
void write_raw(const char* name, const std::vector<T>& values) {
  dpselect::fuzz::write_file(dpselect::fuzz::scratch_directory() / name, values.data(), values.size() * sizeof(T));
}

// A version 1.0 .npy of a 3 x 4 float64 matrix.
void write_matrix() {
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  file += header;
  const double values[12] = {1, 2, 3, 4, 4, 3, 2, 1, 0.5, -1, 7, 2};
  file.append(reinterpret_cast<const char*>(values), sizeof values);
  write_text("m.npy", file);
}

// A file that collects what the command writes to stderr during one run.
int stderr_capture = -1;
int real_stderr = -1;

void set_up_once() {
  if (stderr_capture >= 0) return;
  write_text("u.txt", "1\n2\n3\n-inf\n0.5\n");
  write_raw<float>("u.f32", {1.0f, 4.0f, 2.0f, 0.25f});
  write_raw<double>("u.f64", {3.0, 1.0, 4.0, 1.5, 2.5});
  write_matrix();
  write_text("bids.txt", "1\n2.5\n3\n4\n7.5\n");
  write_text("prices.txt", "1\n2\n3\n5\n");
  write_text("answers.txt", "0\n1\n9\n2\n8\n0.5\n");
  write_text("data.txt", "1\n2\n2.5\n6\n9\n3\n");
  write_text("empty.txt", "");
  write_text("nan.txt", "nan\n");
  if (chdir(dpselect::fuzz::scratch_directory().c_str()) != 0) fail("chdir to the scratch folder failed");
  // Standard input reads nothing; standard output is thrown away (the releases' reports).
  const int null_input = open("/dev/null", O_RDONLY);
  const int null_output = open("/dev/null", O_WRONLY);
  if (null_input < 0 || null_output < 0 || dup2(null_input, 0) < 0 || dup2(null_output, 1) < 0) {
    fail("cannot redirect standard input and output to /dev/null");
  }
  close(null_input);
  close(null_output);
  stderr_capture = memfd_create("dpselect-fuzz-stderr", 0);
  real_stderr = dup(2);
  if (stderr_capture < 0 || real_stderr < 0) fail("cannot set up the capture of stderr");
}

// Whether a number written in `piece` (all of it) is one this target runs.
bool number_allowed(const std::string& piece) {
  if (piece.empty()) return true;
  char* end = nullptr;
  const double value = std::strtod(piece.c_str(), &end);
  if (end == piece.c_str() || *end != '\0') return true;  // not a number: the command decides
  if (!std::isfinite(value) || value == 0) return true;
  return std::fabs(value) >= 1e-3 && std::fabs(value) <= 1e3;
}

bool argument_allowed(const std::string& argument) {
  if (argument == "audit" || argument == "demo" || argument.find('/') != std::string::npos) return false;
  std::string piece;
  for (const char c : argument + ',') {
    if (c == ':' || c == ',' || c == '=') {
      if (!number_allowed(piece)) return false;
      piece.clear();
    } else {
      piece += c;
    }
  }
  return true;
}

std::string captured_stderr() {
  std::fflush(stderr);
  const off_t size = lseek(stderr_capture, 0, SEEK_CUR);
  std::string text(static_cast<std::size_t>(size), '\0');
  if (size > 0 && pread(stderr_capture, text.data(), text.size(), 0) != size) fail("cannot read the captured stderr");
  return text;
}

// Status 1: the computation or its output failed (main.cpp), not the input: memory, the GPU, a
// read error, or an --output file that cannot be written (after the release: its privacy is spent).
bool machine_failure(std::string_view message) {
  for (const std::string_view cause : {"memory", "GPU", "CUDA", "backend", "cannot read", "--output", "could not be written"}) {
    if (message.find(cause) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  set_up_once();
  std::vector<std::string> arguments{"dpselect"};
  std::string current;
  for (std::size_t i = 0; i < size; ++i) {
    const char c = static_cast<char>(bytes[i]);
    if (c == '\n') {
      arguments.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) arguments.push_back(current);
  if (arguments.size() > 64) return 0;
  for (std::size_t i = 1; i < arguments.size(); ++i) {
    if (!argument_allowed(arguments[i])) return 0;
  }
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);

  // stderr goes to the capture file during the run (libFuzzer writes nothing meanwhile).
  std::fflush(stderr);
  if (ftruncate(stderr_capture, 0) != 0 || lseek(stderr_capture, 0, SEEK_SET) != 0 || dup2(stderr_capture, 2) < 0) {
    fail("cannot capture stderr");
  }
  int status = -1;
  {
    const auto app = dpselect::cli::make_command_line();
    bool whole_job = true;
    status = dpselect::cli::run_command_line(*app, static_cast<int>(arguments.size()), argv.data(), whole_job);
  }
  const std::string errors = captured_stderr();
  if (dup2(real_stderr, 2) < 0) std::abort();

  check(status == 0 || status == 1 || status == 2, "an exit status other than 0, 1 and 2");
  if (status != 0) {
    constexpr std::string_view prefix = "dpselect: error: ";
    // Warnings ("dpselect: warning: ...") may come first; the error is the last line.
    check(!errors.empty() && errors.back() == '\n', "a failure without an error line");
    const std::string_view written(errors.data(), errors.size() - 1);
    const std::size_t line_start = written.rfind('\n');
    const std::string_view message = written.substr(line_start == std::string_view::npos ? 0 : line_start + 1);
    check(message.starts_with(prefix), "a failure whose last line is not 'dpselect: error: ...'");
    check(dpselect::fuzz::printable_one_line(message), "an error line that is not printable ASCII");
    if (status == 1) check(machine_failure(message), "status 1 (the computation failed) for what is not a failure of the machine");
  }
  return 0;
}
