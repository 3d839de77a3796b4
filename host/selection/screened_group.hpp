// SPDX-License-Identifier: Apache-2.0
// The CPU path's fast scoring of runs of groups of 32 candidates: the same result, bit for bit,
// as detail::score_group (screened_scoring.hpp) on each group, at little more than the cost of
// reading the utilities.
//
// A group of the group-maximum screen (docs/group_maximum.md) is skipped when its best utility
// plus a bound of its largest noise cannot reach the threshold. Here a group whose 32 utilities
// are all ordinary (finite and within the limits) is checked, counted and summarised (largest
// and smallest utility) with SSE2 arithmetic in the utilities' own type, and tested with
// its bound read from a table by its screen's bound slot, using only a multiply and an add with a
// margin that covers their roundings. A group that passes goes to score_scanned_group, which
// repeats the exact fused test and scores what can rank; any other group goes to score_group.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "dpselect/detail/noise_positions.hpp"
#include "dpselect/detail/screened_scoring.hpp"
#include "dpselect/noise.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/shard_result.hpp"

namespace dpselect::detail {

// group_noise_upper_bound(mechanism, screen) for every screen, by its bound slot (noise_positions.hpp).
class ScreenBounds {
 public:
  explicit ScreenBounds(Mechanism mechanism) {
    for (std::uint32_t slot = 0; slot < kScreenBoundSlots; ++slot) {
      bounds_[slot] = group_noise_upper_bound(mechanism, screen_of_bound_slot(slot));
    }
  }
  double of(std::uint32_t screen) const { return bounds_[screen_bound_slot(screen)]; }

 private:
  double bounds_[kScreenBoundSlots] = {};
};

// The table of a mechanism, built once per process: it depends on nothing else, and building it
// (576 bounds) costs far more than scoring a row of a few candidates, so a release that built its
// own spent most of its time there (select_repeated, the auditor).
inline const ScreenBounds& screen_bounds(Mechanism mechanism) {
  static const ScreenBounds exponential(Mechanism::exponential);
  static const ScreenBounds permute_and_flip(Mechanism::permute_and_flip);
  static const ScreenBounds laplace_noisy_max(Mechanism::laplace_noisy_max);
  switch (mechanism) {
    case Mechanism::exponential:
      return exponential;
    case Mechanism::permute_and_flip:
      return permute_and_flip;
    case Mechanism::laplace_noisy_max:
      break;
  }
  return laplace_noisy_max;
}

// A margin that makes the unfused test `(c * u) + b < threshold - margin` (two roundings, then
// one more in the subtraction) imply the fused screen test `fma_rn(c, u, b) < threshold` for
// every |c * u| <= scaled_magnitude and |b| <= bound_magnitude. Each rounding moves a value by
// at most 2^-53 of its magnitude (plus 2^-1075 below the normal range), so the unfused sum is
// within 2^-52 (scaled_magnitude + bound_magnitude) + 2^-1074 of the exact c*u + b, and the
// subtraction and the final fma rounding cost at most 2^-52 (|threshold| + margin) + 2^-1074
// more. 2^-40 times the magnitudes plus 2^-1000 covers all of them many times over; being
// generous only sends a few more groups to the exact test. An infinite threshold (nothing kept
// yet) gives an infinite margin and a cut of -inf: nothing is screened.
inline double unfused_screen_cut(double threshold, double scaled_magnitude, double bound_magnitude) {
  const double margin = 0x1p-40 * (std::fabs(threshold) + scaled_magnitude + bound_magnitude) + 0x1p-1000;
  return threshold - margin;
}

// What one look at a whole group's utilities finds: whether all are ordinary (no NaN, no
// infinity), and their largest and smallest value (meaningful when ordinary), as read: not
// shifted by the release's reference (scan_ordinary_group shifts them).
struct GroupSummary {
  bool finite;
  double largest;
  double smallest;
};

// The summary in plain loops: the reference for the vector forms.
struct PortableGroupMath {
  template <class T>
  static GroupSummary summarize(const T* u) {
    T high = u[0];
    T low = u[0];
    bool finite = true;
    for (std::uint64_t lane = 0; lane < kCandidatesPerGroup; ++lane) {
      finite &= std::isfinite(u[lane]);
      high = u[lane] > high ? u[lane] : high;
      low = u[lane] < low ? u[lane] : low;
    }
    return GroupSummary{finite, static_cast<double>(high), static_cast<double>(low)};
  }
};

#if defined(__SSE2__)
// Eight (float) or sixteen (double) SSE2 vectors of the x86-64 baseline, reduced as balanced
// trees so that no chain of dependent instructions runs through the group (a running maximum
// would wait on each load in turn): maxima, minima and a sum of x - x, which is NaN exactly when
// some x is NaN or infinite. No branches.
struct Sse2GroupMath {
  template <class Vector, class Max, class Min, class Sub, class Add>
  static void reduce(Vector (&v)[8], Vector& high, Vector& low, Vector& not_finite, Max max, Min min, Sub sub,
                     Add add) {
    Vector d[8];
    for (unsigned i = 0; i < 8; ++i) d[i] = sub(v[i], v[i]);
    high = max(max(max(v[0], v[1]), max(v[2], v[3])), max(max(v[4], v[5]), max(v[6], v[7])));
    low = min(min(min(v[0], v[1]), min(v[2], v[3])), min(min(v[4], v[5]), min(v[6], v[7])));
    not_finite = add(add(add(d[0], d[1]), add(d[2], d[3])), add(add(d[4], d[5]), add(d[6], d[7])));
  }

