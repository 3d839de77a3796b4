// SPDX-License-Identifier: Apache-2.0
#include "common_options.hpp"

#include "job.hpp"

#include <cmath>
#include <cstdio>
#include <string_view>

#include "dpselect/select.hpp"
#include "numbers.hpp"

namespace dpselect::cli {
namespace {

// `requirement` completes "must be ...": "a number > 0 and finite".
CLI::Validator number_check(std::string requirement, bool (*accept)(double)) {
  return CLI::Validator(
      [requirement, accept](std::string& text) -> std::string {
        std::optional<double> value = parse_double(text);
        if (value && accept(*value)) return {};
        return "must be " + requirement + " (got '" + text + "')";
      },
      "");
}

// Above this epsilon one person may change the odds of any output more than e^10 = 22026-fold;
// Dwork & Roth 2014 (Sec. 2.3) call epsilon around 1 or below meaningful, and deployments
// rarely go past 10.
constexpr double epsilon_little_privacy = 10.0;
// At this epsilon the noise no longer hides anything.
constexpr double epsilon_no_privacy = 1000.0;
// A delta of 1/n lets a mechanism release one of n records outright; 1e-3 is above 1/n for any
// dataset of more than 1000 people.
constexpr double delta_too_large = 1e-3;
constexpr const char* typical_epsilon = "typical values are 0.1 to 5";
constexpr const char* epsilon_meaning =
    R"(What epsilon means: adding, removing or changing one person's records changes the
probability of any output by at most a factor e^epsilon, so the output says little about any one
person. Typical values: 0.1 to 1 strong privacy, 1 to 5 moderate; above 10 almost none (a
warning is printed). Releases add up: --repeat N spends N * epsilon.)";

// A number as the user typed it for an option, and its value.
struct TypedNumber {
  std::string text;
  double value = 0.0;
};

// The number typed for the option `name` of `command`, when it has one and it was given
// (defaults are typical values and need no warning).
std::optional<TypedNumber> typed_number(const CLI::App& command, const std::string& name) {
  const CLI::Option* option = command.get_option_no_throw(name);
  if (option == nullptr || option->count() == 0 || option->results().empty()) return std::nullopt;
  const std::string& text = option->results().back();
  const std::optional<double> value = parse_double(text);
  if (!value) return std::nullopt;
  return TypedNumber{text, *value};
}

}  // namespace

std::vector<std::string> setting_warnings(const CLI::App& command, const ReleaseOptions& options) {
  std::vector<std::string> warnings;
  const auto repeat = static_cast<double>(options.repeat);
  const std::string repeated = "--repeat " + format_number(options.repeat) + " with ";
  if (const std::optional<TypedNumber> epsilon = typed_number(command, "--epsilon")) {
    const std::string typed = "--epsilon " + epsilon->text;
    if (epsilon->value >= epsilon_no_privacy) {
      warnings.push_back(typed + " offers no privacy: noise this small hides no one (" +
                         typical_epsilon + ")");
    } else if (epsilon->value > epsilon_little_privacy) {
      warnings.push_back(typed + " offers almost no privacy: one person may change the odds of "
                         "any output by a factor up to e^" + epsilon->text + " (" +
                         typical_epsilon + ")");
    } else if (epsilon->value * repeat > epsilon_little_privacy) {
      warnings.push_back(repeated + typed + " spends epsilon " +
                         format_number(epsilon->value * repeat) +
                         " in total, which offers almost no privacy (" + typical_epsilon + ")");
    }
  }
  if (const std::optional<TypedNumber> delta = typed_number(command, "--delta")) {
    const std::string typed = "--delta " + delta->text;
    const std::string advice =
        ": a delta this large permits releasing a record outright (use well below 1/n for n "
        "people, e.g. 1e-6)";
    if (delta->value >= delta_too_large) {
      warnings.push_back(typed + " is large" + advice);
    } else if (delta->value * repeat >= delta_too_large) {
      warnings.push_back(repeated + typed + " spends delta " +
                         format_number(delta->value * repeat) + " in total" + advice);
    }
  }
  return warnings;
}

