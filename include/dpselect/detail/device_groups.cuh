// SPDX-License-Identifier: Apache-2.0
// How a GPU warp scores groups of 32 candidates: where their utilities come from (an array or a
// functor), and where their screens come from. CUDA-only; used by the fused pass
// (fused_select_kernel.cuh), the rows kernel and the top-k kernel.
//
// A warp takes "tiles" of 32 consecutive groups, aligned by global index (tile c holds groups
// 32c .. 32c + 31, candidates 1024c .. 1024c + 1023), lane l scoring group 32c + l. The screens
// of a tile's groups (noise_positions.hpp: 16 bits each, 8 to a 128-bit screen block) fill exactly one
// ChaCha20 block, block c of the stream: lane l's screen is the high (even l) or low (odd l) half
// of its word l / 2. So a warp computes the ChaCha20 blocks of its next 32 tiles at once, one per
// lane, and hands each tile's words out with shuffles: one ChaCha20 block per 1,024 candidates,
// a thirty-second of a block per lane and tile.
#pragma once

#include <cuda_runtime.h>

#include <cuda/atomic>
#include <cstdint>
#include <type_traits>

#include "dpselect/detail/noise_positions.hpp"
#include "dpselect/detail/screened_scoring.hpp"
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
inline constexpr std::uint64_t kTileCandidates = kTileGroups * kCandidatesPerGroup;

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
    return screen_bits(philox_block(spec.key.philox, spec.stream, screen_position(group)),
                              static_cast<unsigned int>(group % kGroupsPerScreenBlock));
  }
};

// group_noise_upper_bound for every screen bound slot of one mechanism, in the block's shared memory:
// each group's bound is then one load instead of two logarithms in double precision (about 150
// instructions a group, a fifth of the pass's time budget at the memory roofline).
struct ScreenBoundTable {
  double bounds[kScreenBoundSlots];
  Mechanism mechanism;

  // Called by every thread of the block; ends with a block barrier.
  __device__ __forceinline__ void fill(Mechanism for_mechanism) {
    for (unsigned int slot = threadIdx.x; slot < kScreenBoundSlots; slot += blockDim.x) {
      bounds[slot] = group_noise_upper_bound(for_mechanism, screen_of_bound_slot(slot));
    }
    if (threadIdx.x == 0) mechanism = for_mechanism;
    __syncthreads();
  }
  // group_noise_upper_bound(m, screen) for the mechanism m the table was filled for: a kernel whose
  // every spec has that mechanism (a single release's pass) reads it without the check of of(),
  // whose fallback computes the bound in about 1,500 instructions that such a kernel never runs.
  __device__ __forceinline__ double of_filled(std::uint32_t screen) const {
    return bounds[screen_bound_slot(screen)];
  }
  // group_noise_upper_bound(spec.mechanism, screen), from the table when it holds that mechanism.
  __device__ __forceinline__ double of(const NoiseSpec& spec, std::uint32_t screen) const {
    return spec.mechanism == mechanism ? bounds[screen_bound_slot(screen)]
                                       : group_noise_upper_bound(spec.mechanism, screen);
  }
};

// A group's noise bound by its screen, from a table: FilledTableBound where every spec of the
// kernel has the table's mechanism (one release's pass), CheckedTableBound where that is not known.
struct FilledTableBound {
  const ScreenBoundTable& table;
  __device__ __forceinline__ double operator()(std::uint32_t screen) const { return table.of_filled(screen); }
};
struct CheckedTableBound {
  const ScreenBoundTable& table;
  const NoiseSpec& spec;
  __device__ __forceinline__ double operator()(std::uint32_t screen) const { return table.of(spec, screen); }
};

// A score as 64 bits whose unsigned order is the scores' order (-inf lowest; never NaN): what the
// grid-wide threshold word holds, raised with an atomic max.
__device__ __forceinline__ unsigned long long ordered_score_bits(double score) {
  const auto bits = static_cast<unsigned long long>(__double_as_longlong(score));
  return (bits >> 63) != 0 ? ~bits : bits | (1ull << 63);
}
__device__ __forceinline__ double score_of_ordered_bits(unsigned long long ordered) {
  return __longlong_as_double(static_cast<long long>((ordered >> 63) != 0 ? ordered & ~(1ull << 63) : ~ordered));
}
inline constexpr unsigned long long kNoPublishedScore = 0x000FFFFFFFFFFFFFull;  // ordered_score_bits(-inf)

