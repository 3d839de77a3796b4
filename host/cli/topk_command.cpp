// SPDX-License-Identifier: Apache-2.0
// dpselect topk: the indices of k high-utility candidates, in order, from one noisy pass.
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <span>

#include "cli_error.hpp"
#include "commands.hpp"
#include "common_options.hpp"
#include "dpselect/select.hpp"
#include "dpselect/top_k.hpp"
#include "index_output.hpp"
#include "input_files.hpp"
#include "numbers.hpp"
#include "output.hpp"
#include "releases.hpp"
#include "report_sections.hpp"

namespace dpselect::cli {
namespace {

struct TopKOptions {
  UtilityFile utilities;
  double epsilon = 0.0;  // of all k picks together: each spends epsilon / k
  double delta = 1e-6;   // of the (epsilon, delta) bound implied by the zCDP guarantee
  TopKParams params;
  std::string output;  // --output FILE (.npy or .txt): the indices go there, not to stdout
  ReleaseOptions release;
};

// Without --output, at most this many indices (k x --repeat) are printed in the report: 10^6
// indices make a JSON document of about 10 MB; more is refused (before anything is read or
// released) with a pointer to --output.
constexpr std::uint64_t max_indices_on_stdout = 1'000'000;

// One release: k indices.
struct TopKOutcome {
  TopKSelection selection;
  double seconds = 0.0;
};

// `indices_in_file`: the indices went to --output, so the report leaves them out.
void add_top_k_release(Record& item, const TopKOutcome& outcome, bool indices_in_file) {
  const TopKReport& report = outcome.selection.report;
  if (!indices_in_file) {
    item.add_array("indices", index_values(outcome.selection.indices), "largest noisy score first");
  }
  item.add("executed_on", std::string(to_string(report.per_pick.executed_on)));
  item.add("epsilon_spent", report.epsilon_total_basic);
  add_slack(item, "slack_per_pick", "floating-point slack per pick", report.per_pick.slack, true,
            "--utility-bound");
}

// Refuses, before anything is read, a report too large for stdout (see max_indices_on_stdout).
void check_indices_fit_stdout(const TopKOptions& options) {
  std::uint64_t indices = 0;
  if (!__builtin_mul_overflow(options.params.k, options.release.repeat, &indices) &&
      indices <= max_indices_on_stdout) {
    return;
  }
  throw CliError("--k " + format_number(options.params.k) +
                 (options.release.repeat > 1 ? " with --repeat " + format_number(options.release.repeat)
                                             : std::string()) +
                 " would print more than " + format_number(max_indices_on_stdout) +
                 " indices in the report: write them to a file with --output FILE.npy (or .txt)");
}

Record run_top_k(const TopKOptions& options) {
  std::optional<IndexFile> index_file;
  if (options.output.empty()) {
    check_indices_fit_stdout(options);
  } else {
    index_file = checked_index_file("--output", options.output);
  }
  // A raw or .npy file is read a chunk at a time, never held whole, where the passes run on the
  // CPU (the library's chunked top-k); the GPU's top-k scores the array whole.
  const Backend backend = options.release.backend;
  const bool on_cpu = backend == Backend::Cpu || (backend == Backend::Auto && !gpu_usable());
  const InputValues utilities = options.utilities.read(options.params.selection, 0, on_cpu);
  TopKParams params = options.params;
  // Checked here too (the library refuses it as well) so that the message names the file.
  if (params.k > utilities.total) {
    throw CliError("--k " + format_number(params.k) + " is more than the " +
                   format_number(utilities.total) + " candidates in " +
                   std::string(display_path(options.utilities.path)));
  }
  params.selection.mechanism = Mechanism::exponential;
  params.selection.epsilon = options.epsilon;  // the k picks together: each spends epsilon / k
  params.selection.backend = options.release.backend;
  std::vector<TopKOutcome> outcomes =
      run_releases(options.release, utilities.total, [&](ReleaseTarget& target) {
        return with_values(utilities, [&](const auto& source) {
          return TopKOutcome{target.top_k(source, utilities.first, params)};
        });
      });

  const TopKReport& first = outcomes.front().selection.report;
  const auto release_count = static_cast<std::uint64_t>(outcomes.size());
  const double rho = static_cast<double>(release_count) * first.rho;
  FloatingPointSlack total_slack;
  for (const TopKOutcome& outcome : outcomes) {
    const TopKReport& report = outcome.selection.report;
    accumulate_slack(total_slack, report.per_pick.slack, static_cast<double>(report.k));
  }

  Record report = utility_report("dpselect topk: private top-k, k candidate indices in order",
                                 "topk", utilities, params.selection.utility_bound);
  std::vector<std::vector<std::uint64_t>> released;
  released.reserve(outcomes.size());
  for (const TopKOutcome& outcome : outcomes) released.push_back(outcome.selection.indices);
  add_released_index_lists(report, released, index_file);
  report.add("k", first.k);
  add_mechanism(report, first.per_pick);
  report.add("epsilon_per_pick", first.per_pick.epsilon_spent);
  add_epsilon_total(report, "epsilon_total_basic", first.epsilon_total_basic, release_count,
                    "k picks: basic composition");
  report.add("rho", rho, "zCDP of all picks together; zCDP composes by adding rho");
  Record& bound = report.add_record("zcdp_bound", "zCDP bound");
  bound.add("delta", options.delta);
  bound.add("epsilon", epsilon_from_zcdp(rho, options.delta),
            "(epsilon, delta)-DP implied by rho: rho + 2 sqrt(rho ln(1/delta))");
  add_slack(report, "total_slack", "total floating-point slack", total_slack, false,
            "--utility-bound");
  add_run_settings(report, options.release);
  if (index_file) {
    write_index_file(*index_file, released);
    report.add("indices_file", index_file->path,
               index_file->format == IndexFileFormat::npy
                   ? (outcomes.size() == 1 ? "uint64 array of k indices, largest noisy score first"
                                           : "uint64 array, one row of k indices per release, "
                                             "largest noisy score first")
                   : "one index per line, k lines per release, largest noisy score first");
  }
  for (const TopKOutcome& outcome : outcomes) {
    add_top_k_release(report.add_list_item("releases", "release"), outcome, index_file.has_value());
  }
  if (options.release.diagnostics) {
    add_release_timings(add_not_private_section(report, not_private_heading),
                        release_seconds(outcomes), utilities.total);
  }
  return report;
}

constexpr const char* topk_examples = R"(Examples:
  dpselect topk --utilities scores.txt --k 10 --epsilon 1 --sensitivity 1
  dpselect topk --utilities counts.npy --k 100 --epsilon 2 --sensitivity 1 --monotone \
      --delta 1e-9 --json
  dpselect topk --utilities scores.f32 --k 5 --epsilon 0.5 --sensitivity 2 --repeat 3

Releases the indices of k candidates (0-based line or element of the file), largest noisy score
first: one pass of Gumbel noise with the exponential mechanism's distribution, the same as k
rounds of peeling. --epsilon is the budget of all k picks (basic composition): each pick spends
epsilon / k. Also printed: the zCDP rho of the picks and the (epsilon, delta) it implies at
--delta, often much below epsilon for large k. --repeat N multiplies epsilon and rho by N.
Text output starts with the released indices (one line per release); --quiet prints only the
indices, one per line, with an empty line between releases; --diagnostics adds the run time of
each release, which depends on the data and is NOT PRIVATE. More than 1000000 indices
(k x --repeat) need --output FILE.npy or FILE.txt.)";

}  // namespace

void register_top_k_command(CLI::App& app) {
  auto options = std::make_shared<TopKOptions>();
  CLI::App& command = add_selection_command(
      app, "topk", "private top-k: the indices of k high-utility candidates, best first",
      options->utilities);
  command.add_option("--k", options->params.k, "how many indices to release (at most n)")
      ->required()
      ->check(integer_at_least(1));
  add_epsilon_option(command, options->epsilon,
                     "privacy loss of all k picks together (basic composition): each pick "
                     "spends epsilon / k")
      ->required();
  add_utility_options(command, options->params.selection);
  command
      .add_option("--delta", options->delta,
                  "delta of the (epsilon, delta) bound implied by the zCDP guarantee")
      ->check(open_unit_interval())
      ->capture_default_str();
  command
      .add_option("--output", options->output,
                  "write the indices to FILE instead of the report: .npy (uint64; one row per "
                  "release) or .txt (one per line); never overwrites an existing file")
      ->type_name("FILE");
  complete_release_command(command, options->release, topk_examples,
                           [options] { return run_top_k(*options); });
}

}  // namespace dpselect::cli
