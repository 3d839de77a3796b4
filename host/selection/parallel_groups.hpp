// SPDX-License-Identifier: Apache-2.0
// The CPU path's driver: the groups of 32 candidates of a range, in fixed chunks, on all cores
// (OpenMP), each thread with its own state, merged at the end. Chunks are scheduled
// dynamically, but the states merge associatively, so the answer never depends on the thread
// count or schedule.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>

#include "dpselect/context.hpp"
#include "dpselect/detail/screened_scoring.hpp"
#include "dpselect/shard_result.hpp"

namespace dpselect::detail {

// Groups of 32 candidates one worker scores at a time: large enough to amortize scheduling,
// small enough that the buffer of a generated range stays in L2, and the screens of exactly one
// batch of ChaCha20 blocks (kChaChaBatchBlocks x 32 groups), so no batch is computed twice.
inline constexpr std::uint64_t kChunkGroups = 256;
inline constexpr std::uint64_t kChunkCandidates = kChunkGroups * kCandidatesPerGroup;

// Runs score_groups(groups, first_group, end_group, state) over the groups of `range` in
// kChunkGroups pieces aligned by global group index (a shard's first and last pieces may be
// shorter), each thread starting from a copy of `initial`, then folds every thread's state into
// `initial` with merge_into(total, state). A throwing piece stops the pass and the exception is
// rethrown here.
template <class State, class ScoreGroups, class MergeInto>
State parallel_groups(IndexRange range, State initial, ScoreGroups score_groups, MergeInto merge_into) {
  const GroupRange groups{range.begin, range.end};
  const std::uint64_t first_group = groups.first_group();
  const std::uint64_t end_group = first_group + groups.group_count();
  const std::uint64_t first_chunk = first_group / kChunkGroups;
  const std::uint64_t chunks = (end_group - 1) / kChunkGroups - first_chunk + 1;
  auto run_chunk = [&](std::uint64_t chunk, State& state) {
    const std::uint64_t first = std::max(first_group, (first_chunk + chunk) * kChunkGroups);
    const std::uint64_t last = std::min(end_group, (first_chunk + chunk + 1) * kChunkGroups);
    score_groups(groups, first, last, state);
  };
  if (chunks == 1) {  // small inputs: no thread start-up
    run_chunk(0, initial);
    return initial;
  }
  State total = initial;
  std::mutex merge_mutex;
  std::exception_ptr failure;
  std::atomic<bool> failed{false};
#pragma omp parallel
  {
    State state = initial;
#pragma omp for schedule(dynamic, 1)
    for (std::uint64_t chunk = 0; chunk < chunks; ++chunk) {
      if (failed.load(std::memory_order_relaxed)) continue;
      try {
        run_chunk(chunk, state);
      } catch (...) {
        std::lock_guard lock(merge_mutex);
        if (!failure) failure = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
      }
    }
    std::lock_guard lock(merge_mutex);
    merge_into(total, state);
  }
  if (failure) std::rethrow_exception(failure);
  return total;
}

}  // namespace dpselect::detail
