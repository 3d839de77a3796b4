// SPDX-License-Identifier: Apache-2.0
// Strong scaling of one distributed release (dpselect::mpi::select_functor) over a fixed range of
// functor candidates, split evenly over the ranks. Run under mpiexec with 1, 2, 4, ... ranks:
//
//   mpiexec -n 2 build/cpu-only/bench/dpselect_mpi_functor_bench [log2 candidates, default 28] [repeats, default 7]
//
// Rank 0 prints one Markdown row: ranks, threads per rank, candidates, the median wall time of a
// release (barrier to barrier, so the slowest rank and the allreduce count), and candidates per
// second. Synthetic public utilities and a fixed-seed context: nothing private is timed.
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "dpselect/mpi.hpp"

namespace {

// Cheap, data-free utilities with many near ties: the pass, not the functor, is timed.
struct HashedUtility {
  double operator()(std::uint64_t i) const {
    std::uint64_t z = i * 0x9e3779b97f4a7c15ULL;
    z ^= z >> 31;
    return static_cast<double>(z % 1024) / 64.0;
  }
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    const int log2_candidates = argc > 1 ? std::atoi(argv[1]) : 28;
    const int repeats = argc > 2 ? std::atoi(argv[2]) : 7;
    auto context = dpselect::mpi::DistributedContext::with_fixed_seed(MPI_COMM_WORLD, 2026);
    const std::uint64_t n = std::uint64_t{1} << log2_candidates;
    const auto ranks = static_cast<std::uint64_t>(context.size());
    const auto rank = static_cast<std::uint64_t>(context.rank());
    const dpselect::IndexRange mine{n / ranks * rank, rank + 1 == ranks ? n : n / ranks * (rank + 1)};
    dpselect::SelectionParams params;
    params.epsilon = 1.0;
    params.sensitivity = 1.0;
    params.backend = dpselect::Backend::Cpu;
    std::vector<double> seconds;
    for (int i = 0; i <= repeats; ++i) {  // the first release warms up and is not counted
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      const dpselect::Selection pick = dpselect::mpi::select_functor(context, HashedUtility{}, mine, params);
      MPI_Barrier(MPI_COMM_WORLD);
      if (i > 0) seconds.push_back(MPI_Wtime() - start);
      if (pick.index >= n) status = 1;
    }
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    if (rank == 0) {
      std::printf("| %llu | %d | 2^%d | %.1f ms | %.3g G/s |\n", static_cast<unsigned long long>(ranks),
                  omp_get_max_threads(), log2_candidates, median * 1e3, static_cast<double>(n) / median * 1e-9);
    }
  }
  MPI_Finalize();
  return status;
}