  static GroupSummary summarize(const float* u) {
    __m128 v[8];
    for (unsigned i = 0; i < 8; ++i) v[i] = _mm_loadu_ps(u + 4 * i);
    __m128 high;
    __m128 low;
    __m128 not_finite;
    reduce(v, high, low, not_finite, _mm_max_ps, _mm_min_ps, _mm_sub_ps, _mm_add_ps);
    high = _mm_max_ps(high, _mm_movehl_ps(high, high));
    high = _mm_max_ss(high, _mm_shuffle_ps(high, high, 1));
    low = _mm_min_ps(low, _mm_movehl_ps(low, low));
    low = _mm_min_ss(low, _mm_shuffle_ps(low, low, 1));
    return GroupSummary{_mm_movemask_ps(_mm_cmpunord_ps(not_finite, not_finite)) == 0,
                        static_cast<double>(_mm_cvtss_f32(high)), static_cast<double>(_mm_cvtss_f32(low))};
  }

  static GroupSummary summarize(const double* u) {
    __m128d high_parts[2];
    __m128d low_parts[2];
    __m128d not_finite_parts[2];
    for (unsigned half = 0; half < 2; ++half) {
      __m128d v[8];
      for (unsigned i = 0; i < 8; ++i) v[i] = _mm_loadu_pd(u + 16 * half + 2 * i);
      reduce(v, high_parts[half], low_parts[half], not_finite_parts[half], _mm_max_pd, _mm_min_pd, _mm_sub_pd,
             _mm_add_pd);
    }
    __m128d high = _mm_max_pd(high_parts[0], high_parts[1]);
    __m128d low = _mm_min_pd(low_parts[0], low_parts[1]);
    const __m128d not_finite = _mm_add_pd(not_finite_parts[0], not_finite_parts[1]);
    high = _mm_max_sd(high, _mm_unpackhi_pd(high, high));
    low = _mm_min_sd(low, _mm_unpackhi_pd(low, low));
    return GroupSummary{_mm_movemask_pd(_mm_cmpunord_pd(not_finite, not_finite)) == 0, _mm_cvtsd_f64(high),
                        _mm_cvtsd_f64(low)};
  }
};
using BaselineGroupMath = Sse2GroupMath;
#else
using BaselineGroupMath = PortableGroupMath;
#endif

// Groups ahead whose utilities score_groups_using asks the memory system for.
inline constexpr std::uint64_t kPrefetchGroups = 32;

// The race and follower blocks of the groups a CPU pass races, from SequentialBlocks batches: a
// group's followers are 32 consecutive positions, one batch of ChaCha20 blocks (the cost of about
// one block computed alone, where a race drew about one block per follower on rising data), and
// the race blocks of a chunk's groups are consecutive too. The same bits as random_block.
class RaceBlockCache {
 public:
  RaceBlockCache(const RandomKey& key, std::uint64_t stream) : races_(key, stream), followers_(key, stream) {}
  RandomBlock at(const RandomKey& /*key*/, std::uint64_t /*stream*/, std::uint64_t position) {
    return position >= kDetailPositionOffset ? followers_.at(position) : races_.at(position);
  }

