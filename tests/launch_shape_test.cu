// SPDX-License-Identifier: Apache-2.0
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
#include "dpselect/detail/noise_positions.hpp"
#include "dpselect/detail/screened_scoring.hpp"
#include "dpselect/detail/warp_tiles.cuh"
#include "dpselect/random_key.hpp"

namespace {

using dpselect::detail::kTileCandidates;
using dpselect::detail::tiles_spanning;

// The tiles candidates [first, first + count) overlap, counted directly.
std::uint64_t tiles_overlapped(std::uint64_t first, std::uint64_t count) {
  return (first + count - 1) / kTileCandidates - first / kTileCandidates + 1;
}

TEST(LaunchShape, TilesSpanningBoundsEveryStart) {
  // Every start offset within a tile and the counts around one, two and several tiles.
  for (std::uint64_t count = 1; count <= 3 * kTileCandidates; count += count < 64 ? 1 : 7) {
    for (std::uint64_t first = 0; first < 2 * kTileCandidates; ++first) {
      ASSERT_LE(tiles_overlapped(first, count), tiles_spanning(count)) << count << " candidates from " << first;
    }
  }
}

TEST(LaunchShape, TilesSpanningIsTightSomewhere) {
  EXPECT_EQ(tiles_overlapped(1023, 2), 2u);
  EXPECT_EQ(tiles_spanning(2), 2u);
  EXPECT_EQ(tiles_spanning(1), 1u);
  EXPECT_EQ(tiles_spanning(1024), 2u);  // from index 1: tiles 0 and 1
  EXPECT_EQ(tiles_spanning(1025), 2u);
  EXPECT_EQ(tiles_spanning(1026), 3u);  // from index 1023: tiles 0, 1 and 2
}

TEST(LaunchShape, TilesOfARangeAndTheirWholeness) {
  const dpselect::detail::GroupRange range{1000, 5000};  // groups 31 .. 156, tiles 0 .. 4
  EXPECT_EQ(dpselect::detail::first_tile(range), 0u);
  EXPECT_EQ(dpselect::detail::end_tile(range), 5u);
  EXPECT_FALSE(dpselect::detail::tile_is_whole(range, 0));
  EXPECT_TRUE(dpselect::detail::tile_is_whole(range, 1));
  EXPECT_TRUE(dpselect::detail::tile_is_whole(range, 3));
  EXPECT_FALSE(dpselect::detail::tile_is_whole(range, 4));
  const dpselect::detail::GroupRange aligned{2048, 4096};
  EXPECT_EQ(dpselect::detail::first_tile(aligned), 2u);
  EXPECT_EQ(dpselect::detail::end_tile(aligned), 4u);
  EXPECT_TRUE(dpselect::detail::tile_is_whole(aligned, 2));
  EXPECT_TRUE(dpselect::detail::tile_is_whole(aligned, 3));
}

// TileScreens<chacha20> hands lane l of tile c the half (l odd: low) of word l / 2 of ChaCha20
// block c: that must be exactly group 32c + l's screen as every other path reads it.
TEST(LaunchShape, ATilesScreensFillOneChaChaBlock) {
  dpselect::detail::NoiseSpec spec{};
  spec.key = dpselect::RandomKey::from_seed(99, dpselect::Generator::chacha20);
  spec.stream = 12345;
  for (const std::uint64_t tile : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{77}, std::uint64_t{1} << 40}) {
    std::uint32_t words[16];
    dpselect::chacha20_stream_block(spec.key.chacha, spec.stream, tile, words);
    for (unsigned lane = 0; lane < dpselect::detail::kWarpLanes; ++lane) {
      const std::uint32_t word = words[lane / 2];
      const std::uint32_t screen = (lane & 1u) != 0 ? (word & 0xFFFFu) : (word >> 16);
      EXPECT_EQ(screen, dpselect::detail::group_screen(spec, tile * dpselect::detail::kTileGroups + lane))
          << "tile " << tile << ", lane " << lane;
    }
  }
}

// --- Warp tiles (warp_tiles.cuh) -------------------------------------------------------------

namespace tiles = dpselect::detail;
constexpr unsigned kLanes = tiles::kWarpLanes;
// Shared memory has 32 four-byte banks: a 128-bit access by a quarter-warp is one wavefront when
// its 8 vectors fall in 8 different groups of 4 banks (vector address mod 8); a 32-bit access by
// a warp when its 32 words fall in 32 different banks; a 64-bit access by a half-warp when its
// 16 words fall in 16 different bank pairs.
constexpr unsigned kBankGroups = 8;

