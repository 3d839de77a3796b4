// SPDX-License-Identifier: Apache-2.0
// Pricing's GPU entry points in a CPU-only build: each throws BackendUnavailable.
#include "pricing/gpu.hpp"
#include "device/gpu.hpp"

namespace dpselect::detail {

ShardResult gpu_evaluate_price_grid(const NoiseSpec&, std::span<const double>, const PriceGrid&, IndexRange) {
  throw_gpu_unavailable();
}

void gpu_sort(std::span<double>) { throw_gpu_unavailable(); }

}  // namespace dpselect::detail
