// SPDX-License-Identifier: Apache-2.0
// dpselect audit: the empirical privacy auditor over the library's own mechanisms (audit.hpp).
// Prints one table row per audit (Markdown, as docs/audit.md holds it, or JSON) and exits with
// status 1 when any audit finds a privacy loss above its claim.
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_error.hpp"
#include "commands.hpp"
#include "common_options.hpp"
#include "dpselect/audit.hpp"
#include "numbers.hpp"
#include "output.hpp"
#include "progress.hpp"

namespace dpselect::cli {
namespace {

struct AuditCommandOptions {
  audit::AuditOptions audit;
  std::string only;  // substring of the mechanism names to run; empty: all
  bool json = false;
  bool list = false;
  bool progress = false;  // --progress
};

std::string format_bound(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", value);
  return text;
}

std::string claim_of(const audit::AuditResult& r) {
  char text[64];
  if (r.claimed_delta > 0.0) {
    std::snprintf(text, sizeof text, "(%g, %g)", r.claimed_epsilon, r.claimed_delta);
  } else {
    std::snprintf(text, sizeof text, "%g", r.claimed_epsilon);
  }
  return text;
}

void print_markdown(const std::vector<audit::AuditResult>& results, const audit::AuditOptions& options) {
  std::printf("Audit: %" PRIu64 " releases per input (after %" PRIu64
              " to choose up to %zu events), Clopper-Pearson bounds jointly at confidence %g, seed %" PRIu64 "\n\n",
              options.runs, options.selection_runs, options.max_events, options.confidence, options.seed);
  std::printf("| mechanism | neighbours | claimed ε (δ) | ε lower bound | δ lower bound at ε | events | passed |\n");
  std::printf("|---|---|---|---:|---:|---:|---|\n");
  for (const audit::AuditResult& r : results) {
    std::printf("| %s | %s | %s | %s | %s | %zu | %s |\n", r.mechanism.c_str(), r.neighbours.c_str(),
                claim_of(r).c_str(), format_bound(r.bounds.epsilon_lower).c_str(),
                r.claimed_delta > 0.0 ? format_bound(r.bounds.delta_lower).c_str() : "-", r.events_tested,
                r.passed ? "yes" : "**NO**");
  }
}

Record json_of(const std::vector<audit::AuditResult>& results, const audit::AuditOptions& options) {
  Record out("audit");
  out.add("runs_per_input", options.runs);
  out.add("selection_runs_per_input", options.selection_runs);
  out.add("confidence", options.confidence);
  out.add("seed", options.seed);
  for (const audit::AuditResult& r : results) {
    Record& item = out.add_list_item("audits", "audit");
    item.add("mechanism", r.mechanism);
    item.add("neighbours", r.neighbours);
    item.add("claimed_epsilon", r.claimed_epsilon);
    item.add("claimed_delta", r.claimed_delta);
    item.add("epsilon_lower_bound", r.bounds.epsilon_lower);
    item.add("delta_lower_bound", r.bounds.delta_lower);
    item.add("events_tested", static_cast<std::uint64_t>(r.events_tested));
    item.add("passed", r.passed);
  }
  return out;
}

void run_audits(const AuditCommandOptions& options) {
  std::vector<audit::AuditTarget> targets;
  for (audit::AuditTarget& target : audit::all_audits()) {
    if (options.only.empty() || target.mechanism.find(options.only) != std::string::npos) {
      targets.push_back(std::move(target));
    }
  }
  if (targets.empty()) throw CliError("--only '" + options.only + "' matches no audited mechanism (see --list)");
  if (options.list) {
    for (const audit::AuditTarget& target : targets) {
      std::printf("%s: %s\n", target.mechanism.c_str(), target.neighbours.c_str());
    }
    return;
  }
  std::vector<audit::AuditResult> results;
  std::size_t failed = 0;
  {  // progress over all the audits' releases; cleared before the results are printed
    const std::uint64_t per_audit = 2 * (options.audit.selection_runs + options.audit.runs);
    const std::uint64_t total = per_audit * targets.size();
    // Even the default audits take seconds: shown on a terminal whatever the sizes.
    Progress progress("audit of " + format_number(static_cast<std::uint64_t>(targets.size())) +
                          (targets.size() == 1 ? " mechanism" : " mechanisms"),
                      total, "releases", options.progress, true);
    audit::AuditOptions audit_options = options.audit;
    for (const audit::AuditTarget& target : targets) {
      const std::uint64_t before = per_audit * results.size();
      audit_options.progress = [&progress, before](std::uint64_t done, std::uint64_t) {
        progress.update(before + done);
      };
      results.push_back(audit::run_audit(target, audit_options));
      failed += results.back().passed ? 0 : 1;
    }
  }
  if (options.json) {
    print(json_of(results, options.audit), OutputMode::json);
  } else {
    print_markdown(results, options.audit);
  }
  if (failed != 0) {
    throw std::runtime_error("dpselect: " + std::to_string(failed) + " of " + std::to_string(results.size()) +
                             " audits found a privacy loss above the claim");
  }
}

}  // namespace

void register_audit_command(CLI::App& app) {
  auto options = std::make_shared<AuditCommandOptions>();
  CLI::App& command = *app.add_subcommand(
      "audit", "empirical privacy audit: lower bounds on every mechanism's privacy loss from "
               "releases on neighbouring inputs");
  command.add_option("--runs", options->audit.runs, "releases per input for the bounds")
      ->check(integer_at_least(1))
      ->capture_default_str();
  command.add_option("--selection-runs", options->audit.selection_runs, "releases per input to choose the events")
      ->check(integer_at_least(1))
      ->capture_default_str();
  command.add_option("--confidence", options->audit.confidence, "joint confidence of all bounds of one audit")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  command.add_option("--seed", options->audit.seed, "fixed seed of the audit's contexts (audits are reproducible)")
      ->capture_default_str();
  command.add_option("--only", options->only, "run only the mechanisms whose name contains this text");
  command.add_flag("--list", options->list, "list the audits and exit");
  command.add_flag("--json", options->json, "print the results as JSON");
  add_progress_flag(command, options->progress);
  command.footer(R"(Examples:
  dpselect audit --runs 100000
  dpselect audit --only sparse --runs 1000000 --confidence 0.99

Exit status: 0 every audit passed, 1 an audit found a privacy loss above its claim.)");
  command.callback([options] { run_audits(*options); });
}

}  // namespace dpselect::cli