// A score word in device or shared memory (ordered_score_bits; kNoPublishedScore before any
// score), raised with an atomic max and shared by every warp, block and launch of one release: the
// single pick's screen threshold (WarpScreenThreshold), each row's word in the rows pass, top-k's
// bound on the k-th best score.
class GridScoreWord {
 public:
  __device__ __forceinline__ explicit GridScoreWord(unsigned long long* word) : word_(*word) {}
  // The word's score, warp-uniform: lane 0 reads the word and hands it to the others. Every lane of
  // the warp calls it.
  __device__ __forceinline__ double read(unsigned int lane) const {
    unsigned long long bits = 0;
    if (lane == 0) bits = word_.load(cuda::std::memory_order_relaxed);
    return score_of_ordered_bits(__shfl_sync(0xFFFFFFFFu, bits, 0));
  }
  // The word's score, as this thread reads it.
  __device__ __forceinline__ double load() const {
    return score_of_ordered_bits(word_.load(cuda::std::memory_order_relaxed));
  }
  // Raises the word to `score` where it is lower; returns the word's score after.
  __device__ __forceinline__ double raise(double score) {
    const unsigned long long bits = ordered_score_bits(score);
    const unsigned long long before = word_.fetch_max(bits, cuda::std::memory_order_relaxed);
    return score_of_ordered_bits(before > bits ? before : bits);
  }

 private:
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> word_;
};

__device__ __forceinline__ double warp_max(double value) {
#pragma unroll
  for (unsigned int offset = kWarpLanes / 2; offset != 0; offset /= 2) {
    const double other = __shfl_xor_sync(0xFFFFFFFFu, value, offset);
    value = other > value ? other : value;
  }
  return value;
}

inline constexpr unsigned int kAllLanes = 0xFFFFFFFFu;

// The reach of a lane's group: the largest score any of its candidates can reach (the exact fused
// test of score_scanned_group's screen), -inf for a group with no valid candidate.
__device__ __forceinline__ double group_reach(const NoiseSpec& spec, const GroupScan& scan, double bound) {
  return scan.valid != 0 ? fma_rn(spec.score_scale, scan.largest_utility, bound) : -kInfinity;
}

// The lane whose group is raced next among the warp's `pending` lanes (non-empty, warp-uniform):
// the widest reach, the lowest lane on ties. Every lane of the warp calls it (it shuffles).
__device__ __forceinline__ unsigned int widest_pending_lane(unsigned int pending, double reach, unsigned int lane) {
  const bool is_pending = ((pending >> lane) & 1u) != 0;
  const double pending_reach = warp_max(is_pending ? reach : -kInfinity);
  return __ffs(static_cast<int>(__ballot_sync(kAllLanes, is_pending && reach == pending_reach))) - 1;
}

// Which candidates of a raced group a sink still needs. A single pick keeps one best: a follower
// whose score cannot reach the leader's is never it, so the leader's score screens the followers.
// A top-k keeps every score from its threshold up, the leader's and those below it alike.
enum class FollowerScreen { by_leader, by_threshold_only };

// The race of this lane's own group (group_race: its race block, E_V, the leader's time and
// lane), drawn where `draw` (the group may be raced in this tile and has valid candidates): the
// lanes of a warp draw theirs side by side, one block's instructions for the warp however many
// groups of the tile are then raced, and each race takes its group's from the lane that owns it
// (race_of_lane). Drawn by a whole warp for each raced group, the same blocks cost a block's
// instructions per race.
template <class Blocks>
__device__ __forceinline__ GroupRace own_group_race(const NoiseSpec& spec, std::uint64_t group, std::uint32_t screen,
                                                    bool draw) {
  return draw ? group_race<Blocks>(spec, group, screen) : GroupRace{0.0, 0u};
}

// Lane `owner`'s own_group_race, in every lane (warp-uniform).
__device__ __forceinline__ GroupRace race_of_lane(const GroupRace& own, unsigned int owner) {
  return GroupRace{__shfl_sync(kAllLanes, own.leader_time, owner), __shfl_sync(kAllLanes, own.leader_lane, owner)};
}

