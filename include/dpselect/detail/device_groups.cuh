// SPDX-License-Identifier: Apache-2.0
// How a GPU warp scores groups of 32 candidates: where their utilities come from (an array or a
// functor), and where their screens come from. CUDA-only; used by the fused pass
// (fused_select_kernel.cuh), the rows kernel and the top-k kernel.
//
// A warp takes "tiles" of 32 consecutive groups, aligned by global index (tile c holds groups
// 32c .. 32c + 31, candidates 1024c .. 1024c + 1023), lane l scoring group 32c + l. The screens
// of a tile's groups (noise.hpp: 16 bits each, 8 to a 128-bit screen block) fill exactly one
// ChaCha20 block, block c of the stream: lane l's screen is the high (even l) or low (odd l) half
// of its word l / 2. So a warp computes the ChaCha20 blocks of its next 32 tiles at once, one per
// lane, and hands each tile's words out with shuffles: one ChaCha20 block per 1,024 candidates,
// a thirty-second of a block per lane and tile.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "dpselect/shard_result.hpp"

namespace dpselect::detail {

// Utility of global index i read from an array holding candidates [first_index, ...).
template <class T>
struct ArraySource {
  using value_type = T;
  const T* data;
  std::uint64_t first_index;
  __device__ __forceinline__ double operator()(std::uint64_t index) const {
    return static_cast<double>(data[index - first_index]);
  }
};

// Utility of global index i computed by a user functor.
template <class UtilityFn>
struct FunctorSource {
  UtilityFn utility;
  __device__ __forceinline__ double operator()(std::uint64_t index) const {
    return static_cast<double>(utility(index));
  }
};

template <class Source>
inline constexpr bool kIsArraySource = false;
template <class T>
inline constexpr bool kIsArraySource<ArraySource<T>> = true;

inline constexpr unsigned int kWarpLanes = 32;
inline constexpr unsigned int kTileGroups = kWarpLanes;  // one group per lane
inline constexpr std::uint64_t kTileCandidates = kTileGroups * noise::kCandidatesPerGroup;

// Calls launch(std::integral_constant<Generator, G>{}) for the key's generator G: kernels are
// compiled per generator (GeneratorBlocks, random_key.hpp).
template <class Launch>
void with_generator(Generator generator, const Launch& launch) {
  if (generator == Generator::philox) {
    launch(std::integral_constant<Generator, Generator::philox>{});
  } else {
    launch(std::integral_constant<Generator, Generator::chacha20>{});
  }
}

// The tiles that overlap the groups of `groups`: [first_tile, end_tile).
__host__ __device__ __forceinline__ std::uint64_t first_tile(const GroupRange& groups) {
  return groups.first_group() / kTileGroups;
}
__host__ __device__ __forceinline__ std::uint64_t end_tile(const GroupRange& groups) {
  return (groups.first_group() + groups.group_count() - 1) / kTileGroups + 1;
}

// The screens of the tiles a warp visits, tile first + step * stride at its step-th visit. Every
// lane of the warp calls next() at every step, in order (it shuffles).
template <Generator G>
struct TileScreens;

// ChaCha20: at steps 0, 32, 64, ... lane l computes the block of the warp's tile step + l, and
// holds its 16 words; at each step lane l takes word l / 2 of the tile's block from its owner.
template <>
struct TileScreens<Generator::chacha20> {
  std::uint32_t words[16];

  __device__ __forceinline__ std::uint32_t next(const NoiseSpec& spec, std::uint64_t first, std::uint64_t stride,
                                                std::uint64_t step, unsigned int lane) {
    const unsigned int owner = static_cast<unsigned int>(step % kWarpLanes);
    if (owner == 0) chacha20_stream_block(spec.key.chacha, spec.stream, first + (step + lane) * stride, words);
    std::uint32_t word = 0;
#pragma unroll
    for (unsigned int w = 0; w < 16; ++w) {
      const std::uint32_t shared = __shfl_sync(0xFFFFFFFFu, words[w], owner);
      word = (lane >> 1) == w ? shared : word;
    }
    return (lane & 1u) != 0 ? (word & 0xFFFFu) : (word >> 16);
  }
};

// Philox: lane l's group 32c + l reads the 128-bit screen block at position 4c + l / 8 itself
// (a Philox block costs little; eight lanes compute the same one).
template <>
struct TileScreens<Generator::philox> {
  __device__ __forceinline__ std::uint32_t next(const NoiseSpec& spec, std::uint64_t first, std::uint64_t stride,
                                                std::uint64_t step, unsigned int lane) {
    const std::uint64_t group = (first + step * stride) * kTileGroups + lane;
    return noise::screen_bits(philox_block(spec.key.philox, spec.stream, noise::screen_position(group)),
                              static_cast<unsigned int>(group % noise::kGroupsPerScreenBlock));
  }
};

// group_noise_upper_bound for every screen bound slot of one mechanism, in the block's shared memory:
// each group's bound is then one load instead of two logarithms in double precision (about 150
// instructions a group, a fifth of the pass's time budget at the memory roofline).
struct ScreenBoundTable {
  double bounds[noise::kScreenBoundSlots];
  Mechanism mechanism;

  // Called by every thread of the block; ends with a block barrier.
  __device__ __forceinline__ void fill(Mechanism for_mechanism) {
    for (unsigned int slot = threadIdx.x; slot < noise::kScreenBoundSlots; slot += blockDim.x) {
      bounds[slot] = group_noise_upper_bound(for_mechanism, screen_of_bound_slot(slot));
    }
    if (threadIdx.x == 0) mechanism = for_mechanism;
    __syncthreads();
  }
  // group_noise_upper_bound(spec.mechanism, screen), from the table when it holds that mechanism.
  __device__ __forceinline__ double of(const NoiseSpec& spec, std::uint32_t screen) const {
    return spec.mechanism == mechanism ? bounds[noise::screen_bound_slot(screen)]
                                       : group_noise_upper_bound(spec.mechanism, screen);
  }
};

// Scores the candidates of `groups` tile by tile with utilities from `source` read one at a time
// (functors): this warp takes the tiles first_tile + warp, + warps, ... Every lane of the warp
// calls it with the same arguments but `lane`.
template <Generator G, class Source, class Sink>
__device__ __forceinline__ void add_source_tiles(const NoiseSpec& spec, const ScreenBoundTable& bounds,
                                                 const GroupRange& groups, const Source& source, std::uint64_t warp,
                                                 std::uint64_t warps, unsigned int lane, ShardResult& tally,
                                                 Sink& sink) {
  const std::uint64_t first = first_tile(groups) + warp;
  const std::uint64_t end = end_tile(groups);
  TileScreens<G> screens;
  std::uint64_t step = 0;
  for (std::uint64_t tile = first; tile < end; tile += warps, ++step) {
    const std::uint32_t screen = screens.next(spec, first, warps, step, lane);
    const std::uint64_t group = tile * kTileGroups + lane;
    const unsigned int lanes = groups.lanes(group);
    if (lanes == 0) continue;
    const GroupScan scan = scan_group(spec, group, lanes, source, tally);
    score_scanned_group<GeneratorBlocks<G>>(spec, group, screen, bounds.of(spec, screen), scan,
                                            UtilityOfLane<Source>{source, group * noise::kCandidatesPerGroup}, sink);
  }
}

}  // namespace dpselect::detail
