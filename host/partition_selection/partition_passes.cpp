// SPDX-License-Identifier: Apache-2.0
// The passes of partition selection on the CPU (partition_passes.hpp): the distinct pairs,
// contribution bounding on contiguous shares of the users, and the coins of the kept keys on
// contiguous shares of the keys (partition_shares.hpp); what is released never depends on the
// thread count.
#include "partition_selection/partition_passes.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "random/partition_randomness.hpp"
#include "partition_selection/partition_shares.hpp"
#include "dpselect/random_key.hpp"

namespace dpselect::detail {

std::vector<Contribution> contributions_of(std::span<const std::uint64_t> users, std::span<const std::uint64_t> keys) {
  std::vector<Contribution> pairs(users.size());
  const auto count = static_cast<std::ptrdiff_t>(users.size());
#pragma omp parallel for schedule(static) num_threads(partition_threads(users.size()))
  for (std::ptrdiff_t i = 0; i < count; ++i) pairs[i] = {users[i], keys[i]};
  return pairs;
}

void keep_distinct(std::vector<Contribution>& pairs) {
  // Equal pairs share a user, so they end up side by side.
  pairs = sorted_in_hash_buckets(std::move(pairs), [](const Contribution& pair) { return pair.user; });
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
}

namespace {

// Users over the bound whose first draws are computed together (a few thousand at a time).
constexpr std::size_t kBoundingBatchDraws = 4096;

// The max_partitions keys one user over the bound keeps (its distinct keys are pairs[first, last),
// ascending): the partial Fisher-Yates shuffle of partition_randomness.hpp, whose first attempts'
// words are `first_words` (one per step).
template <class Kept, class MakeKept>
void keep_shuffled(const std::vector<Contribution>& pairs, std::size_t first, std::size_t last,
                   std::uint64_t max_partitions, const std::uint64_t* first_words,
                   const ContextAccess::KeyedStream& drawn, std::vector<std::uint64_t>& scratch,
                   std::vector<Kept>& kept, MakeKept make_kept) {
  const std::uint64_t user = pairs[first].user;
  const std::uint64_t held = last - first;
  scratch.clear();
  for (std::size_t j = first; j < last; ++j) scratch.push_back(pairs[j].key);
  for (std::uint64_t step = 0; step < max_partitions; ++step) {
    std::uint64_t word = first_words[step];
    std::uint64_t offset = 0;
    for (std::uint64_t attempt = 1; !uniform_below(word, held - step, offset); ++attempt) {
      if (attempt == kBoundingAttempts) throw std::logic_error("dpselect: 2^20 rejections in a row");
      word = bounding_word(
          random_block(drawn.key, drawn.stream, bounding_draw_position(user, step, attempt)));
    }
    std::swap(scratch[step], scratch[step + offset]);
    kept.push_back(make_kept(user, scratch[step], max_partitions));
  }
}

// Each user's pairs beyond max_partitions dropped at random (keep_shuffled); make_kept(user, key,
// the user's number of kept keys) for each kept pair, in no particular order. Each thread bounds
// the users of one contiguous share.
template <class Kept, class MakeKept>
std::vector<Kept> bounded(const std::vector<Contribution>& pairs, std::uint64_t max_partitions,
                          const ContextAccess::KeyedStream& drawn, MakeKept make_kept) {
  const int threads = partition_threads(pairs.size());
  const auto user_of = [](const Contribution& pair) { return pair.user; };
  const std::vector<std::size_t> shares = run_aligned_shares(pairs, threads, user_of);
  std::vector<std::vector<Kept>> kept_by_share(static_cast<std::size_t>(threads));
  std::exception_ptr failure;
#pragma omp parallel num_threads(threads)
  {
    const auto share = static_cast<std::size_t>(omp_get_thread_num());
    std::vector<Kept>& kept = kept_by_share[share];
    kept.reserve(shares[share + 1] - shares[share]);
    // Users over the bound wait here, as [first, last) of pairs, until their first draws are made.
    std::vector<std::pair<std::size_t, std::size_t>> waiting;
    std::vector<std::uint64_t> positions;  // of the waiting users' first attempts, step after step
    std::vector<std::uint64_t> words;
    std::vector<std::uint64_t> scratch;
    const auto bound_waiting_users = [&] {
      words.resize(positions.size());
      for_each_block(
          drawn, positions.size(), [&](std::size_t i) { return positions[i]; },
          [&](std::size_t i, const RandomBlock& block) { words[i] = bounding_word(block); });
      const std::uint64_t* next_words = words.data();
      for (const auto& [first, last] : waiting) {
        keep_shuffled(pairs, first, last, max_partitions, next_words, drawn, scratch, kept, make_kept);
        next_words += max_partitions;
      }
      waiting.clear();
      positions.clear();
    };
    try {
      for (std::size_t begin = shares[share]; begin < shares[share + 1];) {
        std::size_t end = begin + 1;
        while (end < shares[share + 1] && pairs[end].user == pairs[begin].user) ++end;
        if (end - begin <= max_partitions) {
          for (std::size_t j = begin; j < end; ++j) kept.push_back(make_kept(pairs[j].user, pairs[j].key, end - begin));
        } else {
          waiting.emplace_back(begin, end);
          for (std::uint64_t step = 0; step < max_partitions; ++step) {
            positions.push_back(bounding_draw_position(pairs[begin].user, step, 0));
          }
          if (positions.size() >= kBoundingBatchDraws) bound_waiting_users();
        }
        begin = end;
      }
      bound_waiting_users();
    } catch (...) {
#pragma omp critical(dpselect_partition_bounding_failure)
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  if (threads == 1) return std::move(kept_by_share[0]);
  std::size_t total = 0;
  for (const auto& kept : kept_by_share) total += kept.size();
  std::vector<Kept> kept;
  kept.reserve(total);
  for (const auto& share : kept_by_share) kept.insert(kept.end(), share.begin(), share.end());
  return kept;
}

}  // namespace

std::vector<std::uint64_t> bounded_keys(const std::vector<Contribution>& pairs, std::uint64_t max_partitions,
                                        const ContextAccess::KeyedStream& drawn) {
  return bounded<std::uint64_t>(pairs, max_partitions, drawn,
                                [](std::uint64_t, std::uint64_t key, std::uint64_t) { return key; });
}

std::vector<WeightedKey> bounded_weighted_keys(const std::vector<Contribution>& pairs, std::uint64_t max_partitions,
                                               const ContextAccess::KeyedStream& drawn) {
  return bounded<WeightedKey>(pairs, max_partitions, drawn, [](std::uint64_t, std::uint64_t key, std::uint64_t held) {
    return WeightedKey{key, held};
  });
}

std::vector<Contribution> bounded_pairs(const std::vector<Contribution>& pairs, std::uint64_t max_partitions,
                                        const ContextAccess::KeyedStream& drawn) {
  return bounded<Contribution>(pairs, max_partitions, drawn, [](std::uint64_t user, std::uint64_t key, std::uint64_t) {
    return Contribution{user, key};
  });
}

namespace {

// The keys of `kept` (entries grouped here by key_of, each counting pairs_of(entry) users) whose
// coin falls below keep_cut(p(n)), n the sum over the key's entries; ascending.
template <class Entry, class KeyOf, class PairsOf>
ReleasedKeys counted_keys(std::vector<Entry>& kept, KeyOf key_of, PairsOf pairs_of, const PartitionKeepRule& rule,
                          PartitionStrategy strategy, const ContextAccess::KeyedStream& drawn) {
  kept = sorted_in_hash_buckets(std::move(kept), key_of);
  ReleasedKeys released = decide_key_runs(
      kept, key_of, drawn, [&](std::size_t first, std::size_t last, const RandomBlock& block) {
        std::uint64_t users = 0;
        for (std::size_t i = first; i < last; ++i) users += pairs_of(kept[i]);
        return key_coin(block) < keep_cut(keep_probability(rule, strategy, users));
      });
  sort_on_every_core(released.keys.begin(), released.keys.end());  // the runs came in their buckets' order
  return released;
}

}  // namespace

ReleasedKeys released_keys(std::vector<std::uint64_t>& kept, const PartitionKeepRule& rule, PartitionStrategy strategy,
                           const ContextAccess::KeyedStream& drawn) {
  // A key held by n users (its run's length) is kept iff its coin falls below keep_cut(p(n)).
  return counted_keys(
      kept, [](std::uint64_t key) { return key; }, [](std::uint64_t) { return std::uint64_t{1}; }, rule, strategy,
      drawn);
}

ReleasedKeys counted_released_keys(std::vector<KeptEntry>& entries, const PartitionKeepRule& rule,
                                   PartitionStrategy strategy, const ContextAccess::KeyedStream& drawn) {
  return counted_keys(
      entries, [](const KeptEntry& entry) { return entry.key; }, [](const KeptEntry& entry) { return entry.pairs; },
      rule, strategy, drawn);
}

KeepCuts keep_cut_table(const PartitionKeepRule& rule, PartitionStrategy strategy, std::uint64_t limit) {
  KeepCuts table;
  constexpr std::uint64_t kAlways = std::uint64_t{1} << 53;
  for (std::uint64_t n = 0; n < limit; ++n) {
    const std::uint64_t cut = keep_cut(keep_probability(rule, strategy, n));
    if (cut >= kAlways) {
      table.certain = true;
      break;
    }
    table.cuts.push_back(cut);
  }
  return table;
}

PartitionSelectionReport partition_selection_report(const PartitionSelectionParams& params,
                                                    const PartitionKeepRule& rule,
                                                    const ContextAccess::KeyedStream& drawn, std::uint64_t distinct,
                                                    ExecutedOn executed_on) {
  PartitionSelectionReport report;
  report.params = params;
  report.rule = rule;
  report.delta_float = partition_delta_float(params, rule);
  report.streams = partition_selection_streams(params);
  report.stream = drawn.stream;
  report.generator = drawn.key.generator;
  report.keys_considered = distinct;
  report.executed_on = executed_on;
  return report;
}

}  // namespace dpselect::detail
