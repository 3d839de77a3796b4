// SPDX-License-Identifier: Apache-2.0
// The selection pass's GPU entry points in a CPU-only build: each throws BackendUnavailable.
#include "selection/gpu.hpp"
#include "device/gpu.hpp"

namespace dpselect::detail {

ShardResult gpu_evaluate_device(const NoiseSpec&, const float*, IndexRange, cuda_stream_t) {
  throw_gpu_unavailable();
}
ShardResult gpu_evaluate_device(const NoiseSpec&, const double*, IndexRange, cuda_stream_t) {
  throw_gpu_unavailable();
}
ShardResult gpu_evaluate_host(const NoiseSpec&, const float*, IndexRange) { throw_gpu_unavailable(); }
ShardResult gpu_evaluate_host(const NoiseSpec&, const double*, IndexRange) { throw_gpu_unavailable(); }

}  // namespace dpselect::detail
