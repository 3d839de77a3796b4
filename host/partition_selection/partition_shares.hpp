// SPDX-License-Identifier: Apache-2.0
// How partition selection's CPU passes share their work among threads without changing a bit of
// the result: contiguous shares cut where a run of equal users or keys ends, blocks of the
// release's stream drawn eight at a time (random_blocks_at), and the coins of sorted keys decided
// share by share and concatenated in order. Internal to partition_passes.cpp and
// weighted_passes.cpp.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "dpselect/detail/release_access.hpp"
#include "dpselect/random_key.hpp"
#include "partition_selection/partition_passes.hpp"
#include "partition_selection/partition_randomness.hpp"

namespace dpselect::detail {

// The first index of [0, size] at or after `index` that starts a run of equal `run_of` values.
template <class Value, class RunOf>
std::size_t run_start_at_or_after(const std::vector<Value>& values, std::size_t index, RunOf run_of) {
  while (index > 0 && index < values.size() && run_of(values[index]) == run_of(values[index - 1])) ++index;
  return index;
}

// Cuts `values` into `shares` contiguous shares that end where a run of equal `run_of` ends:
// boundaries[t] to boundaries[t + 1] is share t.
template <class Value, class RunOf>
std::vector<std::size_t> run_aligned_shares(const std::vector<Value>& values, int shares, RunOf run_of) {
  std::vector<std::size_t> boundaries(static_cast<std::size_t>(shares) + 1, values.size());
  boundaries[0] = 0;
  for (int t = 1; t < shares; ++t) {
    const std::size_t even = values.size() * static_cast<std::size_t>(t) / static_cast<std::size_t>(shares);
    boundaries[t] = std::max(boundaries[t - 1], run_start_at_or_after(values, even, run_of));
  }
  return boundaries;
}

// use(i, the block at position_of(i)) for i = 0 .. count - 1, in order, eight blocks at a time.
template <class PositionOf, class Use>
void for_each_block(const ContextAccess::KeyedStream& drawn, std::size_t count, PositionOf position_of, Use use) {
  std::uint64_t positions[kChaChaBatchBlocks];
  RandomBlock blocks[kChaChaBatchBlocks];
  for (std::size_t first = 0; first < count; first += kChaChaBatchBlocks) {
    const std::size_t batch = std::min<std::size_t>(kChaChaBatchBlocks, count - first);
    for (std::size_t j = 0; j < kChaChaBatchBlocks; ++j) positions[j] = position_of(first + std::min(j, batch - 1));
    random_blocks_at(drawn.key, drawn.stream, positions, blocks);
    for (std::size_t j = 0; j < batch; ++j) use(first + j, blocks[j]);
  }
}

// The keys of `sorted` (sorted so that each key's entries form one run, key_of(entry) its key)
// for which keep(first, last, block) is true, [first, last) the key's run and block the one at
// key_coin_position(key); ascending, with the number of distinct keys. Each thread decides the
// keys of one contiguous share.
template <class Entry, class KeyOf, class Keep>
ReleasedKeys decide_key_runs(const std::vector<Entry>& sorted, KeyOf key_of, const ContextAccess::KeyedStream& drawn,
                             Keep keep) {
  const int threads = partition_threads(sorted.size());
  const std::vector<std::size_t> shares = run_aligned_shares(sorted, threads, key_of);
  std::vector<std::uint64_t> distinct_by_share(static_cast<std::size_t>(threads), 0);
  std::vector<std::vector<std::uint64_t>> released_by_share(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
  {
    const auto share = static_cast<std::size_t>(omp_get_thread_num());
    std::vector<std::size_t> run_starts;  // each distinct key's first index, and the share's end
    for (std::size_t i = shares[share]; i < shares[share + 1]; ++i) {
      if (i == shares[share] || key_of(sorted[i]) != key_of(sorted[i - 1])) run_starts.push_back(i);
    }
    distinct_by_share[share] = run_starts.size();
    run_starts.push_back(shares[share + 1]);
    std::vector<std::uint64_t>& released = released_by_share[share];
    for_each_block(
        drawn, run_starts.size() - 1,
        [&](std::size_t r) { return key_coin_position(key_of(sorted[run_starts[r]])); },
        [&](std::size_t r, const RandomBlock& block) {
          if (keep(run_starts[r], run_starts[r + 1], block)) released.push_back(key_of(sorted[run_starts[r]]));
        });
  }
  ReleasedKeys released;
  for (int t = 0; t < threads; ++t) {
    released.keys.insert(released.keys.end(), released_by_share[t].begin(), released_by_share[t].end());
    released.distinct += distinct_by_share[t];
  }
  return released;
}

}  // namespace dpselect::detail
