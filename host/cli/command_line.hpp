// SPDX-License-Identifier: Apache-2.0
// The command line of `dpselect` without the process around it: the subcommands, and the run of
// one command line, which turns every failure into one "dpselect: error: " line on stderr with
// nothing on stdout, and an exit status. main.cpp adds the process (the MPI job, the final check
// of standard output); the fuzz target tests/fuzz/fuzz_command_line.cpp runs command lines in a
// loop through the same functions.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string_view>

namespace dpselect::cli {

inline constexpr int exit_released = 0;
inline constexpr int exit_failure = 1;    // the computation itself could not run
inline constexpr int exit_bad_input = 2;  // bad input or usage: nothing was released

// The application with every subcommand, --version and the help's examples.
std::unique_ptr<CLI::App> make_command_line();

// Parses argv and runs its subcommand; every failure becomes one error line and a status.
// `whole_job` is left true for the errors every rank of a job shares.
int run_command_line(CLI::App& app, int argc, char** argv, bool& whole_job);

// One "dpselect: error: " line of printable ASCII on stderr (line breaks become spaces, other
// control and non-ASCII bytes \xNN), whatever `message` holds; returns
// `status`. An error every rank of a job shares (bad input, a refusal: the collective calls agree
// on them) is printed by rank 0 alone; any other by the rank that met it, named.
int report_error(std::string_view message, int status, bool whole_job = true);

// Output still buffered, or written by code that does not check (help, the audit table), is
// flushed and checked here: a full disk or a closed pipe must not end in status 0 with the output
// cut short. (A closed pipe usually ends the process by SIGPIPE first; this covers a process that
// inherited SIGPIPE ignored, which then sees EPIPE.) Reports the failure; false when it failed.
bool standard_output_written();

}  // namespace dpselect::cli
