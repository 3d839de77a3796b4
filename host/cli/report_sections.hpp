// SPDX-License-Identifier: Apache-2.0
// The parts of a command's output that several commands share: the privacy summary of its
// releases and the description of an input file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common_options.hpp"
#include "index_output.hpp"
#include "input_files.hpp"
#include "output.hpp"
#include "releases.hpp"

namespace dpselect::cli {

// Mechanism, epsilon per release and in total (basic composition), the floating-point slack,
// and one item per release: index (and price), backend that ran, slack. A withheld slack names
// `bound_option`, the option of the command that would make it public.
void add_release_summary(Record& out, const ReleaseOptions& options,
                         const std::vector<ReleaseOutcome>& outcomes,
                         const std::string& bound_option);

// The pieces of that summary, for the commands whose releases are more than one index.
// Mechanism, monotone, sensitivity, noise scale and candidates of one selection.
void add_mechanism(Record& out, const SelectionReport& report);
// epsilon_per_release (followed by `per_release_note`), release_count, and under `total_key`
// release_count * epsilon_per_release (basic composition).
void add_epsilon_total(Record& out, const std::string& total_key, double epsilon_per_release,
                       std::uint64_t release_count, std::string per_release_note = {});
// Floating-point slack: epsilon, delta and, with `show_data_dependence` (the slack of a release,
// not a total), whether it depends on the data. A slack that depends on the data is withheld,
// with a hint naming `bound_options`, the options that would make it public.
void add_slack(Record& out, const std::string& key, const std::string& heading,
               const FloatingPointSlack& slack, bool show_data_dependence,
               const std::string& bound_options);
// Adds `times` * `slack` to `total` (basic composition); depends_on_data if either does.
void accumulate_slack(FloatingPointSlack& total, const FloatingPointSlack& slack,
                      double times = 1.0);
// The backend requested and whether the seed was fixed.
void add_run_settings(Record& out, const ReleaseOptions& options);

// The heading of the section of values computed from the user's data (--diagnostics).
inline constexpr const char* not_private_heading =
    "NOT PRIVATE (diagnostics computed from the data: do not publish)";
// Appends the section "not_private" under `heading`. Everything in it depends on the data (a run
// time depends on it too: the screen skips work on it), so it is printed only on request.
Record& add_not_private_section(Record& out, const std::string& heading);
// One item per release in `section`: its wall time and, when `candidates` is given (the public
// count the work scales with), candidates per second. Without it (the bid-interval sampler, whose
// work is the number of bids) only the time.
void add_release_timings(Record& section, const std::vector<double>& seconds,
                         std::optional<std::uint64_t> candidates);
// The wall time of each of `outcomes` (anything with a `seconds` member).
template <class Outcome>
std::vector<double> release_seconds(const std::vector<Outcome>& outcomes) {
  std::vector<double> seconds;
  for (const Outcome& outcome : outcomes) seconds.push_back(outcome.seconds);
  return seconds;
}

// One release's values as the answer (Record::add_answer): "`label` v0, v1, ..." ("`label` none"
// when there is none) first in text; the `quiet_values` one per line for --quiet, after an empty
// line when `separate` (the releases of a command that releases several values each).
void add_released_values(Record& report, const std::string& label,
                         const std::vector<std::string>& text_values,
                         std::vector<std::string> quiet_values, bool separate);

// Each release's index list as the answer: "indices a, b, c" per release (with --quiet one index
// per line, releases apart by an empty line); or, when the lists went to --output `file`, the
// file's name, since printing them too would defeat it.
void add_released_index_lists(Record& report, const std::vector<std::vector<std::uint64_t>>& releases,
                              const std::optional<IndexFile>& file);

// Released indices as the values of Record::add_array.
std::vector<Scalar> index_values(const std::vector<std::uint64_t>& indices);

// A report on utilities read from a file: title, command, the file, the --utility-bound.
Record utility_report(std::string title, std::string command, const InputValues& utilities,
                      double utility_bound);

// Format, element type, .npy shape, and the number of values when that number is public (the
// candidates of a selection; not the number of bidders, which is data).
void add_input(Record& out, const std::string& key, const InputValues& input, bool count_is_public);
// A .npy shape as Python writes it: "(16,)", "(4, 4)".
std::string shape_text(const std::vector<std::uint64_t>& shape);

// Seconds rounded to microseconds, the resolution worth printing.
double rounded_seconds(double seconds);

}  // namespace dpselect::cli
