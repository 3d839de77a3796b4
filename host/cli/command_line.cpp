// SPDX-License-Identifier: Apache-2.0
// The command line of dpselect (command_line.hpp): the subcommands, and every failure turned into
// one "dpselect: error: " line on stderr with nothing on stdout.
#include "command_line.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli_error.hpp"
#include "commands.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/version.hpp"
#include "job.hpp"
#include "option_terms.hpp"
#include "suggestions.hpp"

namespace dpselect::cli {
namespace {

// The option names `command` knows, as typed (--epsilon, -h), with those of its option groups.
std::vector<std::string> option_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
  }
  for (const CLI::App* group :
       command.get_subcommands([](const CLI::App* sub) { return sub->get_name().empty(); })) {
    for (std::string& name : option_names(*group)) names.push_back(std::move(name));
  }
  return names;
}

std::vector<const CLI::App*> named_subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* sub) { return !sub->get_name().empty(); });
}

std::string subcommand_list(const CLI::App& app) {
  std::string list;
  for (const CLI::App* sub : named_subcommands(app)) {
    list += (list.empty() ? "" : "|") + sub->get_name();
  }
  return list;
}

// The subcommands other than `command` that have the option `typed`, as " (an option of topk)".
std::string elsewhere(const CLI::App& app, const CLI::App* command, const std::string& typed) {
  std::vector<std::string> owners;
  for (const CLI::App* sub : named_subcommands(app)) {
    const std::vector<std::string> names = option_names(*sub);
    if (sub != command && std::find(names.begin(), names.end(), typed) != names.end()) {
      owners.push_back(sub->get_name());
    }
  }
  if (owners.empty()) return {};
  if (command == nullptr) return " (options go after the subcommand: dpselect " + owners.front() + " " + typed + " ...)";
  std::string list;
  for (const std::string& owner : owners) list += (list.empty() ? "" : ", ") + owner;
  return " (an option of " + list + ", not of " + command->get_name() + ")";
}

// What went wrong while parsing, in the user's words. A name the command does not know is
// reported first, whatever else CLI11 found missing: a mistyped --epsilon would otherwise read
// as "--epsilon is required".
std::string parse_error_message(const CLI::App& app, const CLI::ParseError& error) {
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  const CLI::App* command = parsed.empty() ? nullptr : parsed.front();
  const std::vector<std::string> top_left_over = app.remaining();
  if (command == nullptr && !top_left_over.empty() && !top_left_over.front().starts_with('-')) {
    std::vector<std::string> names;
    for (const CLI::App* sub : named_subcommands(app)) names.push_back(sub->get_name());
    return "unknown subcommand '" + top_left_over.front() + "'" +
           did_you_mean(closest_names(top_left_over.front(), names)) + "; the subcommands are " +
           subcommand_list(app);
  }
  // CLI11 leaves an unknown option with the subcommand that met it, and a stray value with the
  // top level.
  const std::vector<std::string> command_left_over =
      command == nullptr ? std::vector<std::string>() : command->remaining();
  const std::pair<const CLI::App*, const std::vector<std::string>*> left_overs[] = {
      {command, &command_left_over}, {nullptr, &top_left_over}};
  for (const auto& [owner, left_over] : left_overs) {
    for (const std::string& item : *left_over) {
      if (item.size() < 2 || !item.starts_with('-')) continue;
      const std::string typed = item.substr(0, item.find('='));
      std::string hint = did_you_mean(closest_names(typed, option_names(owner ? *owner : app)));
      if (hint.empty()) hint = elsewhere(app, owner, typed);
      return (owner ? owner->get_name() + ": " : std::string()) + "unknown option " + typed + hint;
    }
  }
  const std::string where = command == nullptr ? "" : command->get_name() + ": ";
  for (const auto* list : {&command_left_over, &top_left_over}) {
    if (!list->empty()) {
      return where + "unexpected argument '" + list->front() +
             "' (every value follows its option, as in --epsilon 1)";
    }
  }
  if (command == nullptr) {
    return "no subcommand given; usage: dpselect " + subcommand_list(app) +
           " [options] (dpselect --help describes each)";
  }
  return where + error.what() + " (see dpselect " + command->get_name() + " --help)";
}

