// SPDX-License-Identifier: Apache-2.0
// dpselect keys: private partition selection, the keys of (user, key) contributions read from a
// file that may be released (dpselect/partition_selection.hpp).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cli_error.hpp"
#include "commands.hpp"
#include "common_options.hpp"
#include "dpselect/partition_selection.hpp"
#include "index_output.hpp"
#include "input_files.hpp"
#include "job.hpp"
#include "numbers.hpp"
#include "output.hpp"
#include "pairs_input.hpp"
#include "release_target.hpp"
#include "releases.hpp"
#include "report_sections.hpp"

namespace dpselect::cli {
namespace {

struct KeysOptions {
  PairsOption data;
  PartitionSelectionParams params;
  ReleaseOptions release;
  std::string output;  // --output FILE: the keys go there instead of into the report
  // Options of one strategy only, refused with the others (check_strategy_options).
  const CLI::Option* rounds_option = nullptr;
  const CLI::Option* round_budget_ratio_option = nullptr;
  const CLI::Option* policy_cutoff_option = nullptr;
};

// One release: the released keys as the command prints them, and the report.
struct KeysOutcome {
  std::vector<Scalar> keys;             // JSON values: text, or integers as the data has them
  std::vector<std::string> key_fields;  // one line each (text keys as CSV fields)
  std::vector<std::uint64_t> integer_keys;  // integer keys: their bits, in the printed order
  PartitionSelectionReport report;
  double seconds = 0.0;
};

std::string strategy_source(PartitionStrategy strategy) {
  switch (strategy) {
    case PartitionStrategy::truncated_geometric:
      return "the optimal keep probability for (epsilon, delta) per key (Desfontaines, Voss, Gipson & Mandayam "
             "2022, Thm 1)";
    case PartitionStrategy::laplace_threshold:
      return "a Laplace-noised user count above a threshold (Korolova et al. 2009; Wilson et al. 2020)";
    case PartitionStrategy::gaussian_threshold:
      return "a Gaussian-noised user count above a threshold (Wilson et al. 2020)";
    case PartitionStrategy::weighted_gaussian:
      return "a Gaussian-noised weight above a threshold, a user's t keys weighing 1/sqrt(t) each (Gopi et al. "
             "2020, Weighted Gaussian)";
    case PartitionStrategy::policy_gaussian:
      return "weights that spend each user's L2 budget on its keys still below a cutoff (Gopi et al. 2020, Policy "
             "Gaussian with L2 descent)";
    case PartitionStrategy::dp_sips:
      return "the weighted Gaussian in rounds of growing budget, released keys removed between rounds (Swanberg, "
             "Desfontaines & Haney 2023)";
  }
  return {};
}

// This process's share of the pairs: all of them in one process; in a distributed job, where
// every rank reads the whole file, rank r of R holds pairs [n r / R, n (r + 1) / R).
struct PairsShare {
  std::size_t first = 0;
  std::size_t count = 0;
};
PairsShare share_of(std::uint64_t pairs) {
  const JobPlace& place = job_place();
  const auto rank = static_cast<unsigned __int128>(place.rank), ranks = static_cast<unsigned __int128>(place.ranks);
  const auto first = static_cast<std::size_t>(pairs * rank / ranks);
  const auto end = static_cast<std::size_t>(pairs * (rank + 1) / ranks);
  return {first, end - first};
}

// A released integer key as the JSON holds it: a number, or, for a negative key beyond -2^53 (no
// exact double), its decimal `text`.
Scalar integer_key_value(std::uint64_t key, bool signed_integers, const std::string& text) {
  const auto as_signed = static_cast<std::int64_t>(key);
  if (!signed_integers || as_signed >= 0) return key;
  if (as_signed >= -(std::int64_t{1} << 53)) return static_cast<double>(as_signed);
  return text;
}

std::string integer_key_text(std::uint64_t key, bool signed_integers) {
  return signed_integers ? std::to_string(static_cast<std::int64_t>(key)) : std::to_string(key);
}

KeysOutcome release_once(ReleaseTarget& target, const PairsInput& input, const std::vector<std::string_view>& text_keys,
                         const PartitionSelectionParams& params) {
  KeysOutcome outcome;
  const PairsShare share = share_of(input.pairs);
  const auto users = std::span<const std::uint64_t>(input.user_ids).subspan(share.first, share.count);
  if (input.keys == IdKind::text) {
    StringPartitionSelection selection =
        target.partitions(users, std::span<const std::string_view>(text_keys).subspan(share.first, share.count), params);
    for (std::string& key : selection.keys) {
      outcome.key_fields.push_back(key_as_csv_field(key));
      outcome.keys.emplace_back(std::move(key));
    }
    outcome.report = selection.report;
  } else {
    PartitionSelection selection = target.partitions(
        users, std::span<const std::uint64_t>(input.integer_keys).subspan(share.first, share.count), params);
    if (input.signed_integers) {  // ascending as int64, not as the uint64 bits the library sorts
      std::sort(selection.keys.begin(), selection.keys.end(), [](std::uint64_t a, std::uint64_t b) {
        return static_cast<std::int64_t>(a) < static_cast<std::int64_t>(b);
      });
    }
    outcome.integer_keys = selection.keys;
    for (const std::uint64_t key : selection.keys) {
      const std::string text = integer_key_text(key, input.signed_integers);
      outcome.keys.push_back(integer_key_value(key, input.signed_integers, text));
      outcome.key_fields.push_back(text);
    }
    outcome.report = selection.report;
  }
  return outcome;
}

void add_rule(Record& out, const PartitionSelectionParams& params, const PartitionKeepRule& rule, double delta_float) {
  Record& described = out.add_record("rule", "keep rule (public: a function of the parameters)");
  if (is_weighted(params.strategy)) {
    described.add("noise_scale", rule.noise_scale, "Gaussian sigma of the noise on the weights (all rounds composed)");
    if (params.strategy == PartitionStrategy::policy_gaussian) {
      described.add("cutoff", rule.policy_cutoff, "a user stops spending on a key whose weight reached it");
    }
    for (std::size_t r = 0; r < rule.rounds.size(); ++r) {
      const WeightedRound& round = rule.rounds[r];
      Record& described_round =
          described.add_record("round_" + std::to_string(r + 1), "round " + std::to_string(r + 1));
      described_round.add("budget_share", round.budget_share, "share of the budget");
      described_round.add("noise_scale", round.noise_scale, "Gaussian sigma");
      described_round.add("threshold", round.threshold, "a key is released when its noisy weight exceeds it");
      described_round.add("key_delta", round.key_delta,
                          "probability that any of a user's keys nobody else holds is released");
    }
    out.add("delta_float", delta_float, "delta added by rounding (0: the coins are exact)");
    return;
  }
  described.add("key_epsilon", rule.key_epsilon, "epsilon of each key");
  described.add("key_delta", rule.key_delta,
                params.strategy == PartitionStrategy::truncated_geometric
                    ? "delta of each key"
                    : "probability that a key only one user holds is released");
  if (params.pre_threshold > 1) {
    described.add("pre_threshold", params.pre_threshold,
                  "keys fewer users hold are never released; the user counts below count those beyond pre_threshold - 1");
  }
  if (params.strategy == PartitionStrategy::truncated_geometric) {
    described.add("geometric_until", rule.geometric_until, "the keep probability grows geometrically up to here");
    described.add("always_kept", rule.always_kept, "a key with this many users is released for certain");
  } else {
    described.add("noise_scale", rule.noise_scale,
                  params.strategy == PartitionStrategy::laplace_threshold ? "Laplace b" : "Gaussian sigma");
    described.add("threshold", rule.threshold, "a key is released when its noisy user count exceeds it");
  }
  out.add("delta_float", delta_float, "delta added by the 53-bit rounding of the keep probabilities");
}

// An option that tunes one strategy would be ignored by the others without a word: refused.
void check_strategy_options(const KeysOptions& options) {
  const PartitionStrategy strategy = options.params.strategy;
  const auto refuse_unless = [&](const CLI::Option* option, PartitionStrategy its_strategy) {
    if (option->count() == 0 || strategy == its_strategy) return;
    throw CliError(option->get_name() + " applies to --strategy " + std::string(to_string(its_strategy)) +
                   " only (got --strategy " + std::string(to_string(strategy)) + ")");
  };
  refuse_unless(options.rounds_option, PartitionStrategy::dp_sips);
  refuse_unless(options.round_budget_ratio_option, PartitionStrategy::dp_sips);
  refuse_unless(options.policy_cutoff_option, PartitionStrategy::policy_gaussian);
}

Record run_keys(const KeysOptions& options) {
  check_strategy_options(options);
  PartitionSelectionParams params = options.params;
  params.backend = options.release.backend;
  (void)partition_keep_rule(params);  // every parameter checked before the file is read
  std::optional<IndexFile> key_file;
  if (!options.output.empty()) {
    key_file = checked_index_file("--output", options.output);
    if (key_file->format == IndexFileFormat::npy && options.release.repeat > 1) {
      throw CliError("--output " + options.output + ": a .npy file holds the keys of one release (got --repeat " +
                     format_number(options.release.repeat) + "): write them to a .txt file");
    }
  }
  // In a distributed job every rank reads the whole file (its lines hold no fixed width to cut at)
  // and passes its share of the pairs (share_of); a bad line fails every rank alike.
  const PairsInput input = on_every_rank([&] { return read_pairs(options.data); });
  if (key_file && key_file->format == IndexFileFormat::npy && input.keys == IdKind::text) {
    throw CliError("--output " + options.output + ": a .npy file holds integer keys, and the keys of " +
                   std::string(display_path(options.data.path)) +
                   " are text (--key-type integer reads numbers): write them to a .txt file");
  }
  const std::vector<std::string_view> text_keys =
      input.keys == IdKind::text ? input.key_views() : std::vector<std::string_view>();

  // Progress names no size: the numbers of pairs and of distinct keys (the candidates) are private.
  const ReleaseWork work{"partition selection", 0};
  std::vector<KeysOutcome> outcomes = run_releases(options.release, work, [&](ReleaseTarget& target) {
    return release_once(target, input, text_keys, params);
  });

  Record report("dpselect keys: private partition selection, the keys of the data that may be released");
  if (key_file) {  // the file's name is the answer: printing the keys too would defeat it
    add_released_values(report, "keys written to", {key_file->path}, {key_file->path}, false);
  } else {
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
      add_released_values(report, "keys", outcomes[i].key_fields, outcomes[i].key_fields, i > 0);
    }
  }
  report.add("command", std::string("keys"));
  Record& data = report.add_record("data");
  data.add("format", std::string(to_string(input.format)));
  if (!input.element_type.empty()) data.add("element_type", input.element_type);
  data.add("user_ids", std::string(input.users == IdKind::text ? "text" : "integer"));
  data.add("key_type", std::string(input.keys == IdKind::text ? "text" : "integer"));
  const PartitionSelectionReport& first = outcomes.front().report;
  report.add("strategy", std::string(to_string(options.params.strategy)), strategy_source(options.params.strategy));
  report.add("epsilon", options.params.epsilon, "of each release");
  report.add("delta", options.params.delta, "of each release");
  report.add("max_partitions", options.params.max_partitions,
             "keys one user contributes to at most; the others are dropped at random");
  add_rule(report, options.params, first.rule, first.delta_float);
  const auto releases = static_cast<double>(outcomes.size());
  report.add("release_count", static_cast<std::uint64_t>(outcomes.size()));
  // Basic composition of --repeat releases (Dwork & Roth 2014, Thm 3.16).
  report.add("epsilon_total", releases * options.params.epsilon, "basic composition");
  report.add("delta_total", releases * (options.params.delta + first.delta_float), "basic composition, delta_float included");
  add_run_settings(report, options.release);
  if (key_file) {
    if (key_file->format == IndexFileFormat::npy) {
      write_index_file(*key_file, {outcomes.front().integer_keys},
                       input.signed_integers ? NpyElement::int64 : NpyElement::uint64);
    } else {
      std::vector<std::vector<std::string>> lines;
      for (const KeysOutcome& outcome : outcomes) lines.push_back(outcome.key_fields);
      write_lines_file(*key_file, lines);
    }
    report.add("keys_file", key_file->path,
               key_file->format == IndexFileFormat::npy
                   ? std::string(input.signed_integers ? "int64" : "uint64") + " array of the released keys, ascending"
                   : "one key per line, ascending (text keys as CSV fields), releases apart by an empty line");
  }
  for (const KeysOutcome& outcome : outcomes) {
    Record& item = report.add_list_item("releases", "release");
    if (key_file) {
      item.add("keys_released", static_cast<std::uint64_t>(outcome.key_fields.size()), "written to --output");
    } else {
      item.add_array("keys", outcome.keys, "ascending");
    }
    item.add("stream", outcome.report.stream);
    item.add("executed_on", std::string(to_string(outcome.report.executed_on)));
  }
  if (options.release.diagnostics) {
    Record& section = add_not_private_section(report, not_private_heading);
    section.add("pairs", input.pairs, "(user, key) pairs read, repeats included");
    for (const KeysOutcome& outcome : outcomes) {
      Record& item = section.add_list_item("releases", "release");
      item.add("keys_considered", outcome.report.keys_considered, "distinct keys after contribution bounding");
      item.add("seconds", rounded_seconds(outcome.seconds));
    }
  }
  return report;
}

constexpr const char* keys_examples = R"(Examples:
  dpselect keys --data queries.csv --epsilon 1 --delta 1e-6
  dpselect keys --data visits.csv --user-column visitor --key-column url --max-partitions 5 \
      --epsilon 2 --delta 1e-8 --strategy gaussian --json
  dpselect keys --data pairs.npy --epsilon 1 --delta 1e-6 --quiet > released_keys.txt
  dpselect keys --data pairs.npy --epsilon 1 --delta 1e-6 --output released_keys.npy

Releases the keys of (user, key) contributions that may appear in a published histogram, from
data whose keys are not known in advance (search queries, URLs, product ids). Each user keeps
at most --max-partitions of its distinct keys (chosen at random), a key's users are counted, and
the key is released with a probability that depends only on that count (--strategy): keys many
users hold are released almost surely, keys few users hold almost never. The weighted strategies
(weighted-gaussian, policy-gaussian, dp-sips) spread each user's weight over its keys instead of
counting it once per key, which releases more keys when users hold many (on the CPU). The release is
(epsilon, delta)-DP between datasets that add or remove one user with all of their pairs.
Input: CSV with a header line (columns --user-column and --key-column, RFC 4180 quoting), the
users integers (--user-ids text for others) and the keys text (--key-type integer for numbers);
or a NumPy .npy integer array of shape (n, 2), a user and a key per row. Text output starts
with the released keys ("keys none" when there is none; control characters written as \xNN and
a backslash doubled, so that no key can act on the terminal), --quiet prints one key per line
(a key holding a comma, a quote or a line end as a quoted CSV field, its bytes as they are), and
--output FILE writes them to a new file instead (.txt as --quiet prints them, or .npy for integer keys). --diagnostics
adds the number of pairs, of keys after bounding and the run times: computed from the data and
NOT PRIVATE.
Under an MPI launcher every rank reads the whole file and the ranks select together over their
shares of the pairs, printing what one process prints for the same --seed.)";

}  // namespace