TEST(WarpTiles, VectorLoadsCoverTheSegmentOnce) {
  std::set<std::pair<unsigned, unsigned>> seen;
  for (unsigned k = 0; k < tiles::kSegmentVectors; ++k) {
    for (unsigned lane = 0; lane < kLanes; ++lane) {
      const tiles::TileSlot slot = tiles::vector_slot(k, lane);
      ASSERT_LT(slot.row, tiles::kTileGroups);
      ASSERT_LT(slot.column, tiles::kSegmentVectors);
      ASSERT_TRUE(seen.emplace(slot.row, slot.column).second) << "load " << k << ", lane " << lane;
    }
  }
  EXPECT_EQ(seen.size(), std::size_t{tiles::kTileGroups} * tiles::kSegmentVectors);
}

// Vector offset, from the tile's first candidate, that a lane's k-th vector load reads.
template <class T>
unsigned global_vector(unsigned k, unsigned lane, unsigned segment) {
  constexpr unsigned group_vectors = dpselect::detail::kCandidatesPerGroup * sizeof(T) / 16;
  const tiles::TileSlot slot = tiles::vector_slot(k, lane);
  return slot.row * group_vectors + segment * tiles::kSegmentVectors + slot.column;
}

TEST(WarpTiles, EachVectorLoadReadsWholeLinesInOrder) {
  // float: one 512-byte run per warp-wide load; double (two segments a group): runs of 8 vectors,
  // each a whole 128-byte line.
  for (unsigned k = 0; k < tiles::kSegmentVectors; ++k) {
    for (unsigned lane = 1; lane < kLanes; ++lane) {
      EXPECT_EQ(global_vector<float>(k, lane, 0), global_vector<float>(k, lane - 1, 0) + 1);
    }
    for (unsigned segment = 0; segment < tiles::kSegmentsPerGroup<double>; ++segment) {
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

TEST(WarpTiles, VectorStoresAndRowReadsAreFreeOfBankConflicts) {
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
        ASSERT_LT(slot.row, tiles::kTileGroups);
        ASSERT_LT(slot.column, tiles::kSegmentItems<T>);
        ASSERT_TRUE(seen.emplace(slot.row, slot.column).second) << "load " << k << ", lane " << lane;
        const unsigned byte = (slot.row * tiles::kTileRowItems<T> + slot.column) * sizeof(T);
        banks.insert(byte / sizeof(T) % (128 / sizeof(T)));
        // Consecutive lanes read consecutive utilities.
        if (lane > 0) {
          const tiles::TileSlot previous = tiles::item_slot<T>(k, lane - 1);
          const unsigned offset = slot.row * dpselect::detail::kCandidatesPerGroup + slot.column;
          const unsigned previous_offset = previous.row * dpselect::detail::kCandidatesPerGroup + previous.column;
          if (slot.row == previous.row) EXPECT_EQ(offset, previous_offset + 1);
        }
      }
      EXPECT_EQ(banks.size(), lanes_per_wavefront) << "store " << k;
    }
  }
  EXPECT_EQ(seen.size(), std::size_t{tiles::kTileGroups} * tiles::kSegmentItems<T>);
}

TEST(WarpTiles, ScalarLoadsCoverTheSegmentOnceWithoutConflicts) {
  expect_scalar_loads_cover_once_without_conflicts<float>();
  expect_scalar_loads_cover_once_without_conflicts<double>();
}

TEST(WarpTiles, SegmentsSplitGroupsIntoChunks) {
  EXPECT_EQ(tiles::kSegmentsPerGroup<float> * tiles::kSegmentItems<float>, dpselect::detail::kCandidatesPerGroup);
  EXPECT_EQ(tiles::kSegmentsPerGroup<double> * tiles::kSegmentItems<double>, dpselect::detail::kCandidatesPerGroup);
  EXPECT_EQ(tiles::kChunksPerSegment<float>, 4u);
  EXPECT_EQ(tiles::kChunksPerSegment<double>, 2u);
  EXPECT_EQ(sizeof(tiles::WarpTile), 4608u);
}

TEST(WarpTiles, GroupLanesInsideARange) {
  const dpselect::detail::GroupRange range{13, 70};  // groups 0 .. 2
  EXPECT_EQ(range.lanes(0), 0xFFFFE000u);  // candidates 13 .. 31
  EXPECT_EQ(range.lanes(1), 0xFFFFFFFFu);
  EXPECT_EQ(range.lanes(2), 0x3Fu);  // candidates 64 .. 69
  EXPECT_EQ(range.lanes(3), 0u);
  EXPECT_EQ(range.lanes(1000), 0u);
}

}  // namespace
