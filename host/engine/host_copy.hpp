// SPDX-License-Identifier: Apache-2.0
// Copies between the caller's host memory and the page-locked staging of the GPU host-array paths
// (kernels/host_streaming.cuh) on several cores: one core copies about 10 GB/s, less than one
// PCIe 5.0 x16 link carries, so a single-threaded copy would bound the whole stream.
#pragma once

#include <cstddef>

namespace dpselect::detail {

// std::memcpy(destination, source, bytes) split over up to kHostCopyMaxThreads OpenMP threads, one
// per 4 MiB at least (below that a thread costs more than it saves). The ranges must not overlap.
inline constexpr int kHostCopyMaxThreads = 8;
void copy_host_memory(void* destination, const void* source, std::size_t bytes);

}  // namespace dpselect::detail
