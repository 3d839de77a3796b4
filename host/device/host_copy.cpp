// SPDX-License-Identifier: Apache-2.0
#include "device/gpu.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>

namespace dpselect::detail {

void copy_host_memory(void* destination, const void* source, std::size_t bytes) {
  // memcpy's pointers must be valid even for 0 bytes; an empty span's data() may be null
  // (UndefinedBehaviorSanitizer; tests/host_copy_test.cpp copies 0 bytes).
  if (bytes == 0) return;
  constexpr std::size_t kBytesPerThread = std::size_t{4} << 20;
  const std::size_t wanted_threads =
      std::min<std::size_t>({bytes / kBytesPerThread, static_cast<std::size_t>(kHostCopyMaxThreads),
                             static_cast<std::size_t>(std::max(omp_get_max_threads(), 1))});
  auto* out = static_cast<unsigned char*>(destination);
  const auto* in = static_cast<const unsigned char*>(source);
  if (wanted_threads <= 1) {
    std::memcpy(out, in, bytes);
    return;
  }
  const int threads = static_cast<int>(wanted_threads);
  // Slices a multiple of 64 bytes long: with an aligned destination no two threads share a line.
  const std::size_t slice = (bytes / wanted_threads + 63) / 64 * 64;
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (int t = 0; t < threads; ++t) {
    const std::size_t begin = std::min(bytes, static_cast<std::size_t>(t) * slice);
    const std::size_t end = t + 1 == threads ? bytes : std::min(bytes, begin + slice);
    std::memcpy(out + begin, in + begin, end - begin);
  }
}

}  // namespace dpselect::detail
