// SPDX-License-Identifier: Apache-2.0
// dpselect rows: one private arg-max per row of a rows x cols utility matrix read from a file.
#include <algorithm>
#include <iterator>
#include <memory>
#include <optional>

#include "cli_error.hpp"
#include "commands.hpp"
#include "common_options.hpp"
#include "dpselect/rows.hpp"
#include "index_output.hpp"
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
  std::string output;  // --output FILE (.npy or .txt): the indices go there, not to stdout
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
  const std::uint64_t values = utilities.total;
  if (utilities.shape.size() == 2) {
    if (options.cols && *options.cols != utilities.shape[1]) {
      throw CliError("--cols " + format_number(*options.cols) + " does not match the shape " +
                     shape_text(utilities.shape) + " of " + options.utilities.label());
    }
    return utilities.shape[1];
  }
  if (!options.cols) {
    if (utilities.shape.size() == 1) {
      throw CliError("--cols is required: " + options.utilities.label() + " is a 1-D array " +
                     shape_text(utilities.shape) +
                     "; give --cols, or use 'dpselect select' for one pick among all its values");
    }
    throw CliError("--cols is required unless --utilities is a 2-D .npy array");
  }
  if (values % *options.cols != 0) {
    throw CliError(options.utilities.label() + " has " + format_number(values) +
                   " values, not a multiple of --cols " + format_number(*options.cols));
  }
  return *options.cols;
}

// The rows of a chunked file, released a block of rows at a time (about chunk_values values; one
// row where a row is longer). Row r is the context's (first stream + r)-th release whatever the
// blocks (rows.hpp), so the picks are those of one call over the whole matrix.
RowsSelection rows_in_blocks(ReleaseTarget& target, const ChunkedFile& file, std::uint64_t cols,
                             const SelectionParams& params) {
  const std::uint64_t rows = file.total() / cols;
  const std::uint64_t block_rows = std::min(rows, std::max<std::uint64_t>(1, chunk_values / cols));
  const auto release_blocks = [&]<class T>(std::vector<T> buffer) {
    RowsSelection all;
    all.selections.reserve(rows);
    for (std::uint64_t first_row = 0; first_row < rows; first_row += block_rows) {
      const std::uint64_t block = std::min(block_rows, rows - first_row);
      file.read(first_row * cols, std::span<T>(buffer.data(), block * cols));
      RowsSelection part = target.rows(HostMatrix<const T>{buffer.data(), block, cols}, first_row, params);
      std::move(part.selections.begin(), part.selections.end(), std::back_inserter(all.selections));
    }
    return all;
  };
  return file.holds_floats() ? release_blocks(std::vector<float>(block_rows * cols))
                             : release_blocks(std::vector<double>(block_rows * cols));
}

std::vector<std::uint64_t> row_indices(const RowsOutcome& outcome) {
  std::vector<std::uint64_t> indices;
  for (const Selection& row : outcome.selection.selections) indices.push_back(row.index);
  return indices;
}

// `indices_in_file`: the indices went to --output, so the report leaves them out.
void add_rows_release(Record& item, const RowsOutcome& outcome, bool indices_in_file) {
  auto executed_on = static_cast<std::uint8_t>(ExecutedOn::none);
  double epsilon_spent = 0.0;
  FloatingPointSlack slack;
  for (const Selection& row : outcome.selection.selections) {
    executed_on |= static_cast<std::uint8_t>(row.report.executed_on);
    epsilon_spent += row.report.epsilon_spent;
    accumulate_slack(slack, row.report.slack);
  }
  if (!indices_in_file) {
    item.add_array("indices", index_values(row_indices(outcome)), {}, "row", "index");
  }
  item.add("executed_on", std::string(to_string(static_cast<ExecutedOn>(executed_on))));
  item.add("epsilon_spent", epsilon_spent);
  add_slack(item, "slack", "floating-point slack of all rows", slack, true, "--utility-bound");
}

