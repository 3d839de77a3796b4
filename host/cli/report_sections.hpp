// The parts of a command's output that several commands share: the privacy summary of its
// releases and the description of an input file.
#pragma once

#include <string>
#include <vector>

#include "common_options.hpp"
#include "input_files.hpp"
#include "output.hpp"
#include "releases.hpp"

namespace dpselect::cli {

// Mechanism, epsilon per release and in total (basic composition), the floating-point slack,
// and one item per release: index (and price), backend that ran, timing, slack.
void add_release_summary(Record& out, const ReleaseOptions& options,
                         const std::vector<ReleaseOutcome>& outcomes);

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
               const std::string& bound_options = "--utility-bound, --max-bidders");
// Adds `times` * `slack` to `total` (basic composition); depends_on_data if either does.
void accumulate_slack(FloatingPointSlack& total, const FloatingPointSlack& slack,
                      double times = 1.0);
// The backend requested and whether the seed was fixed.
void add_run_settings(Record& out, const ReleaseOptions& options);
// The backend that ran one release, its wall time and its speed over `candidates`.
// Wall time and candidates (a public count) per second. Never print a count of the private
// data here (the bid-interval sampler's work is the number of bids).
void add_timing(Record& item, ExecutedOn executed_on, std::uint64_t candidates, double seconds);

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
