// SPDX-License-Identifier: Apache-2.0
// How partition selection's CPU passes share their work among threads without changing a bit of
// the result: contiguous shares cut where a run of equal users or keys ends, blocks of the
// release's stream drawn eight at a time (random_blocks_at), and the coins of sorted keys decided
// share by share and concatenated in order, and a counting sort into buckets on every core (the
// chunks of a device, the ranks of an MPI job). Internal to the partition selection backends.
#pragma once

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "dpselect/detail/release_access.hpp"
#include "dpselect/random_key.hpp"
#include "partition_selection/partition_passes.hpp"
#include "random/partition_randomness.hpp"

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

// `values` by bucket_of (in [0, buckets)) in a stable counting sort: bucket b's values are
// [starts[b], starts[b + 1]) of `values` (buckets + 1 entries), in their first order.
template <class T>
struct Bucketed {
  std::vector<T> values;
  std::vector<std::size_t> starts;
};

// Each of the threads' contiguous shares counts its values' buckets, then writes each value after
// those of the same bucket from the shares before it: the result does not depend on the thread
// count.
template <class T, class BucketOf>
Bucketed<T> bucketed(const std::vector<T>& values, std::size_t buckets, BucketOf bucket_of) {
  const std::size_t count = values.size();
  const int threads = partition_threads(count);
  const auto share_begin = [&](int share) {
    return count * static_cast<std::size_t>(share) / static_cast<std::size_t>(threads);
  };
  // [share][bucket], each share's row a whole number of 64-byte lines (no false sharing for a few
  // buckets, as the ranks of a small job).
  const std::size_t row = (buckets + 7) / 8 * 8;
  std::vector<std::size_t> counts(static_cast<std::size_t>(threads) * row, 0);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int share = 0; share < threads; ++share) {
    std::size_t* const own = counts.data() + static_cast<std::size_t>(share) * row;
    for (std::size_t i = share_begin(share); i < share_begin(share + 1); ++i) ++own[bucket_of(values[i])];
  }
  Bucketed<T> grouped;
  grouped.starts.resize(buckets + 1);
  std::size_t total = 0;
  for (std::size_t bucket = 0; bucket < buckets; ++bucket) {
    grouped.starts[bucket] = total;
    for (int share = 0; share < threads; ++share) {
      std::size_t& slot = counts[static_cast<std::size_t>(share) * row + bucket];
      const std::size_t held = slot;
      slot = total;  // now where the share's next value of this bucket goes
      total += held;
    }
  }
  grouped.starts[buckets] = total;
  grouped.values.resize(count);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int share = 0; share < threads; ++share) {
    std::size_t* const next = counts.data() + static_cast<std::size_t>(share) * row;
    for (std::size_t i = share_begin(share); i < share_begin(share + 1); ++i) {
      grouped.values[next[bucket_of(values[i])]++] = values[i];
    }
  }
  return grouped;
}

// The bucket of `id` among 2^bits (1 <= bits <= 63): the top bits of its SplitMix64 mix, so that
// equal ids share one and the buckets of random-looking ids are close to equal.
inline std::size_t hash_bucket(std::uint64_t id, int bits) {
  return static_cast<std::size_t>(partition_user_mix(id) >> (64 - bits));
}

// `values` with each run of equal id_of(value) contiguous and ascending (T's operator<) inside it:
// a plain sort for a small range; else a counting sort into buckets of a hash of the id (about
// 2^14 values each, which sort in the cache; the bucket count a function of the size alone, so
// the order never depends on the thread count), each bucket then sorted on its own, the buckets
// shared among the cores. About half the time of sort_on_every_core on 10^8 16-byte records on 2
// cores; the ids come out in the buckets' order, not ascending.
template <class T, class IdOf>
std::vector<T> sorted_in_hash_buckets(std::vector<T> values, IdOf id_of) {
  if (values.size() < kPartitionParallelMinimum) {
    std::sort(values.begin(), values.end());
    return values;
  }
  const int bits = std::clamp(static_cast<int>(std::bit_width(values.size() >> 14)), 1, 16);
  Bucketed<T> grouped =
      bucketed(values, std::size_t{1} << bits, [&](const T& value) { return hash_bucket(id_of(value), bits); });
  values = {};
  const auto buckets = static_cast<std::ptrdiff_t>(grouped.starts.size() - 1);
#pragma omp parallel for schedule(dynamic, 16) num_threads(partition_threads(grouped.values.size()))
  for (std::ptrdiff_t b = 0; b < buckets; ++b) {
    std::sort(grouped.values.begin() + static_cast<std::ptrdiff_t>(grouped.starts[b]),
              grouped.values.begin() + static_cast<std::ptrdiff_t>(grouped.starts[b + 1]));
  }
  return std::move(grouped.values);
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
