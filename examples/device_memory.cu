// SPDX-License-Identifier: Apache-2.0
// Selection, the sparse vector technique and top-k over values that already live in GPU memory.
#include <dpselect/dpselect.hpp>
#include <dpselect/io.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <iostream>
#include <stdexcept>
#include <vector>

#include "gpu_examples_skip.hpp"

namespace {

void throw_on_cuda_error(cudaError_t status) {
  if (status != cudaSuccess) throw std::runtime_error(cudaGetErrorString(status));
}

}  // namespace

int main() {
  if (!dpselect::gpu_usable()) {
    std::cout << "no usable CUDA device: skipped\n";
    return kNoUsableGpuExitCode;
  }
  dpselect::Context context;
  dpselect::SelectionParams params;
  params.epsilon = 1.0;
  params.sensitivity = 1.0;
  std::vector<float> host_utility(1 << 20);
  for (std::size_t i = 0; i < host_utility.size(); ++i) host_utility[i] = static_cast<float>(i % 1000);
  const std::vector<double> answers(1 << 20, 10.0);   // sparse vector queries, all below the threshold
  const std::uint64_t n = host_utility.size();
  cudaStream_t stream = nullptr;
  throw_on_cuda_error(cudaStreamCreate(&stream));
  // [doc:device_memory]
  float* d_utility = nullptr;                // n utilities, computed on the GPU or copied there
  throw_on_cuda_error(cudaMalloc(&d_utility, n * sizeof(float)));
  throw_on_cuda_error(cudaMemcpyAsync(d_utility, host_utility.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
  auto pick = dpselect::select(context, dpselect::DeviceSpan<const float>{d_utility, n}, params, stream);
  // [/doc:device_memory]
  std::cout << "select: index " << pick.index << " on " << pick.report.executed_on << '\n';

  double* d_answers = nullptr;
  throw_on_cuda_error(cudaMalloc(&d_answers, n * sizeof(double)));
  throw_on_cuda_error(cudaMemcpyAsync(d_answers, answers.data(), n * sizeof(double), cudaMemcpyHostToDevice, stream));
  const dpselect::SparseVectorParams svt{.epsilon = 1.0, .sensitivity = 1.0, .threshold = 500.0, .max_positives = 3};
  // [doc:sparse_vector_gpu]
  auto on_gpu = dpselect::sparse_vector_batch(context, dpselect::DeviceSpan<const double>{d_answers, n}, svt, stream);
  // [/doc:sparse_vector_gpu]
  std::cout << "sparse vector: " << on_gpu.above.size() << " above in " << on_gpu.report.queries << " queries\n";

  throw_on_cuda_error(cudaFree(d_answers));
  throw_on_cuda_error(cudaFree(d_utility));
  throw_on_cuda_error(cudaStreamDestroy(stream));
  return pick.index < n && pick.report.executed_on == dpselect::ExecutedOn::gpu ? 0 : 1;
}
