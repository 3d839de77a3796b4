#include "report_sections.hpp"

#include <cmath>

#include "numbers.hpp"

namespace dpselect::cli {
namespace {

void add_release_item(Record& item, const ReleaseOutcome& outcome) {
  const SelectionReport& report = outcome.report;
  item.add("index", outcome.index);
  if (outcome.price) item.add("price", *outcome.price);
  item.add("executed_on", std::string(to_string(report.executed_on)));
  item.add("seconds", rounded_seconds(outcome.seconds));
  if (outcome.seconds > 0) {
    item.add("candidates_per_second",
             static_cast<std::uint64_t>(static_cast<double>(report.candidates) / outcome.seconds));
  }
  item.add("epsilon_spent", report.epsilon_spent);
  Record& slack = item.add_record("slack", "floating-point slack");
  slack.add("epsilon", report.slack.epsilon);
  slack.add("delta", report.slack.delta);
  slack.add("depends_on_data", report.slack.depends_on_data,
            report.slack.depends_on_data
                ? "it reveals the data's largest |utility|: do not publish it"
                : "");
}

}  // namespace

double rounded_seconds(double seconds) { return std::round(seconds * 1e6) / 1e6; }

void add_release_summary(Record& out, const ReleaseOptions& options,
                         const std::vector<ReleaseOutcome>& outcomes) {
  const SelectionReport& first = outcomes.front().report;
  double total_slack_epsilon = 0.0;
  double total_slack_delta = 0.0;
  for (const ReleaseOutcome& outcome : outcomes) {
    total_slack_epsilon += outcome.report.slack.epsilon;
    total_slack_delta += outcome.report.slack.delta;
  }
  const auto release_count = static_cast<std::uint64_t>(outcomes.size());

  out.add("mechanism", std::string(to_string(first.mechanism)));
  out.add("monotone", first.monotone);
  out.add("sensitivity", first.sensitivity);
  out.add("noise_scale", first.noise_scale);
  out.add("candidates", first.candidates);
  out.add("epsilon_per_release", first.epsilon_spent);
  out.add("release_count", release_count);
  out.add("total_epsilon", static_cast<double>(release_count) * first.epsilon_spent,
          release_count > 1
              ? format_number(release_count) + " releases: basic composition, seed 003 Thm 3.16"
              : "");
  Record& total_slack = out.add_record("total_slack", "total floating-point slack");
  total_slack.add("epsilon", total_slack_epsilon);
  total_slack.add("delta", total_slack_delta);
  out.add("backend_requested", std::string(to_string(options.backend)));
  out.add("fixed_seed", options.seed.has_value(),
          options.seed ? "reproducible, predictable noise: not a real release" : "");
  for (const ReleaseOutcome& outcome : outcomes) {
    add_release_item(out.add_list_item("releases", "release"), outcome);
  }
}

void add_input(Record& out, const std::string& key, const InputValues& input,
               bool count_is_public) {
  Record& described = out.add_record(key);
  described.add("format", std::string(to_string(input.format)));
  described.add("element_type", input.element_type);
  if (!input.shape.empty()) {
    std::string shape = "(";
    for (std::size_t i = 0; i < input.shape.size(); ++i) {
      shape += (i == 0 ? "" : ", ") + format_number(input.shape[i]);
    }
    shape += input.shape.size() == 1 ? ",)" : ")";
    described.add("shape", shape, input.shape.size() > 1 ? "flattened in C order" : "");
  }
  if (count_is_public) described.add("values", static_cast<std::uint64_t>(input.size()));
}

}  // namespace dpselect::cli
