// SPDX-License-Identifier: Apache-2.0
// dpselect quantile: private quantiles of values read from a file, over a public range
// (dpselect/quantiles.hpp).
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cli_error.hpp"
#include "commands.hpp"
#include "common_options.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/quantiles.hpp"
#include "input_files.hpp"
#include "job.hpp"
#include "numbers.hpp"
#include "output.hpp"
#include "releases.hpp"
#include "report_sections.hpp"

namespace dpselect::cli {
namespace {

struct QuantileOptions {
  std::string data_path;
  InputFormat format = InputFormat::by_extension;
  bool flatten = false;
  std::vector<double> qs;
  std::optional<QuantileRange> range;
  std::optional<std::string> resolution;  // --resolution as typed, applied to --range in public_range()
  QuantileParams params;
  QuantilesMethod method = QuantilesMethod::joint_exponential;
  const CLI::Option* method_option = nullptr;  // given: select_quantiles even for one --q
  std::optional<double> delta;
  const CLI::Option* delta_option = nullptr;  // for quoting --delta as typed
  ReleaseOptions release;
};

// The accuracy bound holds with probability >= 1 - beta.
constexpr double accuracy_beta = 0.05;

// One release: the values (one per --q) and its accounting, from either entry point.
struct QuantileOutcome {
  std::vector<double> values;
  std::vector<std::uint64_t> grid_indices;
  double epsilon_spent = 0.0;
  double delta_spent = 0.0;
  double epsilon_per_mechanism = 0.0;
  std::uint64_t mechanisms = 1;
  FloatingPointSlack slack;
  std::optional<SelectionReport> single;  // the single-quantile release's report
  double seconds = 0.0;
};

QuantileOutcome quantile_outcome_of(const QuantileRelease& release) {
  QuantileOutcome outcome;
  outcome.values = {release.value};
  outcome.grid_indices = {release.grid_index};
  outcome.epsilon_spent = release.report.epsilon_spent;
  outcome.epsilon_per_mechanism = release.report.epsilon_spent;
  outcome.slack = release.report.slack;
  outcome.single = release.report;
  return outcome;
}

QuantileOutcome quantile_outcome_of(const QuantilesRelease& release) {
  QuantileOutcome outcome;
  outcome.values = release.values;
  outcome.grid_indices = release.grid_indices;
  outcome.epsilon_spent = release.epsilon_spent;
  outcome.delta_spent = release.delta_spent;
  outcome.epsilon_per_mechanism = release.epsilon_per_mechanism;
  outcome.mechanisms = release.mechanisms;
  outcome.slack = release.slack;
  return outcome;
}

// --range LOWER:UPPER: two finite numbers, lower < upper (negative ones too: -5:5), then the
// library's own rules (QuantileRange::validate: magnitudes up to 2^960).
QuantileRange parse_quantile_range(const std::string& text) {
  const std::string form = "--range must be LOWER:UPPER, two numbers separated by a colon (got '" + text + "')";
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos) throw CliError(form);
  const std::optional<double> lower = parse_double(std::string_view(text).substr(0, colon));
  const std::optional<double> upper = parse_double(std::string_view(text).substr(colon + 1));
  if (!lower || !upper) throw CliError(form);
  if (!std::isfinite(*lower) || !std::isfinite(*upper)) {
    throw CliError("--range " + text + ": both ends must be finite numbers");
  }
  if (!(*lower < *upper)) throw CliError("--range " + text + ": LOWER must be less than UPPER");
  const QuantileRange range{*lower, *upper};
  try {
    range.validate();
  } catch (const InvalidArgument& error) {
    throw CliError("--range " + text + ": " + std::string(message_of(error)));
  }
  return range;
}

// --q: each in [0, 1] (CLI11 checks each value while parsing).
CLI::Validator quantile_level() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::optional<double> value = parse_double(text);
        if (value && *value >= 0.0 && *value <= 1.0) return {};
        return "must be a number >= 0 and <= 1 (got '" + text + "')";
      },
      "");
}

bool single_mechanism(const QuantileOptions& options) {
  return options.qs.size() == 1 && options.method_option->count() == 0;
}