CLI::Validator finite_positive() {
  return number_check("a number > 0 and finite",
                      [](double value) { return std::isfinite(value) && value > 0; });
}

CLI::Validator finite_nonnegative() {
  return number_check("a number >= 0 and finite",
                      [](double value) { return std::isfinite(value) && value >= 0; });
}

CLI::Validator finite_number() {
  return number_check("a finite number", [](double value) { return std::isfinite(value); });
}

CLI::Validator open_unit_interval() {
  return number_check("a number > 0 and < 1", [](double value) { return value > 0 && value < 1; });
}

CLI::Validator half_open_unit_interval() {
  return number_check("a number >= 0 and < 1",
                      [](double value) { return value >= 0 && value < 1; });
}

CLI::Validator integer_at_least(std::uint64_t least) {
  return CLI::Validator(
      [least](std::string& text) -> std::string {
        std::optional<std::uint64_t> value = parse_uint64(text);
        if (value && *value >= least) return {};
        return "must be an integer >= " + format_number(least) + " (got '" + text + "')";
      },
      "");
}

CLI::Validator integer_between(std::uint64_t least, std::uint64_t most) {
  return CLI::Validator(
      [least, most](std::string& text) -> std::string {
        std::optional<std::uint64_t> value = parse_uint64(text);
        if (value && *value >= least && *value <= most) return {};
        return "must be an integer >= " + format_number(least) + " and <= " + format_number(most) +
               " (got '" + text + "')";
      },
      "");
}

CLI::Validator share_of_one() {
  return number_check("a number > 0 and <= 1", [](double value) { return value > 0 && value <= 1; });
}

void complete_release_command(CLI::App& command, ReleaseOptions& options, std::string examples,
                              std::function<Record()> run, CommandData data) {
  command
      .add_option("--seed", options.seed,
                  "fixed key seed: reproducible noise for tests and experiments, NEVER for a "
                  "real release (default: a fresh key from the OS)")
      ->check(integer_at_least(0));
  add_choice_option(
      command, "--generator", options.generator,
      Choices<Generator>{{"chacha20", Generator::chacha20}, {"philox", Generator::philox}},
      "random generator of the noise: chacha20 (cryptographically secure) or philox (faster, "
      "NOT cryptographically secure)");
  command
      .add_option("--repeat", options.repeat,
                  "make N independent releases, at most " + format_number(kMaxRepeat) +
                      "; they spend N * epsilon in total (basic composition)")
      ->check(integer_between(1, kMaxRepeat))
      ->capture_default_str();
  CLI::Option* json = command.add_flag("--json", options.json, "print the result as JSON");
  // Quiet JSON has no meaning worth guessing (only the values? valid JSON?): refused.
  command
      .add_flag("--quiet", options.quiet,
                "print only the released values, one per line (for shell pipelines)")
      ->excludes(json);
  if (data == CommandData::private_data) {
    command.add_flag("--diagnostics", options.diagnostics,
                     "also print values computed from the data (timings; for price the optimum "
                     "and revenues), marked NOT PRIVATE: never publish them");
  } else {
    options.diagnostics = true;
  }
  add_choice_option(
      command, "--backend", options.backend,
      Choices<Backend>{{"auto", Backend::Auto}, {"cpu", Backend::Cpu}, {"gpu", Backend::Gpu}},
      "where to compute (auto: the GPU when one is usable)");
  add_progress_flag(command, options.progress);
  command.footer(std::move(examples) + "\n\n" + epsilon_meaning);
  // time_releases() prints the warnings before the first release (releases.hpp).
  command.callback([&command, &options, run = std::move(run)] {
    options.warnings = setting_warnings(command, options);
    const Record report = run();
    print(report, options.json    ? OutputMode::json
                  : options.quiet ? OutputMode::quiet
                                  : OutputMode::text);
  });
}

