// SPDX-License-Identifier: Apache-2.0
// Utility arrays read by whole warps: a warp stages the utilities of a tile of 32 groups (one
// per lane, device_groups.cuh) through shared memory, with 128-bit loads of whole 128-byte lines
// (512 contiguous bytes per warp-wide load for float), and each lane then looks at its own
// group from registers. CUDA-only.
//
// Why not let each lane load its own group: its 32 consecutive utilities are 128 (float) or 256
// (double) contiguous bytes, so a warp-wide load would touch 32 different 128-byte lines, and the
// pass would be bound by the L1's request rate, at an estimated third of the memory roofline. The
// candidate-to-lane mapping (and so every random bit) is the same either way: only the loads
// are rearranged, as cub::BlockLoad's warp transpose does.
//
// Layout of a warp's tile (WarpTile): row r holds the current segment of lane r's group, a
// segment being 128 bytes (32 floats, the whole group, or 16 doubles, half of it), followed by 16
// bytes of padding. With the padding both sides are free of bank conflicts: a quarter-warp's
// 128-bit stores fill one row's 8 vectors (128 contiguous bytes), and a quarter-warp's 128-bit
// reads (lanes r .. r+7, one vector each) start 144 bytes apart, in 8 different bank quads.
//
// A lane's first look at its group (scan_tile_group) keeps only the group's largest and smallest
// utility and whether all are finite, in the utilities' own type: that is all the group-maximum
// screen needs (screened_scoring.hpp, scan_ordinary_group). The rare group that is cut by the range
// or holds a NaN, an infinity or a too large utility is scanned again one utility at a time, and
// the few candidates that are scored read their utility again from global memory.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "dpselect/detail/device_groups.cuh"
#include "dpselect/detail/noise_positions.hpp"
#include "dpselect/detail/screened_scoring.hpp"

