// SPDX-License-Identifier: Apache-2.0
// dpselect select: one private arg-max over utilities read from a file.
#include <memory>
#include <span>

#include "commands.hpp"
#include "common_options.hpp"
#include "dpselect/select.hpp"
#include "input_files.hpp"
#include "numbers.hpp"
#include "output.hpp"
#include "releases.hpp"
#include "report_sections.hpp"

namespace dpselect::cli {
namespace {

struct SelectOptions {
  UtilityFile utilities;
  SelectionParams params;
  ReleaseOptions release;
};

Record run_select(const SelectOptions& options) {
  // A raw or .npy file is read a chunk at a time, never held whole.
  const InputValues utilities = options.utilities.read(options.params, 0, true);
  SelectionParams params = options.params;
  params.backend = options.release.backend;
  std::vector<ReleaseOutcome> outcomes =
      run_releases(options.release, utilities.total, [&](ReleaseTarget& target) {
        return with_values(utilities, [&](const auto& source) {
          return outcome_of(target.select(source, utilities.first, params));
        });
      });

  Record report = utility_report("dpselect select: private selection of one candidate index",
                                 "select", utilities, params.utility_bound);
  for (const ReleaseOutcome& outcome : outcomes) {
    const std::string index = format_number(outcome.index);
    add_released_values(report, "index", {index}, {index}, false);
  }
  add_release_summary(report, options.release, outcomes, "--utility-bound");
  if (options.release.diagnostics) {
    add_release_timings(add_not_private_section(report, not_private_heading),
                        release_seconds(outcomes), utilities.total);
  }
  return report;
}

constexpr const char* select_examples = R"(Examples:
  dpselect select --utilities scores.txt --epsilon 1 --sensitivity 1
  dpselect select --utilities counts.npy --epsilon 0.5 --sensitivity 1 --monotone \
      --mechanism permute-and-flip --utility-bound 1e6 --json
  dpselect select --utilities scores.f32 --epsilon 1 --sensitivity 2 --repeat 10

Releases only the index of the chosen candidate (0-based line or element of the file). Each
release is epsilon-DP when no utility moves by more than --sensitivity between neighbouring
datasets; --repeat N spends N * epsilon. Text output starts with the released index ("index 5",
one line per release); --quiet prints only the indices, one per line; --diagnostics adds the
run time of each release, which depends on the data and is NOT PRIVATE. For the k best indices at once see dpselect topk; for
one index per row of a matrix, dpselect rows.)";

}  // namespace

void register_select_command(CLI::App& app) {
  auto options = std::make_shared<SelectOptions>();
  CLI::App& command = add_selection_command(
      app, "select", "private arg-max: pick the index of a high-utility candidate",
      options->utilities);
  add_epsilon_option(command, options->params.epsilon)->required();
  add_utility_options(command, options->params);
  add_mechanism_option(command, options->params.mechanism);
  complete_release_command(command, options->release, select_examples,
                           [options] { return run_select(*options); });
}

}  // namespace dpselect::cli
