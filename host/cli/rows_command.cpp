// dpselect rows: one private arg-max per row of a rows x cols utility matrix read from a file.
#include <memory>
#include <optional>

#include "cli_error.hpp"
#include "commands.hpp"
#include "common_options.hpp"
#include "dpselect/rows.hpp"
#include "input_files.hpp"
#include "numbers.hpp"
#include "output.hpp"
#include "releases.hpp"
#include "report_sections.hpp"

namespace dpselect::cli {
namespace {

struct RowsOptions {
  UtilityFile utilities;
  std::optional<std::uint64_t> cols;  // from the shape of a 2-D .npy when not given
  SelectionParams params;
  ReleaseOptions release;
};

// One release: one index per row.
struct RowsOutcome {
  RowsSelection selection;
  double seconds = 0.0;
};

// The number of columns: --cols, which must divide the number of values, or the second extent
// of a 2-D .npy array (which --cols, if given, must match).
std::uint64_t column_count(const RowsOptions& options, const InputValues& utilities) {
  const auto values = static_cast<std::uint64_t>(utilities.size());
  if (utilities.shape.size() == 2) {
    if (options.cols && *options.cols != utilities.shape[1]) {
      throw CliError("--cols " + format_number(*options.cols) + " does not match the shape " +
                     shape_text(utilities.shape) + " of " + options.utilities.path);
    }
    return utilities.shape[1];
  }
  if (!options.cols) {
    throw CliError("--cols is required unless " + options.utilities.path + " is a 2-D .npy array");
  }
  if (values % *options.cols != 0) {
    throw CliError(options.utilities.path + " has " + format_number(values) +
                   " values, not a multiple of --cols " + format_number(*options.cols));
  }
  return *options.cols;
}

void add_rows_release(Record& item, const RowsOutcome& outcome, std::uint64_t cols) {
  std::vector<std::uint64_t> indices;
  auto executed_on = static_cast<std::uint8_t>(ExecutedOn::none);
  double epsilon_spent = 0.0;
  FloatingPointSlack slack;
  for (const Selection& row : outcome.selection.selections) {
    indices.push_back(row.index);
    executed_on |= static_cast<std::uint8_t>(row.report.executed_on);
    epsilon_spent += row.report.epsilon_spent;
    accumulate_slack(slack, row.report.slack);
  }
  item.add_array("indices", index_values(indices), {}, "row", "index");
  add_timing(item, static_cast<ExecutedOn>(executed_on), indices.size() * cols, outcome.seconds);
  item.add("epsilon_spent", epsilon_spent);
  add_slack(item, "slack", "floating-point slack of all rows", slack, true);
}

Record run_rows(const RowsOptions& options) {
  const InputValues utilities = options.utilities.read(options.params.utility_bound);
  const std::uint64_t cols = column_count(options, utilities);
  const std::uint64_t rows = utilities.size() / cols;
  SelectionParams params = options.params;
  params.backend = options.release.backend;
  std::vector<RowsOutcome> outcomes =
      run_releases(options.release, utilities.size(), [&](Context& context) {
        return std::visit(
            [&]<class T>(const std::vector<T>& values) {
              return RowsOutcome{
                  select_rows(context, HostMatrix<const T>{values.data(), rows, cols}, params)};
            },
            utilities.values);
      });

  const SelectionReport& first = outcomes.front().selection.selections.front().report;
  FloatingPointSlack total_slack;
  for (const RowsOutcome& outcome : outcomes) {
    for (const Selection& row : outcome.selection.selections) {
      accumulate_slack(total_slack, row.report.slack);
    }
  }

  Record report = utility_report("dpselect rows: private selection of one index per row", "rows",
                                 utilities, params.utility_bound);
  report.add("rows", rows);
  add_mechanism(report, first);
  report.add("epsilon_per_row", first.epsilon_spent);
  add_epsilon_total(report, "total_epsilon", static_cast<double>(rows) * first.epsilon_spent,
                    static_cast<std::uint64_t>(outcomes.size()),
                    "rows * epsilon per row: basic composition, when all rows are computed "
                    "from the same dataset");
  add_slack(report, "total_slack", "total floating-point slack", total_slack, false);
  add_run_settings(report, options.release);
  for (const RowsOutcome& outcome : outcomes) {
    add_rows_release(report.add_list_item("releases", "release"), outcome, cols);
  }
  return report;
}

constexpr const char* examples = R"(Examples:
  dpselect rows --utilities scores.txt --cols 1000 --epsilon 0.1 --sensitivity 1
  dpselect rows --utilities matrix.npy --epsilon 0.5 --sensitivity 1 --monotone --json
  dpselect rows --utilities matrix.f32 --cols 131072 --epsilon 1 --sensitivity 2 \
      --mechanism permute-and-flip

The file holds rows x cols utilities in row-major order (a 2-D .npy gives cols by its shape).
Releases one column index per row, each epsilon-DP when no utility moves by more than
--sensitivity between neighbouring datasets. When all rows are computed from the same dataset
they spend rows * epsilon together (basic composition); --repeat N spends N times that.)";

}  // namespace

void register_rows_command(CLI::App& app) {
  auto options = std::make_shared<RowsOptions>();
  CLI::App& command = add_selection_command(
      app, "rows", "batched private arg-max: one column index per row of a utility matrix",
      options->utilities, "file of rows x cols utilities, row-major (-inf excludes a candidate)");
  command
      .add_option("--cols", options->cols,
                  "candidates per row (default: the second extent of a 2-D .npy)")
      ->check(integer_at_least(1));
  add_epsilon_option(command, options->params.epsilon,
                     "privacy loss of each row's pick; all rows together spend rows * epsilon "
                     "when they are computed from the same dataset")
      ->required();
  add_utility_options(command, options->params);
  add_mechanism_option(command, options->params.mechanism);
  complete_release_command(command, options->release, examples,
                           [options] { return run_rows(*options); });
}

}  // namespace dpselect::cli
