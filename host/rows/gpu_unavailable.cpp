// SPDX-License-Identifier: Apache-2.0
// The rows pass's GPU entry points in a CPU-only build: each throws BackendUnavailable.
#include "rows/gpu.hpp"
#include "device/gpu.hpp"

namespace dpselect::detail {

void set_rows_layout_for_testing(RowsLayout, unsigned) {}
void gpu_evaluate_device_rows(std::span<const NoiseSpec>, const float*, std::uint64_t, std::uint64_t,
                              std::span<ShardResult>, cuda_stream_t) {
  throw_gpu_unavailable();
}
void gpu_evaluate_device_rows(std::span<const NoiseSpec>, const double*, std::uint64_t, std::uint64_t,
                              std::span<ShardResult>, cuda_stream_t) {
  throw_gpu_unavailable();
}
void gpu_evaluate_host_rows(std::span<const NoiseSpec>, const float*, std::uint64_t, std::uint64_t,
                            std::span<ShardResult>) {
  throw_gpu_unavailable();
}
void gpu_evaluate_host_rows(std::span<const NoiseSpec>, const double*, std::uint64_t, std::uint64_t,
                            std::span<ShardResult>) {
  throw_gpu_unavailable();
}

}  // namespace dpselect::detail