// Every check of the combination of options, before the file is read.
// --range with --resolution: the step a number, then the library's rules (QuantileRange::validate:
// positive, dividing the range into at most 2^40 steps).
QuantileRange public_range(const QuantileOptions& options) {
  QuantileRange range = *options.range;
  if (!options.resolution) return range;
  const std::string& text = *options.resolution;
  const std::optional<double> step = parse_double(text);
  if (!step) throw CliError("--resolution must be a number, the step of the data (got '" + text + "')");
  range.resolution = *step;
  try {
    range.validate();
  } catch (const InvalidArgument& error) {
    throw CliError("--resolution " + text + ": " + std::string(message_of(error)));
  }
  return range;
}

void check_options(const QuantileOptions& options) {
  for (std::size_t j = 1; j < options.qs.size(); ++j) {
    if (!(options.qs[j - 1] < options.qs[j])) {
      throw CliError("--q must be strictly increasing, each quantile once (got " + format_number(options.qs[j - 1]) +
                     " before " + format_number(options.qs[j]) + ")");
    }
  }
  const bool zcdp = options.method == QuantilesMethod::independent_zcdp;  // only when --method says so
  if (zcdp && !options.delta) {
    throw CliError("--method zcdp needs --delta: its guarantee is (epsilon, delta)-DP (e.g. --delta 1e-6)");
  }
  if (!zcdp && options.delta) {
    throw CliError("--delta " + options.delta_option->results().back() +
                   " applies to --method zcdp only (the other methods are pure epsilon-DP)");
  }
  if (options.params.mechanism == Mechanism::permute_and_flip) {
    if (!options.resolution) {
      throw CliError("--mechanism permute-and-flip needs --resolution, the public step of the data: over the 2^40 + "
                     "1 points of a range without one it is the exponential mechanism in all but name");
    }
    if (!single_mechanism(options) && options.method != QuantilesMethod::recursive_splitting &&
        options.method != QuantilesMethod::independent_basic) {
      throw CliError("--mechanism permute-and-flip releases one --q, or several with --method basic or recursive "
                     "(got --method " + std::string(to_string(options.method)) + ")");
    }
  }
  // In a job each rank would sort its own slice and release on it: not a release of the whole
  // data. Refused before any rank reads anything.
  if (job_place().distributed) {
    throw CliError("dpselect quantile runs in one process: start it without an MPI launcher");
  }
}

InputValues read_data(const QuantileOptions& options) {
  return read_values({.name = "--data",
                      .path = options.data_path,
                      .format = options.format,
                      .two_dimensional = one_list(options.flatten),
                      .chunked = true},
                     quantile_data_values);
}

// A raw or .npy file is read a chunk at a time into the data's positions, never held whole.
QuantileData prepare(InputValues& input, const QuantileRange& range) {
  return with_values(input, [&](const auto& values) { return QuantileData(values, range); });
}

std::string method_name(const QuantileOptions& options) {
  return single_mechanism(options) ? "single" : std::string(to_string(options.method));
}

// Where each method comes from, as a note on it.
std::string method_note(const QuantileOptions& options) {
  if (single_mechanism(options)) {
    return std::string(options.params.mechanism == Mechanism::permute_and_flip
                           ? "permute-and-flip (McKenna & Sheldon 2020)"
                           : "the exponential mechanism") +
           " with utility -dist(q n, [#{x_i < t}, #{x_i <= t}]) over the grid (Smith 2011, ties counted)";
  }
  switch (options.method) {
    case QuantilesMethod::joint_exponential:
      return "one exponential mechanism over sorted tuples (JointExp: Gillenwater, Joseph & Kulesza 2021)";
    case QuantilesMethod::recursive_splitting:
      return "the middle quantile first, then each side (Kaplan, Schnapp & Stemmer 2022)";
    case QuantilesMethod::independent_basic:
      return "one release per --q at epsilon / m (basic composition, Dwork & Roth 2014, Thm 3.16)";
    case QuantilesMethod::independent_zcdp:
      return "one release per --q, each eps^2/8-zCDP (Cesar & Rogers 2021), composed and converted to (epsilon, "
             "delta) (Bun & Steinke 2016, Lemma 2.3, Prop. 1.3)";
  }
  return {};
}

