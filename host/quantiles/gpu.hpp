// SPDX-License-Identifier: Apache-2.0
// Quantiles on the GPU (kernels/quantiles.cu): the data sorted into device positions and the
// single-quantile stages scored over them.
// Implemented in kernels/ when built with CUDA; in a CPU-only build by gpu_unavailable.cpp beside
// this header, where every entry point throws BackendUnavailable.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "quantiles/quantiles_internal.hpp"

namespace dpselect::detail {

// Device values to sorted device positions, or, where a value is NaN, the first one: the host
// refuses it (quantile_data.cpp), so the words of the refusal are the host path's own. `values`
// must be memory the device reads (validate_device_pointer).
struct PreparedQuantileData {
  std::shared_ptr<const QuantileData::Storage> storage;  // null when a value is NaN
  std::uint64_t first_nan = 0;                           // count when there is none
  double first_nan_value = 0.0;
};
PreparedQuantileData gpu_prepare_quantile_data(const double* values, std::uint64_t count, const QuantileRange& range,
                                               cuda_stream_t stream);
PreparedQuantileData gpu_prepare_quantile_data(const float* values, std::uint64_t count, const QuantileRange& range,
                                               cuda_stream_t stream);
// Stage 1 on the GPU over `range` of the data's intervals (host positions, sorted first, stream
// through the device in chunks).
ShardResult gpu_score_quantile_intervals(const SingleQuantilePlan& plan, const NoiseSpec& spec,
                                         const QuantileData::Storage& data, IndexRange range);
// The atoms' candidates `atoms` (kAtomCandidateOffset + [0, n)) over device data, on the GPU;
// known_score as cpu_evaluate_generated's.
ShardResult gpu_score_quantile_atoms(const SingleQuantilePlan& plan, const NoiseSpec& spec,
                                     const QuantileData::Storage& data, IndexRange atoms, double known_score);
// Permute-and-flip's stage 1 on the GPU: every interval (candidates [0, n]) and, with has_atoms,
// every atom (kAtomCandidateOffset + [0, n)) scored by permute_and_flip_run_score, the result of
// permute_and_flip_quantile_runs_cpu bit for bit. Host data's sorted slots are copied to the
// device for the pass (8 bytes a value).
ShardResult gpu_permute_and_flip_quantile_runs(const SingleQuantilePlan& plan, const NoiseSpec& spec,
                                               const QuantileData::Storage& data, bool has_atoms);
// Device slots back to the host: slots [first, first + count).
std::vector<std::uint64_t> gpu_read_quantile_positions(const QuantileData::Storage& data, std::uint64_t first,
                                                       std::uint64_t count);

}  // namespace dpselect::detail
