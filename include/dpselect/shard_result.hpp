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

inline constexpr std::uint64_t kNoIndex = ~std::uint64_t{0};

struct ShardResult {
  // Best noisy score seen and its global index; ties go to the smallest index.
  double best_score = -detail::kInfinity;
  std::uint64_t best_index = kNoIndex;
  // Largest |utility - reference| over the finite utilities, the reference being the release's
  // (NoiseSpec::utility_reference): it bounds the floating-point slack.
  double max_abs_shifted_utility = 0.0;
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

struct MergeShards {
  DPSELECT_HD DPSELECT_FORCEINLINE ShardResult operator()(const ShardResult& a,
                                                          const ShardResult& b) const {
    return merge(a, b);
  }
};

}  // namespace dpselect
