// The partial result of evaluating a release over a sub-range of candidates, and the
// associative merge that combines shards. Shared by the CPU path, the GPU kernels and users who
// shard a range across devices or processes (for MPI: reduce with merge() as a custom op).
#pragma once

#include <cstdint>

#include "dpselect/detail/host_device.hpp"
#include "dpselect/noise.hpp"
#include "dpselect/philox.hpp"
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
  // Smallest global index whose utility was NaN or +inf, or whose scaled score overflowed.
  std::uint64_t first_invalid_index = kNoIndex;
  double first_invalid_value = 0.0;
  ExecutedOn executed_on = ExecutedOn::none;
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
  PhiloxKey key;
  std::uint64_t stream;
};

// Noisy score of candidate `index` with utility `utility` (finite): score_scale * utility +
// standard noise, rounded once. The noise is a function of (key, stream, index) only.
DPSELECT_HD DPSELECT_FORCEINLINE double noisy_score(const NoiseSpec& spec, std::uint64_t index,
                                                   double utility) {
  const RandomBlock bits = philox_block(spec.key, spec.stream, index);
  double n;
  switch (spec.mechanism) {
    case Mechanism::exponential: n = noise::gumbel(bits); break;
    case Mechanism::permute_and_flip: n = noise::exponential(bits); break;
    default: n = noise::laplace(bits); break;
  }
  return fma_rn(spec.score_scale, utility, n);
}

// Per-thread running state of a fused pass.
struct ShardAccumulator {
  ShardResult result;

  DPSELECT_HD DPSELECT_FORCEINLINE void add(const NoiseSpec& spec, std::uint64_t index,
                                            double utility) {
    ++result.candidates;
    if (is_nan(utility) || utility == kInfinity) {
      record_invalid(index, utility);
      return;
    }
    if (utility == -kInfinity) {  // excluded candidate: can never be selected
      offer(-kInfinity, index);
      return;
    }
    const double magnitude = utility < 0 ? -utility : utility;
    if (magnitude > result.max_abs_utility) result.max_abs_utility = magnitude;
    const double score = noisy_score(spec, index, utility);
    if (score == kInfinity || score == -kInfinity) {  // score_scale * utility overflowed
      record_invalid(index, utility);
      return;
    }
    offer(score, index);
  }

  DPSELECT_HD DPSELECT_FORCEINLINE void offer(double score, std::uint64_t index) {
    if (score > result.best_score || (score == result.best_score && index < result.best_index)) {
      result.best_score = score;
      result.best_index = index;
    }
  }

  DPSELECT_HD DPSELECT_FORCEINLINE void record_invalid(std::uint64_t index, double value) {
    if (index < result.first_invalid_index) {
      result.first_invalid_index = index;
      result.first_invalid_value = value;
    }
  }
};

}  // namespace detail
}  // namespace dpselect
