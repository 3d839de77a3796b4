// SPDX-License-Identifier: Apache-2.0
// job.hpp in a build without dpselect::mpi: always one process.
#include <string>

#include "cli_error.hpp"
#include "job.hpp"
#include "job_launcher.hpp"
#include "release_target.hpp"

namespace dpselect::cli {

const JobPlace& job_place() {
  static const JobPlace alone;
  return alone;
}

Job::Job(int&, char**&) {
  if (const int ranks = launcher_ranks(); ranks > 1) {
    throw CliError("started by an MPI launcher with " + std::to_string(ranks) +
                   " ranks, but this dpselect was built without MPI, so each rank would release on its "
                   "own; rebuild with MPI (Debian: libopenmpi-dev openmpi-bin) or run one process");
  }
}

Job::~Job() = default;

std::optional<InputSlice> rank_slice(std::uint64_t) { return std::nullopt; }

void agree_on_step(std::exception_ptr failure) {
  if (failure) std::rethrow_exception(failure);
}

bool reports_error(bool) { return true; }

void Job::abandon(int) {}

std::unique_ptr<ReleaseTarget> make_release_target(const ReleaseOptions& options) {
  return make_local_release_target(options);
}

}  // namespace dpselect::cli
