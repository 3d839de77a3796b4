// SPDX-License-Identifier: Apache-2.0
// Page-locked host buffers through which host arrays reach the device (host_streaming.cuh). A
// DMA engine reads page-locked memory while the host and the kernels go on; pageable memory it
// cannot read, so cudaMemcpyAsync from it copies through a driver buffer with the host waiting.
//
// Kept for later calls: allocating 2 x 32 MiB page-locked takes tens of milliseconds (the driver
// pins and maps every page), about as long as streaming a GiB over PCIe, so paying it per call
// would cancel the overlap on all but the largest arrays. At most kMaxIdleStagingPairs pairs are
// kept idle (256 MiB); trim_device_memory (dpselect/device_memory.hpp) frees them.
#pragma once

#include <cstddef>

namespace dpselect::detail {

// 32 MiB per buffer: a DMA transfer reaches full PCIe bandwidth from about 1 MiB, and at 32 MiB the
// fixed cost of a piece (a cudaMemcpyAsync call, an event record and a host wait: about 10 us)
// stays under 2% of its transfer time (0.6 ms at 50 GB/s, PCIe 5.0 x16), while a call in flight
// holds 64 MiB of page-locked memory.
inline constexpr std::size_t kStagingBufferBytes = std::size_t{32} << 20;
inline constexpr std::size_t kMaxIdleStagingPairs = 4;

// Two page-locked buffers of kStagingBufferBytes, taken from the library's cache (or allocated)
// for one call and given back to it when destroyed, which the owner must do only after every
// copy from or to them has completed. empty() when page-locked memory cannot be had (a
// locked-memory limit, say): the caller then copies from pageable memory, without overlap.
class PinnedStaging {
 public:
  PinnedStaging();
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;
  ~PinnedStaging();

  bool empty() const { return pair_ == nullptr; }
  // Buffer `which` (0 or 1).
  unsigned char* buffer(unsigned int which) const { return pair_ + which * kStagingBufferBytes; }

 private:
  unsigned char* pair_ = nullptr;
};

// Frees the cached pairs no call is using. Throws CudaError if CUDA refuses one (the others are
// freed all the same).
void release_idle_pinned_staging();

}  // namespace dpselect::detail
