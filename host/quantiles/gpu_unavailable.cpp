// SPDX-License-Identifier: Apache-2.0
// Quantiles' GPU entry points in a CPU-only build: each throws BackendUnavailable.
#include "quantiles/gpu.hpp"
#include "device/gpu.hpp"

namespace dpselect::detail {

// Unreachable in practice: QuantileData::from_device and
// Backend::Gpu resolve the backend first.
PreparedQuantileData gpu_prepare_quantile_data(const double*, std::uint64_t, const QuantileRange&, cuda_stream_t) {
  throw_gpu_unavailable();
}
PreparedQuantileData gpu_prepare_quantile_data(const float*, std::uint64_t, const QuantileRange&, cuda_stream_t) {
  throw_gpu_unavailable();
}
ShardResult gpu_score_quantile_intervals(const SingleQuantilePlan&, const NoiseSpec&, const QuantileData::Storage&,
                                         IndexRange) {
  throw_gpu_unavailable();
}
ShardResult gpu_score_quantile_atoms(const SingleQuantilePlan&, const NoiseSpec&, const QuantileData::Storage&,
                                     IndexRange, double) {
  throw_gpu_unavailable();
}
ShardResult gpu_permute_and_flip_quantile_runs(const SingleQuantilePlan&, const NoiseSpec&,
                                               const QuantileData::Storage&, bool) {
  throw_gpu_unavailable();
}
std::vector<std::uint64_t> gpu_read_quantile_positions(const QuantileData::Storage&, std::uint64_t, std::uint64_t) {
  throw_gpu_unavailable();
}

}  // namespace dpselect::detail