// Races group `group` (its race, valid and excluded lanes, all warp-uniform: race_of_lane) with the
// whole warp, lane l scoring candidate group * 32 + l against `threshold` (warp-uniform: a score
// strictly below it can never be kept). Every lane reads its candidate's utility (one coalesced
// load); the followers that can still reach the threshold draw their blocks side by side. Each
// lane offers its candidate's score to its own `sink` (offer(score, index)) when it was drawn.
// Returns the threshold the followers met: `threshold`, or the leader's score where that is larger
// and Screen is by_leader. Exact as score_scanned_group (screened_scoring.hpp), the definition it
// follows: a follower is left out only when even the leader's noise cannot lift it to that
// threshold. Every lane of the warp calls it with the same arguments but `lane` and `sink`.
template <class Blocks, FollowerScreen Screen, class Source, class Sink>
__device__ __forceinline__ double race_group_by_warp(const NoiseSpec& spec, std::uint64_t group, const GroupRace& race,
                                                     unsigned int valid, unsigned int excluded, double threshold,
                                                     const Source& source, Sink& sink, unsigned int lane) {
  const std::uint64_t index = group * kCandidatesPerGroup + lane;
  // Excluded candidates while nothing is kept, as score_scanned_group offers them.
  if (threshold == -kInfinity && ((excluded >> lane) & 1u) != 0) sink.offer(-kInfinity, index);
  if (valid == 0) return threshold;
  const double leader_noise = race_noise(spec.mechanism, race.leader_time);
  const bool in_group = ((valid >> lane) & 1u) != 0;
  const double u = in_group ? shifted_utility(spec, source(index)) : 0.0;
  const bool leader = lane == race.leader_lane;
  double score = in_group && leader ? fma_rn(spec.score_scale, u, leader_noise) : -kInfinity;
  double follower_threshold = threshold;
  if constexpr (Screen == FollowerScreen::by_leader) {
    // The leader's exact score (a candidate of the range, when its lane is valid) raises the
    // threshold that the followers meet; a follower's noise is at most the leader's.
    const double leader_score = __shfl_sync(kAllLanes, score, race.leader_lane);
    follower_threshold = leader_score > threshold ? leader_score : threshold;
  }
  const double follower_bound = add_rn(leader_noise, kScreenMargin);
  if (in_group && !leader && !(fma_rn(spec.score_scale, u, follower_bound) < follower_threshold)) {
    score = fma_rn(spec.score_scale, u, race_noise(spec.mechanism, follower_time<Blocks>(spec, race, index)));
  }
  if (score != -kInfinity) sink.offer(score, index);
  return follower_threshold;
}

// How a warp scores the groups of a tile (one per lane) that can still rank (docs/design.md,
// "Screening").
//
// The threshold is shared. A lane alone sees a few hundred groups of a 2^30 range and screens
// against its own best, which stays low: every lane's first group races, and on rising data every
// group. Here each tile's groups are screened against the best score of the whole warp and of
// every warp that has published one (a word in device memory raised with an atomic max, read once
// per tile), and the tile's groups that can still rank are raced widest first (largest utility
// plus noise bound), each race's score screening out what it can of the rest.
//
// Races are run by the whole warp (race_group_by_warp). Run by the lane that owns the group, the
// same race took a block and then a 32-step loop of dependent loads and draws with one lane of 32
// active. The race blocks are still drawn by the lanes that own the groups, all of a tile's at
// once (own_group_race): one block's instructions for the warp however many of them race.
//
// Exact as score_scanned_group (screened_scoring.hpp), the definition it follows: a group is skipped
// when its reach is below the threshold, a follower when even the leader's noise cannot lift it to
// the threshold, and every threshold is a score that a candidate of the range reached with its own
// noise; offers go to the accumulator of the lane that scores the candidate, and the block's
// reduction merges them all. So the result is one pass's whatever the schedule. Every lane of the
// warp calls score() with the same tile (it shuffles); all control flow here is warp-uniform but
// the draws.
class WarpScreenThreshold {
 public:
  // `published`: the grid's word (ordered_score_bits), kNoPublishedScore before any score; shared
  // by every launch of one release. `initial`: a score known to be reached (fused_select_kernel's
  // known_score), or -inf.
  __device__ __forceinline__ WarpScreenThreshold(unsigned long long* published, double initial)
      : published_(published), threshold_(initial) {}

