// SPDX-License-Identifier: Apache-2.0
// Partition selection on the CPU: distinct (user, key) pairs, contribution bounding, users per
// key, and one coin per key (positions and sources in <dpselect/partition_selection.hpp>). The
// two sorts run on every core (libstdc++'s parallel mode, a multiway mergesort over OpenMP), the
// bounding and the coins on contiguous shares of the sorted pairs and keys; what is released
// never depends on the thread count.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
#if defined(__GLIBCXX__)
#include <parallel/algorithm>
#endif

#include "dpselect/accounting.hpp"
#include "dpselect/context.hpp"
#include "dpselect/detail/release_access.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/partition_selection.hpp"
#include "dpselect/random_key.hpp"

namespace dpselect {
namespace {

// Pairs take blocks [0, 2^62), keys [2^62, 2^63): disjoint.
constexpr std::uint64_t kKeyCoinPositionOffset = std::uint64_t{1} << 62;
constexpr std::uint64_t kPairLimit = kKeyCoinPositionOffset;
// Below this many elements a share of the work is not worth a thread.
constexpr std::size_t kParallelMinimum = std::size_t{1} << 16;

template <class Iterator>
void sort_on_every_core(Iterator first, Iterator last) {
#if defined(__GLIBCXX__)
  if (static_cast<std::size_t>(last - first) >= kParallelMinimum) {
    __gnu_parallel::sort(first, last);
    return;
  }
#endif
  std::sort(first, last);
}

int threads_for(std::size_t elements) {
  return elements >= kParallelMinimum ? std::max(1, omp_get_max_threads()) : 1;
}

std::uint64_t first_64_bits(const RandomBlock& block) {
  return std::uint64_t{block.word[0]} | (std::uint64_t{block.word[1]} << 32);
}

struct Contribution {
  std::uint64_t user;
  std::uint64_t key;
  friend bool operator<(const Contribution& a, const Contribution& b) {
    return a.user != b.user ? a.user < b.user : a.key < b.key;
  }
  friend bool operator==(const Contribution& a, const Contribution& b) = default;
};

// The distinct pairs, sorted by (user, key).
std::vector<Contribution> distinct_pairs(std::span<const std::uint64_t> users, std::span<const std::uint64_t> keys) {
  std::vector<Contribution> pairs(users.size());
  const auto count = static_cast<std::ptrdiff_t>(users.size());
#pragma omp parallel for schedule(static) num_threads(threads_for(users.size()))
  for (std::ptrdiff_t i = 0; i < count; ++i) pairs[i] = {users[i], keys[i]};
  sort_on_every_core(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

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

// One user's pairs [begin, end) of `pairs` bounded to max_partitions, appended to `kept`: all of
// them when they are few enough, else the max_partitions of lowest 64-bit rank (pair j's rank is
// the first 64 bits of block j; a tie, of probability about 2^-64 per pair, goes to the lower key).
void keep_users_keys(const std::vector<Contribution>& pairs, std::size_t begin, std::size_t end,
                     std::uint64_t max_partitions, detail::SequentialBlocks& blocks,
                     std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranked, std::vector<std::uint64_t>& kept) {
  if (end - begin <= max_partitions) {
    for (std::size_t j = begin; j < end; ++j) kept.push_back(pairs[j].key);
    return;
  }
  ranked.clear();
  for (std::size_t j = begin; j < end; ++j) {
    ranked.emplace_back(first_64_bits(blocks.at(j)), pairs[j].key);
  }
  std::nth_element(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(max_partitions), ranked.end());
  for (std::uint64_t j = 0; j < max_partitions; ++j) kept.push_back(ranked[j].second);
}

// Each user's pairs beyond max_partitions dropped at random; the kept keys (one per kept pair),
// in the order of the pairs. Each thread bounds the users of one contiguous share.
std::vector<std::uint64_t> bounded_keys(const std::vector<Contribution>& pairs, std::uint64_t max_partitions,
                                        const detail::ContextAccess::KeyedStream& drawn) {
  const int threads = threads_for(pairs.size());
  const auto user_of = [](const Contribution& pair) { return pair.user; };
  const std::vector<std::size_t> shares = run_aligned_shares(pairs, threads, user_of);
  std::vector<std::vector<std::uint64_t>> kept_by_share(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
  {
    const auto share = static_cast<std::size_t>(omp_get_thread_num());
    std::vector<std::uint64_t>& kept = kept_by_share[share];
    kept.reserve(shares[share + 1] - shares[share]);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranked;  // (rank, key) of one user's pairs
    // The share's positions increase: blocks computed in SIMD batches, the bits of random_block.
    detail::SequentialBlocks blocks(drawn.key, drawn.stream);
    for (std::size_t begin = shares[share]; begin < shares[share + 1];) {
      std::size_t end = begin + 1;
      while (end < shares[share + 1] && pairs[end].user == pairs[begin].user) ++end;
      keep_users_keys(pairs, begin, end, max_partitions, blocks, ranked, kept);
      begin = end;
    }
  }
  if (threads == 1) return std::move(kept_by_share[0]);
  std::size_t total = 0;
  for (const auto& kept : kept_by_share) total += kept.size();
  std::vector<std::uint64_t> kept;
  kept.reserve(total);
  for (const auto& share : kept_by_share) kept.insert(kept.end(), share.begin(), share.end());
  return kept;
}

// The released keys among the sorted kept keys: the key of rank r among the distinct ones, held
// by n users (its run's length), is kept iff the first 53 bits of block 2^62 + r fall below
// floor(p(n) 2^53), which is never more likely than p(n). Returns them and the number of distinct
// keys. Each thread decides the keys of one contiguous share.
std::pair<std::vector<std::uint64_t>, std::uint64_t> released_keys(const std::vector<std::uint64_t>& kept,
                                                                   const PartitionKeepRule& rule,
                                                                   PartitionStrategy strategy,
                                                                   const detail::ContextAccess::KeyedStream& drawn) {
  const int threads = threads_for(kept.size());
  const auto itself = [](std::uint64_t key) { return key; };
  const std::vector<std::size_t> shares = run_aligned_shares(kept, threads, itself);
  // Each share's distinct keys, counted first: the rank of a share's first key is the count of
  // those before it.
  std::vector<std::uint64_t> first_rank(static_cast<std::size_t>(threads) + 1, 0);
  std::vector<std::vector<std::uint64_t>> released_by_share(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
  {
    const auto share = static_cast<std::size_t>(omp_get_thread_num());
    std::uint64_t distinct = 0;
    for (std::size_t i = shares[share]; i < shares[share + 1]; ++i) distinct += i == shares[share] || kept[i] != kept[i - 1];
    first_rank[share + 1] = distinct;
#pragma omp barrier
#pragma omp single
    for (std::size_t t = 1; t < first_rank.size(); ++t) first_rank[t] += first_rank[t - 1];
    std::uint64_t rank = first_rank[share];
    std::vector<std::uint64_t>& released = released_by_share[share];
    detail::SequentialBlocks blocks(drawn.key, drawn.stream);
    for (std::size_t begin = shares[share]; begin < shares[share + 1]; ++rank) {
      std::size_t end = begin + 1;
      while (end < shares[share + 1] && kept[end] == kept[begin]) ++end;
      const double p = keep_probability(rule, strategy, end - begin);
      const auto cut = static_cast<std::uint64_t>(std::ldexp(p, 53));
      const std::uint64_t coin = first_64_bits(blocks.at(kKeyCoinPositionOffset + rank)) >> 11;
      if (coin < cut) released.push_back(kept[begin]);
      begin = end;
    }
  }
  std::vector<std::uint64_t> released;
  for (const auto& share : released_by_share) released.insert(released.end(), share.begin(), share.end());
  return {std::move(released), first_rank.back()};
}

// Strings numbered by the rank of their value among the distinct values, in byte order.
struct NumberedStrings {
  std::vector<std::string_view> distinct;  // ascending
  std::vector<std::uint64_t> codes;        // codes[i]: the rank of values[i] in `distinct`
};

NumberedStrings numbered_strings(std::span<const std::string_view> values) {
  NumberedStrings numbered{{values.begin(), values.end()}, std::vector<std::uint64_t>(values.size())};
  std::vector<std::string_view>& distinct = numbered.distinct;
  sort_on_every_core(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  const auto count = static_cast<std::ptrdiff_t>(values.size());
#pragma omp parallel for schedule(static) num_threads(threads_for(values.size()))
  for (std::ptrdiff_t i = 0; i < count; ++i) {
    numbered.codes[i] = static_cast<std::uint64_t>(
        std::lower_bound(distinct.begin(), distinct.end(), values[i]) - distinct.begin());
  }
  return numbered;
}

void check_contributions(std::size_t users, std::size_t keys) {
  if (users != keys) {
    throw InvalidArgument("dpselect: keys must hold one key per user entry (got " + std::to_string(keys) +
                          " keys for " + std::to_string(users) + " users)");
  }
  if (users == 0) throw InvalidArgument("dpselect: contributions must not be empty (got 0 (user, key) pairs)");
}

}  // namespace

std::vector<std::uint64_t> dictionary_codes(std::span<const std::string_view> values) {
  return numbered_strings(values).codes;
}

PartitionSelection select_partitions(Context& context, std::span<const std::uint64_t> users,
                                     std::span<const std::uint64_t> keys, const PartitionSelectionParams& params) {
  const PartitionKeepRule rule = partition_keep_rule(params);  // validates
  check_contributions(users.size(), keys.size());
  const std::vector<Contribution> pairs = distinct_pairs(users, keys);
  if (pairs.size() >= kPairLimit) {
    throw InvalidArgument("dpselect: contributions must hold fewer than 2^62 distinct (user, key) pairs (got " +
                          std::to_string(pairs.size()) + ")");
  }

  // The release: approximate at (epsilon, delta), charged before the stream is drawn.
  const PrivacyCharge charge{ReleaseKind::approximate, params.epsilon, params.delta, 1};
  detail::ContextAccess::charge(context, std::span(&charge, 1));
  const detail::ContextAccess::KeyedStream drawn = detail::ContextAccess::draw_stream(context);

  std::vector<std::uint64_t> kept = bounded_keys(pairs, params.max_partitions, drawn);
  sort_on_every_core(kept.begin(), kept.end());
  PartitionSelection selection;
  std::uint64_t keys_considered = 0;
  std::tie(selection.keys, keys_considered) = released_keys(kept, rule, params.strategy, drawn);
  PartitionSelectionReport& report = selection.report;
  report.params = params;
  report.rule = rule;
  report.delta_float = std::ldexp(static_cast<double>(params.max_partitions), -53);
  report.stream = drawn.stream;
  report.generator = drawn.key.generator;
  report.keys_considered = keys_considered;
  return selection;
}

StringPartitionSelection select_partitions(Context& context, std::span<const std::uint64_t> users,
                                           std::span<const std::string_view> keys,
                                           const PartitionSelectionParams& params) {
  (void)partition_keep_rule(params);  // validates, before the keys are numbered
  check_contributions(users.size(), keys.size());
  const NumberedStrings numbered = numbered_strings(keys);
  PartitionSelection coded = select_partitions(context, users, numbered.codes, params);
  StringPartitionSelection selection;
  selection.keys.reserve(coded.keys.size());
  for (const std::uint64_t code : coded.keys) selection.keys.emplace_back(numbered.distinct[code]);
  selection.report = coded.report;
  return selection;
}

}  // namespace dpselect
