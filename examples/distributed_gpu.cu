// SPDX-License-Identifier: Apache-2.0
// One rank per GPU (dpselect::mpi): each rank binds the GPU of its local rank, holds its slice of
// the utilities in that GPU's memory, and passes it as a DeviceSpan. The kernels run on every GPU
// at once; the shard results (under 100 bytes each) travel on the host over MPI, and every rank
// gets the index a single process would pick over the whole array.
// Run with: mpiexec -n <GPUs per node x nodes> ./example_distributed_gpu
// Exits 77 (CTest: skipped) when a rank has no usable GPU.
#include <cuda_runtime.h>
#include <dpselect/mpi.hpp>
#include <dpselect/select.hpp>

#include <cmath>
#include <iostream>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    int rank = 0;
    int ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    // Local rank -> device, before the first CUDA call of this process.
    const int device = dpselect::mpi::local_device(MPI_COMM_WORLD);
    if (device >= 0) cudaSetDevice(device);
    int every_rank_has_one = device >= 0 && dpselect::gpu_usable() ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &every_rank_has_one, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!every_rank_has_one) {
      if (rank == 0) std::cout << "skipped: a rank has no usable GPU\n";
      status = 77;
    } else {
      // Candidates 0..2^24-1 with utility -|i - 10^6| / 1000, one slice per rank.
      const std::uint64_t n = std::uint64_t{1} << 24;
      const std::uint64_t first = n * rank / ranks;
      const std::uint64_t mine = n * (rank + 1) / ranks - first;
      std::vector<float> host(mine);
      for (std::uint64_t i = 0; i < mine; ++i) host[i] = -std::abs(static_cast<float>(first + i) - 1e6f) / 1000.0f;
      float* on_device = nullptr;
      cudaMalloc(&on_device, mine * sizeof(float));
      cudaMemcpy(on_device, host.data(), mine * sizeof(float), cudaMemcpyHostToDevice);

      dpselect::mpi::DistributedContext context(MPI_COMM_WORLD);  // collective: rank 0's OS key
      dpselect::SelectionParams params;
      params.epsilon = 1.0;
      params.sensitivity = 1.0;
      params.backend = dpselect::Backend::Gpu;
      const dpselect::Selection pick = dpselect::mpi::select(
          context, dpselect::DeviceSpan<const float>{on_device, mine}, first, params, /*stream=*/nullptr);
      if (rank == 0) {
        std::cout << "index " << pick.index << " of " << pick.report.candidates << " candidates, on "
                  << ranks << " GPUs\n";
      }
      status = pick.index < n && pick.report.candidates == n ? 0 : 1;
      cudaFree(on_device);
    }
  }  // the context frees its communicator here, before MPI_Finalize
  MPI_Finalize();
  return status;
}
