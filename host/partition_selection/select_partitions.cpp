// SPDX-License-Identifier: Apache-2.0
// Partition selection on the CPU: distinct (user, key) pairs, contribution bounding, users per
// key, and one coin per key (positions and sources in <dpselect/partition_selection.hpp>).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

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

// Each user's pairs beyond max_partitions dropped, the kept ones chosen uniformly at random: the
// max_partitions lowest 64-bit ranks (ties, of probability about 2^-64 per pair, go to the lower
// key). Returns the kept keys (one per kept pair).
std::vector<std::uint64_t> bounded_keys(const std::vector<Contribution>& pairs, std::uint64_t max_partitions,
                                        const detail::ContextAccess::KeyedStream& drawn) {
  std::vector<std::uint64_t> kept;
  kept.reserve(pairs.size());
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranked;  // (rank, key) of one user's pairs
  for (std::size_t begin = 0; begin < pairs.size();) {
    std::size_t end = begin;
    while (end < pairs.size() && pairs[end].user == pairs[begin].user) ++end;
    if (end - begin <= max_partitions) {
      for (std::size_t j = begin; j < end; ++j) kept.push_back(pairs[j].key);
    } else {
      ranked.clear();
      for (std::size_t j = begin; j < end; ++j) {
        ranked.emplace_back(first_64_bits(random_block(drawn.key, drawn.stream, j)), pairs[j].key);
      }
      std::nth_element(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(max_partitions), ranked.end());
      for (std::uint64_t j = 0; j < max_partitions; ++j) kept.push_back(ranked[j].second);
    }
    begin = end;
  }
  return kept;
}

}  // namespace

PartitionSelection select_partitions(Context& context, std::span<const std::uint64_t> users,
                                     std::span<const std::uint64_t> keys, const PartitionSelectionParams& params) {
  const PartitionKeepRule rule = partition_keep_rule(params);  // validates
  if (users.size() != keys.size()) {
    throw InvalidArgument("dpselect: keys must hold one key per user entry (got " + std::to_string(keys.size()) +
                          " keys for " + std::to_string(users.size()) + " users)");
  }
  if (users.empty()) throw InvalidArgument("dpselect: contributions must not be empty (got 0 (user, key) pairs)");
  std::vector<Contribution> pairs(users.size());
  for (std::size_t i = 0; i < users.size(); ++i) pairs[i] = {users[i], keys[i]};
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  if (pairs.size() >= kPairLimit) {
    throw InvalidArgument("dpselect: contributions must hold fewer than 2^62 distinct (user, key) pairs (got " +
                          std::to_string(pairs.size()) + ")");
  }

  // The release: approximate at (epsilon, delta), charged before the stream is drawn.
  const PrivacyCharge charge{ReleaseKind::approximate, params.epsilon, params.delta, 1};
  detail::ContextAccess::charge(context, std::span(&charge, 1));
  const detail::ContextAccess::KeyedStream drawn = detail::ContextAccess::draw_stream(context);

  std::vector<std::uint64_t> kept = bounded_keys(pairs, params.max_partitions, drawn);
  std::sort(kept.begin(), kept.end());
  PartitionSelection selection;
  std::uint64_t rank = 0;
  for (std::size_t begin = 0; begin < kept.size(); ++rank) {
    std::size_t end = begin;
    while (end < kept.size() && kept[end] == kept[begin]) ++end;
    // Kept iff a 53-bit uniform integer is below floor(p 2^53): never more likely than p.
    const double p = keep_probability(rule, params.strategy, end - begin);
    const auto cut = static_cast<std::uint64_t>(std::ldexp(p, 53));
    const std::uint64_t coin = first_64_bits(random_block(drawn.key, drawn.stream, kKeyCoinPositionOffset + rank)) >> 11;
    if (coin < cut) selection.keys.push_back(kept[begin]);
    begin = end;
  }
  PartitionSelectionReport& report = selection.report;
  report.params = params;
  report.rule = rule;
  report.delta_float = std::ldexp(static_cast<double>(params.max_partitions), -53);
  report.stream = drawn.stream;
  report.generator = drawn.key.generator;
  report.keys_considered = rank;
  return selection;
}

}  // namespace dpselect
