// SPDX-License-Identifier: Apache-2.0
// How a process learns that an MPI launcher started it, before (or without) MPI_Init: the
// variables that Open MPI (mpirun), MPICH/Hydra (mpiexec), PMIx and Slurm's PMI set for it.
// Shared by mpi_job.cpp and single_process_job.cpp.
#pragma once

#include <cstdlib>
#include <string>

namespace dpselect::cli {

// The number of ranks the launcher started, 0 when no launcher started this process.
inline int launcher_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"}) {
    if (const char* value = std::getenv(name); value != nullptr && *value != '\0') {
      const int ranks = std::atoi(value);
      return ranks > 0 ? ranks : 1;
    }
  }
  return std::getenv("PMIX_RANK") != nullptr ? 1 : 0;
}

}  // namespace dpselect::cli