std::vector<Scalar> scalars(const std::vector<double>& values) { return std::vector<Scalar>(values.begin(), values.end()); }

// `value` with `places` digits after the point, without trailing zeros ("0.30" -> "0.3").
std::string fixed_decimal(double value, int places) {
  char buffer[400];  // |value| <= 2^960 (QuantileRange), about 290 digits before the point
  std::string text(buffer, std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, places).ptr);
  if (text.find('.') != std::string::npos) {
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text.pop_back();
  }
  return text == "-0" ? "0" : text;
}

// The places after the decimal point of `value` when it is a short decimal (0.1: 1, 2.5e-3: 4,
// 5: 0): the fewest whose fixed text reads back to it; nullopt for none up to 30.
std::optional<int> decimal_places(double value) {
  constexpr int most_places = 30;
  for (int places = 0; places <= most_places; ++places) {
    if (parse_double(fixed_decimal(value, places)) == value) return places;
  }
  return std::nullopt;
}

// How text output writes the released grid points. On the grid of a decimal --resolution from a
// decimal lower end every point is a decimal, but the double lower + k r often is not the one
// nearest to it (3 x 0.1 gives 0.30000000000000004). So a point is written with the places of
// the resolution and the lower end (0.3) when that text, read as data, rounds to the same grid
// point, and is not longer than the shortest text of the double; otherwise as that shortest text.
// JSON keeps the doubles.
class GridValueText {
 public:
  explicit GridValueText(const QuantileRange& range) : grid_(range.grid()) {
    if (!range.resolution || !grid_.rounds_to_points) return;
    const std::optional<int> resolution_places = decimal_places(*range.resolution);
    const std::optional<int> lower_places = decimal_places(range.lower);
    if (resolution_places && lower_places) places_ = std::max(*resolution_places, *lower_places);
  }

  // `value`, released as the grid point `grid_index`.
  std::string operator()(double value, std::uint64_t grid_index) const {
    const std::string shortest = format_number(value);
    if (!places_) return shortest;
    const std::string decimal = fixed_decimal(value, *places_);
    const std::optional<double> read = parse_double(decimal);
    const bool same_point = read && grid_.slot(*read) == 2 * grid_index + 1;
    return same_point && decimal.size() <= shortest.size() ? decimal : shortest;
  }

  std::vector<std::string> operator()(const QuantileOutcome& outcome) const {
    std::vector<std::string> texts;
    for (std::size_t j = 0; j < outcome.values.size(); ++j) {
      texts.push_back((*this)(outcome.values[j], outcome.grid_indices[j]));
    }
    return texts;
  }

 private:
  QuantileGrid grid_;
  std::optional<int> places_;
};

void add_quantile_release(Record& item, const QuantileOutcome& outcome, const GridValueText& value_text) {
  item.add_array_with_text("values", scalars(outcome.values), value_text(outcome), "one per --q, in order");
  item.add_array("grid_indices", index_values(outcome.grid_indices), "their indices on the grid");
  if (outcome.single) item.add("executed_on", std::string(to_string(outcome.single->executed_on)));
  item.add("epsilon_spent", outcome.epsilon_spent);
  item.add("delta_spent", outcome.delta_spent);
  item.add("mechanisms", outcome.mechanisms, "exponential mechanism runs");
  item.add("epsilon_per_mechanism", outcome.epsilon_per_mechanism);
  add_slack(item, "slack", "floating-point slack", outcome.slack, true, "--max-points");
}

