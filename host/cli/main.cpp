// SPDX-License-Identifier: Apache-2.0
// dpselect: the command-line tool. The command line itself is command_line.cpp; this is the
// process around it: the MPI job (job.hpp) and the final check of standard output. Exit status 2
// for bad input or usage (nothing was released), 1 when the computation itself could not run.
#include <csignal>
#include <optional>

#include "cli_error.hpp"
#include "command_line.hpp"
#include "job.hpp"

int main(int argc, char** argv) {
  using namespace dpselect::cli;
  // A write beyond the file-size limit (ulimit -f) then fails with EFBIG and is reported, and an
  // --output file's temporary file is removed, instead of the signal killing the process midway.
  std::signal(SIGXFSZ, SIG_IGN);
  const std::unique_ptr<CLI::App> app = make_command_line();

  std::optional<Job> job;
  try {
    job.emplace(argc, argv);
  } catch (const CliError& error) {
    return report_error(error.what(), exit_bad_input);
  }
  bool whole_job = true;
  int status = run_command_line(*app, argc, argv, whole_job);
  // After a failure its one error line is out already; a second about the output would confuse.
  if (status == exit_released && !standard_output_written()) {
    status = exit_failure;
    whole_job = false;
  }
  if (status != exit_released && !whole_job) job->abandon(status);
  return status;
}
