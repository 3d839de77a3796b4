#include "cpu_backend.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <vector>

#include <omp.h>

#include "dpselect/detail/release_access.hpp"

namespace dpselect::detail {
namespace {

// Groups of 8 candidates one worker scores at a time: large enough to amortize scheduling,
// small enough that the buffer of a generated range stays in L1/L2.
constexpr std::uint64_t kChunkGroups = 1024;
constexpr std::uint64_t kChunkCandidates = kChunkGroups * noise::kCandidatesPerGroup;

// Runs score_groups(groups, first_group, last_group + 1, accumulator) over the groups of
// `range` in kChunkGroups pieces on all cores and merges the per-thread accumulators. A
// throwing piece stops the pass and the exception is rethrown here.
template <class ScoreGroups>
ShardResult parallel_groups(IndexRange range, ScoreGroups score_groups) {
  const GroupRange groups{range.begin, range.end};
  ShardResult total;
  total.executed_on = ExecutedOn::cpu;
  const std::uint64_t group_count = groups.group_count();
  const std::uint64_t chunks = (group_count + kChunkGroups - 1) / kChunkGroups;
  auto run_chunk = [&](std::uint64_t chunk, ShardAccumulator& accumulator) {
    const std::uint64_t first = groups.first_group() + chunk * kChunkGroups;
    const std::uint64_t last = first + std::min(kChunkGroups, group_count - chunk * kChunkGroups);
    score_groups(groups, first, last, accumulator);
  };
  if (chunks == 1) {  // small inputs: no thread start-up
    ShardAccumulator accumulator;
    run_chunk(0, accumulator);
    return merge(total, accumulator.result);
  }
  std::mutex merge_mutex;
  std::exception_ptr failure;
  std::atomic<bool> failed{false};
#pragma omp parallel
  {
    ShardAccumulator accumulator;
#pragma omp for schedule(dynamic, 1)
    for (std::uint64_t chunk = 0; chunk < chunks; ++chunk) {
      if (failed.load(std::memory_order_relaxed)) continue;
      try {
        run_chunk(chunk, accumulator);
      } catch (...) {
        std::lock_guard lock(merge_mutex);
        if (!failure) failure = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
      }
    }
    std::lock_guard lock(merge_mutex);
    total = merge(total, accumulator.result);
  }
  if (failure) std::rethrow_exception(failure);
  return total;
}

template <class T>
ShardResult evaluate_array(const NoiseSpec& spec, const T* utilities, IndexRange range) {
  const auto utility = [utilities, begin = range.begin](std::uint64_t index) {
    return static_cast<double>(utilities[index - begin]);
  };
  return parallel_groups(range, [&](const GroupRange& groups, std::uint64_t first, std::uint64_t last,
                                    ShardAccumulator& accumulator) {
    for (std::uint64_t g = first; g < last; ++g) {
      accumulator.add_group(spec, g, groups.lane_begin(g), groups.lane_end(g), utility);
    }
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
                                   const void* functor) {
  return parallel_groups(range, [&](const GroupRange& groups, std::uint64_t first, std::uint64_t last,
                                    ShardAccumulator& accumulator) {
    // The candidates of groups [first, last) that lie in the range, computed in one call.
    const std::uint64_t first_index = std::max(range.begin, first * noise::kCandidatesPerGroup);
    const std::uint64_t end_index = std::min(range.end, last * noise::kCandidatesPerGroup);
    thread_local std::vector<double> buffer;
    buffer.resize(kChunkCandidates);
    fill(functor, first_index, end_index - first_index, buffer.data());
    const auto utility = [&](std::uint64_t index) { return buffer[index - first_index]; };
    for (std::uint64_t g = first; g < last; ++g) {
      accumulator.add_group(spec, g, groups.lane_begin(g), groups.lane_end(g), utility);
    }
  });
}

}  // namespace dpselect::detail