CLI::Option* add_progress_flag(CLI::App& command, bool& progress) {
  return command.add_flag("--progress", progress,
                          "show progress and the estimated time left on stderr even when it is "
                          "not a terminal (on a terminal it is shown for long runs anyway)");
}

CLI::Option* add_epsilon_option(CLI::App& command, double& epsilon,
                                const std::string& description) {
  return command.add_option("--epsilon", epsilon, description)->check(finite_positive());
}

CLI::Option* add_file_option(CLI::App& command, const std::string& name, std::string& path,
                             const std::string& description) {
  return command.add_option(name, path, description + " ('-': standard input)")
      ->required()
      ->type_name("FILE");
}

CLI::App& add_selection_command(CLI::App& app, const std::string& name,
                                const std::string& description, UtilityFile& file,
                                const std::string& file_description) {
  CLI::App& command = *app.add_subcommand(name, description);
  add_file_option(command, "--utilities", file.path, file_description);
  add_format_option(command, file.format);
  if (!file.matrix) add_flatten_option(command, file.flatten);
  return command;
}

InputValues UtilityFile::read(const SelectionParams& params, std::uint64_t row_width, bool chunked) const {
  ValueKind kind = utility_values;
  kind.magnitude_bound = params.utility_bound;
  kind.bound_center = params.utility_reference.value_or(0.0);
  kind.bound_option = "--utility-bound";
  return on_every_rank([&] {
    return read_values({.name = "--utilities",
                        .path = path,
                        .format = format,
                        .two_dimensional = matrix ? TwoDimensional::keep : one_list(flatten),
                        .two_dimensional_hint = "use 'dpselect rows' for one pick per row",
                        .slice = rank_slice(row_width),
                        .chunked = chunked},
                       kind);
  });
}

void add_utility_options(CLI::App& command, SelectionParams& params) {
  command
      .add_option("--sensitivity", params.sensitivity,
                  "the most one person's data can change any candidate's utility: between "
                  "neighbouring datasets (the same but for one person's records) no utility "
                  "moves by more")
      ->required()
      ->check(finite_positive());
  command.add_flag("--monotone", params.monotone,
                   "all utilities move in the same direction between neighbours (e.g. counts): "
                   "half the noise");
  command
      .add_option("--utility-bound", params.utility_bound,
                  "public bound on |utility| (0: none), or on |utility - reference| with "
                  "--utility-reference; makes the floating-point slack independent of the data")
      ->check(finite_nonnegative())
      ->capture_default_str();
  command
      .add_option("--utility-reference", params.utility_reference,
                  "a public value near the utilities (e.g. a known offset) that the scores are "
                  "computed from: the selection's distribution is the same, and the "
                  "floating-point error follows the utilities' spread around it rather than their "
                  "magnitude (default: none; the first utility, or 0 with --utility-bound)")
      ->check(finite_number());
}

void add_format_option(CLI::App& command, InputFormat& format) {
  add_choice_option(command, "--format", format,
                    Choices<InputFormat>{{"text", InputFormat::text},
                                         {"f32", InputFormat::f32},
                                         {"f64", InputFormat::f64},
                                         {"npy", InputFormat::npy}},
                    "format of the input files: text (one number per line, # comments), raw "
                    "little-endian f32 or f64, or NumPy .npy")
      ->default_str("a .npy by its magic bytes, else by extension: .npy, .f32, .f64, else text");
}

void add_flatten_option(CLI::App& command, bool& flatten) {
  command.add_flag("--flatten", flatten,
                   "read a 2-D .npy array as one list, row after row (C order); without it a "
                   "2-D array is refused");
}

void add_mechanism_option(CLI::App& command, Mechanism& mechanism) {
  add_choice_option(command, "--mechanism", mechanism,
                    Choices<Mechanism>{{"exponential", Mechanism::exponential},
                                       {"permute-and-flip", Mechanism::permute_and_flip},
                                       {"laplace", Mechanism::laplace_noisy_max}},
                    "selection mechanism (laplace = report-noisy-max with Laplace noise)");
}

}  // namespace dpselect::cli
