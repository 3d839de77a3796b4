// SPDX-License-Identifier: Apache-2.0
// dpselect svt: the sparse vector technique (AboveThreshold, Sparse, NumericSparse) over the
// answers of a stream of queries read from a file.
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cli_error.hpp"
#include "commands.hpp"
#include "common_options.hpp"
#include "dpselect/sparse_vector.hpp"
#include "input_files.hpp"
#include "job.hpp"
#include "numbers.hpp"
#include "output.hpp"
#include "releases.hpp"
#include "report_sections.hpp"

namespace dpselect::cli {
namespace {

struct SvtOptions {
  std::string queries_path;
  InputFormat format = InputFormat::by_extension;
  bool flatten = false;
  SparseVectorParams params;
  std::optional<double> accuracy_beta;  // --alpha-beta: print the alpha of this beta
  ReleaseOptions release;
};

// One run of the mechanism over the whole file: the answers up to the halt.
struct SvtOutcome {
  SparseVectorBatch batch;
  double seconds = 0.0;
};

// The name in the literature of what the parameters make of the mechanism.
std::string mechanism_name(const SparseVectorParams& params) {
  if (params.numeric) return "NumericSparse";
  return params.max_positives == 1 ? "AboveThreshold" : "Sparse";
}

// The file's values as the library takes them: doubles (float32 data is widened exactly), each
// finite and within --value-bound. Refused values are reported with the file and line here,
// before any noise is drawn.
InputValues read_query_answers(const SvtOptions& options) {
  ValueKind kind = query_answer_values;
  kind.magnitude_bound = options.params.value_bound;
  kind.bound_option = "--value-bound";
  // In a distributed job each rank reads its block of the stream (job.hpp).
  return on_every_rank([&] {
    return read_values({.name = "--queries",
                        .path = options.queries_path,
                        .format = options.format,
                        .two_dimensional = one_list(options.flatten),
                        .slice = rank_slice()},
                       kind);
  });
}

// The theorem (or bound) behind --alpha-beta, as a note on alpha.
std::string accuracy_note(const SparseVectorParams& params) {
  std::string note =
      "with probability >= 1 - beta, every above answer has f_i >= threshold - alpha and every "
      "below answer f_i <= threshold + alpha";
  if (params.numeric) note += ", and every value is within alpha of f_i";
  if (params.algorithm == SparseVectorAlgorithm::lyu_su_li) {
    return note + "; a union bound over the noises, no published theorem";
  }
  if (params.numeric) return note + "; Dwork & Roth 2014, Thm 3.28";
  return note + (params.max_positives == 1 && params.delta == 0.0 ? "; Dwork & Roth 2014, Thm 3.24"
                                                                  : "; Dwork & Roth Thm 3.26");
}

void add_svt_release(Record& item, const SvtOutcome& outcome, bool numeric) {
  // The indices of the "above" answers rather than one answer per query: a file may hold 10^8
  // queries, and every query answered but not listed was "below".
  std::vector<Scalar> above;
  std::vector<Scalar> values;
  for (const SparseVectorAbove& answer : outcome.batch.above) {
    above.emplace_back(answer.index);
    if (answer.value) values.emplace_back(*answer.value);
  }
  const SparseVectorReport& report = outcome.batch.report;
  item.add_array("above", std::move(above),
                 report.positives == 0 ? "none" : "0-based indices of the queries answered above");
  if (numeric) {
    item.add_array("values", std::move(values),
                   "the noisy value of each above query, in the same order");
  }
  item.add("queries_answered", report.queries, "those not listed above were below");
  item.add("halted", report.halted,
           report.halted ? "after max positives above answers; later queries are not answered"
                         : "");
  item.add("executed_on", std::string(to_string(ExecutedOn::cpu)));
  add_slack(item, "slack", "floating-point slack", report.slack, true, "--value-bound");
}

// The answer of one run: text "above 3, 6" (with --numeric "above 3 (value 9871.5), ..."); quiet
// one line per above query, "index" or "index value".
void add_svt_answer(Record& report, const SvtOutcome& outcome, bool separate) {
  std::vector<std::string> text_values;
  std::vector<std::string> quiet_values;
  for (const SparseVectorAbove& answer : outcome.batch.above) {
    std::string index = format_number(answer.index);
    if (answer.value) {
      const std::string value = format_number(*answer.value);
      text_values.push_back(index + " (value " + value + ")");
      quiet_values.push_back(index + " " + value);
    } else {
      text_values.push_back(index);
      quiet_values.push_back(std::move(index));
    }
  }
  add_released_values(report, "above", text_values, std::move(quiet_values), separate);
}

Record run_svt(const SvtOptions& options) {
  // The command keeps the queries in host memory, where the library's batch runs on the CPU: say
  // so rather than quietly ignore --backend gpu.
  if (options.release.backend == Backend::Gpu) {
    throw CliError("--backend gpu: dpselect svt runs on the CPU only (use --backend auto or cpu)");
  }
  const SparseVectorParams& params = options.params;
  // The library's checks of the combination (--monotone or --delta > 0 with an algorithm that
  // does not allow it), before the file is read.
  const SparseVectorScales scales = sparse_vector_scales(params);

  Record report("dpselect svt: the sparse vector technique on query answers read from a file");
  report.add("command", std::string("svt"));
  InputValues answers_read = read_query_answers(options);
  // The number of queries is the analyst's own, public; their answers are the data.
  add_input(report, "queries", answers_read, true);
  const std::uint64_t query_count = answers_read.total;
  const std::uint64_t first_query = answers_read.first;
  const std::vector<double> query_answers = answers_read.take_doubles();
  // Computed from the parameters alone, and before the releases so that nothing fails after them.
  std::optional<double> alpha;
  if (options.accuracy_beta) {
    alpha = sparse_vector_alpha(params, query_count, *options.accuracy_beta);
  }

  std::vector<SvtOutcome> outcomes =
      run_releases(options.release, query_count, [&](ReleaseTarget& target) {
        return SvtOutcome{target.sparse_vector(std::span(query_answers), first_query, params)};
      });

  for (std::size_t i = 0; i < outcomes.size(); ++i) add_svt_answer(report, outcomes[i], i > 0);
  const auto release_count = static_cast<std::uint64_t>(outcomes.size());
  FloatingPointSlack total_slack;
  for (const SvtOutcome& outcome : outcomes) {
    accumulate_slack(total_slack, outcome.batch.report.slack);
  }

  report.add("mechanism", mechanism_name(params));
  report.add("algorithm", std::string(to_string(params.algorithm)),
             scales.threshold_redrawn ? "a fresh noisy threshold after every above answer"
                                      : "one noisy threshold for the whole run");
  report.add("threshold", params.threshold);
  report.add("sensitivity", params.sensitivity);
  report.add("max_positives", params.max_positives, "c: a run halts after c above answers");
  report.add("monotone", params.monotone);
  report.add("value_bound", params.value_bound, params.value_bound > 0 ? "" : "none");
  Record& noise = report.add_record("scales", "Laplace noise scales and the split of epsilon");
  noise.add("threshold_noise", scales.threshold_noise);
  noise.add("query_noise", scales.query_noise);
  noise.add("answer_noise", scales.answer_noise, params.numeric ? "" : "none: not --numeric");
  if (params.numeric) {
    noise.add("answer_granularity", scales.answer_granularity,
              "every value is a multiple of it (secure Laplace, Mironov 2012)");
    noise.add("answer_noise_secure", scales.answer_noise_secure, "the scale on the grid, raised for the rounding");
  }
  noise.add("epsilon_comparisons", scales.epsilon_comparisons,
            "spent on the threshold and the queries");
  noise.add("epsilon_answers", scales.epsilon_answers,
            params.numeric ? "spent on the noisy values" : "");
  add_epsilon_total(report, "total_epsilon", params.epsilon, release_count,
                    "one run, however many queries it answers");
  report.add("delta_per_release", params.delta);
  report.add("total_delta", static_cast<double>(release_count) * params.delta,
             release_count > 1 ? "basic composition" : "");
  if (alpha) {
    Record& accuracy = report.add_record("accuracy", "accuracy (from the parameters alone)");
    accuracy.add("queries", query_count, "k: the queries in the file");
    accuracy.add("beta", *options.accuracy_beta);
    accuracy.add("alpha", *alpha, accuracy_note(params));
  }
  add_slack(report, "total_slack", "total floating-point slack", total_slack, false,
            "--value-bound");
  add_run_settings(report, options.release);
  for (const SvtOutcome& outcome : outcomes) {
    add_svt_release(report.add_list_item("releases", "release"), outcome, params.numeric);
  }
  if (options.release.diagnostics) {
    // The run time grows with the queries answered before the halt: data-dependent beyond it.
    add_release_timings(add_not_private_section(report, not_private_heading),
                        release_seconds(outcomes), std::nullopt);
  }
  return report;
}

constexpr const char* svt_examples = R"(Examples:
  dpselect svt --queries answers.txt --epsilon 1 --sensitivity 1 --threshold 100
  dpselect svt --queries counts.npy --epsilon 0.5 --sensitivity 1 --threshold 1000 \
      --max-positives 10 --numeric --value-bound 1e6 --json
  dpselect svt --queries counts.f64 --epsilon 1 --sensitivity 1 --threshold 50 \
      --algorithm lyu-su-li --monotone --alpha-beta 0.05

The file holds the true answers f_1(D), f_2(D), ... of the analyst's queries on the data, in
order. Each run compares them with a noisy threshold and releases the 0-based indices of the
queries answered "above" (with --numeric also a noisy value of each), halting after
--max-positives of them; the "below" answers before the halt cost nothing more. A run is
(epsilon, delta)-DP when no answer moves by more than --sensitivity between neighbouring
datasets; --repeat N makes N independent runs, N * epsilon and N * delta in total. The true
answers are never printed. The sparse vector technique runs on the CPU: --backend gpu is
refused. Text output starts with the indices answered above ("above 3, 6", one line per run);
--quiet prints only them, one per line ("index value" with --numeric), with an empty line
between runs; --diagnostics adds the run time of each run, NOT PRIVATE.)";

}  // namespace

