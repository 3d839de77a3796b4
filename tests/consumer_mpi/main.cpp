// SPDX-License-Identifier: Apache-2.0
// The installed dpselect::mpi in an application: two ranks, one release, the same index on both
// as one process over the whole range with the same seed.
#include <dpselect/dpselect.hpp>
#include <dpselect/mpi.hpp>
#include <dpselect/select_functor.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    dpselect::mpi::DistributedContext context = dpselect::mpi::DistributedContext::with_fixed_seed(MPI_COMM_WORLD, 17);
    const auto utility = [](std::uint64_t i) { return -static_cast<double>(i % 1000); };
    dpselect::SelectionParams params;
    params.epsilon = 1.0;
    params.sensitivity = 1.0;
    const std::uint64_t n = 100000;
    const std::uint64_t first = n * context.rank() / context.size();
    const std::uint64_t end = n * (context.rank() + 1) / context.size();
    const dpselect::Selection pick = dpselect::mpi::select_functor(context, utility, {first, end}, params);
    dpselect::Context single = dpselect::Context::with_fixed_seed(17);
    const dpselect::Selection expected = dpselect::select_functor(single, utility, {0, n}, params);
    status = pick.index == expected.index ? 0 : 1;
    if (context.rank() == 0) std::printf("index %llu\n", static_cast<unsigned long long>(pick.index));
  }
  MPI_Finalize();
  return status;
}