constexpr const char* examples = R"(Examples:
  dpselect demo
  dpselect select --utilities scores.txt --epsilon 1 --sensitivity 1
  dpselect topk --utilities scores.txt --k 10 --epsilon 1 --sensitivity 1
  dpselect rows --utilities matrix.npy --epsilon 0.5 --sensitivity 1
  dpselect price --bids bids.npy --epsilon 1 --grid 0.01:100:0.01
  dpselect svt --queries answers.txt --epsilon 1 --sensitivity 1 --threshold 100
  dpselect quantile --data values.txt --q 0.5 --range 0:1000 --epsilon 1
  dpselect keys --data queries.csv --epsilon 1 --delta 1e-6
  dpselect audit --runs 100000
  dpselect <command> --help

Exit status: 0 released, 2 bad input or usage (nothing released), 1 the backend failed (audit:
an audit found a privacy loss above its claim).)";

}  // namespace

int report_error(std::string_view message, int status, bool whole_job) {
  if (!reports_error(whole_job)) return status;
  // Exactly one line of printable ASCII, whatever the source: a message may quote an argument as
  // typed, and a control byte in it (an escape sequence) would act on the user's terminal.
  std::string line;
  for (const char c : message) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      line += ' ';
    } else if (byte < 0x20 || byte > 0x7e) {
      constexpr char kHex[] = "0123456789abcdef";
      line += "\\x";
      line += kHex[byte >> 4];
      line += kHex[byte & 0xf];
    } else {
      line += c;
    }
  }
  const JobPlace& place = job_place();
  const std::string rank = place.distributed && !whole_job ? "rank " + std::to_string(place.rank) + ": " : "";
  std::fprintf(stderr, "dpselect: error: %s%s\n", rank.c_str(), line.c_str());
  return status;
}

std::unique_ptr<CLI::App> make_command_line() {
  auto app = std::make_unique<CLI::App>(
      "dpselect: differentially private selection over very large candidate ranges", "dpselect");
  app->require_subcommand(1);
  app->set_version_flag("--version", "dpselect " DPSELECT_VERSION);
  app->footer(examples);
  register_select_command(*app);
  register_top_k_command(*app);
  register_rows_command(*app);
  register_price_command(*app);
  register_svt_command(*app);
  register_quantile_command(*app);
  register_keys_command(*app);
  register_demo_command(*app);
  register_audit_command(*app);
  return app;
}

int run_command_line(CLI::App& app, int argc, char** argv, bool& whole_job) {
  // CLI11 2.1 takes an empty argument for the name of an option group (a subcommand named "")
  // and can loop forever on it (`dpselect price "" -x`; found by tests/fuzz/fuzz_command_line):
  // no option or value of the command is empty, so it is refused before CLI11 sees it.
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '\0') {
      return report_error("argument " + std::to_string(i) +
                              " is empty (an option or a value left out? every option and value has text)",
                          exit_bad_input);
    }
  }
  try {
    app.parse(argc, argv);
    return 0;
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      return job_place().rank == 0 ? app.exit(error) : 0;  // --help, --version
    }
    return report_error(parse_error_message(app, error), exit_bad_input);
  } catch (const CliError& error) {
    return report_error(error.what(), exit_bad_input);
  } catch (const dpselect::InvalidArgument& error) {
    return report_error(in_option_terms(app, message_of(error)), exit_bad_input);
  } catch (const dpselect::UsageError& error) {
    return report_error(message_of(error), exit_bad_input);
  } catch (const dpselect::BackendUnavailable& error) {
    return report_error(in_option_terms(app, message_of(error)), exit_failure);
  } catch (const dpselect::CudaError& error) {
    whole_job = false;
    return report_error(message_of(error), exit_failure, whole_job);
  } catch (const OutOfMemory& error) {
    whole_job = false;
    return report_error(error.what(), exit_failure, whole_job);
  } catch (const std::bad_alloc&) {
    whole_job = false;
    return report_error("out of memory", exit_failure, whole_job);
  } catch (const std::exception& error) {
    whole_job = false;
    return report_error(message_of(error), exit_failure, whole_job);
  }
}

bool standard_output_written() {
  errno = 0;
  std::cout.flush();
  const bool failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
  if (failed) {
    report_error(std::string("the output could not be written to standard output") +
                     (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()),
                 exit_failure, false);
  }
  return !failed;
}

}  // namespace dpselect::cli
