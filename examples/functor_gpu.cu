// SPDX-License-Identifier: Apache-2.0
// A private arg-max over 2^36 candidates whose utilities a functor computes on the GPU: no
// memory traffic at all.
// [doc:functor_gpu]
#include <dpselect/select.cuh>

struct NegativeDistance {                  // trivially copyable, pure function of the index
  double target;
  __host__ __device__ double operator()(std::uint64_t i) const {
    return -fabs(static_cast<double>(i) - target);
  }
};
// [/doc:functor_gpu]

#include <dpselect/io.hpp>

#include <iostream>

#include "gpu_examples_skip.hpp"

int main() {
  // On the CPU, 2^36 candidates would take minutes: this example is about the GPU.
  if (!dpselect::gpu_usable()) {
    std::cout << "no usable CUDA device: skipped\n";
    return kNoUsableGpuExitCode;
  }
  dpselect::Context context;
  dpselect::SelectionParams params;
  params.epsilon = 1.0;
  params.sensitivity = 1.0;
  cudaStream_t stream = nullptr;  // the default stream
  // [doc:functor_gpu]
  auto pick = dpselect::select_functor(context, NegativeDistance{3e10}, {0, 1ull << 36}, params, stream);
  // [/doc:functor_gpu]
  std::cout << "index " << pick.index << " of " << pick.report.candidates << " on " << pick.report.executed_on << '\n';
  return pick.report.executed_on == dpselect::ExecutedOn::gpu ? 0 : 1;
}
