// SPDX-License-Identifier: Apache-2.0
// The passes of partition selection over (user, key) pairs held in host memory, shared by the
// one-process API (select_partitions.cpp) and the ranks of an MPI job (host/mpi/): the distinct
// pairs, contribution bounding, and the coins of the kept keys. Every random bit comes from the
// identity of a pair or key (random/partition_randomness.hpp), so any split of the pairs
// among processes whose users (for the bounding) and keys (for the coins) are each whole in one of
// them releases what one process releases. Each pass runs on every core.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>
#if defined(__GLIBCXX__)
#include <parallel/algorithm>
#endif

#include "dpselect/detail/release_access.hpp"
#include "dpselect/partition_selection.hpp"

namespace dpselect::detail {

// Below this many elements a share of the work is not worth a thread.
inline constexpr std::size_t kPartitionParallelMinimum = std::size_t{1} << 16;

// The threads a pass over `elements` elements runs on: all of OpenMP's, or one for a small pass.
inline int partition_threads(std::size_t elements) {
  return elements >= kPartitionParallelMinimum ? std::max(1, omp_get_max_threads()) : 1;
}

// std::sort on every core (libstdc++'s parallel mode, a multiway mergesort over OpenMP) where the
// range holds at least `minimum` elements (fewer for elements that cost more to compare, as
// strings); the sorted sequence is the same either way.
template <class Iterator, class Less = std::less<>>
void sort_on_every_core(Iterator first, Iterator last, Less less = {},
                        std::size_t minimum = kPartitionParallelMinimum) {
#if defined(__GLIBCXX__)
  if (static_cast<std::size_t>(last - first) >= minimum && omp_get_max_threads() > 1) {
    __gnu_parallel::sort(first, last, less);
    return;
  }
#endif
  std::sort(first, last, less);
}

struct Contribution {
  std::uint64_t user;
  std::uint64_t key;
  friend bool operator<(const Contribution& a, const Contribution& b) {
    return a.user != b.user ? a.user < b.user : a.key < b.key;
  }
  friend bool operator==(const Contribution& a, const Contribution& b) = default;
};

// The pairs (users[i], keys[i]), same lengths.
std::vector<Contribution> contributions_of(std::span<const std::uint64_t> users, std::span<const std::uint64_t> keys);
// Groups `pairs` by user, each user's pairs one run ascending by key (the users in the order of
// partition_shares.hpp's hash buckets, not ascending), and drops the repeats.
void keep_distinct(std::vector<Contribution>& pairs);

// Each user's distinct pairs (as keep_distinct leaves them, every pair of a user present)
// bounded to max_partitions keys; the kept keys, one per kept pair, in no particular order (the
// order depends on the thread count; what is kept does not).
std::vector<std::uint64_t> bounded_keys(const std::vector<Contribution>& pairs, std::uint64_t max_partitions,
                                        const ContextAccess::KeyedStream& drawn);

// A kept pair of a weighted strategy: its key and the number of keys its user kept (the pair's
// weight is 1/sqrt(held)). Sorted by key, then by held: the order a key's weight is summed in.
struct WeightedKey {
  std::uint64_t key;
  std::uint64_t held;
  friend bool operator<(const WeightedKey& a, const WeightedKey& b) {
    return a.key != b.key ? a.key < b.key : a.held < b.held;
  }
};

// bounded_keys with each kept key's user's number of kept keys, in no particular order.
std::vector<WeightedKey> bounded_weighted_keys(const std::vector<Contribution>& pairs, std::uint64_t max_partitions,
                                               const ContextAccess::KeyedStream& drawn);
// bounded_keys as the kept pairs themselves, in no particular order.
std::vector<Contribution> bounded_pairs(const std::vector<Contribution>& pairs, std::uint64_t max_partitions,
                                        const ContextAccess::KeyedStream& drawn);

// The released keys among `kept` (every kept pair of each key present; sorted here), ascending,
// and the number of distinct keys among them.
struct ReleasedKeys {
  std::vector<std::uint64_t> keys;
  std::uint64_t distinct = 0;
};
ReleasedKeys released_keys(std::vector<std::uint64_t>& kept, const PartitionKeepRule& rule, PartitionStrategy strategy,
                           const ContextAccess::KeyedStream& drawn);

// A group of kept pairs as a data engine counts them: `pairs` kept pairs of `key` whose users kept
// `held` keys each (PartitionSelectionTicket::decide).
struct KeptEntry {
  std::uint64_t key;
  std::uint64_t held;
  std::uint64_t pairs;
  friend bool operator<(const KeptEntry& a, const KeptEntry& b) {
    return a.key != b.key ? a.key < b.key : a.held != b.held ? a.held < b.held : a.pairs < b.pairs;
  }
};

// released_keys over entries of whole keys (sorted here; held ignored): a key's users are the sum
// of its entries' pairs, which the caller keeps below 2^64.
ReleasedKeys counted_released_keys(std::vector<KeptEntry>& entries, const PartitionKeepRule& rule,
                                   PartitionStrategy strategy, const ContextAccess::KeyedStream& drawn);

// The streams one round of a weighted strategy draws: its own (bounding, order and coins), then
// eight of tie bits for the coins (8 x 128 bits cover the 1021 bits below a double's 53 first).
inline constexpr std::uint64_t kWeightedRoundStreams = 9;

// The streams a selection at `params` draws.
inline std::uint64_t partition_selection_streams(const PartitionSelectionParams& params) {
  if (!is_weighted(params.strategy)) return 1;
  return kWeightedRoundStreams * (params.strategy == PartitionStrategy::dp_sips ? params.rounds : 1);
}

// Whether U < p for the uniform U in [0, 1) whose first 53 bits are the coin of `block` (key_coin)
// and whose next bits are the 64-bit words 0-1, then 2-3, of block `key` of the streams
// round.stream + 1, + 2, ... (up to kWeightedRoundStreams - 1): probability exactly p for every
// double p in [0, 1] (weighted_passes.cpp).
bool exact_coin_below(const RandomBlock& block, double p, std::uint64_t key, const ContextAccess::KeyedStream& round);

// One round of weighted_gaussian (and of dp_sips) over the kept pairs of some whole keys (sorted
// here): each key's weight summed over its users by ascending held, then its exact coin from the
// round's streams `round` on.
ReleasedKeys weighted_round_keys(std::vector<WeightedKey>& kept, const WeightedRound& round,
                                 std::uint64_t max_partitions, const ContextAccess::KeyedStream& drawn);

// weighted_round_keys over entries of whole keys (sorted here; each held in [1, max_partitions]):
// the same sum as over the entries' pairs one by one.
ReleasedKeys weighted_entry_keys(std::vector<KeptEntry>& entries, const WeightedRound& round,
                                 std::uint64_t max_partitions, const ContextAccess::KeyedStream& drawn);

// The pairs (as keep_distinct leaves them, which they stay) of the keys not in `released`
// (ascending): what dp_sips's next round sees.
void drop_released_pairs(std::vector<Contribution>& pairs, const std::vector<std::uint64_t>& released);

// `round` (ascending, disjoint from `all`) merged into `all` (ascending): dp_sips's released keys.
void add_released_round(std::vector<std::uint64_t>& all, const std::vector<std::uint64_t>& round);

// A weighted strategy's whole selection over the distinct pairs (as keep_distinct leaves them;
// dp_sips removes the released keys' pairs as it goes), from the streams `first` on
// (weighted_passes.cpp). distinct: the keys considered by the first round.
ReleasedKeys weighted_released_keys(std::vector<Contribution>& pairs, const PartitionSelectionParams& params,
                                    const PartitionKeepRule& rule, const ContextAccess::KeyedStream& first);

// The whole selection after the charge on the current GPU (gpu_selection.cpp, over the device
// steps of gpu.hpp): `users` and `keys` are `count` ids in host memory (copied in on `stream`) or
// in memory the device reads (`on_device`); every step ordered on `stream`, synchronized before
// the return. Pairs beyond what the device has free go in chunks (partition_chunks.hpp). The same
// keys as the CPU passes.
ReleasedKeys gpu_select_partitions(const std::uint64_t* users, const std::uint64_t* keys, std::uint64_t count,
                                   bool on_device, std::uint64_t max_partitions, const PartitionKeepRule& rule,
                                   PartitionStrategy strategy, const ContextAccess::KeyedStream& drawn,
                                   cuda_stream_t stream);
// Test hook: the pairs each chunk of partition selection on the GPU holds (0: as many as the
// device's free memory allows), so a test can run the chunked path (partition_chunks.hpp) over
// small inputs. Not for production use: it applies to every later call of every thread.
void set_partition_chunk_pairs_for_testing(std::uint64_t pairs);

// floor(p(n) 2^53) for n = 0, 1, ... up to the first n whose cut is 2^53 (every larger n's too,
// since p is non-decreasing), or `limit` entries: the GPU's coins compare with this table, so that
// the cuts are the host's own to the bit. certain: the table ends where every key is kept.
struct KeepCuts {
  std::vector<std::uint64_t> cuts;
  bool certain = false;
};
KeepCuts keep_cut_table(const PartitionKeepRule& rule, PartitionStrategy strategy, std::uint64_t limit);

// The charge of one partition selection: approximate, at (epsilon, delta).
inline PrivacyCharge partition_selection_charge(const PartitionSelectionParams& params) {
  return PrivacyCharge{ReleaseKind::approximate, params.epsilon, params.delta, 1};
}

// PartitionSelectionReport::delta_float of a selection at `params` under `rule`: what the keep
// probabilities' rounding adds to delta (+inf where it exceeds every double).
double partition_delta_float(const PartitionSelectionParams& params, const PartitionKeepRule& rule);

// The report of a selection at `params` that drew `drawn`, considered `distinct` keys and ran on
// `executed_on`.
PartitionSelectionReport partition_selection_report(const PartitionSelectionParams& params,
                                                    const PartitionKeepRule& rule,
                                                    const ContextAccess::KeyedStream& drawn, std::uint64_t distinct,
                                                    ExecutedOn executed_on);

}  // namespace dpselect::detail
