// SPDX-License-Identifier: Apache-2.0
// How a selection release scores its candidates: the definition that the CPU path
// (host/selection/screened_group.hpp) and the GPU kernels (device_groups.cuh, warp_tiles.cuh)
// reproduce bit for bit (docs/group_maximum.md). A utility is shifted by the release's reference;
// each candidate's noise comes from its group's exponential race (exponential_race.hpp; the
// stream positions and screen bits in noise_positions.hpp); a group is skipped when its screen's
// noise bound cannot lift it to the threshold. Also the pieces a pass is made of: the first look
// at a group's utilities, the running best, the groups of a candidate range. Internal: a pass
// hands its result on as a ShardResult (shard_result.hpp).
#pragma once

#include <cstdint>
#if !defined(__CUDA_ARCH__)
#include <bit>
#endif

#include "dpselect/detail/exponential_race.hpp"
#include "dpselect/detail/host_device.hpp"
#include "dpselect/detail/noise_positions.hpp"
#include "dpselect/detail/noise_spec.hpp"
#include "dpselect/noise.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/shard_result.hpp"
#include "dpselect/types.hpp"

namespace dpselect::detail {

// A utility as the scores see it: u - utility_reference, rounded once (exact for r = 0). NaN and
// +-inf stay what they are. Rounding is monotone, so the largest and smallest shifted utilities of
// a group are the shifted largest and smallest.
DPSELECT_HD DPSELECT_FORCEINLINE double shifted_utility(const NoiseSpec& spec, double u) {
  return sub_rn(u, spec.utility_reference);
}

// Above this |score_scale * utility| a utility is rejected outright (the slack check in finish()
// rejects far smaller ones); it keeps every score finite, so screening never hides an overflow.
inline constexpr double kLargestScaledUtility = 0x1p1000;

// A mechanism's standard noise at race time t (exponential_race.hpp): Gumbel for the exponential
// mechanism (Dwork & Roth 2014, Thm 3.10, by the Gumbel-max trick), exponential for
// permute-and-flip (McKenna & Sheldon 2020), Laplace for report-noisy-max (Dwork & Roth 2014,
// Claim 3.9). Decreasing in t.
DPSELECT_HD DPSELECT_FORCEINLINE double race_noise(Mechanism mechanism, double race_time) {
  switch (mechanism) {
    case Mechanism::exponential: return gumbel_from_race(race_time);
    case Mechanism::permute_and_flip: return exponential_from_race(race_time);
    default: return laplace_from_race(race_time);
  }
}

// An upper bound of the noise of every candidate of a group whose screen is `screen`
// (noise_positions.hpp): the noise at the smallest leader time the screen allows, plus
// kScreenMargin; +inf where the screen allows any (2^-15 of the groups).
DPSELECT_HD DPSELECT_FORCEINLINE double group_noise_upper_bound(Mechanism mechanism, std::uint32_t screen) {
  const double e_v = race_exponential_lower_bound(screen_bound_slot(screen));
  return e_v == 0.0 ? kInfinity : add_rn(race_noise(mechanism, race_leader(e_v)), kScreenMargin);
}

// A screen whose bound slot is `slot` (the inverse of screen_bound_slot): what the bound
// tables are filled from.
DPSELECT_HD DPSELECT_FORCEINLINE std::uint32_t screen_of_bound_slot(unsigned int slot) {
  return slot >= kScreenBuckets ? (kUnboundedBucket << 6) | (slot - kScreenBuckets) : slot << 6;
}

// Group g's 16 screen bits. Blocks is AnyGeneratorBlocks or, where the key's generator is known
// at compile time, GeneratorBlocks<G> (random_key.hpp): the same bits.
template <class Blocks = AnyGeneratorBlocks>
DPSELECT_HD DPSELECT_FORCEINLINE std::uint32_t group_screen(const NoiseSpec& spec, std::uint64_t group) {
  return screen_bits(Blocks::at(spec.key, spec.stream, screen_position(group)),
                            static_cast<unsigned int>(group % kGroupsPerScreenBlock));
}

// A group's drawn race: the leader's race time T_J = E_V / 32 and its lane J.
struct GroupRace {
  double leader_time;
  unsigned int leader_lane;
};

// `blocks` serves the generator's blocks: Blocks::at (stateless, as every kernel uses it) or, on the
// CPU, an object that caches a batch of consecutive positions (RaceBlockCache): the same bits.
template <class Blocks = AnyGeneratorBlocks>
DPSELECT_HD DPSELECT_FORCEINLINE GroupRace group_race(const NoiseSpec& spec, std::uint64_t group,
                                                      std::uint32_t screen, Blocks&& blocks = Blocks{}) {
  const RandomBlock race_block = blocks.at(spec.key, spec.stream, kRacePositionOffset + group);
  const double e_v = noise::exponential(race_bits(screen, race_block));
  return GroupRace{race_leader(e_v), race_leader_lane(race_block)};
}

// The race time of a follower (a lane other than the leader's) of candidate `index`: T_J + E'_j.
template <class Blocks = AnyGeneratorBlocks>
DPSELECT_HD DPSELECT_FORCEINLINE double follower_time(const NoiseSpec& spec, const GroupRace& race,
                                                      std::uint64_t index, Blocks&& blocks = Blocks{}) {
  const RandomBlock w = blocks.at(spec.key, spec.stream, kDetailPositionOffset + index);
  return race_follower_time(race.leader_time, noise::exponential(w));
}

// The race time T of candidate `index`, drawn in full: an Exp(1) draw, independent across
// candidates, of which every mechanism's noise is a decreasing transform (race_noise).
template <class Blocks = AnyGeneratorBlocks>
DPSELECT_HD DPSELECT_FORCEINLINE double candidate_race_time(const NoiseSpec& spec, std::uint64_t index) {
  const std::uint64_t group = index / kCandidatesPerGroup;
  const GroupRace race = group_race<Blocks>(spec, group, group_screen<Blocks>(spec, group));
  const unsigned int lane = static_cast<unsigned int>(index % kCandidatesPerGroup);
  return lane == race.leader_lane ? race.leader_time : follower_time<Blocks>(spec, race, index);
}

// The standard noise of candidate `index`, drawn in full: the definition the screened passes
// reproduce bit for bit.
template <class Blocks = AnyGeneratorBlocks>
DPSELECT_HD DPSELECT_FORCEINLINE double candidate_noise(const NoiseSpec& spec, std::uint64_t index) {
  return race_noise(spec.mechanism, candidate_race_time<Blocks>(spec, index));
}

// Noisy score of candidate `index` with finite utility `utility`: score_scale * (utility -
// utility_reference) + standard noise, the shift and the sum each rounded once. A function of
// (key, stream, reference, index, utility) only; the fused passes compute exactly this for every
// candidate that can win.
DPSELECT_HD DPSELECT_FORCEINLINE double noisy_score(const NoiseSpec& spec, std::uint64_t index,
                                                   double utility) {
  return fma_rn(spec.score_scale, shifted_utility(spec, utility), candidate_noise(spec, index));
}

DPSELECT_HD DPSELECT_FORCEINLINE void record_invalid(ShardResult& tally, std::uint64_t index, double value) {
  if (index < tally.first_invalid_index) {
    tally.first_invalid_index = index;
    tally.first_invalid_value = value;
  }
}

// The lanes [lane_begin, lane_end) of a group as a bit mask (bit l for lane l); lane_end <= 32.
DPSELECT_HD DPSELECT_FORCEINLINE unsigned int lane_mask(unsigned int lane_begin, unsigned int lane_end) {
  return static_cast<unsigned int>(((std::uint64_t{1} << lane_end) - 1u) & ~((std::uint64_t{1} << lane_begin) - 1u));
}
inline constexpr unsigned int kWholeGroup = 0xFFFFFFFFu;  // every lane

DPSELECT_HD DPSELECT_FORCEINLINE unsigned int lowest_lane(unsigned int lanes) {
#if defined(__CUDA_ARCH__)
  return static_cast<unsigned int>(__ffs(static_cast<int>(lanes)) - 1);
#else
  return static_cast<unsigned int>(std::countr_zero(lanes));
#endif
}

// What the first look at a group's utilities finds, for score_scanned_group.
struct GroupScan {
  double largest_utility = -kInfinity;  // over `valid`, shifted (shifted_utility)
  unsigned int valid = 0;               // lanes with a finite utility within the limits
  unsigned int excluded = 0;            // lanes whose utility is -inf
};

// The first look at candidate `index` (lane `lane` of its group) with utility `utility`: counts
// it, checks and records its shifted utility in `tally`, and notes it in `scan`.
DPSELECT_HD DPSELECT_FORCEINLINE void scan_candidate(const NoiseSpec& spec, std::uint64_t index, unsigned int lane,
                                                     double utility, ShardResult& tally, GroupScan& scan) {
  ++tally.candidates;
  if (is_nan(utility) || utility == kInfinity) {
    record_invalid(tally, index, utility);
    return;
  }
  if (utility == -kInfinity) {  // excluded candidate: offered with -inf, can never be selected
    scan.excluded |= 1u << lane;
    return;
  }
  const double u = shifted_utility(spec, utility);  // +-inf only where the shift overflows
  const double magnitude = u < 0 ? -u : u;
  if (magnitude > tally.max_abs_shifted_utility) tally.max_abs_shifted_utility = magnitude;
  const double scaled = mul_rn(spec.score_scale, magnitude);
  if (!(scaled <= kLargestScaledUtility) || !(magnitude <= spec.utility_limit)) {
    record_invalid(tally, index, utility);
    return;
  }
  scan.valid |= 1u << lane;
  if (u > scan.largest_utility) scan.largest_utility = u;
}

// The largest shifted utility of a group whose utilities (as read) lie in [smallest, largest], and
// its largest |shifted utility|. Shifting is monotone, so they come from the two ends alone (-0.0
// and +0.0 compare equal).
struct ShiftedSpread {
  double largest;
  double largest_magnitude;
};
DPSELECT_HD DPSELECT_FORCEINLINE ShiftedSpread shifted_spread(const NoiseSpec& spec, double largest, double smallest) {
  const double high = shifted_utility(spec, largest);
  const double low = shifted_utility(spec, smallest);
  return ShiftedSpread{high, high > -low ? high : -low};
}

// The scan of a whole group (32 lanes inside the range) whose utilities are all finite, with
// shifted_spread `spread`: what scan_candidate finds lane by lane when every one is within the
// limits. Returns false, changing nothing, when one is not: then scan lane by lane.
DPSELECT_HD DPSELECT_FORCEINLINE bool scan_ordinary_group(const NoiseSpec& spec, const ShiftedSpread& spread,
                                                          ShardResult& tally, GroupScan& scan) {
  if (!(spread.largest_magnitude <= spec.utility_limit) ||
      !(mul_rn(spec.score_scale, spread.largest_magnitude) <= kLargestScaledUtility)) {
    return false;
  }
  tally.candidates += kCandidatesPerGroup;
  if (spread.largest_magnitude > tally.max_abs_shifted_utility) {
    tally.max_abs_shifted_utility = spread.largest_magnitude;
  }
  scan = GroupScan{spread.largest, kWholeGroup, 0u};
  return true;
}

// Offers (score, index) to `sink` for every scanned candidate of group `group` that can still
// rank. A Sink provides threshold() (a score strictly below it can never be kept) and
// offer(score, index), and the threshold only rises; excluded candidates are offered with -inf
// while nothing is kept. `screen` is the group's screen and `bound` its group_noise_upper_bound
// (the CPU reads it from a table, the GPU computes it: the same value). utility_of_lane(lane)
// reads a lane's shifted utility again: it must return what the scan saw.
//
// This is the definition of a group's scoring (docs/group_maximum.md): the group is skipped when
// even its best utility plus the bound of its largest noise is below the threshold (rounding is
// monotone, so fma(c, u, noise) <= fma(c, u_max, bound) for each candidate). Otherwise its race
// is drawn: the leader's noise is exact at once and its score offered first, and each follower,
// whose noise is at most the leader's, draws its W only if the leader's noise could lift it to
// the threshold. A candidate is left out only when its exact score would be below the threshold,
// so the offers that matter are exactly those of scoring every candidate in full
// (candidate_noise).
// `blocks`: as group_race's.
template <class Blocks = AnyGeneratorBlocks, class Sink, class LaneUtility>
DPSELECT_HD DPSELECT_FORCEINLINE void score_scanned_group(const NoiseSpec& spec, std::uint64_t group,
                                                          std::uint32_t screen, double bound, const GroupScan& scan,
                                                          const LaneUtility& utility_of_lane, Sink& sink,
                                                          Blocks&& blocks = Blocks{}) {
  const std::uint64_t first_index = group * kCandidatesPerGroup;
  if (scan.excluded != 0 && sink.threshold() == -kInfinity) {
    for (unsigned int lanes = scan.excluded; lanes != 0; lanes &= lanes - 1) {
      sink.offer(-kInfinity, first_index + lowest_lane(lanes));
    }
  }
  if (scan.valid == 0 || fma_rn(spec.score_scale, scan.largest_utility, bound) < sink.threshold()) return;
  const GroupRace race = group_race(spec, group, screen, blocks);
  const double leader_noise = race_noise(spec.mechanism, race.leader_time);
  const double follower_bound = add_rn(leader_noise, kScreenMargin);
  // The leader first: its score is exact at once, and raises the threshold its followers meet.
  const unsigned int leader_bit = 1u << race.leader_lane;
  if ((scan.valid & leader_bit) != 0) {
    sink.offer(fma_rn(spec.score_scale, utility_of_lane(race.leader_lane), leader_noise),
               first_index + race.leader_lane);
  }
  for (unsigned int lanes = scan.valid & ~leader_bit; lanes != 0; lanes &= lanes - 1) {
    const unsigned int lane = lowest_lane(lanes);
    const double u = utility_of_lane(lane);
    const std::uint64_t index = first_index + lane;
    if (!(fma_rn(spec.score_scale, u, follower_bound) < sink.threshold())) {
      sink.offer(fma_rn(spec.score_scale, u, race_noise(spec.mechanism, follower_time(spec, race, index, blocks))),
                 index);
    }
  }
}

// utility(group * 32 + lane) as a double, shifted: score_scanned_group's second read of a lane.
template <class Utility>
struct UtilityOfLane {
  const NoiseSpec& spec;
  const Utility& utility;
  std::uint64_t first_index;
  DPSELECT_HD DPSELECT_FORCEINLINE double operator()(unsigned int lane) const {
    return shifted_utility(spec, static_cast<double>(utility(first_index + lane)));
  }
};

// scan_candidate over the lanes `lanes` (a lane_mask) of group `group`, in increasing order,
// reading utility(group*32 + l) for those lanes only.
template <class Utility>
DPSELECT_HD DPSELECT_FORCEINLINE GroupScan scan_group(const NoiseSpec& spec, std::uint64_t group, unsigned int lanes,
                                                      const Utility& utility, ShardResult& tally) {
  const std::uint64_t first_index = group * kCandidatesPerGroup;
  GroupScan scan;
  for (unsigned int rest = lanes; rest != 0; rest &= rest - 1) {
    const unsigned int lane = lowest_lane(rest);
    scan_candidate(spec, first_index + lane, lane, static_cast<double>(utility(first_index + lane)), tally, scan);
  }
  return scan;
}

// Scans and scores the lanes `lanes` of group `group`: a utility is read once by the scan and
// again if it is scored, so it must be a pure function of the index. The functor path and the
// CPU's partial groups.
template <class Blocks = AnyGeneratorBlocks, class Sink, class Utility>
DPSELECT_HD DPSELECT_FORCEINLINE void score_group(const NoiseSpec& spec, std::uint64_t group, std::uint32_t screen,
                                                  unsigned int lanes, const Utility& utility, ShardResult& tally,
                                                  Sink& sink, Blocks&& blocks = Blocks{}) {
  const GroupScan scan = scan_group(spec, group, lanes, utility, tally);
  score_scanned_group(spec, group, screen, group_noise_upper_bound(spec.mechanism, screen), scan,
                      UtilityOfLane<Utility>{spec, utility, group * kCandidatesPerGroup}, sink, blocks);
}

// Per-thread running state of a fused single-pick pass: the tally and the best candidate.
struct ShardAccumulator {
  ShardResult result;

