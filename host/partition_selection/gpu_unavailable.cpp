// SPDX-License-Identifier: Apache-2.0
// Partition selection's GPU steps in a CPU-only build: each throws BackendUnavailable. Unreachable
// in practice: both entry points resolve the backend first.
#include "device/gpu.hpp"
#include "partition_selection/gpu.hpp"

namespace dpselect::detail {

struct GpuKeepCuts::Device {};
GpuKeepCuts::GpuKeepCuts(const KeepCuts&, cuda_stream_t) { throw_gpu_unavailable(); }
GpuKeepCuts::~GpuKeepCuts() = default;

GpuKeyDecisions gpu_partition_decide_pairs(const std::uint64_t*, const std::uint64_t*, std::uint64_t, bool,
                                           std::uint64_t, const GpuKeepCuts&, const ContextAccess::KeyedStream&,
                                           cuda_stream_t) {
  throw_gpu_unavailable();
}
void gpu_partition_keep_pairs(std::span<const Contribution>, std::uint64_t, const ContextAccess::KeyedStream&,
                              cuda_stream_t, std::vector<std::uint64_t>&) {
  throw_gpu_unavailable();
}
GpuKeyDecisions gpu_partition_decide_keys(std::span<const std::uint64_t>, const GpuKeepCuts&,
                                          const ContextAccess::KeyedStream&, cuda_stream_t) {
  throw_gpu_unavailable();
}

}  // namespace dpselect::detail
