// SPDX-License-Identifier: Apache-2.0
// The weighted strategies' passes on the CPU (sources in <dpselect/partition_selection.hpp>):
// weighted_gaussian and each round of dp_sips weigh a user's t kept keys 1/sqrt(t) each;
// policy_gaussian spends each user's L2 budget on its keys below the cutoff, the users one after
// another. A key of weight w is then released with probability P(w + N(0, sigma^2) > rho), by an
// exact coin. The layout of the random bits is partition_randomness.hpp's, a round's coin ties
// broken by the streams after its own.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "dpselect/random_key.hpp"
#include "partition_selection/partition_passes.hpp"
#include "random/partition_randomness.hpp"
#include "partition_selection/partition_shares.hpp"

namespace dpselect::detail {
namespace {

std::uint64_t word_pair(const RandomBlock& block, int first_word) {
  return std::uint64_t{block.word[first_word]} | (std::uint64_t{block.word[first_word + 1]} << 32);
}

// 1 / sqrt(t) for t = 0 .. max_partitions (entry 0 unused): every pass sums the same doubles.
std::vector<double> inverse_roots(std::uint64_t max_partitions) {
  std::vector<double> roots(max_partitions + 1, 0.0);
  for (std::uint64_t t = 1; t <= max_partitions; ++t) roots[t] = 1.0 / std::sqrt(static_cast<double>(t));
  return roots;
}

// dp_sips: the rounds, each on the pairs of the keys still unreleased.
ReleasedKeys sips_released_keys(std::vector<Contribution>& pairs, const PartitionSelectionParams& params,
                                const PartitionKeepRule& rule, const ContextAccess::KeyedStream& first) {
  ReleasedKeys all;
  for (std::size_t r = 0; r < rule.rounds.size() && !pairs.empty(); ++r) {
    const ContextAccess::KeyedStream drawn{first.key, first.stream + r * kWeightedRoundStreams};
    std::vector<WeightedKey> kept = bounded_weighted_keys(pairs, params.max_partitions, drawn);
    const ReleasedKeys released = weighted_round_keys(kept, rule.rounds[r], params.max_partitions, drawn);
    if (r == 0) all.distinct = released.distinct;
    if (released.keys.empty()) continue;
    drop_released_pairs(pairs, released.keys);
    add_released_round(all.keys, released.keys);
  }
  return all;
}

// policy_gaussian: the users in their drawn order, each spending an L2 budget of 1 on its kept
// keys whose weight is below the cutoff (L2 descent, Gopi et al. 2020), then every key's coin.
ReleasedKeys policy_released_keys(const std::vector<Contribution>& pairs, const PartitionSelectionParams& params,
                                  const PartitionKeepRule& rule, const ContextAccess::KeyedStream& drawn) {
  // The kept pairs by user, each user's keys ascending.
  std::vector<Contribution> kept = bounded_pairs(pairs, params.max_partitions, drawn);
  sort_on_every_core(kept.begin(), kept.end());
  std::vector<std::uint64_t> users;
  std::vector<std::size_t> group_starts;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    if (i == 0 || kept[i].user != kept[i - 1].user) {
      users.push_back(kept[i].user);
      group_starts.push_back(i);
    }
  }
  group_starts.push_back(kept.size());

  // The order: the first 64 bits of block mix(u) - 2^20, ties by id.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> order(users.size());  // (order word, group)
  for_each_block(
      drawn, users.size(), [&](std::size_t g) { return user_order_position(users[g]); },
      [&](std::size_t g, const RandomBlock& block) { order[g] = {bounding_word(block), g}; });
  sort_on_every_core(order.begin(), order.end());  // ties by group: ascending user

  // The distinct kept keys (ascending) and each kept pair's index among them, from one sort of
  // (key, pair) records (a binary search per pair would miss the cache at every level).
  struct KeyOfPair {
    std::uint64_t key;
    std::uint64_t pair;  // its index in `kept`
    bool operator<(const KeyOfPair& other) const { return key != other.key ? key < other.key : pair < other.pair; }
  };
  std::vector<KeyOfPair> by_key(kept.size());
  const auto count = static_cast<std::ptrdiff_t>(kept.size());
#pragma omp parallel for schedule(static) num_threads(partition_threads(kept.size()))
  for (std::ptrdiff_t i = 0; i < count; ++i) by_key[i] = {kept[i].key, static_cast<std::uint64_t>(i)};
  sort_on_every_core(by_key.begin(), by_key.end());
  std::vector<std::uint64_t> keys;
  std::vector<std::uint64_t> slot(kept.size());
  for (std::size_t i = 0; i < by_key.size(); ++i) {
    if (i == 0 || by_key[i].key != by_key[i - 1].key) keys.push_back(by_key[i].key);
    slot[by_key[i].pair] = keys.size() - 1;
  }
  by_key = {};

  std::vector<double> weights(keys.size(), 0.0);
  std::vector<double> gaps;
  const double cutoff = rule.policy_cutoff;
  for (const auto& [word, g] : order) {
    gaps.clear();
    double squares = 0.0;
    for (std::size_t i = group_starts[g]; i < group_starts[g + 1]; ++i) {
      const double gap = cutoff - weights[slot[i]];
      gaps.push_back(gap);
      if (gap > 0.0) squares += gap * gap;
    }
    if (!(squares > 0.0)) continue;
    // Gopi et al. 2020 (L2 descent): w += min(1, |g|_2) g / |g|_2 over the keys below the cutoff.
    if (std::isinf(squares)) {
      // Gaps beyond 1e154 (a cutoff far above any weight): |g|_2 > 1, so each step is g / |g|_2,
      // taken from the gaps scaled by the largest, whose squares cannot overflow.
      double largest = 0.0;
      for (const double gap : gaps) largest = std::fmax(largest, gap);
      double scaled_squares = 0.0;
      for (const double gap : gaps) {
        if (gap > 0.0) scaled_squares += (gap / largest) * (gap / largest);
      }
      const double scaled_norm = std::sqrt(scaled_squares);
      for (std::size_t i = group_starts[g], j = 0; i < group_starts[g + 1]; ++i, ++j) {
        if (gaps[j] > 0.0) weights[slot[i]] += gaps[j] / largest / scaled_norm;
      }
      continue;
    }
    const double norm = std::sqrt(squares);
    const double step = std::fmin(1.0, norm) / norm;
    for (std::size_t i = group_starts[g], j = 0; i < group_starts[g + 1]; ++i, ++j) {
      if (gaps[j] > 0.0) weights[slot[i]] += step * gaps[j];
    }
  }