  DPSELECT_HD DPSELECT_FORCEINLINE double threshold() const { return result.best_score; }

  DPSELECT_HD DPSELECT_FORCEINLINE void offer(double score, std::uint64_t index) {
    if (score > result.best_score || (score == result.best_score && index < result.best_index)) {
      result.best_score = score;
      result.best_index = index;
    }
  }
};

// The groups of 32 candidates (global index / 32) that overlap the candidates [begin, end), with
// the lanes of each that lie inside; end > begin.
struct GroupRange {
  std::uint64_t begin;  // first candidate
  std::uint64_t end;    // one past the last candidate

  DPSELECT_HD DPSELECT_FORCEINLINE std::uint64_t first_group() const {
    return begin / kCandidatesPerGroup;
  }
  DPSELECT_HD DPSELECT_FORCEINLINE std::uint64_t group_count() const {
    return (end - 1) / kCandidatesPerGroup - first_group() + 1;
  }
  // Lanes of group `group` that lie inside [begin, end).
  DPSELECT_HD DPSELECT_FORCEINLINE unsigned int lane_begin(std::uint64_t group) const {
    const std::uint64_t first = group * kCandidatesPerGroup;
    return first < begin ? static_cast<unsigned int>(begin - first) : 0u;
  }
  DPSELECT_HD DPSELECT_FORCEINLINE unsigned int lane_end(std::uint64_t group) const {
    const std::uint64_t first = group * kCandidatesPerGroup;
    return end - first < kCandidatesPerGroup ? static_cast<unsigned int>(end - first)
                                                    : static_cast<unsigned int>(kCandidatesPerGroup);
  }
  // Lanes of group `group` inside [begin, end) as a lane_mask: none for a group outside.
  DPSELECT_HD DPSELECT_FORCEINLINE unsigned int lanes(std::uint64_t group) const {
    if (group < first_group() || group - first_group() >= group_count()) return 0;
    return lane_mask(lane_begin(group), lane_end(group));
  }
};

}  // namespace dpselect::detail