// NOT PRIVATE: the exact rank errors of the released values, the best a grid point achieves and
// the number of values, from the data.
void add_not_private(Record& out, const QuantileData& data, const std::vector<double>& qs,
                     const std::vector<QuantileOutcome>& outcomes, double preparation_seconds) {
  Record& section = add_not_private_section(out, not_private_heading);
  section.add("values", data.size());
  const QuantileGrid grid = data.grid();
  for (std::size_t j = 0; j < qs.size(); ++j) {
    const QuantileDiagnostics best = nonprivate_quantile_diagnostics(data, qs[j]);
    Record& item = section.add_list_item("quantiles", "quantile");
    item.add("q", qs[j]);
    item.add("best_value", grid.point(best.best_grid_index), "a grid point of smallest rank error");
    item.add("best_rank_error", best.best_rank_error, "the error the grid forces on any output (ties counted)");
  }
  section.add("preparation_seconds", rounded_seconds(preparation_seconds), "time to clip and sort the data");
  for (const QuantileOutcome& outcome : outcomes) {
    Record& item = section.add_list_item("releases", "release");
    item.add("seconds", rounded_seconds(outcome.seconds));
    std::vector<Scalar> errors;
    for (std::size_t j = 0; j < qs.size(); ++j) {
      errors.emplace_back(nonprivate_rank_error(data, outcome.grid_indices[j], qs[j]));
    }
    item.add_array("rank_errors", std::move(errors),
                   "distance from q n to [#{x_i < value}, #{x_i <= value}] of each value");
  }
}

Record run_quantile(const QuantileOptions& options) {
  check_options(options);
  const QuantileRange range = public_range(options);
  QuantileParams params = options.params;
  params.range = range;
  params.backend = options.release.backend;
  const QuantilesParams several{params, options.method, options.delta.value_or(0.0)};
  const bool single = single_mechanism(options);
  // From the parameters alone, and before anything is read, so that nothing fails after a release.
  const double alpha = single ? quantile_rank_error_bound(params, options.qs.front(), accuracy_beta)
                              : quantiles_rank_error_bound(several, options.qs, accuracy_beta);

  InputValues input = read_data(options);
  if (params.max_points != 0 && input.total > params.max_points) {
    // The count is private under add/remove neighbours: not quoted.
    throw CliError(input_label("--data", options.data_path) + ": more values than --max-points " +
                   format_number(params.max_points));
  }
  const auto preparation_start = std::chrono::steady_clock::now();
  const QuantileData data = prepared_from("--data", options.data_path, [&] { return prepare(input, range); });
  const double preparation_seconds = seconds_since(preparation_start);
  input.values = std::vector<double>();  // the prepared positions are all the releases read

  // Progress is sized by the work, the n + 1 data intervals of stage 1: by n where it is public,
  // else by --max-points (no size without it: the private n must not decide what stderr shows).
  ReleaseWork work{"quantile releases", 0};
  if (params.neighbours == RecordNeighbours::replace_one_record) {
    work = {"quantile releases over " + format_number(input.total) + " values", input.total};
  } else if (params.max_points != 0) {
    work = {"quantile releases over at most " + format_number(params.max_points) + " values", params.max_points};
  }
  std::vector<QuantileOutcome> outcomes = run_releases(options.release, work, [&](ReleaseTarget& target) {
    return single ? quantile_outcome_of(target.quantile(data, options.qs.front(), params))
                  : quantile_outcome_of(target.quantiles(data, options.qs, several));
  });

  Record report("dpselect quantile: private quantiles of values read from a file");
  const std::string label = options.qs.size() == 1 ? "quantile" : "quantiles";
  const GridValueText value_text(range);
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const std::vector<std::string> values = value_text(outcomes[i]);
    add_released_values(report, label, values, values, options.qs.size() > 1 && i > 0);
  }
  report.add("command", std::string("quantile"));
  // Under replace-one neighbours n is the same for every neighbour: public. Otherwise it is data.
  add_input(report, "data", input, params.neighbours == RecordNeighbours::replace_one_record);
  const QuantileGrid grid = range.grid();
  Record& described = report.add_record("range", "public range");
  described.add("lower", range.lower);
  described.add("upper", range.upper);
  if (range.resolution) {
    described.add("resolution", *range.resolution,
                  "public step: every value is drawn from its multiples, and each value is rounded to the nearest");
  } else {
    described.add("grid_step", grid.step, "spacing of the 2^40 + 1 grid points every value is drawn from");
  }
  described.add("grid_points", grid.size);
  described.add("outside_values", std::string("clipped"),
                "values outside the range count as its nearest end; how many there are is private and not reported");
  report.add_array("q", scalars(options.qs));
  report.add("method", method_name(options), method_note(options));
  report.add("mechanism", std::string(to_string(params.mechanism)),
             params.mechanism == Mechanism::permute_and_flip
                 ? "report-noisy-max with one-sided exponential noise (McKenna & Sheldon 2020), over --resolution's "
                   "grid"
                 : "");
  report.add("neighbours", std::string(to_string(params.neighbours)),
             params.neighbours == RecordNeighbours::replace_one_record ? "one record replaced: n is public"
                                                                       : "one record added or removed");
  report.add("max_points", params.max_points, params.max_points > 0 ? "public bound on the number of values" : "none");
  if (const std::optional<SelectionReport>& first = outcomes.front().single) {
    report.add("sensitivity", first->sensitivity,
               "of the utility -dist(q n, [#{x_i < t}, #{x_i <= t}]) (Smith 2011, ties counted)");
    report.add("noise_scale", first->noise_scale,
               params.mechanism == Mechanism::permute_and_flip
                   ? "2 sensitivity / epsilon, of one-sided exponential noise (McKenna & Sheldon 2020)"
                   : "2 sensitivity / epsilon (Dwork & Roth 2014, Thm 3.10)");
  }
  const auto release_count = static_cast<std::uint64_t>(outcomes.size());
  add_epsilon_total(report, "total_epsilon", outcomes.front().epsilon_spent, release_count,
                    options.qs.size() > 1 ? "all the quantiles of one release together" : "");
  report.add("delta_per_release", outcomes.front().delta_spent);
  report.add("total_delta", static_cast<double>(release_count) * outcomes.front().delta_spent,
             release_count > 1 ? "basic composition" : "");
  FloatingPointSlack total_slack;
  for (const QuantileOutcome& outcome : outcomes) accumulate_slack(total_slack, outcome.slack);
  add_slack(report, "total_slack", "total floating-point slack", total_slack, false, "--max-points");
  Record& accuracy = report.add_record("accuracy", "accuracy (from the parameters alone)");
  accuracy.add("confidence", 1.0 - accuracy_beta);
  accuracy.add("rank_error_bound", alpha,
               "with probability >= 0.95 every released value is at most this plus the error the grid forces "
               "from q n in rank (ties counted: the distance to [#{x_i < value}, #{x_i <= value}]); Dwork & Roth "
               "2014, Thm 3.11");
  add_run_settings(report, options.release);
  for (const QuantileOutcome& outcome : outcomes) {
    add_quantile_release(report.add_list_item("releases", "release"), outcome, value_text);
  }
  if (options.release.diagnostics) add_not_private(report, data, options.qs, outcomes, preparation_seconds);
  return report;
}

