// dpselect: the command-line tool. Wires the subcommands and turns every failure into one
// "dpselect: error: " line on stderr with nothing on stdout: status 2 for bad input or usage
// (nothing was released), 1 when the computation itself could not run.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <new>
#include <string>

#include "cli_error.hpp"
#include "commands.hpp"
#include "dpselect/errors.hpp"

namespace {

constexpr int exit_bad_input = 2;
constexpr int exit_failure = 1;

int report_error(std::string_view message, int status) {
  std::string line(message);
  std::replace(line.begin(), line.end(), '\n', ' ');  // exactly one line, whatever the source
  std::fprintf(stderr, "dpselect: error: %s\n", line.c_str());
  return status;
}

constexpr const char* examples = R"(Examples:
  dpselect demo
  dpselect select --utilities scores.txt --epsilon 1 --sensitivity 1
  dpselect topk --utilities scores.txt --k 10 --epsilon 1 --sensitivity 1
  dpselect rows --utilities matrix.npy --epsilon 0.5 --sensitivity 1
  dpselect price --bids bids.npy --epsilon 1 --grid 0.01:100:0.01
  dpselect svt --queries answers.txt --epsilon 1 --sensitivity 1 --threshold 100
  dpselect audit --runs 100000
  dpselect <command> --help

Exit status: 0 released, 2 bad input or usage (nothing released), 1 the backend failed (audit:
an audit found a privacy loss above its claim).)";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("dpselect: differentially private selection over very large candidate ranges",
               "dpselect");
  app.require_subcommand(1);
  app.set_version_flag("--version", "dpselect " DPSELECT_VERSION);
  app.footer(examples);
  dpselect::cli::register_select_command(app);
  dpselect::cli::register_top_k_command(app);
  dpselect::cli::register_rows_command(app);
  dpselect::cli::register_price_command(app);
  dpselect::cli::register_svt_command(app);
  dpselect::cli::register_demo_command(app);
  dpselect::cli::register_audit_command(app);

  using dpselect::cli::message_of;
  try {
    app.parse(argc, argv);
    return 0;
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      return app.exit(error);  // --help, --version
    }
    return report_error(std::string(error.what()) + " (see --help)", exit_bad_input);
  } catch (const dpselect::cli::CliError& error) {
    return report_error(error.what(), exit_bad_input);
  } catch (const dpselect::InvalidArgument& error) {
    return report_error(message_of(error), exit_bad_input);
  } catch (const dpselect::UsageError& error) {
    return report_error(message_of(error), exit_bad_input);
  } catch (const dpselect::BackendUnavailable& error) {
    return report_error(message_of(error), exit_failure);
  } catch (const dpselect::CudaError& error) {
    return report_error(message_of(error), exit_failure);
  } catch (const std::bad_alloc&) {
    return report_error("out of memory", exit_failure);
  } catch (const std::exception& error) {
    return report_error(message_of(error), exit_failure);
  }
}
