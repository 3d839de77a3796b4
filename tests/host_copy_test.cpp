// SPDX-License-Identifier: Apache-2.0
// The host copy that fills the GPU path's page-locked staging buffers (device/gpu.hpp):
// every byte once, in place, whether one thread copies or several.
#include "device/gpu.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace dpselect {
namespace {

// Sizes around the one-thread limit (4 MiB a thread) and the slicing, with a pattern that tells
// every byte's position apart; the bytes around the destination stay untouched.
TEST(HostCopy, CopiesEveryByteOnceWhateverTheSize) {
  const std::size_t sizes[] = {0, 1, 63, 64, 65, (std::size_t{4} << 20) - 1, std::size_t{4} << 20,
                               (std::size_t{8} << 20) + 1, (std::size_t{12} << 20) + 17, (std::size_t{33} << 20) + 5};
  for (const std::size_t bytes : sizes) {
    std::vector<unsigned char> source(bytes);
    for (std::size_t i = 0; i < bytes; ++i) source[i] = static_cast<unsigned char>((i * 131 + (i >> 8) * 7) & 0xff);
    std::vector<unsigned char> destination(bytes + 2, 0xa5);
    detail::copy_host_memory(destination.data() + 1, source.data(), bytes);
    EXPECT_EQ(destination.front(), 0xa5) << bytes;
    EXPECT_EQ(destination.back(), 0xa5) << bytes;
    EXPECT_TRUE(std::equal(source.begin(), source.end(), destination.begin() + 1)) << bytes << " bytes";
  }
}

}  // namespace
}  // namespace dpselect