constexpr const char* quantile_examples = R"(Examples:
  dpselect quantile --data ages.txt --q 0.5 --range 0:120 --resolution 1 --epsilon 1
  dpselect quantile --data prices.txt --q 0.5 --range 0:20000 --resolution 1 --epsilon 1 --mechanism permute-and-flip
  dpselect quantile --data incomes.npy --q 0.1 --q 0.5 --q 0.9 --range 0:1e6 --epsilon 1
  dpselect quantile --data x.f64 --q 0.25,0.75 --range -5:5 --epsilon 0.5 --method zcdp --delta 1e-6
  dpselect quantile --data x.f32 --q 0.5 --range 0:1000 --epsilon 1 --neighbours add-remove \
      --max-points 1000000 --json

Releases only the quantiles: points of a public grid over --range (2^40 + 1 points, whose step is
printed, or the multiples of --resolution), drawn from the grid, not copied from the data. Values
outside the range count as its nearest end (how
many is not reported); NaN is refused with its line or element. One --q uses the exponential
mechanism of Smith (2011), or permute-and-flip (McKenna & Sheldon 2020) over a --resolution grid;
several use --method (joint by default), all of them together
epsilon-DP ((epsilon, delta)-DP for zcdp). Text output starts with the values ("quantile 41.5";
"quantiles 12.5, 41.5, 90.25" for several --q, in the order of --q), --quiet prints only them,
one per line. Under --neighbours add-remove the number of values is private: give --max-points
to make the floating-point slack public. --diagnostics adds the number of values, the exact rank
error of each released value, the best a grid point can do and the run times: computed from the
data and NOT PRIVATE.)";

}  // namespace

