// SPDX-License-Identifier: Apache-2.0
// The main of the dpselect::mpi tests: MPI around GoogleTest, every test on every rank. Rank 0
// prints as usual; the others print only their failures. The process fails when any rank fails.
#include <mpi.h>

#include <gtest/gtest.h>

#include <iostream>

namespace {

// Rank 0 prints as usual; the other ranks print only their failures, prefixed with their rank.
class FailurePrinter : public testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const testing::TestPartResult& result) override {
    if (result.failed()) {
      std::cerr << "[rank " << rank_ << "] " << (result.file_name() ? result.file_name() : "") << ":"
                << result.line_number() << ": " << result.summary() << std::endl;
    }
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    testing::TestEventListeners& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(rank));
  }
  const int mine = RUN_ALL_TESTS();
  int any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && any != mine) std::cerr << "dpselect mpi tests: another rank failed\n";
  MPI_Finalize();
  return any;
}
