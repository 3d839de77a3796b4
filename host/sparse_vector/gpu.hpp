// SPDX-License-Identifier: Apache-2.0
// The sparse vector technique on the GPU (kernels/sparse_vector.cu).
// Implemented in kernels/ when built with CUDA; in a CPU-only build by gpu_unavailable.cpp beside
// this header, where every entry point throws BackendUnavailable.
#pragma once

#include <cstdint>

#include "dpselect/context.hpp"
#include "dpselect/types.hpp"
#include "random/sparse_vector_noise.hpp"

namespace dpselect::detail {

// The first i in [begin, end) with noise.above(i, values[i], noisy_threshold), or end: a parallel
// find-first over device memory. Synchronizes `stream`.
std::uint64_t gpu_first_above(const double* values, std::uint64_t begin, std::uint64_t end,
                              const SparseQueryNoise& noise, double noisy_threshold, cuda_stream_t stream);

}  // namespace dpselect::detail