void register_keys_command(CLI::App& app) {
  auto options = std::make_shared<KeysOptions>();
  CLI::App& command = *app.add_subcommand(
      "keys", "private partition selection: the keys of (user, key) pairs that may be released");
  add_file_option(command, "--data", options->data.path,
                  "file of (user, key) pairs: CSV with a header line, or a .npy integer array of shape (n, 2)");
  add_choice_option(command, "--format", options->data.format,
                    Choices<PairsFormat>{{"csv", PairsFormat::csv}, {"npy", PairsFormat::npy}},
                    "format of --data")
      ->default_str("a .npy by its magic bytes or extension, else csv");
  const auto column_given = [options](std::string& name, const std::string& typed) {
    name = typed;
    options->data.columns_given = true;
  };
  command
      .add_option_function<std::string>(
          "--user-column", [options, column_given](const std::string& typed) { column_given(options->data.user_column, typed); },
          "CSV: the header name of the column of user ids")
      ->default_str("user")
      ->type_name("NAME");
  command
      .add_option_function<std::string>(
          "--key-column", [options, column_given](const std::string& typed) { column_given(options->data.key_column, typed); },
          "CSV: the header name of the column of keys")
      ->default_str("key")
      ->type_name("NAME");
  add_choice_option(command, "--user-ids", options->data.users,
                    Choices<IdKind>{{"integer", IdKind::integer}, {"text", IdKind::text}},
                    "CSV: what the user ids are (integer: in the range of int64)")
      ->default_str("integer");
  add_choice_option(command, "--key-type", options->data.keys,
                    Choices<IdKind>{{"text", IdKind::text}, {"integer", IdKind::integer}},
                    "CSV: what the keys are; text keys are released as the file spells them")
      ->default_str("text for CSV, integer for a .npy");
  add_epsilon_option(command, options->params.epsilon, "privacy loss of each release")->required();
  command.add_option("--delta", options->params.delta, "delta of each release (every strategy needs one > 0)")
      ->required()
      ->check(open_unit_interval());
  command
      .add_option("--max-partitions", options->params.max_partitions,
                  "the most distinct keys one user contributes to; a user's others are dropped at random")
      ->check(integer_at_least(1))
      ->capture_default_str()
      ->type_name("M");
  const auto named = [](PartitionStrategy strategy) { return std::pair{std::string(to_string(strategy)), strategy}; };
  add_choice_option(command, "--strategy", options->params.strategy,
                    Choices<PartitionStrategy>{named(PartitionStrategy::truncated_geometric),
                                               named(PartitionStrategy::laplace_threshold),
                                               named(PartitionStrategy::gaussian_threshold),
                                               named(PartitionStrategy::weighted_gaussian),
                                               named(PartitionStrategy::policy_gaussian),
                                               named(PartitionStrategy::dp_sips)},
                    "the keep rule: truncated-geometric (the optimal one for (epsilon, delta)), laplace or "
                    "gaussian (a noisy user count above a threshold); weighted-gaussian, policy-gaussian or "
                    "dp-sips (a noisy weight above a threshold, each user's weight spread over its keys; on the CPU)");
  options->rounds_option = command
      .add_option("--rounds", options->params.rounds, "dp-sips only: the number of rounds")
      ->check(CLI::Range(1u, kMaxPartitionRounds))
      ->capture_default_str();
  options->round_budget_ratio_option = command
      .add_option("--round-budget-ratio", options->params.round_budget_ratio,
                  "dp-sips only: each round's share of the budget over the next round's, in (0, 1]")
      ->check(share_of_one())
      ->capture_default_str();
  options->policy_cutoff_option = command
      .add_option("--policy-cutoff", options->params.policy_cutoff_sigmas,
                  "policy-gaussian only: the cutoff's height above the threshold, in noise standard deviations")
      ->check(finite_nonnegative())
      ->capture_default_str();
  command
      .add_option("--pre-threshold", options->params.pre_threshold,
                  "a public minimum: keys fewer users hold are never released (no budget spent; the count "
                  "strategies only)")
      ->check(integer_at_least(1))
      ->capture_default_str()
      ->type_name("N");
  command
      .add_option("--output", options->output,
                  "write the keys to FILE instead of the report: .txt (one per line, as --quiet prints them) "
                  "or .npy (integer keys of one release: int64, or uint64 for an unsigned array); never "
                  "overwrites an existing file")
      ->type_name("FILE");
  complete_release_command(command, options->release, keys_examples, [options] { return run_keys(*options); });
}

}  // namespace dpselect::cli
