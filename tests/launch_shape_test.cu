// Host-side launch arithmetic of the kernels (no GPU needed): the sizes a grid is computed from
// must bound the work they are meant to cover.
#include <gtest/gtest.h>

#include <cstdint>

#include "dpselect/detail/fused_select_kernel.cuh"

namespace {

using dpselect::detail::kGroupsPerQuad;
using dpselect::detail::quads_spanning;
using dpselect::noise::kCandidatesPerGroup;

// The quads candidates [first, first + count) overlap, counted directly.
std::uint64_t quads_overlapped(std::uint64_t first, std::uint64_t count) {
  constexpr std::uint64_t per_quad = kCandidatesPerGroup * kGroupsPerQuad;
  return (first + count - 1) / per_quad - first / per_quad + 1;
}

TEST(LaunchShape, QuadsSpanningBoundsEveryStart) {
  // Every start offset within a quad and the counts around one, two and several quads.
  for (std::uint64_t count = 1; count <= 200; ++count) {
    for (std::uint64_t first = 0; first < 64; ++first) {
      ASSERT_LE(quads_overlapped(first, count), quads_spanning(count))
          << count << " candidates from " << first;
    }
  }
}

TEST(LaunchShape, QuadsSpanningIsTightSomewhere) {
  // 9 candidates from index 31 overlap quads 0 and 1 (the case once counted as 1).
  EXPECT_EQ(quads_overlapped(31, 9), 2u);
  EXPECT_EQ(quads_spanning(9), 2u);
  EXPECT_EQ(quads_spanning(1), 1u);
  EXPECT_EQ(quads_spanning(32), 2u);  // from index 1: quads 0 and 1
  EXPECT_EQ(quads_spanning(33), 2u);
  EXPECT_EQ(quads_spanning(34), 3u);  // from index 31: quads 0, 1 and 2
}

}  // namespace
