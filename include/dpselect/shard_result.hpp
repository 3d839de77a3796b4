// The partial result of evaluating a release over a sub-range of candidates, and the
// associative merge that combines shards. Shared by the CPU path, the GPU kernels and users who
// shard a range across devices or processes (for MPI: reduce with merge() as a custom op).
//
// A ShardResult is SECRET: it holds a noisy score and the largest |utility| of its shard, which
// the release's privacy guarantee does not cover. Pass it only to merge() and Release::finish()
// (and between the processes of one sharded release over a private channel); publish only the
// Selection that finish() returns.
#pragma once

#include <cstdint>

#include "dpselect/detail/host_device.hpp"
#include "dpselect/noise.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/types.hpp"

namespace dpselect {

inline constexpr std::uint64_t kNoIndex = ~std::uint64_t{0};

struct ShardResult {
  // Best noisy score seen and its global index; ties go to the smallest index.
  double best_score = -detail::kInfinity;
  std::uint64_t best_index = kNoIndex;
  // Largest |utility| over the finite utilities (bounds the floating-point slack).
  double max_abs_utility = 0.0;
  // Number of candidates evaluated (excluded ones included).
  std::uint64_t candidates = 0;
  // Smallest global index whose utility was NaN, +inf, beyond SelectionParams::utility_bound, or
  // too large to scale.
  std::uint64_t first_invalid_index = kNoIndex;
  double first_invalid_value = 0.0;
  ExecutedOn executed_on = ExecutedOn::none;
  // Set by the release that produced it: a key- and stream-derived tag, so finish() refuses a
  // foreign result, and a fingerprint of the evaluated ranges (summed by merge), so it refuses
  // a merge that misses a shard or counts one twice.
  std::uint64_t release_tag = 0;
  std::uint64_t coverage = 0;
  bool from_several_releases = false;
};

// Associative and commutative, so any partition of a range and any reduction order give the
// same result as one pass.
DPSELECT_HD DPSELECT_FORCEINLINE ShardResult merge(const ShardResult& a, const ShardResult& b) {
  ShardResult out;
  const bool a_wins = a.best_score > b.best_score ||
                      (a.best_score == b.best_score && a.best_index < b.best_index);
  out.best_score = a_wins ? a.best_score : b.best_score;
  out.best_index = a_wins ? a.best_index : b.best_index;
  out.max_abs_utility = a.max_abs_utility > b.max_abs_utility ? a.max_abs_utility : b.max_abs_utility;
  out.candidates = a.candidates + b.candidates;
  const bool a_invalid_first = a.first_invalid_index < b.first_invalid_index;
  out.first_invalid_index = a_invalid_first ? a.first_invalid_index : b.first_invalid_index;
  out.first_invalid_value = a_invalid_first ? a.first_invalid_value : b.first_invalid_value;
  out.executed_on = static_cast<ExecutedOn>(static_cast<std::uint8_t>(a.executed_on) |
                                            static_cast<std::uint8_t>(b.executed_on));
  out.release_tag = a.candidates != 0 ? a.release_tag : b.release_tag;
  out.coverage = a.coverage + b.coverage;  // wraps: a fingerprint, not a count
  out.from_several_releases = a.from_several_releases || b.from_several_releases ||
                              (a.candidates != 0 && b.candidates != 0 && a.release_tag != b.release_tag);
  return out;
}

struct MergeShards {
  DPSELECT_HD DPSELECT_FORCEINLINE ShardResult operator()(const ShardResult& a,
                                                          const ShardResult& b) const {
    return merge(a, b);
  }
};

namespace detail {

// Everything a kernel or CPU worker needs to score candidates of one release. Trivially
// copyable; passed to kernels by value.
struct NoiseSpec {
  Mechanism mechanism;
  // Multiplier that turns a utility into a score in units of the noise scale: eps/(2*Delta),
  // or eps/Delta for monotone utilities.
  double score_scale;
  RandomKey key;
  std::uint64_t stream;
  // Largest |utility| accepted: SelectionParams::utility_bound, or +inf when none was given.
  double utility_limit;
};

// Above this |score_scale * utility| a utility is rejected outright (the slack check in finish()
// rejects far smaller ones); it keeps every score finite, so screening never hides an overflow.
inline constexpr double kLargestScaledUtility = 0x1p1000;

// Upper bound of candidate noise from its screen bits (noise.hpp).
DPSELECT_HD DPSELECT_FORCEINLINE double noise_upper_bound(Mechanism mechanism, std::uint32_t screen) {
  switch (mechanism) {
    case Mechanism::exponential: return noise::gumbel_upper_bound(screen);
    case Mechanism::permute_and_flip: return noise::exponential_upper_bound(screen);
    default: return noise::laplace_upper_bound(screen);
  }
}

// The standard noise of candidate `index` whose screen bits are `screen`.
// Blocks is AnyGeneratorBlocks or, where the key's generator is known at compile time,
// GeneratorBlocks<G> (random_key.hpp): the same bits.
template <class Blocks = AnyGeneratorBlocks>
DPSELECT_HD DPSELECT_FORCEINLINE double candidate_noise(const NoiseSpec& spec, std::uint64_t index,
                                                       std::uint32_t screen) {
  const RandomBlock detail = Blocks::at(spec.key, spec.stream, noise::kDetailPositionOffset + index);
  const RandomBlock bits = noise::candidate_bits(screen, detail);
  switch (spec.mechanism) {
    case Mechanism::exponential: return noise::gumbel(bits);
    case Mechanism::permute_and_flip: return noise::exponential(bits);
    default: return noise::laplace(bits);
  }
}

// Noisy score of candidate `index` with finite utility `utility`: score_scale * utility +
// standard noise, rounded once. A function of (key, stream, index, utility) only; the fused
// passes compute exactly this for every candidate that can win.
DPSELECT_HD DPSELECT_FORCEINLINE double noisy_score(const NoiseSpec& spec, std::uint64_t index,
                                                   double utility) {
  const RandomBlock group = random_block(spec.key, spec.stream, index / noise::kCandidatesPerGroup);
  const std::uint32_t screen =
      noise::screen_bits(group, static_cast<unsigned int>(index % noise::kCandidatesPerGroup));
  return fma_rn(spec.score_scale, utility, candidate_noise(spec, index, screen));
}

DPSELECT_HD DPSELECT_FORCEINLINE void record_invalid(ShardResult& tally, std::uint64_t index, double value) {
  if (index < tally.first_invalid_index) {
    tally.first_invalid_index = index;
    tally.first_invalid_value = value;
  }
}

// The lanes [lane_begin, lane_end) of a group as a bit mask (bit l for lane l).
DPSELECT_HD DPSELECT_FORCEINLINE unsigned int lane_mask(unsigned int lane_begin, unsigned int lane_end) {
  return ((1u << lane_end) - 1u) & ~((1u << lane_begin) - 1u);
}

DPSELECT_HD DPSELECT_FORCEINLINE unsigned int lowest_lane(unsigned int lanes) {
#if defined(__CUDA_ARCH__)
  return static_cast<unsigned int>(__ffs(static_cast<int>(lanes)) - 1);
#else
  return static_cast<unsigned int>(std::countr_zero(lanes));
#endif
}

// Scores the candidates group*8 + l for the lanes l in `lanes` (a lane_mask), whose utilities are
// utilities[l] (the other entries are not read): counts them, checks and records their utilities
// in `tally`, and hands (score, index) to `sink` for every candidate that can still rank. A Sink
// provides threshold() (a score strictly below it can never be kept) and offer(score, index);
// excluded candidates are offered with -inf. `group_block` is random_block(spec.key, spec.stream,
// group) (CPU loops read it through SequentialBlocks, where one ChaCha20 block serves four
// groups); Blocks gives the detail blocks (candidate_noise). This is the definition of a group's
// scoring; the CPU passes run host/engine/screened_group.hpp's score_groups, which gives the same
// result bit for bit with vectorized screening.
//
// Two steps, so that on a GPU every lane of the common work is unrolled and register-resident:
// the checks and the screen test of every lane, then, in lane order, the exact score of the few
// lanes that passed. A lane passes the first test against the threshold at the start of the
// group and takes it again against the current one before its exact score, and the threshold
// only rises, so the offers are exactly those of testing and scoring each lane in turn. The
// second step reads a passing lane's utility again with utility_of_lane(lane), so that the
// eight utilities need not stay in registers across the exact scoring.
template <class Blocks = AnyGeneratorBlocks, class Sink, class LaneUtility>
DPSELECT_HD DPSELECT_FORCEINLINE void score_group_values(const NoiseSpec& spec, std::uint64_t group,
                                                         const RandomBlock& group_block, unsigned int lanes,
                                                         const double (&utilities)[noise::kCandidatesPerGroup],
                                                         const LaneUtility& utility_of_lane, ShardResult& tally,
                                                         Sink& sink) {
  const std::uint64_t first_index = group * noise::kCandidatesPerGroup;
  const double threshold = sink.threshold();
  unsigned int may_rank = 0;
  DPSELECT_UNROLL
  for (unsigned int lane = 0; lane < noise::kCandidatesPerGroup; ++lane) {
    if (((lanes >> lane) & 1u) == 0) continue;
    const double u = utilities[lane];
    ++tally.candidates;
    if (is_nan(u) || u == kInfinity) {
      record_invalid(tally, first_index + lane, u);
      continue;
    }
    if (u == -kInfinity) {  // excluded candidate: offered with -inf, can never be selected
      may_rank |= 1u << lane;
      continue;
    }
    const double magnitude = u < 0 ? -u : u;
    if (magnitude > tally.max_abs_utility) tally.max_abs_utility = magnitude;
    const double scaled = mul_rn(spec.score_scale, magnitude);
    if (!(scaled <= kLargestScaledUtility) || !(magnitude <= spec.utility_limit)) {
      record_invalid(tally, first_index + lane, u);
      continue;
    }
    // Screening: the score is at most fma(c, u, bound) (rounding is monotone), so a candidate
    // whose bound is below the threshold can never be kept, nor tie with what is kept.
    const double bound = noise_upper_bound(spec.mechanism, noise::screen_bits(group_block, lane));
    if (!(fma_rn(spec.score_scale, u, bound) < threshold)) may_rank |= 1u << lane;
  }
  while (may_rank != 0) {
    const unsigned int lane = lowest_lane(may_rank);
    may_rank &= may_rank - 1;
    const double u = utility_of_lane(lane);
    const std::uint64_t index = first_index + lane;
    if (u == -kInfinity) {
      sink.offer(-kInfinity, index);
      continue;
    }
    const std::uint32_t screen = noise::screen_bits(group_block, lane);
    if (fma_rn(spec.score_scale, u, noise_upper_bound(spec.mechanism, screen)) < sink.threshold()) continue;
    sink.offer(fma_rn(spec.score_scale, u, candidate_noise<Blocks>(spec, index, screen)), index);
  }
}

// utility(group * 8 + lane) as a double: score_group's second read of a passing lane.
template <class Utility>
struct UtilityOfLane {
  const Utility& utility;
  std::uint64_t first_index;
  DPSELECT_HD DPSELECT_FORCEINLINE double operator()(unsigned int lane) const {
    return static_cast<double>(utility(first_index + lane));
  }
};

// score_group_values over lanes [lane_begin, lane_end), reading utility(group*8 + l) for those
// lanes only (twice for a lane that may rank: a utility must be a pure function of the index).
template <class Blocks = AnyGeneratorBlocks, class Sink, class Utility>
DPSELECT_HD DPSELECT_FORCEINLINE void score_group(const NoiseSpec& spec, std::uint64_t group,
                                                  const RandomBlock& group_block, unsigned int lane_begin,
                                                  unsigned int lane_end, const Utility& utility,
                                                  ShardResult& tally, Sink& sink) {
  const unsigned int lanes = lane_mask(lane_begin, lane_end);
  const UtilityOfLane<Utility> utility_of_lane{utility, group * noise::kCandidatesPerGroup};
  double utilities[noise::kCandidatesPerGroup];
  DPSELECT_UNROLL
  for (unsigned int lane = 0; lane < noise::kCandidatesPerGroup; ++lane) {
    utilities[lane] = ((lanes >> lane) & 1u) != 0 ? utility_of_lane(lane) : 0.0;
  }
  score_group_values<Blocks>(spec, group, group_block, lanes, utilities, utility_of_lane, tally, sink);
}

// Per-thread running state of a fused single-pick pass: the tally and the best candidate.
struct ShardAccumulator {
  ShardResult result;

