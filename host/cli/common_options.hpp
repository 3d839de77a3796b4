// SPDX-License-Identifier: Apache-2.0
// Options shared by the subcommands, and the checks CLI11 runs on option values while parsing
// (so a bad value is reported before any file is read or anything is released).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dpselect/random_key.hpp"
#include "dpselect/types.hpp"
#include "input_files.hpp"
#include "output.hpp"

namespace dpselect::cli {

// Options of every subcommand that makes private releases.
struct ReleaseOptions {
  // A fixed Context seed: reproducible, predictable noise, for tests and experiments only.
  std::optional<std::uint64_t> seed;
  // Independent releases from one context; they compose to repeat * epsilon (basic composition).
  std::uint64_t repeat = 1;
  bool json = false;
  // Only the released values, one per line (--quiet; refused with --json).
  bool quiet = false;
  // Also the values computed from the data that are NOT PRIVATE: timings, and for pricing the
  // optimum (--diagnostics). Always on for synthetic data.
  bool diagnostics = false;
  Backend backend = Backend::Auto;
  // ChaCha20 (secure, the default) or Philox (faster, not cryptographically secure).
  Generator generator = Generator::chacha20;
  // --progress: show progress on stderr even when it is not a terminal (progress.hpp).
  bool progress = false;
  // The setting_warnings() of the command line, set before the command runs; time_releases()
  // prints them (and the --seed warning) once the input is read and checked, before the first
  // release, so that a run which fails later has still shown them.
  std::vector<std::string> warnings;
};

// The most releases one run makes (--repeat). Every release's outcome is kept for the report
// (about 2 GB for 10^6 selections), and 10^6 releases spend 10^6 epsilon: far beyond any use,
// while a typo such as 2^64 - 1 would run without end and exhaust memory.
constexpr std::uint64_t kMaxRepeat = 1'000'000;

// Whether a command releases from the user's data (whose diagnostics are NOT PRIVATE and shown only
// on request) or from synthetic data (diagnostics always shown, and no --diagnostics option).
enum class CommandData { private_data, synthetic };

// Completes a release subcommand: adds `options` (--seed, --generator, --repeat, --json, --quiet,
// --diagnostics for private data, --backend, --progress), the examples footer, and the callback
// that calls `run` and prints its report (text, JSON or quiet).
void complete_release_command(CLI::App& command, ReleaseOptions& options, std::string examples,
                              std::function<Record()> run,
                              CommandData data = CommandData::private_data);
// --progress (ReleaseOptions::progress, AuditCommandOptions).
CLI::Option* add_progress_flag(CLI::App& command, bool& progress);
// Warnings about settings that are valid but offer little privacy (--epsilon 1e300, --delta
// 0.5, --repeat making the total large), one "dpselect: warning: " line each. They depend on the
// options alone, never on the data.
std::vector<std::string> setting_warnings(const CLI::App& command, const ReleaseOptions& options);

// --epsilon, the privacy loss of each release (or what `description` says it is).
CLI::Option* add_epsilon_option(CLI::App& command, double& epsilon,
                                const std::string& description = "privacy loss of each release");
// A required input file option such as --utilities FILE ("-": standard input).
CLI::Option* add_file_option(CLI::App& command, const std::string& name, std::string& path,
                             const std::string& description);
// --sensitivity (required), --monotone and --utility-bound of the selection commands.
void add_utility_options(CLI::App& command, SelectionParams& params);

// The file of utilities a selection subcommand reads (--utilities FILE, --format, --flatten).
struct UtilityFile {
  std::string path;
  InputFormat format = InputFormat::by_extension;
  bool flatten = false;
  bool matrix = false;  // dpselect rows: a 2-D .npy is the matrix (and there is no --flatten)
  // A utility beyond `utility_bound` (--utility-bound, 0: none) is refused with its line. In a
  // distributed job (job.hpp) each rank reads its even share, of rows `row_width` wide when > 0
  // (a 2-D .npy kept as a matrix: its own rows), and every rank fails alike when any read fails.
  // `chunked`: a raw or .npy file in one process is checked a chunk at a time and left in the
  // file (InputValues::chunked), never held whole.
  InputValues read(const SelectionParams& params, std::uint64_t row_width = 0, bool chunked = false) const;
  // "--utilities scores.txt", "--utilities <stdin>", for messages.
  std::string label() const { return input_label("--utilities", path); }
};
// Adds the subcommand `name` of a selection over `file`: its --utilities option (described by
// `file_description`), --format, and --flatten unless `file.matrix`.
CLI::App& add_selection_command(
    CLI::App& app, const std::string& name, const std::string& description, UtilityFile& file,
    const std::string& file_description =
        "file of utilities u(0..n-1), one per candidate (-inf excludes one)");
// --format, for the subcommands that read files.
void add_format_option(CLI::App& command, InputFormat& format);
// --flatten: a 2-D .npy read as one list (refused without it).
void add_flatten_option(CLI::App& command, bool& flatten);
// How a command that takes one list treats a 2-D .npy, given --flatten.
inline TwoDimensional one_list(bool flatten) {
  return flatten ? TwoDimensional::flatten : TwoDimensional::refuse;
}
// --mechanism exponential|permute-and-flip|laplace.
void add_mechanism_option(CLI::App& command, Mechanism& mechanism);

// Value checks for numeric options.
CLI::Validator finite_positive();     // privacy parameters: finite and > 0 (NaN refused)
CLI::Validator finite_nonnegative();  // finite and >= 0
CLI::Validator finite_number();       // any finite number (NaN and +-inf refused)
CLI::Validator open_unit_interval();  // > 0 and < 1 (a delta)
CLI::Validator half_open_unit_interval();  // >= 0 and < 1 (a delta that may be 0: pure DP)
CLI::Validator integer_at_least(std::uint64_t least);  // digits only, so "-1" is refused
CLI::Validator integer_between(std::uint64_t least, std::uint64_t most);  // least..most, digits only
CLI::Validator share_of_one();        // > 0 and <= 1 (a ratio of budgets)

template <class Enum>
using Choices = std::vector<std::pair<std::string, Enum>>;

// An option naming one of `choices` (help lists them as a|b|c); sets `target`.
template <class Enum>
CLI::Option* add_choice_option(CLI::App& command, const std::string& name, Enum& target,
                               Choices<Enum> choices, const std::string& description) {
  std::vector<std::string> names;
  std::string default_name;
  for (const auto& [choice_name, value] : choices) {
    names.push_back(choice_name);
    if (value == target && default_name.empty()) default_name = choice_name;
  }
  CLI::Option* option = command.add_option_function<std::string>(
      name,
      [&target, choices](const std::string& chosen) {
        for (const auto& [choice_name, value] : choices) {
          if (choice_name == chosen) target = value;
        }
      },
      description);
  option->check(CLI::IsMember(names).description(""))->type_name(CLI::detail::join(names, "|"));
  if (!default_name.empty()) option->default_str(default_name);
  return option;
}

}  // namespace dpselect::cli
