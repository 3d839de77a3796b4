// SPDX-License-Identifier: Apache-2.0
// The sparse vector's GPU entry point in a CPU-only build: it throws BackendUnavailable.
#include "sparse_vector/gpu.hpp"
#include "device/gpu.hpp"

namespace dpselect::detail {

std::uint64_t gpu_first_above(const double*, std::uint64_t, std::uint64_t, const SparseQueryNoise&, double,
                              cuda_stream_t) {
  throw_gpu_unavailable();
}

}  // namespace dpselect::detail