 private:
  SequentialBlocks races_;
  SequentialBlocks followers_;
};

// DetailBlocks for a pass of (key, stream): a RaceBlockCache, or a stateless Blocks type (tests).
template <class DetailBlocks>
DetailBlocks detail_blocks_for(const NoiseSpec& spec) {
  if constexpr (std::is_constructible_v<DetailBlocks, const RandomKey&, std::uint64_t>) {
    return DetailBlocks(spec.key, spec.stream);
  } else {
    return DetailBlocks{};
  }
}

// What the first look at an ordinary whole group keeps for its screen test: its reach (the unfused
// c u_max + bound that unfused_screen_cut compares) and what score_scanned_group needs to race it.
struct ScannedGroup {
  double reach;
  double scaled_magnitude;  // c |u - r|_max: the cut's margin grows with it
  double largest;           // shifted
  double bound;
  std::uint32_t screen;
  std::uint32_t offset;  // the group, less the first group of its chunk
};

// For g in [first, last): score_group(spec, g, its screen, groups.lanes(g), utility, tally,
// sink) with utility(i) = data[i - data_first_index], bit for bit: the same tally (count, largest
// |shifted utility|, invalid utilities) and the same offers that matter. In a whole group of
// ordinary utilities, score_group's scan finds every lane valid, the same largest shifted utility
// and the same largest |shifted utility| (scan_ordinary_group), so the group goes to
// score_scanned_group with the scan it would have made. Screen blocks come from `screen_blocks`
// (a SequentialBlocks: one ChaCha20 block serves 32 groups), race and candidate blocks from
// DetailBlocks.
//
// The groups are looked at in two passes over at most kChunkScanGroups at a time. The first reads
// the utilities once and keeps each ordinary group's reach; the second races the group of largest
// reach, drops the groups that the threshold it raised screens out, and repeats with the rest
// until none is left. So the threshold is high from the first screen on, whatever the order of
// the data: in scan order, on utilities that rise from group to group, every group would beat the
// best before it and be raced (200x the pass's time on uniform data,
// bench/results/2026-11-27-cpu-2core-data-shapes/); and a group whose screen allows a very large
// noise (an unbounded one, 2^-15 of the groups), raced first for its reach, does not leave the
// groups above it to be raced one by one in scan order.
// The order changes no offer that matters (docs/design.md, "Screening"): a group is skipped only
// when its unfused reach is below the cut of the current threshold, so its fused test fails too,
// and the threshold is always a score some candidate of the range reached, ties going to the
// lowest index whatever the order of the offers.
inline constexpr std::uint64_t kChunkScanGroups = 256;

// With the race and candidate blocks from `detail_blocks` (their `at(key, stream, position)`).
template <class Math, class T, class Sink, class ScreenBlocks, class DetailBlocks>
inline void score_groups_with_blocks(const NoiseSpec& spec, const ScreenBounds& bounds, const GroupRange& groups,
                                     std::uint64_t first, std::uint64_t last, ScreenBlocks& screen_blocks,
                                     const T* data, std::uint64_t data_first_index, ShardResult& tally, Sink& sink,
                                     DetailBlocks& detail_blocks) {
  constexpr unsigned kLanes = kCandidatesPerGroup;
  const auto utility = [data, data_first_index](std::uint64_t index) {
    return static_cast<double>(data[index - data_first_index]);
  };
  for (std::uint64_t chunk_first = first; chunk_first < last; chunk_first += kChunkScanGroups) {
    const std::uint64_t chunk_last = last - chunk_first < kChunkScanGroups ? last : chunk_first + kChunkScanGroups;
    ScannedGroup scanned[kChunkScanGroups];
    unsigned int count = 0;
    for (std::uint64_t g = chunk_first; g < chunk_last; ++g) {
      const std::uint32_t screen = screen_bits(screen_blocks.at(screen_position(g)),
                                                      static_cast<unsigned int>(g % kGroupsPerScreenBlock));
      const std::uint64_t first_index = g * kLanes;
      const unsigned int lanes = groups.lanes(g);
      GroupSummary summary{false, 0.0, 0.0};
      if (lanes == kWholeGroup) {
        const T* const group_data = data + (first_index - data_first_index);
        // A group's scalar work between its loads leaves few misses in flight: ask for the lines
        // kPrefetchGroups groups ahead, within [first, last), where `data` is valid.
        if (g + kPrefetchGroups < last) {
          __builtin_prefetch(group_data + kPrefetchGroups * kLanes);
          if constexpr (sizeof(T) == 8) __builtin_prefetch(group_data + kPrefetchGroups * kLanes + 16);
        }
        summary = Math::summarize(group_data);
      }
      GroupScan scan;
      const ShiftedSpread spread = shifted_spread(spec, summary.largest, summary.smallest);
      if (!summary.finite || !scan_ordinary_group(spec, spread, tally, scan)) {
        // A partial group, or a NaN, infinite or too large utility that score_group records or
        // excludes: score_group's scan and scoring, with its screen's bound from the table (the
        // same value: the bound depends on the screen through its slot only).
        const GroupScan lane_scan = scan_group(spec, g, lanes, utility, tally);
        score_scanned_group(spec, g, screen, bounds.of(screen), lane_scan,
                            UtilityOfLane<decltype(utility)>{spec, utility, first_index}, sink, detail_blocks);
        continue;
      }
      const double bound = bounds.of(screen);
      const double reach = add_rn(mul_rn(spec.score_scale, spread.largest), bound);
      scanned[count++] = ScannedGroup{reach, mul_rn(spec.score_scale, spread.largest_magnitude), spread.largest,
                                      bound, screen, static_cast<std::uint32_t>(g - chunk_first)};
    }
    // The groups still in the running: each round drops those below the current cut and races the
    // widest of the rest, until none is left.
    unsigned int running = count;
    while (running != 0) {
      const double threshold = sink.threshold();
      unsigned int kept = 0;
      unsigned int widest = 0;
      for (unsigned int i = 0; i < running; ++i) {
        const ScannedGroup& group = scanned[i];
        if (group.reach < unfused_screen_cut(threshold, group.scaled_magnitude, kMaxAbsRaceNoise)) continue;
        if (kept != 0 && group.reach > scanned[widest].reach) widest = kept;
        scanned[kept++] = group;
      }
      if (kept == 0) break;
      const ScannedGroup group = scanned[widest];
      scanned[widest] = scanned[--kept];
      running = kept;
      const std::uint64_t g = chunk_first + group.offset;
      const GroupScan scan{group.largest, kWholeGroup, 0u};
      score_scanned_group(spec, g, group.screen, group.bound, scan,
                          UtilityOfLane<decltype(utility)>{spec, utility, g * kLanes}, sink, detail_blocks);
    }
  }
}

template <class Math, class DetailBlocks = RaceBlockCache, class T, class Sink, class ScreenBlocks>
inline void score_groups_using(const NoiseSpec& spec, const ScreenBounds& bounds, const GroupRange& groups,
                               std::uint64_t first, std::uint64_t last, ScreenBlocks& screen_blocks, const T* data,
                               std::uint64_t data_first_index, ShardResult& tally, Sink& sink) {
  DetailBlocks detail_blocks = detail_blocks_for<DetailBlocks>(spec);
  score_groups_with_blocks<Math>(spec, bounds, groups, first, last, screen_blocks, data, data_first_index, tally, sink,
                                 detail_blocks);
}

template <class DetailBlocks = RaceBlockCache, class T, class Sink, class ScreenBlocks>
inline void score_groups(const NoiseSpec& spec, const ScreenBounds& bounds, const GroupRange& groups,
                         std::uint64_t first, std::uint64_t last, ScreenBlocks& screen_blocks, const T* data,
                         std::uint64_t data_first_index, ShardResult& tally, Sink& sink) {
  score_groups_using<BaselineGroupMath, DetailBlocks>(spec, bounds, groups, first, last, screen_blocks, data,
                                                      data_first_index, tally, sink);
}

}  // namespace dpselect::detail
