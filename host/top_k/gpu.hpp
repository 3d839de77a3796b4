// SPDX-License-Identifier: Apache-2.0
// Top-k on the GPU (kernels/top_k.cu).
// Implemented in kernels/ when built with CUDA; in a CPU-only build by gpu_unavailable.cpp beside
// this header, where every entry point throws BackendUnavailable.
#pragma once

#include <cstdint>

#include "dpselect/detail/noise_spec.hpp"
#include "dpselect/context.hpp"
#include "dpselect/types.hpp"
#include "top_k/top_k_steps.hpp"

namespace dpselect::detail {

// One-shot Gumbel top-k on the GPU, k <= kGpuTopKMax: the k best (score,
// index) pairs of candidates [0, n), best first (padded with (-inf, kNoIndex) when fewer are
// valid), and the tally of every candidate (unstamped; best_* unset). Device memory (ordered on
// `stream`, which is synchronized) or host memory (streamed in chunks on streams of its own).
TopKShard gpu_top_k_device(const NoiseSpec& spec, const float* utilities, std::uint64_t n, std::uint64_t k,
                           cuda_stream_t stream);
TopKShard gpu_top_k_device(const NoiseSpec& spec, const double* utilities, std::uint64_t n, std::uint64_t k,
                           cuda_stream_t stream);
TopKShard gpu_top_k_host(const NoiseSpec& spec, const float* utilities, std::uint64_t n, std::uint64_t k);
TopKShard gpu_top_k_host(const NoiseSpec& spec, const double* utilities, std::uint64_t n, std::uint64_t k);

}  // namespace dpselect::detail
