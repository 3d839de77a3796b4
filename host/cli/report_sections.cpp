// SPDX-License-Identifier: Apache-2.0
#include "report_sections.hpp"

#include <cmath>

#include "numbers.hpp"

namespace dpselect::cli {
namespace {

void add_release_item(Record& item, const ReleaseOutcome& outcome,
                      const std::string& bound_option) {
  const SelectionReport& report = outcome.report;
  item.add("index", outcome.index);
  if (outcome.price) item.add("price", *outcome.price);
  if (outcome.executed_on_withheld) {
    item.add("executed_on", std::string("withheld"),
             "which backend ran would tell which sampler the number of bids chose");
  } else {
    item.add("executed_on", std::string(to_string(report.executed_on)));
  }
  item.add("epsilon_spent", report.epsilon_spent);
  add_slack(item, "slack", "floating-point slack", report.slack, true, bound_option);
}

}  // namespace

double rounded_seconds(double seconds) { return std::round(seconds * 1e6) / 1e6; }

void add_mechanism(Record& out, const SelectionReport& report) {
  out.add("mechanism", std::string(to_string(report.mechanism)));
  out.add("monotone", report.monotone);
  out.add("sensitivity", report.sensitivity);
  out.add("noise_scale", report.noise_scale);
  out.add("candidates", report.candidates);
}

void add_epsilon_total(Record& out, const std::string& total_key, double epsilon_per_release,
                       std::uint64_t release_count, std::string per_release_note) {
  out.add("epsilon_per_release", epsilon_per_release, std::move(per_release_note));
  out.add("release_count", release_count);
  out.add(total_key, static_cast<double>(release_count) * epsilon_per_release,
          release_count > 1
              ? format_number(release_count) + " releases: basic composition, Dwork & Roth 2014, Thm 3.16"
              : "");
}

void add_slack(Record& out, const std::string& key, const std::string& heading,
               const FloatingPointSlack& slack, bool show_data_dependence,
               const std::string& bound_options) {
  Record& described = out.add_record(key, heading);
  // A slack computed from the data reveals the data's largest |utility| (the best revenue, for
  // pricing; the largest |query answer|, for the sparse vector): it is withheld, not printed, so
  // the output stays publishable.
  if (slack.depends_on_data) {
    described.add("withheld", true,
                  "it depends on the data; give a public bound (" + bound_options +
                      ") to report it");
  } else {
    described.add("epsilon", slack.epsilon);
    described.add("delta", slack.delta);
  }
  if (show_data_dependence) described.add("depends_on_data", slack.depends_on_data);
}

void accumulate_slack(FloatingPointSlack& total, const FloatingPointSlack& slack, double times) {
  total.epsilon += times * slack.epsilon;
  total.delta += times * slack.delta;
  total.depends_on_data = total.depends_on_data || slack.depends_on_data;
}

void add_run_settings(Record& out, const ReleaseOptions& options) {
  out.add("backend_requested", std::string(to_string(options.backend)));
  out.add("generator", std::string(to_string(options.generator)),
          options.generator == Generator::philox ? "not cryptographically secure" : "");
  out.add("fixed_seed", options.seed.has_value(),
          options.seed ? "reproducible, predictable noise: not a real release" : "");
}

Record& add_not_private_section(Record& out, const std::string& heading) {
  return out.add_record("not_private", heading);
}

void add_release_timings(Record& section, const std::vector<double>& seconds,
                         std::optional<std::uint64_t> candidates) {
  for (const double release_seconds : seconds) {
    Record& item = section.add_list_item("releases", "release");
    item.add("seconds", rounded_seconds(release_seconds));
    if (candidates && release_seconds > 0) {
      item.add("candidates_per_second",
               static_cast<std::uint64_t>(static_cast<double>(*candidates) / release_seconds));
    }
  }
}

void add_released_values(Record& report, const std::string& label,
                         const std::vector<std::string>& text_values,
                         std::vector<std::string> quiet_values, bool separate) {
  std::string line = label;
  for (std::size_t i = 0; i < text_values.size(); ++i) {
    line += (i == 0 ? " " : ", ") + text_values[i];
  }
  if (text_values.empty()) line += " none";
  if (separate) quiet_values.insert(quiet_values.begin(), std::string());
  report.add_answer(std::move(line), std::move(quiet_values));
}

void add_released_index_lists(Record& report, const std::vector<std::vector<std::uint64_t>>& releases,
                              const std::optional<IndexFile>& file) {
  if (file) {
    add_released_values(report, "indices written to", {file->path}, {file->path}, false);
    return;
  }
  for (std::size_t i = 0; i < releases.size(); ++i) {
    std::vector<std::string> indices;
    indices.reserve(releases[i].size());
    for (const std::uint64_t index : releases[i]) indices.push_back(format_number(index));
    add_released_values(report, "indices", indices, indices, i > 0);
  }
}

void add_release_summary(Record& out, const ReleaseOptions& options,
                         const std::vector<ReleaseOutcome>& outcomes,
                         const std::string& bound_option) {
  const SelectionReport& first = outcomes.front().report;
  FloatingPointSlack total_slack;
  for (const ReleaseOutcome& outcome : outcomes)
    accumulate_slack(total_slack, outcome.report.slack);

  add_mechanism(out, first);
  add_epsilon_total(out, "total_epsilon", first.epsilon_spent,
                    static_cast<std::uint64_t>(outcomes.size()));
  add_slack(out, "total_slack", "total floating-point slack", total_slack, false, bound_option);
  add_run_settings(out, options);
  for (const ReleaseOutcome& outcome : outcomes) {
    add_release_item(out.add_list_item("releases", "release"), outcome, bound_option);
  }
}

std::vector<Scalar> index_values(const std::vector<std::uint64_t>& indices) {
  return std::vector<Scalar>(indices.begin(), indices.end());
}

Record utility_report(std::string title, std::string command, const InputValues& utilities,
                      double utility_bound) {
  Record report(std::move(title));
  report.add("command", std::move(command));
  add_input(report, "utilities", utilities, true);
  report.add("utility_bound", utility_bound, utility_bound > 0 ? "" : "none");
  return report;
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    text += (i == 0 ? "" : ", ") + format_number(shape[i]);
  }
  return text + (shape.size() == 1 ? ",)" : ")");
}

void add_input(Record& out, const std::string& key, const InputValues& input,
               bool count_is_public) {
  Record& described = out.add_record(key);
  described.add("format", std::string(to_string(input.format)));
  described.add("element_type", input.element_type);
  // A shape carries the number of values: shown only when that number is public.
  if (!input.shape.empty() && count_is_public) {
    described.add("shape", shape_text(input.shape),
                  input.shape.size() > 1 ? "flattened in C order" : "");
  }
  if (count_is_public) described.add("values", input.total);
}

}  // namespace dpselect::cli