void register_svt_command(CLI::App& app) {
  auto options = std::make_shared<SvtOptions>();
  SparseVectorParams& params = options->params;
  CLI::App& command = *app.add_subcommand(
      "svt", "sparse vector technique: which queries of a stream are above a threshold");
  add_file_option(command, "--queries", options->queries_path,
                  "file of the true query answers f_1(D), f_2(D), ..., one per query, in order");
  add_format_option(command, options->format);
  add_flatten_option(command, options->flatten);
  add_epsilon_option(command, params.epsilon,
                     "privacy loss of one run, however many queries are below")
      ->required();
  command
      .add_option("--delta", params.delta,
                  "0: pure DP; > 0: (epsilon, delta)-DP with the advanced-composition scales "
                  "(dwork-roth only)")
      ->check(half_open_unit_interval())
      ->capture_default_str();
  command
      .add_option("--sensitivity", params.sensitivity,
                  "the most one person's data can change any query answer: between "
                  "neighbouring datasets (the same but for one person's records) no answer "
                  "moves by more")
      ->required()
      ->check(finite_positive());
  command.add_option("--threshold", params.threshold, "the public threshold T")
      ->required()
      ->check(finite_number());
  command
      .add_option("--max-positives", params.max_positives,
                  "c: halt after this many above answers")
      ->check(integer_at_least(1))
      ->capture_default_str();
  command.add_flag("--numeric", params.numeric,
                   "NumericSparse: also release a noisy value of each above query (from a share "
                   "of epsilon)");
  command
      .add_option("--value-bound", params.value_bound,
                  "public bound on |query answer| (0: none); makes the floating-point slack "
                  "independent of the data")
      ->check(finite_nonnegative())
      ->capture_default_str();
  add_choice_option(command, "--algorithm", params.algorithm,
                    Choices<SparseVectorAlgorithm>{
                        {"dwork-roth", SparseVectorAlgorithm::dwork_roth},
                        {"lyu-su-li", SparseVectorAlgorithm::lyu_su_li}},
                    "dwork-roth: a fresh threshold after every above answer; lyu-su-li: one "
                    "threshold and an optimized split of epsilon (pure DP only)");
  command.add_flag("--monotone", params.monotone,
                   "lyu-su-li only: all answers move in the same direction between neighbours "
                   "(e.g. counts): less query noise. A false claim breaks the guarantee");
  command
      .add_option("--alpha-beta", options->accuracy_beta,
                  "also print the accuracy alpha that holds with probability 1 - BETA over the "
                  "queries of the file")
      ->check(open_unit_interval())
      ->type_name("BETA");
  complete_release_command(command, options->release, svt_examples,
                           [options] { return run_svt(*options); });
  command.get_option("--backend")
      ->description("where to compute: the sparse vector runs on the CPU (auto and cpu); gpu "
                    "is refused");
}

}  // namespace dpselect::cli
