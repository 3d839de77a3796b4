// Host-side launch and tile arithmetic of the kernels (no GPU needed): the sizes a grid is
// computed from must bound the work they are meant to cover, and a warp's tile loads must cover
// each utility once, read contiguous memory and store and read shared memory without bank
// conflicts.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "dpselect/detail/fused_select_kernel.cuh"
#include "dpselect/detail/quad_tiles.cuh"

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

// --- Warp tiles (quad_tiles.cuh) -------------------------------------------------------------

namespace tiles = dpselect::detail;
constexpr unsigned kLanes = tiles::kWarpLanes;
// Shared memory has 32 four-byte banks: a 128-bit access by a quarter-warp is one wavefront when
// its 8 vectors fall in 8 different groups of 4 banks (vector address mod 8); a 32-bit access by
// a warp when its 32 words fall in 32 different banks; a 64-bit access by a half-warp when its
// 16 words fall in 16 different bank pairs.
constexpr unsigned kBankGroups = 8;

TEST(QuadTiles, VectorLoadsCoverTheSegmentOnce) {
  std::set<std::pair<unsigned, unsigned>> seen;
  for (unsigned k = 0; k < tiles::kSegmentVectors; ++k) {
    for (unsigned lane = 0; lane < kLanes; ++lane) {
      const tiles::TileSlot slot = tiles::vector_slot(k, lane);
      ASSERT_LT(slot.row, tiles::kTileQuads);
      ASSERT_LT(slot.column, tiles::kSegmentVectors);
      ASSERT_TRUE(seen.emplace(slot.row, slot.column).second) << "load " << k << ", lane " << lane;
    }
  }
  EXPECT_EQ(seen.size(), std::size_t{tiles::kTileQuads} * tiles::kSegmentVectors);
}

// Vector offset, from the tile's first candidate, that a lane's k-th vector load reads.
template <class T>
unsigned global_vector(unsigned k, unsigned lane, unsigned segment) {
  constexpr unsigned quad_vectors = tiles::kCandidatesPerQuad * sizeof(T) / 16;
  const tiles::TileSlot slot = tiles::vector_slot(k, lane);
  return slot.row * quad_vectors + segment * tiles::kSegmentVectors + slot.column;
}

TEST(QuadTiles, EachVectorLoadReadsWholeLinesInOrder) {
  // float: one 512-byte run per warp-wide load; double (two segments a quad): runs of 8 vectors,
  // each a whole 128-byte line.
  for (unsigned k = 0; k < tiles::kSegmentVectors; ++k) {
    for (unsigned lane = 1; lane < kLanes; ++lane) {
      EXPECT_EQ(global_vector<float>(k, lane, 0), global_vector<float>(k, lane - 1, 0) + 1);
    }
    for (unsigned segment = 0; segment < tiles::kSegmentsPerQuad<double>; ++segment) {
      for (unsigned lane = 0; lane < kLanes; ++lane) {
        const unsigned vector = global_vector<double>(k, lane, segment);
        if (lane % 8 == 0) {
          EXPECT_EQ(vector % 8, 0u) << "a run starts on a line";
        } else {
          EXPECT_EQ(vector, global_vector<double>(k, lane - 1, segment) + 1);
        }
      }
    }
  }
}

TEST(QuadTiles, VectorStoresAndRowReadsAreFreeOfBankConflicts) {
  for (unsigned k = 0; k < tiles::kSegmentVectors; ++k) {
    for (unsigned quarter = 0; quarter < 4; ++quarter) {
      std::set<unsigned> groups;
      for (unsigned lane = 8 * quarter; lane < 8 * quarter + 8; ++lane) {
        const tiles::TileSlot slot = tiles::vector_slot(k, lane);
        groups.insert((slot.row * tiles::kTileRowVectors + slot.column) % kBankGroups);
      }
      EXPECT_EQ(groups.size(), 8u) << "store " << k << ", quarter-warp " << quarter;
    }
  }
  // Reading: lane r reads vector c of its own row r.
  for (unsigned column = 0; column < tiles::kSegmentVectors; ++column) {
    for (unsigned quarter = 0; quarter < 4; ++quarter) {
      std::set<unsigned> groups;
      for (unsigned lane = 8 * quarter; lane < 8 * quarter + 8; ++lane) {
        groups.insert((lane * tiles::kTileRowVectors + column) % kBankGroups);
      }
      EXPECT_EQ(groups.size(), 8u) << "read of vector " << column << ", quarter-warp " << quarter;
    }
  }
}

