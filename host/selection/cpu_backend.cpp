// SPDX-License-Identifier: Apache-2.0
#include "selection/cpu_backend.hpp"

#include <algorithm>
#include <vector>

#include "dpselect/detail/release_access.hpp"
#include "dpselect/detail/screened_scoring.hpp"
#include "selection/parallel_groups.hpp"
#include "selection/screened_group.hpp"

namespace dpselect::detail {
namespace {

// Single-pick passes: per-thread ShardAccumulators merged with the associative merge().
template <class ScoreGroups>
ShardResult accumulate_groups(IndexRange range, ScoreGroups score_groups, double known_score = -kInfinity) {
  ShardAccumulator initial;
  initial.result.executed_on = ExecutedOn::cpu;
  // The screen's threshold starts at a score reached elsewhere (no index: any candidate that
  // ties it here has a smaller index than kNoIndex and is kept, as in one pass).
  initial.result.best_score = known_score;
  return parallel_groups(range, initial, score_groups,
                         [](ShardAccumulator& total, const ShardAccumulator& part) {
                           total.result = merge(total.result, part.result);
                         })
      .result;
}

template <class T>
ShardResult evaluate_array(const NoiseSpec& spec, const T* utilities, IndexRange range) {
  const ScreenBounds& bounds = screen_bounds(spec.mechanism);
  return accumulate_groups(range, [&](const GroupRange& groups, std::uint64_t first, std::uint64_t last,
                                    ShardAccumulator& accumulator) {
    SequentialBlocks screen_blocks(spec.key, spec.stream);
    score_groups(spec, bounds, groups, first, last, screen_blocks, utilities, range.begin, accumulator.result,
                 accumulator);
  });
}

}  // namespace

ShardResult cpu_evaluate_array(const NoiseSpec& spec, const float* utilities, IndexRange range) {
  return evaluate_array(spec, utilities, range);
}

ShardResult cpu_evaluate_array(const NoiseSpec& spec, const double* utilities, IndexRange range) {
  return evaluate_array(spec, utilities, range);
}

ShardResult cpu_evaluate_generated(const NoiseSpec& spec, IndexRange range, FillUtilities fill,
                                   const void* functor, double known_score) {
  const ScreenBounds& bounds = screen_bounds(spec.mechanism);
  return accumulate_groups(
      range,
      [&](const GroupRange& groups, std::uint64_t first, std::uint64_t last, ShardAccumulator& accumulator) {
        // The candidates of groups [first, last) that lie in the range, computed in one call.
        const std::uint64_t first_index = std::max(range.begin, first * kCandidatesPerGroup);
        const std::uint64_t end_index = std::min(range.end, last * kCandidatesPerGroup);
        thread_local std::vector<double> buffer;
        buffer.resize(kChunkCandidates);
        fill(functor, first_index, end_index - first_index, buffer.data());
        SequentialBlocks screen_blocks(spec.key, spec.stream);
        score_groups(spec, bounds, groups, first, last, screen_blocks, buffer.data(), first_index,
                     accumulator.result, accumulator);
      },
      known_score);
}

ShardResult cpu_evaluate_generated(const NoiseSpec& spec, IndexRange range, FillUtilities fill,
                                   const void* functor) {
  return cpu_evaluate_generated(spec, range, fill, functor, -kInfinity);
}

}  // namespace dpselect::detail