namespace dpselect::detail {

inline constexpr unsigned int kSegmentBytes = 128;
inline constexpr unsigned int kSegmentVectors = kSegmentBytes / sizeof(uint4);
inline constexpr unsigned int kTileRowVectors = kSegmentVectors + 1;  // one vector of padding
// Utilities a lane reads from its row at once (into registers).
inline constexpr unsigned int kChunkItems = 8;

template <class T>
inline constexpr unsigned int kSegmentItems = kSegmentBytes / sizeof(T);
template <class T>
inline constexpr unsigned int kSegmentsPerGroup = kCandidatesPerGroup / kSegmentItems<T>;
template <class T>
inline constexpr unsigned int kChunksPerSegment = kSegmentItems<T> / kChunkItems;

// 4,608 bytes of shared memory per warp.
struct WarpTile {
  uint4 vectors[kTileGroups * kTileRowVectors];
};
// Where a lane's k-th load of a segment goes: row (the group within the tile) and column (in
// 16-byte vectors for vector loads, in items for scalar loads). Lane l's k-th vector load moves
// vector 32k + l of the segment's 256, and its k-th scalar load item 32k + l, so consecutive
// lanes read consecutive addresses.
struct TileSlot {
  unsigned int row;
  unsigned int column;
};
__host__ __device__ constexpr TileSlot vector_slot(unsigned int k, unsigned int lane) {
  const unsigned int vector = k * kWarpLanes + lane;
  return TileSlot{vector / kSegmentVectors, vector % kSegmentVectors};
}
template <class T>
__host__ __device__ constexpr TileSlot item_slot(unsigned int k, unsigned int lane) {
  const unsigned int item = k * kWarpLanes + lane;
  return TileSlot{item / kSegmentItems<T>, item % kSegmentItems<T>};
}
// Items of T in one padded row.
template <class T>
inline constexpr unsigned int kTileRowItems = kTileRowVectors * sizeof(uint4) / sizeof(T);

// True when the utilities of every group start on a 16-byte boundary, so whole groups can be
// read with 128-bit loads: candidate 32g sits at data + 32g - first_index. The same for every
// group of the array, since 32 utilities span a multiple of 16 bytes.
template <class T>
__device__ __forceinline__ bool groups_are_vector_aligned(const ArraySource<T>& source) {
  const auto address = reinterpret_cast<std::uintptr_t>(source.data);
  return (address - source.first_index * sizeof(T)) % sizeof(uint4) == 0;
}

// Whether every candidate of tile `tile` lies inside [groups.begin, groups.end): only then are
// 128-bit loads possible, and every lane's group whole. Only the first and last tiles of a range
// can fail it.
__host__ __device__ __forceinline__ bool tile_is_whole(const GroupRange& groups, std::uint64_t tile) {
  return tile * kTileCandidates >= groups.begin && (tile + 1) * kTileCandidates <= groups.end;
}

// Copies segment `segment` of the 32 groups of tile `tile` into the rows of `warp_tile`;
// candidates outside [groups.begin, groups.end) read as 0 and are never scored. Called by every
// lane of the warp; the caller synchronizes the warp before reading. Streaming loads (__ldcs):
// the utilities are read once, and should not evict what the rest of the pass reuses.
template <class T>
__device__ __forceinline__ void stage_segment(const ArraySource<T>& source, const GroupRange& groups,
                                              std::uint64_t tile, unsigned int segment, bool whole,
                                              bool vector_aligned, WarpTile& warp_tile, unsigned int lane) {
  const std::uint64_t first_index = tile * kTileCandidates + segment * kSegmentItems<T>;
  if (whole && vector_aligned) {
    constexpr unsigned int group_vectors = kCandidatesPerGroup * sizeof(T) / sizeof(uint4);
    const uint4* const vectors = reinterpret_cast<const uint4*>(source.data + (first_index - source.first_index));
    // Load k moves vectors 32k .. 32k + 31 of the segment: 4 rows of 8, 512 contiguous bytes
    // when the rows are whole groups (float) and 4 runs of 128 bytes otherwise (double).
#pragma unroll
    for (unsigned int k = 0; k < kSegmentVectors; ++k) {
      const TileSlot slot = vector_slot(k, lane);
      warp_tile.vectors[slot.row * kTileRowVectors + slot.column] =
          __ldcs(vectors + slot.row * group_vectors + slot.column);
    }
    return;
  }
  // Scalar loads at the ends of the range and where the array is not 16-byte aligned (a sub-span
  // that starts mid-vector): still 128 contiguous bytes per warp-wide load (float), or two runs
  // of 128 (double).
  T* const items = reinterpret_cast<T*>(warp_tile.vectors);
#pragma unroll 4
  for (unsigned int k = 0; k < kSegmentItems<T>; ++k) {
    const TileSlot slot = item_slot<T>(k, lane);
    const std::uint64_t index = first_index + slot.row * kCandidatesPerGroup + slot.column;
    items[slot.row * kTileRowItems<T> + slot.column] =
        index >= groups.begin && index < groups.end ? __ldcs(source.data + (index - source.first_index)) : T{0};
  }
}

// Utilities [8 chunk, 8 chunk + 8) of the segment in this lane's row.
__device__ __forceinline__ void read_chunk(const WarpTile& warp_tile, unsigned int lane, unsigned int chunk,
                                           float (&values)[kChunkItems]) {
  const uint4* const row = warp_tile.vectors + lane * kTileRowVectors + 2 * chunk;
#pragma unroll
  for (unsigned int v = 0; v < 2; ++v) {
    const uint4 bits = row[v];
    values[4 * v] = __uint_as_float(bits.x);
    values[4 * v + 1] = __uint_as_float(bits.y);
    values[4 * v + 2] = __uint_as_float(bits.z);
    values[4 * v + 3] = __uint_as_float(bits.w);
  }
}
__device__ __forceinline__ void read_chunk(const WarpTile& warp_tile, unsigned int lane, unsigned int chunk,
                                           double (&values)[kChunkItems]) {
  const uint4* const row = warp_tile.vectors + lane * kTileRowVectors + 4 * chunk;
#pragma unroll
  for (unsigned int v = 0; v < 4; ++v) {
    const uint4 bits = row[v];
    values[2 * v] = __hiloint2double(static_cast<int>(bits.y), static_cast<int>(bits.x));
    values[2 * v + 1] = __hiloint2double(static_cast<int>(bits.w), static_cast<int>(bits.z));
  }
}

// Stages tile `tile` and returns this lane's scan of its group (tile * 32 + lane), for
// score_scanned_group: from the group's largest and smallest utility when all 32 are inside the
// range and ordinary, else lane by lane from global memory. Every lane of the warp calls it with
// the same tile; it synchronizes the warp around each segment.
template <class T>
__device__ __forceinline__ GroupScan scan_tile_group(const NoiseSpec& spec, const GroupRange& groups,
                                                     const ArraySource<T>& source, std::uint64_t tile,
                                                     bool vector_aligned, WarpTile& warp_tile, unsigned int lane,
                                                     ShardResult& tally) {
  const bool whole = tile_is_whole(groups, tile);
  T largest = static_cast<T>(-kInfinity);
  T smallest = -largest;
  T not_finite = T{0};  // x - x is 0 for a finite x, NaN for NaN and +-inf
#pragma unroll
  for (unsigned int segment = 0; segment < kSegmentsPerGroup<T>; ++segment) {
    stage_segment(source, groups, tile, segment, whole, vector_aligned, warp_tile, lane);
    __syncwarp();
#pragma unroll
    for (unsigned int chunk = 0; chunk < kChunksPerSegment<T>; ++chunk) {
      T values[kChunkItems];
      read_chunk(warp_tile, lane, chunk, values);
#pragma unroll
      for (unsigned int i = 0; i < kChunkItems; ++i) {
        largest = values[i] > largest ? values[i] : largest;
        smallest = values[i] < smallest ? values[i] : smallest;
        not_finite += values[i] - values[i];
      }
    }
    __syncwarp();  // the rows are overwritten by the next segment or tile
  }
  const std::uint64_t group = tile * kTileGroups + lane;
  GroupScan scan;
  if (whole && not_finite == T{0} &&
      scan_ordinary_group(spec, shifted_spread(spec, static_cast<double>(largest), static_cast<double>(smallest)),
                          tally, scan)) {
    return scan;
  }
  return scan_group(spec, group, groups.lanes(group), source, tally);
}

// Scores the candidates of `groups` tile by tile: this warp takes the tiles first_tile + warp,
// + warps, ... (device_groups.cuh). Every lane of the warp calls it with the same arguments but
// `lane`; the loops are uniform across the warp, so every lane reaches each __syncwarp and
// shuffle.
// bound_of(screen): the group noise bound of a screen (FilledTableBound, CheckedTableBound).
template <Generator G, class T, class BoundOf>
__device__ __forceinline__ void add_tiles(ShardAccumulator& accumulator, const NoiseSpec& spec,
                                          const BoundOf& bound_of, const GroupRange& groups,
                                          const ArraySource<T>& source,
                                          std::uint64_t warp, std::uint64_t warps, WarpTile& warp_tile,
                                          unsigned int lane, WarpScreenThreshold& threshold) {
  const std::uint64_t first = first_tile(groups) + warp;
  const std::uint64_t end = end_tile(groups);
  const bool vector_aligned = groups_are_vector_aligned(source);
  TileScreens<G> screens;
  std::uint64_t step = 0;
  for (std::uint64_t tile = first; tile < end; tile += warps, ++step) {
    const std::uint32_t screen = screens.next(spec, first, warps, step, lane);
    const GroupScan scan = scan_tile_group(spec, groups, source, tile, vector_aligned, warp_tile, lane,
                                           accumulator.result);
    threshold.score<GeneratorBlocks<G>>(spec, tile * kTileGroups + lane, screen, bound_of(screen), scan, source,
                                        accumulator, lane);
  }
}

}  // namespace dpselect::detail
