// Utility arrays read by whole warps: a warp stages the utilities of 32 consecutive quads (one
// per lane) through shared memory, with 128-bit loads of whole 128-byte lines (512 contiguous
// bytes per warp-wide load for float), and each lane then scores its own quad from registers.
// CUDA-only.
//
// Why not let each lane load its own quad: its 32 consecutive utilities are 128 (float) or 256
// (double) contiguous bytes, so a warp-wide load would touch 32 different 128-byte lines, and the
// pass would be bound by the L1's request rate, at an estimated third of the memory roofline. The
// candidate-to-lane mapping (and so every random bit) is the same either way: only the loads
// are rearranged, as cub::BlockLoad's warp transpose does.
//
// Layout of a warp's tile (WarpTile): row r holds the current segment of lane r's quad, a
// segment being 128 bytes (32 floats, the whole quad, or 16 doubles, half of it), followed by 16
// bytes of padding. With the padding both sides are free of bank conflicts: a quarter-warp's
// 128-bit stores fill one row's 8 vectors (128 contiguous bytes), and a quarter-warp's 128-bit
// reads (lanes r .. r+7, one vector each) start 144 bytes apart, in 8 different bank quads.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "dpselect/detail/quads.cuh"

namespace dpselect::detail {

inline constexpr unsigned int kWarpLanes = 32;
inline constexpr unsigned int kTileQuads = kWarpLanes;  // one quad per lane
inline constexpr unsigned int kSegmentBytes = 128;
inline constexpr unsigned int kSegmentVectors = kSegmentBytes / sizeof(uint4);
inline constexpr unsigned int kTileRowVectors = kSegmentVectors + 1;  // one vector of padding

template <class T>
inline constexpr unsigned int kSegmentItems = kSegmentBytes / sizeof(T);
template <class T>
inline constexpr unsigned int kSegmentsPerQuad = kCandidatesPerQuad / kSegmentItems<T>;
template <class T>
inline constexpr unsigned int kGroupsPerSegment = kSegmentItems<T> / noise::kCandidatesPerGroup;

// 4,608 bytes of shared memory per warp.
struct WarpTile {
  uint4 vectors[kTileQuads * kTileRowVectors];
};

// Where a lane's k-th load of a segment goes: row (the quad within the tile) and column (in
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

// True when the utilities of every quad start on a 16-byte boundary, so whole quads can be read
// with 128-bit loads: candidate 32q sits at data + 32q - first_index. The same for every quad
// of the array, since 32 utilities span a multiple of 16 bytes.
template <class T>
__device__ __forceinline__ bool quads_are_vector_aligned(const ArraySource<T>& source) {
  const auto address = reinterpret_cast<std::uintptr_t>(source.data);
  return (address - source.first_index * sizeof(T)) % sizeof(uint4) == 0;
}

// Copies segment `segment` of quads tile_first_quad .. tile_first_quad + quads - 1 (quads <= 32)
// into rows 0 .. quads - 1 of `tile`; candidates outside [groups.begin, groups.end) read as 0 and
// are never scored. Called by every lane of the warp; the caller synchronizes the warp before
// reading. `whole` says that every candidate of these quads is inside: only then are 128-bit
// loads possible (and only when the array is 16-byte aligned). Streaming loads (__ldcs): the
// utilities are read once, and should not evict what the rest of the pass reuses.
template <class T>
__device__ __forceinline__ void stage_segment(const ArraySource<T>& source, const GroupRange& groups,
                                              std::uint64_t tile_first_quad, unsigned int quads,
                                              unsigned int segment, bool whole, bool vector_aligned,
                                              WarpTile& tile, unsigned int lane) {
  const std::uint64_t first_index = tile_first_quad * kCandidatesPerQuad + segment * kSegmentItems<T>;
  if (whole && vector_aligned) {
    constexpr unsigned int quad_vectors = kCandidatesPerQuad * sizeof(T) / sizeof(uint4);
    const uint4* const vectors = reinterpret_cast<const uint4*>(source.data + (first_index - source.first_index));
    // Load k moves vectors 32k .. 32k + 31 of the segment: 4 rows of 8, 512 contiguous bytes
    // when the rows are whole quads (float) and 4 runs of 128 bytes otherwise (double).
#pragma unroll
    for (unsigned int k = 0; k < kSegmentVectors; ++k) {
      const TileSlot slot = vector_slot(k, lane);
      if (slot.row < quads) {
        tile.vectors[slot.row * kTileRowVectors + slot.column] = __ldcs(vectors + slot.row * quad_vectors + slot.column);
      }
    }
    return;
  }
  // Scalar loads at the ends of the range and where the array is not 16-byte aligned (a sub-span
  // that starts mid-vector): still 128 contiguous bytes per warp-wide load (float), or two runs
  // of 128 (double).
  T* const items = reinterpret_cast<T*>(tile.vectors);
#pragma unroll 4
  for (unsigned int k = 0; k < kSegmentItems<T>; ++k) {
    const TileSlot slot = item_slot<T>(k, lane);
    const std::uint64_t index = first_index + slot.row * kCandidatesPerQuad + slot.column;
    if (slot.row < quads) {
      items[slot.row * kTileRowItems<T> + slot.column] =
          index >= groups.begin && index < groups.end ? __ldcs(source.data + (index - source.first_index)) : T{0};
    }
  }
}

// Utilities of group `group_in_segment` of this lane's row, as doubles.
__device__ __forceinline__ void read_group(const WarpTile& tile, unsigned int lane, unsigned int group_in_segment,
                                           float, double (&utilities)[noise::kCandidatesPerGroup]) {
  const uint4* const row = tile.vectors + lane * kTileRowVectors + 2 * group_in_segment;
#pragma unroll
  for (unsigned int v = 0; v < 2; ++v) {
    const uint4 bits = row[v];
    utilities[4 * v] = __uint_as_float(bits.x);
    utilities[4 * v + 1] = __uint_as_float(bits.y);
    utilities[4 * v + 2] = __uint_as_float(bits.z);
    utilities[4 * v + 3] = __uint_as_float(bits.w);
  }
}
__device__ __forceinline__ void read_group(const WarpTile& tile, unsigned int lane, unsigned int group_in_segment,
                                           double, double (&utilities)[noise::kCandidatesPerGroup]) {
  const uint4* const row = tile.vectors + lane * kTileRowVectors + 4 * group_in_segment;
#pragma unroll
  for (unsigned int v = 0; v < 4; ++v) {
    const uint4 bits = row[v];
    utilities[2 * v] = __hiloint2double(static_cast<int>(bits.y), static_cast<int>(bits.x));
    utilities[2 * v + 1] = __hiloint2double(static_cast<int>(bits.w), static_cast<int>(bits.z));
  }
}

// The quads a warp's tile holds: `quads` (at most 32) from first_quad, of which only the first
// and the last quad of the whole range can be partial; `whole` when every candidate of them is
// inside [groups.begin, groups.end) (then 128-bit loads are possible).
struct TileExtent {
  std::uint64_t first_quad;
  unsigned int quads;
  bool whole;
};
// The tile from quad `first` of the quads [.., end) that overlap `groups` (none when first >= end).
__device__ __forceinline__ TileExtent tile_extent(const GroupRange& groups, std::uint64_t first, std::uint64_t end) {
  const std::uint64_t remaining = first < end ? end - first : 0;
  const unsigned int quads = remaining < kTileQuads ? static_cast<unsigned int>(remaining) : kTileQuads;
  return TileExtent{first, quads,
                    first * kCandidatesPerQuad >= groups.begin && (first + quads) * kCandidatesPerQuad <= groups.end};
}

// A staged utility of this lane's row read again: score_group_values' second read of a passing
// lane (the row stays in place until the warp's next __syncwarp).
template <class T>
struct TileRowUtilities {
  const WarpTile& tile;
  unsigned int row;
  unsigned int first_column;  // the group's first candidate within the segment
  __device__ __forceinline__ double operator()(unsigned int lane) const {
    return static_cast<double>(reinterpret_cast<const T*>(tile.vectors)[row * kTileRowItems<T> + first_column + lane]);
  }
};

// Scores the candidates of `groups` tile by tile: this warp takes the tiles warp, warp + warps,
// ... of the quads that overlap them (32 quads a tile, the last maybe fewer). Every lane of the
// warp calls it with the same arguments but `lane`; the loops are uniform across the warp, so
// every lane reaches each __syncwarp.
template <Generator G, class T>
__device__ __forceinline__ void add_tiles(ShardAccumulator& accumulator, const NoiseSpec& spec,
                                          const GroupRange& groups, const ArraySource<T>& source,
                                          std::uint64_t warp, std::uint64_t warps, WarpTile& tile,
                                          unsigned int lane) {
  const std::uint64_t first = first_quad(groups);
  const std::uint64_t end = first + quad_count(groups);
  const bool vector_aligned = quads_are_vector_aligned(source);
  for (std::uint64_t tile_first = first + warp * kTileQuads; tile_first < end; tile_first += warps * kTileQuads) {
    const TileExtent extent = tile_extent(groups, tile_first, end);
    const std::uint64_t tile_first_quad = extent.first_quad;
    const unsigned int quads = extent.quads;
    const bool whole = extent.whole;
    const std::uint64_t quad = tile_first_quad + lane;
    const QuadBlocks<G> blocks(spec, quad);  // for lanes past `quads`: computed, never used
#pragma unroll
    for (unsigned int segment = 0; segment < kSegmentsPerQuad<T>; ++segment) {
      stage_segment(source, groups, tile_first_quad, quads, segment, whole, vector_aligned, tile, lane);
      __syncwarp();
      if (lane < quads) {
        // Not unrolled: four copies of a group's scoring (with its rare exact path) would hold
        // far more registers for no gain; the group's block and row are picked without arrays.
#pragma unroll 1
        for (unsigned int g = 0; g < kGroupsPerSegment<T>; ++g) {
          const unsigned int j = segment * kGroupsPerSegment<T> + g;
          const std::uint64_t group = quad * kGroupsPerQuad + j;
          const unsigned int lanes = whole ? 0xFFu : groups.lanes(group);
          double utilities[noise::kCandidatesPerGroup];
          read_group(tile, lane, g, T{}, utilities);
          const TileRowUtilities<T> utility_of_lane{tile, lane, g * static_cast<unsigned int>(noise::kCandidatesPerGroup)};
          score_group_values<GeneratorBlocks<G>>(spec, group, blocks.group_block(spec, quad, j), lanes, utilities,
                                                 utility_of_lane, accumulator.result, accumulator);
        }
      }
      __syncwarp();  // the rows are overwritten by the next segment
    }
  }
}

}  // namespace dpselect::detail