  template <class Blocks = AnyGeneratorBlocks, class Utility>
  DPSELECT_HD DPSELECT_FORCEINLINE void add_group(const NoiseSpec& spec, std::uint64_t group,
                                                  const RandomBlock& group_block, unsigned int lane_begin,
                                                  unsigned int lane_end, const Utility& utility) {
    score_group<Blocks>(spec, group, group_block, lane_begin, lane_end, utility, result, *this);
  }

  DPSELECT_HD DPSELECT_FORCEINLINE double threshold() const { return result.best_score; }

  DPSELECT_HD DPSELECT_FORCEINLINE void offer(double score, std::uint64_t index) {
    if (score > result.best_score || (score == result.best_score && index < result.best_index)) {
      result.best_score = score;
      result.best_index = index;
    }
  }
};

// The groups of 8 candidates (global index / 8) that overlap the candidates [begin, end), with
// the lanes of each that lie inside; end > begin.
struct GroupRange {
  std::uint64_t begin;  // first candidate
  std::uint64_t end;    // one past the last candidate

  DPSELECT_HD DPSELECT_FORCEINLINE std::uint64_t first_group() const {
    return begin / noise::kCandidatesPerGroup;
  }
  DPSELECT_HD DPSELECT_FORCEINLINE std::uint64_t group_count() const {
    return (end - 1) / noise::kCandidatesPerGroup - first_group() + 1;
  }
  // Lanes of group `group` that lie inside [begin, end).
  DPSELECT_HD DPSELECT_FORCEINLINE unsigned int lane_begin(std::uint64_t group) const {
    const std::uint64_t first = group * noise::kCandidatesPerGroup;
    return first < begin ? static_cast<unsigned int>(begin - first) : 0u;
  }
  DPSELECT_HD DPSELECT_FORCEINLINE unsigned int lane_end(std::uint64_t group) const {
    const std::uint64_t first = group * noise::kCandidatesPerGroup;
    return end - first < noise::kCandidatesPerGroup ? static_cast<unsigned int>(end - first)
                                                    : static_cast<unsigned int>(noise::kCandidatesPerGroup);
  }
  // Lanes of group `group` inside [begin, end) as a lane_mask: none for a group outside.
  DPSELECT_HD DPSELECT_FORCEINLINE unsigned int lanes(std::uint64_t group) const {
    if (group < first_group() || group - first_group() >= group_count()) return 0;
    return lane_mask(lane_begin(group), lane_end(group));
  }
};

}  // namespace detail
}  // namespace dpselect