  const WeightedRound& round = rule.rounds.front();
  return decide_key_runs(
      keys, [](std::uint64_t key) { return key; }, drawn,
      [&](std::size_t first, std::size_t, const RandomBlock& block) {
        return exact_coin_below(block, weighted_keep_probability(round, weights[first]), keys[first], drawn);
      });
}

}  // namespace

namespace {

// The keys of `kept` (entries grouped here by key, held ascending within each key, pairs_of(entry)
// pairs each) whose exact coin falls below the keep probability of their weight, the sum of
// 1/sqrt(held) over the key's pairs by ascending held; ascending.
template <class Entry, class PairsOf>
ReleasedKeys weighted_keys(std::vector<Entry>& kept, PairsOf pairs_of, const WeightedRound& round,
                           std::uint64_t max_partitions, const ContextAccess::KeyedStream& drawn) {
  const std::vector<double> roots = inverse_roots(max_partitions);
  kept = sorted_in_hash_buckets(std::move(kept), [](const Entry& entry) { return entry.key; });
  ReleasedKeys released = decide_key_runs(
      kept, [](const Entry& entry) { return entry.key; }, drawn,
      [&](std::size_t first, std::size_t last, const RandomBlock& block) {
        double weight = 0.0;
        for (std::size_t i = first; i < last; ++i) {
          for (std::uint64_t pair = pairs_of(kept[i]); pair > 0; --pair) weight += roots[kept[i].held];
        }
        return exact_coin_below(block, weighted_keep_probability(round, weight), kept[first].key, drawn);
      });
  sort_on_every_core(released.keys.begin(), released.keys.end());  // the runs came in their buckets' order
  return released;
}

}  // namespace

ReleasedKeys weighted_round_keys(std::vector<WeightedKey>& kept, const WeightedRound& round,
                                 std::uint64_t max_partitions, const ContextAccess::KeyedStream& drawn) {
  return weighted_keys(kept, [](const WeightedKey&) { return std::uint64_t{1}; }, round, max_partitions, drawn);
}

ReleasedKeys weighted_entry_keys(std::vector<KeptEntry>& entries, const WeightedRound& round,
                                 std::uint64_t max_partitions, const ContextAccess::KeyedStream& drawn) {
  return weighted_keys(entries, [](const KeptEntry& entry) { return entry.pairs; }, round, max_partitions, drawn);
}

void drop_released_pairs(std::vector<Contribution>& pairs, const std::vector<std::uint64_t>& released) {
  // Swanberg et al. 2023: the next round sees only the pairs of keys not released yet.
  if (released.empty()) return;
  std::erase_if(pairs, [&](const Contribution& pair) {
    return std::binary_search(released.begin(), released.end(), pair.key);
  });
}

void add_released_round(std::vector<std::uint64_t>& all, const std::vector<std::uint64_t>& round) {
  const std::size_t before = all.size();
  all.insert(all.end(), round.begin(), round.end());
  std::inplace_merge(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(before), all.end());
}

// A double's binary expansion ends by bit 1074, so the comparison is decided within the 53 +
// 8 x 128 bits available.
bool exact_coin_below(const RandomBlock& block, double p, std::uint64_t key, const ContextAccess::KeyedStream& round) {
  const double scaled = std::ldexp(p, 53);  // exact: a power-of-two scaling
  const double whole = std::floor(scaled);
  const std::uint64_t coin = key_coin(block);
  const auto cut = static_cast<std::uint64_t>(whole);
  if (coin != cut) return coin < cut;
  double fraction = scaled - whole;  // exact: the bits of `scaled` below its integer part
  for (std::uint64_t s = 1; s < kWeightedRoundStreams && fraction > 0.0; ++s) {
    const RandomBlock tie = random_block(round.key, round.stream + s, key_coin_position(key));
    for (const int first_word : {0, 2}) {
      if (!(fraction > 0.0)) break;
      const double next = std::ldexp(fraction, 64);
      const double next_whole = std::floor(next);
      const auto next_cut = static_cast<std::uint64_t>(next_whole);
      const std::uint64_t word = word_pair(tie, first_word);
      if (word != next_cut) return word < next_cut;
      fraction = next - next_whole;
    }
  }
  return false;  // U's bits equal all of p's: U >= p
}

ReleasedKeys weighted_released_keys(std::vector<Contribution>& pairs, const PartitionSelectionParams& params,
                                    const PartitionKeepRule& rule, const ContextAccess::KeyedStream& first) {
  switch (params.strategy) {
    case PartitionStrategy::policy_gaussian:
      return policy_released_keys(pairs, params, rule, first);
    case PartitionStrategy::dp_sips:
      return sips_released_keys(pairs, params, rule, first);
    default: {
      std::vector<WeightedKey> kept = bounded_weighted_keys(pairs, params.max_partitions, first);
      return weighted_round_keys(kept, rule.rounds.front(), params.max_partitions, first);
    }
  }
}

}  // namespace dpselect::detail
