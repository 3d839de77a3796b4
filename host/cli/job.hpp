// SPDX-License-Identifier: Apache-2.0
// The job the command runs in: one process, or the ranks of an MPI job. Under an MPI launcher
// (mpirun, mpiexec, srun) a dpselect built with dpselect::mpi runs distributed: every rank runs
// the same command line, reads only its slice of the data (input_files.hpp's InputSlice), the
// releases are collective (dpselect/mpi.hpp: one answer, bit for bit a single process's with the
// same --seed), and rank 0 alone prints. Built without MPI, a run under a launcher with more
// than one rank is refused (it would release once per rank).
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <utility>

#include "input_files.hpp"

namespace dpselect::cli {

struct JobPlace {
  int rank = 0;
  int ranks = 1;
  bool distributed = false;  // started by an MPI launcher in a build with MPI
};
// Where this process is: {0, 1, false} outside an MPI job.
const JobPlace& job_place();

// main()'s hold on the job: MPI_Init when distributed (and, on every rank but 0, standard output
// sent to /dev/null), MPI_Finalize at the end. Throws CliError when started by a launcher with
// more than one rank in a build without MPI.
class Job {
 public:
  Job(int& argc, char**& argv);
  // MPI_Finalize (nothing outside a job): after an error every rank shares, or success.
  ~Job();
  // After an error that may be this rank's alone: MPI_Abort with `status`, so that no rank waits
  // forever for this one in a collective (nothing outside a job). Does not return in a job.
  void abandon(int status);
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;
};

// This rank's even share of an input (rows of `row_width` values when > 0); nullopt outside a
// distributed job, where the whole input is read.
std::optional<InputSlice> rank_slice(std::uint64_t row_width = 0);

// After every rank ran a step that may fail on some ranks only (reading its files): when it
// failed anywhere, every rank throws the lowest failing rank's error as a CliError, so no rank
// waits for the others in a release. Outside a distributed job it rethrows `failure`, if any.
void agree_on_step(std::exception_ptr failure);

// Runs `step` on every rank and agrees on its failure (agree_on_step); returns its result.
template <class Step>
auto on_every_rank(Step&& step) {
  std::optional<decltype(step())> result;
  std::exception_ptr failure;
  try {
    result.emplace(step());
  } catch (...) {
    failure = std::current_exception();
  }
  agree_on_step(failure);
  return std::move(*result);
}

// Whether this rank writes an error to stderr: rank 0 always; the others only for an error that
// may be theirs alone (`whole_job` false: not a bad input or refusal every rank shares).
bool reports_error(bool whole_job);

}  // namespace dpselect::cli