  // This lane's group `group` (candidates group * 32 + l, utilities source(index)) with screen
  // `screen`, its noise bound `bound` and its scan.
  template <class Blocks, class Source>
  __device__ __forceinline__ void score(const NoiseSpec& spec, std::uint64_t group, std::uint32_t screen,
                                        double bound, const GroupScan& scan, const Source& source,
                                        ShardAccumulator& accumulator, unsigned int lane) {
    // One lane reads the word and hands it to the others, so the warp's threshold stays uniform.
    const double elsewhere = published_.read(lane);
    if (elsewhere > threshold_) threshold_ = elsewhere;
    // A lane with nothing to score (outside the range, or only invalid utilities) never races.
    const bool scored = (scan.valid | scan.excluded) != 0;
    const double reach = group_reach(spec, scan, bound);
    const double widest_reach = warp_max(scored ? reach : -kInfinity);
    // Nothing in the tile can rank (the common case). The threshold is then finite, so no excluded
    // candidate is offered either.
    if (widest_reach < threshold_) return;
    // The widest pending group is raced next, and the groups its score screens out are dropped: a
    // group whose screen allows a very large noise (raced first for its reach) does not leave the
    // groups above it to be raced one by one.
    double threshold = threshold_;
    const bool is_pending = scored && !(reach < threshold);
    unsigned int pending = __ballot_sync(kAllLanes, is_pending);
    const GroupRace own_race = own_group_race<Blocks>(spec, group, screen, is_pending && scan.valid != 0);
    while (pending != 0) {
      const unsigned int next = widest_pending_lane(pending, reach, lane);
      threshold = race_group<Blocks>(spec, __shfl_sync(kAllLanes, group, next), race_of_lane(own_race, next),
                                     __shfl_sync(kAllLanes, scan.valid, next),
                                     __shfl_sync(kAllLanes, scan.excluded, next), threshold, source, accumulator,
                                     lane);
      pending &= ~(1u << next) & __ballot_sync(kAllLanes, !(reach < threshold));
    }
    if (threshold > threshold_) {
      threshold_ = threshold;
      if (lane == 0) published_.raise(threshold);
    }
  }

 private:
  // Races group `group` against `threshold` (a score reached in the range, or -inf; at least
  // every lane's own best). Returns the threshold after the race: the largest of the threshold
  // the followers met and every lane's best.
  template <class Blocks, class Source>
  __device__ __forceinline__ double race_group(const NoiseSpec& spec, std::uint64_t group, const GroupRace& race,
                                               unsigned int valid, unsigned int excluded, double threshold,
                                               const Source& source, ShardAccumulator& accumulator,
                                               unsigned int lane) {
    const double follower_threshold = race_group_by_warp<Blocks, FollowerScreen::by_leader>(
        spec, group, race, valid, excluded, threshold, source, accumulator, lane);
    const double own = accumulator.threshold();
    return warp_max(own > follower_threshold ? own : follower_threshold);
  }

  GridScoreWord published_;
  double threshold_;  // warp-uniform: a score reached in the range, or -inf
};

// Scores the candidates of `groups` tile by tile with utilities from `source` read one at a time
// (functors): this warp takes the tiles first_tile + warp, + warps, ... Every lane of the warp
// calls it with the same arguments but `lane`.
template <Generator G, class Source, class BoundOf>
__device__ __forceinline__ void add_source_tiles(const NoiseSpec& spec, const BoundOf& bound_of,
                                                 const GroupRange& groups, const Source& source, std::uint64_t warp,
                                                 std::uint64_t warps, unsigned int lane,
                                                 ShardAccumulator& accumulator, WarpScreenThreshold& threshold) {
  const std::uint64_t first = first_tile(groups) + warp;
  const std::uint64_t end = end_tile(groups);
  TileScreens<G> screens;
  std::uint64_t step = 0;
  for (std::uint64_t tile = first; tile < end; tile += warps, ++step) {
    const std::uint32_t screen = screens.next(spec, first, warps, step, lane);
    const std::uint64_t group = tile * kTileGroups + lane;
    // A lane whose group lies outside the range scans nothing (valid and excluded stay empty) and
    // scores nothing, but still takes part in the warp's shuffles.
    const GroupScan scan = scan_group(spec, group, groups.lanes(group), source, accumulator.result);
    threshold.score<GeneratorBlocks<G>>(spec, group, screen, bound_of(screen), scan, source, accumulator, lane);
  }
}

}  // namespace dpselect::detail
