// SPDX-License-Identifier: Apache-2.0
// Top-k's GPU entry points in a CPU-only build: each throws BackendUnavailable.
#include "top_k/gpu.hpp"
#include "device/gpu.hpp"

namespace dpselect::detail {

TopKShard gpu_top_k_device(const NoiseSpec&, const float*, std::uint64_t, std::uint64_t, cuda_stream_t) {
  throw_gpu_unavailable();
}
TopKShard gpu_top_k_device(const NoiseSpec&, const double*, std::uint64_t, std::uint64_t, cuda_stream_t) {
  throw_gpu_unavailable();
}
TopKShard gpu_top_k_host(const NoiseSpec&, const float*, std::uint64_t, std::uint64_t) { throw_gpu_unavailable(); }
TopKShard gpu_top_k_host(const NoiseSpec&, const double*, std::uint64_t, std::uint64_t) { throw_gpu_unavailable(); }

}  // namespace dpselect::detail