Record run_rows(const RowsOptions& options) {
  std::optional<IndexFile> index_file;
  if (!options.output.empty()) index_file = checked_index_file("--output", options.output);
  // A job cuts the matrix by whole rows: of --cols values, or of a 2-D .npy's own. In one process
  // a raw or .npy file is read a block of rows at a time, never held whole.
  const InputValues utilities =
      options.utilities.read(options.params, options.cols.value_or(0), true);
  const std::uint64_t cols = column_count(options, utilities);
  SelectionParams params = options.params;
  params.backend = options.release.backend;
  std::vector<RowsOutcome> outcomes =
      run_releases(options.release, utilities.total, [&](ReleaseTarget& target) {
        if (utilities.chunked) return RowsOutcome{rows_in_blocks(target, *utilities.chunked, cols, params)};
        return std::visit(
            [&]<class T>(const std::vector<T>& values) {
              // This rank's rows (all of them in one process).
              return RowsOutcome{target.rows(HostMatrix<const T>{values.data(), values.size() / cols, cols},
                                             utilities.first / cols, params)};
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
  std::vector<std::vector<std::uint64_t>> released;
  released.reserve(outcomes.size());
  for (const RowsOutcome& outcome : outcomes) released.push_back(row_indices(outcome));
  add_released_index_lists(report, released, index_file);
  report.add("rows", utilities.total / cols);
  add_mechanism(report, first);
  report.add("epsilon_per_row", first.epsilon_spent);
  add_epsilon_total(report, "total_epsilon", static_cast<double>(utilities.total / cols) * first.epsilon_spent,
                    static_cast<std::uint64_t>(outcomes.size()),
                    "rows * epsilon per row: basic composition, when all rows are computed "
                    "from the same dataset");
  add_slack(report, "total_slack", "total floating-point slack", total_slack, false,
            "--utility-bound");
  add_run_settings(report, options.release);
  if (index_file) {
    write_index_file(*index_file, released);
    report.add("indices_file", index_file->path,
               index_file->format == IndexFileFormat::npy
                   ? (outcomes.size() == 1 ? "uint64 array, the index of each row"
                                           : "uint64 array, one row of row indices per release")
                   : "one index per line in row order, rows lines per release");
  }
  for (const RowsOutcome& outcome : outcomes) {
    add_rows_release(report.add_list_item("releases", "release"), outcome, index_file.has_value());
  }
  if (options.release.diagnostics) {
    add_release_timings(add_not_private_section(report, not_private_heading),
                        release_seconds(outcomes), utilities.total);
  }
  return report;
}

constexpr const char* rows_examples = R"(Examples:
  dpselect rows --utilities scores.txt --cols 1000 --epsilon 0.1 --sensitivity 1
  dpselect rows --utilities matrix.npy --epsilon 0.5 --sensitivity 1 --monotone --json
  dpselect rows --utilities matrix.f32 --cols 131072 --epsilon 1 --sensitivity 2 \
      --mechanism permute-and-flip

The file holds rows x cols utilities in row-major order (a 2-D .npy gives cols by its shape).
Releases one column index per row, each epsilon-DP when no utility moves by more than
--sensitivity between neighbouring datasets. When all rows are computed from the same dataset
they spend rows * epsilon together (basic composition); --repeat N spends N times that. Text
output starts with the released indices in row order (one line per release); --quiet prints
only the indices, one per line in row order, with an empty line between releases;
--diagnostics adds the run time of each release, which depends on the data and is NOT PRIVATE.
--output FILE.npy (or .txt) writes the indices to a file instead.)";

}  // namespace

void register_rows_command(CLI::App& app) {
  auto options = std::make_shared<RowsOptions>();
  options->utilities.matrix = true;
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
  command
      .add_option("--output", options->output,
                  "write the indices to FILE instead of the report: .npy (uint64; one row per "
                  "release) or .txt (one per line); never overwrites an existing file")
      ->type_name("FILE");
  complete_release_command(command, options->release, rows_examples,
                           [options] { return run_rows(*options); });
}

}  // namespace dpselect::cli