template <class T>
void expect_scalar_loads_cover_once_without_conflicts() {
  std::set<std::pair<unsigned, unsigned>> seen;
  constexpr unsigned lanes_per_wavefront = sizeof(T) == 4 ? 32 : 16;
  for (unsigned k = 0; k < tiles::kSegmentItems<T>; ++k) {
    for (unsigned first = 0; first < kLanes; first += lanes_per_wavefront) {
      std::set<unsigned> banks;
      for (unsigned lane = first; lane < first + lanes_per_wavefront; ++lane) {
        const tiles::TileSlot slot = tiles::item_slot<T>(k, lane);
        ASSERT_LT(slot.row, tiles::kTileQuads);
        ASSERT_LT(slot.column, tiles::kSegmentItems<T>);
        ASSERT_TRUE(seen.emplace(slot.row, slot.column).second) << "load " << k << ", lane " << lane;
        const unsigned byte = (slot.row * tiles::kTileRowItems<T> + slot.column) * sizeof(T);
        banks.insert(byte / sizeof(T) % (128 / sizeof(T)));
        // Consecutive lanes read consecutive utilities.
        if (lane > 0) {
          const tiles::TileSlot previous = tiles::item_slot<T>(k, lane - 1);
          const unsigned offset = slot.row * tiles::kCandidatesPerQuad + slot.column;
          const unsigned previous_offset = previous.row * tiles::kCandidatesPerQuad + previous.column;
          if (slot.row == previous.row) EXPECT_EQ(offset, previous_offset + 1);
        }
      }
      EXPECT_EQ(banks.size(), lanes_per_wavefront) << "store " << k;
    }
  }
  EXPECT_EQ(seen.size(), std::size_t{tiles::kTileQuads} * tiles::kSegmentItems<T>);
}

TEST(QuadTiles, ScalarLoadsCoverTheSegmentOnceWithoutConflicts) {
  expect_scalar_loads_cover_once_without_conflicts<float>();
  expect_scalar_loads_cover_once_without_conflicts<double>();
}

TEST(QuadTiles, SegmentsSplitQuadsIntoWholeGroups) {
  EXPECT_EQ(tiles::kSegmentsPerQuad<float> * tiles::kSegmentItems<float>, tiles::kCandidatesPerQuad);
  EXPECT_EQ(tiles::kSegmentsPerQuad<double> * tiles::kSegmentItems<double>, tiles::kCandidatesPerQuad);
  EXPECT_EQ(tiles::kGroupsPerSegment<float>, 4u);
  EXPECT_EQ(tiles::kGroupsPerSegment<double>, 2u);
  EXPECT_EQ(sizeof(tiles::WarpTile), 4608u);
}

TEST(QuadTiles, GroupLanesInsideARange) {
  const dpselect::detail::GroupRange range{13, 70};  // groups 1 .. 8
  EXPECT_EQ(range.lanes(0), 0u);
  EXPECT_EQ(range.lanes(1), 0xE0u);  // candidates 13, 14, 15
  EXPECT_EQ(range.lanes(2), 0xFFu);
  EXPECT_EQ(range.lanes(8), 0x3Fu);  // candidates 64 .. 69
  EXPECT_EQ(range.lanes(9), 0u);
  EXPECT_EQ(range.lanes(1000), 0u);
}

}  // namespace