void register_quantile_command(CLI::App& app) {
  auto options = std::make_shared<QuantileOptions>();
  CLI::App& command = *app.add_subcommand(
      "quantile", "private quantiles: values close to the q-quantiles of the data, within a public range");
  add_file_option(command, "--data", options->data_path, "file of the values (NaN refused; +-inf clipped)");
  add_format_option(command, options->format);
  add_flatten_option(command, options->flatten);
  command
      .add_option("--q", options->qs,
                  "the quantile level(s) in [0, 1], e.g. 0.5 for the median; repeat it (--q 0.1 --q 0.9) "
                  "or list them (--q 0.1,0.9) in increasing order")
      ->required()
      ->delimiter(',')
      ->check(quantile_level())
      ->type_name("Q");
  command
      .add_option_function<std::string>(
          "--range",
          [options](const std::string& text) { options->range = parse_quantile_range(text); },
          "public range of the values; every release is a point of its grid of 2^40 + 1 points (negative "
          "numbers allowed: --range -5:5)")
      ->required()
      ->type_name("LOWER:UPPER");
  command
      .add_option_function<std::string>(
          "--resolution", [options](const std::string& text) { options->resolution = text; },
          "public step of the data, e.g. 1 for integers or 0.01 for cents: the releases are its multiples in "
          "--range (which it must divide into at most 2^40 steps) and a value held by many records can be "
          "released itself; values are rounded to the nearest multiple (default: a grid of 2^40 + 1 points)")
      ->type_name("STEP");
  add_epsilon_option(command, options->params.epsilon, "privacy loss of each release (all its quantiles together)")
      ->required();
  options->method_option =
      add_choice_option(command, "--method", options->method,
                        Choices<QuantilesMethod>{{"joint", QuantilesMethod::joint_exponential},
                                                 {"recursive", QuantilesMethod::recursive_splitting},
                                                 {"basic", QuantilesMethod::independent_basic},
                                                 {"zcdp", QuantilesMethod::independent_zcdp}},
                        "how several quantiles are released together: joint (one exponential mechanism over "
                        "sorted tuples; best for up to about 10), recursive (splitting; best for many), basic "
                        "(independent releases at epsilon / m), zcdp (independent releases composed in zCDP; "
                        "needs --delta)")
          ->default_str("joint for several --q; for one --q the single-quantile exponential mechanism");
  options->delta_option =
      command
          .add_option("--delta", options->delta, "--method zcdp only: the total delta of the (epsilon, delta) guarantee")
          ->check(open_unit_interval());
  add_choice_option(command, "--mechanism", options->params.mechanism,
                    Choices<Mechanism>{{"exponential", Mechanism::exponential},
                                       {"permute-and-flip", Mechanism::permute_and_flip}},
                    "the mechanism of each release over the grid: exponential, or permute-and-flip (never a larger "
                    "expected rank error; needs --resolution; for several --q with --method basic or recursive)");
  add_choice_option(command, "--neighbours", options->params.neighbours,
                    Choices<RecordNeighbours>{{"replace", RecordNeighbours::replace_one_record},
                                              {"add-remove", RecordNeighbours::add_or_remove_record}},
                    "what one person's data is: one value replaced (the number of values is public) or one "
                    "value added or removed (it is private)");
  command
      .add_option("--max-points", options->params.max_points,
                  "public upper bound on the number of values: makes the floating-point slack independent of "
                  "the data under --neighbours add-remove (otherwise it is withheld)")
      ->check(integer_at_least(1))
      ->type_name("N");
  complete_release_command(command, options->release, quantile_examples, [options] { return run_quantile(*options); });
}

}  // namespace dpselect::cli
