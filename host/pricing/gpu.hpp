// SPDX-License-Identifier: Apache-2.0
// Pricing on the GPU (kernels/pricing.cu).
// Implemented in kernels/ when built with CUDA; in a CPU-only build by gpu_unavailable.cpp beside
// this header, where every entry point throws BackendUnavailable.
#pragma once

#include <span>

#include "dpselect/context.hpp"
#include "dpselect/detail/noise_spec.hpp"
#include "dpselect/pricing.hpp"
#include "dpselect/shard_result.hpp"

namespace dpselect::detail {

// Revenue of the grid prices `range` against the sorted bids, computed in the fused pass.
ShardResult gpu_evaluate_price_grid(const NoiseSpec& spec, std::span<const double> sorted_bids,
                                    const PriceGrid& grid, IndexRange range);

// Sorts `values` (finite doubles) ascending on the device: CUB's radix sort. Throws CudaError.
void gpu_sort(std::span<double> values);

}  // namespace dpselect::detail
