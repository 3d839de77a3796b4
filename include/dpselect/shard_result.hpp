// SPDX-License-Identifier: Apache-2.0
/// @file
/// The partial result of evaluating a release over a sub-range of candidates, and the
/// associative merge that combines shards. Shared by the CPU path, the GPU kernels and users who
/// shard a range across devices or processes (for MPI: reduce with merge() as a custom op).
///
/// A ShardResult is SECRET: it holds a noisy score and the largest |utility - reference| of its
/// shard, which the release's privacy guarantee does not cover. Pass it only to merge() and Release::finish()
/// (and between the processes of one sharded release over a private channel); publish only the
/// Selection that finish() returns.
#pragma once

#include <cstdint>

#include "dpselect/detail/host_device.hpp"
#include "dpselect/types.hpp"

namespace dpselect {

/// The index of no candidate: ShardResult::best_index of a shard in which every candidate was
/// excluded (utility -inf), and ShardResult::first_invalid_index of a shard without invalid
/// utilities.
inline constexpr std::uint64_t kNoIndex = ~std::uint64_t{0};

/// The partial result of one release over one shard (a sub-range of its candidates).
///
/// SECRET: it holds the shard's best noisy score and the largest |utility - reference| of its
/// utilities, neither of which the release's privacy guarantee covers. Combine shards with merge()
/// (any order, any grouping) and hand the total to `Release::finish()`, which checks that it came
/// from this release and covers every candidate exactly once; publish only the Selection it
/// returns.
struct ShardResult {
  /// Best noisy score of the shard; ties go to the smallest index. -inf when the shard is empty or
  /// every candidate in it is excluded.
  double best_score = -detail::kInfinity;
  /// Global index of the candidate with best_score; kNoIndex when there is none.
  std::uint64_t best_index = kNoIndex;
  /// Largest |utility - reference| over the finite utilities, the reference being the release's
  /// (SelectionParams::utility_reference): it bounds the floating-point slack.
  double max_abs_shifted_utility = 0.0;
  /// Number of candidates evaluated (excluded ones included).
  std::uint64_t candidates = 0;
  /// Smallest global index whose utility was NaN, +inf, beyond SelectionParams::utility_bound, or
  /// too large to scale; kNoIndex when every utility was valid. `Release::finish()` refuses a
  /// result with an invalid utility (InvalidArgument naming the index and the value).
  std::uint64_t first_invalid_index = kNoIndex;
  /// The utility at first_invalid_index (0 when there is none).
  double first_invalid_value = 0.0;
  /// Which backends evaluated the shard (both, after a merge of CPU and GPU shards).
  ExecutedOn executed_on = ExecutedOn::none;
  /// A tag derived from the key and the release's stream, set by the release that produced the
  /// result, so that `Release::finish()` refuses a result of another release (UsageError).
  std::uint64_t release_tag = 0;
  /// A fingerprint of the evaluated index ranges, summed by merge(), so that `Release::finish()`
  /// refuses a merge that misses a shard or counts one twice (UsageError).
  std::uint64_t coverage = 0;
  /// True when merge() combined results of different releases (finish() then refuses it).
  bool from_several_releases = false;
};

/// Combines the results of two shards of one release into the result of their union.
///
/// Associative and commutative, so any partition of a range and any reduction order give the
/// same result as one pass (for MPI: reduce with it as a custom operation; on the GPU: as the
/// reduction operator of CUB). Callable in host and device code.
/// @param a The result of one shard.
/// @param b The result of another shard of the same release, disjoint from `a`'s.
/// @return The best score of the two (ties to the smaller index), the larger
///   max_abs_shifted_utility, the summed candidates and coverage, the first invalid utility of
///   the two and the union of the backends. Checks nothing: `Release::finish()` checks the total.
DPSELECT_HD DPSELECT_FORCEINLINE ShardResult merge(const ShardResult& a, const ShardResult& b) {
  ShardResult out;
  const bool a_wins = a.best_score > b.best_score ||
                      (a.best_score == b.best_score && a.best_index < b.best_index);
  out.best_score = a_wins ? a.best_score : b.best_score;
  out.best_index = a_wins ? a.best_index : b.best_index;
  out.max_abs_shifted_utility =
      a.max_abs_shifted_utility > b.max_abs_shifted_utility ? a.max_abs_shifted_utility : b.max_abs_shifted_utility;
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

/// merge() as a function object, for reductions that take one (`std::reduce`, CUB, Thrust).
struct MergeShards {
  /// merge(a, b).
  DPSELECT_HD DPSELECT_FORCEINLINE ShardResult operator()(const ShardResult& a,
                                                          const ShardResult& b) const {
    return merge(a, b);
  }
};

}  // namespace dpselect
