// SPDX-License-Identifier: Apache-2.0
// The weighted partition selection strategies (weighted_gaussian, policy_gaussian, dp_sips):
// - their rules follow the published formulas: sigma the analytic Gaussian sigma at
//   (eps, delta / 2), the threshold the maximum over t of Gopi et al.'s bound, met by the
//   computed probabilities; dp_sips's rounds compose to sigma and spend delta / 2 in all;
// - keys are released at the probability of their weight: chi-square tests over many releases
//   for keys whose users hold nothing else and for blocks of keys whose users hold the block;
// - every released key is the documented layout's (recomputed here with random_block alone), at
//   every thread count; the exact coin breaks its ties with the next streams;
// - bad parameters are refused by name before anything is charged or drawn.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <omp.h>

#include "dpselect/accounting.hpp"
#include "dpselect/context.hpp"
#include "dpselect/discrete_noise.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/partition_selection.hpp"
#include "dpselect/random_key.hpp"
#include "partition_selection/partition_passes.hpp"
#include "random/partition_randomness.hpp"
#include "support/expect_invalid.hpp"
#include "support/frequencies.hpp"
#include "support/partition_reference.hpp"

namespace {

using dpselect::keep_probability;
using dpselect::partition_keep_rule;
using dpselect::PartitionKeepRule;
using dpselect::PartitionSelectionParams;
using dpselect::PartitionStrategy;
using dpselect::weighted_keep_probability;
using dpselect::WeightedRound;

constexpr PartitionStrategy kWeightedStrategies[] = {PartitionStrategy::weighted_gaussian,
                                                     PartitionStrategy::policy_gaussian, PartitionStrategy::dp_sips};

std::string name_of(PartitionStrategy strategy) { return std::string(dpselect::to_string(strategy)); }

PartitionSelectionParams weighted_params(double epsilon, double delta, std::uint64_t max_partitions,
                                         PartitionStrategy strategy) {
  PartitionSelectionParams params{epsilon, delta, max_partitions, strategy};
  return params;
}

// Phi^-1(1 - tail) by bisection on erfc, independently of the library's.
double upper_quantile(double tail) {
  double low = -40.0, high = 40.0;
  for (int i = 0; i < 200; ++i) {
    const double middle = (low + high) / 2.0;
    (0.5 * std::erfc(middle / std::sqrt(2.0)) > tail ? low : high) = middle;
  }
  return high;
}

TEST(WeightedPartitionRule, SigmaAndThresholdFollowGopiEtAl) {
  for (const auto& [epsilon, delta, m] : {std::tuple{1.0, 1e-5, 1}, std::tuple{1.0, 1e-5, 10},
                                          std::tuple{0.3, 1e-8, 100}, std::tuple{4.0, 1e-3, 3}}) {
    for (const PartitionStrategy strategy : {PartitionStrategy::weighted_gaussian, PartitionStrategy::policy_gaussian}) {
      const auto params = weighted_params(epsilon, delta, m, strategy);
      const PartitionKeepRule rule = partition_keep_rule(params);
      const std::string where = name_of(strategy) + " eps " + std::to_string(epsilon) + " m " + std::to_string(m);
      const double sigma = dpselect::discrete::analytic_gaussian_sigma(epsilon, delta / 2.0, 1.0);
      ASSERT_EQ(rule.rounds.size(), 1u) << where;
      EXPECT_EQ(rule.noise_scale, sigma) << where;
      EXPECT_EQ(rule.rounds[0].noise_scale, sigma) << where;
      EXPECT_EQ(rule.threshold, rule.rounds[0].threshold) << where;
      EXPECT_EQ(rule.key_delta, delta / 2.0) << where;
      // rho = max over t of 1/sqrt(t) + sigma Phi^-1((1 - delta / 2)^(1/t)).
      double expected = -HUGE_VAL;
      for (std::uint64_t t = 1; t <= m; ++t) {
        const double tail = -std::expm1(std::log1p(-delta / 2.0) / static_cast<double>(t));  // 1 - (1 - d)^(1/t)
        expected = std::max(expected, 1.0 / std::sqrt(static_cast<double>(t)) + sigma * upper_quantile(tail));
      }
      EXPECT_NEAR(rule.threshold, expected, 1e-9 * expected) << where;
      // The computed probabilities meet delta / 2 at every t, and nearly spend it at the worst t.
      double worst = 0.0;
      for (std::uint64_t t = 1; t <= m; ++t) {
        const double p = weighted_keep_probability(rule.rounds[0], 1.0 / std::sqrt(static_cast<double>(t)));
        const double any = -std::expm1(static_cast<double>(t) * std::log1p(-p));  // 1 - (1 - p)^t
        EXPECT_LE(any, delta / 2.0 * (1.0 + 1e-12)) << where << " t " << t;
        worst = std::max(worst, any);
      }
      EXPECT_GT(worst, delta / 2.0 * (1.0 - 1e-6)) << where;
      const double cutoff = strategy == PartitionStrategy::policy_gaussian ? rule.threshold + 3.0 * sigma : 0.0;
      EXPECT_EQ(rule.policy_cutoff, cutoff) << where;
    }
  }
}

TEST(WeightedPartitionRule, DpSipsRoundsComposeToOneSigmaAndSpendHalfOfDelta) {
  for (const std::uint32_t rounds : {1u, 2u, 3u, 7u}) {
    for (const double ratio : {0.3, 0.5, 1.0}) {
      auto params = weighted_params(1.0, 1e-6, 5, PartitionStrategy::dp_sips);
      params.rounds = rounds;
      params.round_budget_ratio = ratio;
      const PartitionKeepRule rule = partition_keep_rule(params);
      const std::string where = "rounds " + std::to_string(rounds) + " ratio " + std::to_string(ratio);
      ASSERT_EQ(rule.rounds.size(), rounds) << where;
      const double sigma = dpselect::discrete::analytic_gaussian_sigma(1.0, 0.5e-6, 1.0);
      double precision = 0.0, spent = 0.0, shares = 0.0;
      for (std::uint32_t i = 0; i < rounds; ++i) {
        const WeightedRound& round = rule.rounds[i];
        // Round i's share grows by 1 / ratio each round: f_i proportional to ratio^(R - 1 - i).
        if (i > 0) EXPECT_NEAR(rule.rounds[i - 1].budget_share / round.budget_share, ratio, 1e-12) << where;
        EXPECT_NEAR(round.noise_scale, sigma / std::sqrt(round.budget_share), 1e-12 * round.noise_scale) << where;
        precision += 1.0 / (round.noise_scale * round.noise_scale);
        spent += round.key_delta;
        shares += round.budget_share;
        double worst = 0.0;
        for (std::uint64_t t = 1; t <= 5; ++t) {
          const double p = weighted_keep_probability(round, 1.0 / std::sqrt(static_cast<double>(t)));
          worst = std::max(worst, -std::expm1(static_cast<double>(t) * std::log1p(-p)));
        }
        EXPECT_LE(worst, round.key_delta * (1.0 + 1e-9)) << where << " round " << i;
      }
      // Gaussian DP composes as mu^2 = sum mu_i^2 (Dong, Roth & Su 2022): the rounds are one sigma.
      EXPECT_NEAR(precision, 1.0 / (sigma * sigma), 1e-12 / (sigma * sigma)) << where;
      EXPECT_LE(spent, 0.5e-6) << where;
      EXPECT_NEAR(spent, 0.5e-6, 1e-18) << where;
      EXPECT_NEAR(shares, 1.0, 1e-12) << where;
    }
  }
}

TEST(WeightedPartitionRule, BadParametersAreRefusedByName) {
  using dpselect::testing::expect_invalid_message;
  for (const PartitionStrategy strategy : kWeightedStrategies) {
    const auto good = weighted_params(1.0, 1e-5, 3, strategy);
    const auto refused = [](const PartitionSelectionParams& params, std::initializer_list<std::string> fragments) {
      expect_invalid_message([&] { (void)partition_keep_rule(params); }, fragments);
    };
    auto params = good;
    params.max_partitions = dpselect::kMaxWeightedPartitions + 1;
    refused(params, {"max_partitions", "65537", name_of(strategy)});
    params = good;
    params.backend = dpselect::Backend::Gpu;
    refused(params, {"backend", "Gpu", name_of(strategy)});
    for (const std::uint32_t rounds : {0u, dpselect::kMaxPartitionRounds + 1}) {
      params = good;
      params.rounds = rounds;
      refused(params, {"rounds", std::to_string(rounds)});
    }
    for (const double ratio : {0.0, -0.5, 1.5, dpselect::testing::kNaN}) {
      params = good;
      params.round_budget_ratio = ratio;
      refused(params, {"round_budget_ratio"});
    }
    for (const double cutoff : {-1.0, dpselect::testing::kInf, dpselect::testing::kNaN}) {
      params = good;
      params.policy_cutoff_sigmas = cutoff;
      refused(params, {"policy_cutoff_sigmas"});
    }
    params = good;
    params.max_partitions = dpselect::kMaxWeightedPartitions;
    params.rounds = 1;
    EXPECT_NO_THROW(params.validate());
  }
}

// Blocks of `keys_per_user` keys, each block held whole by `users` users who hold nothing else:
// every key of the block has weight users / sqrt(keys_per_user).
struct Group {
  std::uint64_t users;
  std::uint64_t keys_per_user;
};
struct WeightedData {
  std::vector<std::uint64_t> users, keys;
};
constexpr std::uint64_t kKeysPerGroup = 2000;

WeightedData blocks_of(const std::vector<Group>& groups) {
  WeightedData data;
  std::uint64_t next_user = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (std::uint64_t block = 0; block < kKeysPerGroup / groups[g].keys_per_user; ++block) {
      for (std::uint64_t u = 0; u < groups[g].users; ++u, ++next_user) {
        for (std::uint64_t j = 0; j < groups[g].keys_per_user; ++j) {
          data.users.push_back(next_user);
          data.keys.push_back(g * kKeysPerGroup + block * groups[g].keys_per_user + j);  // group: key / kKeysPerGroup
        }
      }
    }
  }
  return data;
}

// The keep probability of a key of group g: weighted_gaussian, w = n / sqrt(t); policy_gaussian,
// each user raises each of its t keys (equal gaps) by min(1 / sqrt(t), the gap): min(n / sqrt(t),
// Gamma); dp_sips, lone users only (keep_probability).
double group_probability(const PartitionSelectionParams& params, const PartitionKeepRule& rule, const Group& group) {
  const double t = static_cast<double>(group.keys_per_user);
  switch (params.strategy) {
    case PartitionStrategy::weighted_gaussian:
      return weighted_keep_probability(rule.rounds[0], static_cast<double>(group.users) / std::sqrt(t));
    case PartitionStrategy::policy_gaussian: {
      double weight = 0.0;
      for (std::uint64_t u = 0; u < group.users; ++u) {
        weight += std::min(1.0 / std::sqrt(t), rule.policy_cutoff - weight);
      }
      return weighted_keep_probability(rule.rounds[0], weight);
    }
    default:
      return keep_probability(params, group.users);
  }
}

TEST(SelectWeightedPartitions, KeepRatesOverManyReleasesMatchTheWeightsChiSquare) {
  // Groups of 2000 keys, kReleases releases at fixed seeds: T = 2000 kReleases independent coins
  // per group (each key's coin its own block, each release its own streams; given the data every
  // weight is fixed), so each group's kept count is exactly Binomial(T, p) with p from the
  // published rule (group_probability). expect_binomial_groups refuses a statistic above the
  // chi-square's upper 1e-6 quantile and a single group beyond its 1.1e-6 binomial tail: with 3
  // statistics and at most 36 single comparisons a false failure has probability below 5e-5.
  // epsilon 1, delta 1e-3, m = 4: sigma about 3.3 and rho about 12.5, so n from 5 to 40 spans p.
  constexpr int kReleases = 25;
  const std::vector<Group> lone = {{5, 1}, {8, 1}, {11, 1}, {13, 1}, {15, 1}, {18, 1}, {24, 1}, {40, 1}};
  const std::vector<Group> with_blocks = {{8, 1}, {13, 1}, {16, 1}, {18, 1}, {22, 4}, {26, 4}, {30, 4}, {36, 4}};
  std::uint64_t seed = 900;
  for (const PartitionStrategy strategy : kWeightedStrategies) {
    const std::vector<Group>& groups = strategy == PartitionStrategy::dp_sips ? lone : with_blocks;
    const WeightedData data = blocks_of(groups);
    const auto params = weighted_params(1.0, 1e-3, 4, strategy);
    const PartitionKeepRule rule = partition_keep_rule(params);
    std::vector<int> kept(groups.size(), 0);
    for (int release = 0; release < kReleases; ++release) {
      auto context = dpselect::Context::with_fixed_seed(++seed);
      const auto selection = dpselect::select_partitions(context, data.users, data.keys, params);
      EXPECT_EQ(selection.report.keys_considered, groups.size() * kKeysPerGroup);
      for (const std::uint64_t key : selection.keys) ++kept[key / kKeysPerGroup];
    }
    std::vector<double> p;
    for (const Group& group : groups) p.push_back(group_probability(params, rule, group));
    dpselect::testing::expect_binomial_groups(kept, p, static_cast<int>(kKeysPerGroup) * kReleases, 4,
                                              name_of(strategy));
  }
}

// Random users holding 1 to 6 of `keys` keys, over and under the bound.
WeightedData random_pairs(std::uint64_t users, std::uint64_t keys, std::uint64_t seed) {
  std::mt19937_64 draw(seed);
  WeightedData data;
  for (std::uint64_t user = 0; user < users; ++user) {
    const std::uint64_t held = 1 + draw() % 6;
    for (std::uint64_t j = 0; j < held; ++j) {
      data.users.push_back(user * 7919 + 3);
      data.keys.push_back((draw() % keys) * 1000003);
    }
  }
  return data;
}

// Round `round` of the documented layout from stream `stream`: the pairs' users bounded, each
// key's weight summed by ascending held (or the users' L2 descent in their drawn order), each
// key released iff its coin's 53 bits fall below p 2^53 (the test asserts that no tie occurs).
std::vector<std::uint64_t> reference_round(const dpselect::RandomKey& key, std::uint64_t stream,
                                           const std::map<std::uint64_t, std::set<std::uint64_t>>& keys_of_user,
                                           const PartitionSelectionParams& params, const PartitionKeepRule& rule,
                                           const WeightedRound& round, std::uint64_t& considered) {
  std::map<std::uint64_t, std::vector<std::uint64_t>> kept_of_user;
  for (const auto& [user, held] : keys_of_user) {
    kept_of_user[user] =
        dpselect::testing::reference_kept_keys(key, stream, user, {held.begin(), held.end()}, params.max_partitions);
  }
  std::map<std::uint64_t, double> weight;
  if (params.strategy == PartitionStrategy::policy_gaussian) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> order;  // (order word, user)
    for (auto& [user, kept] : kept_of_user) {
      std::sort(kept.begin(), kept.end());  // each user's kept keys updated in ascending order
      const auto block = dpselect::random_block(key, stream, dpselect::detail::user_order_position(user));
      order.emplace_back(dpselect::detail::bounding_word(block), user);
    }
    std::sort(order.begin(), order.end());
    for (const auto& [word, user] : order) {
      double squares = 0.0;
      for (const std::uint64_t k : kept_of_user[user]) {
        const double gap = rule.policy_cutoff - weight[k];
        if (gap > 0.0) squares += gap * gap;
      }
      if (!(squares > 0.0)) continue;
      const double norm = std::sqrt(squares);
      const double step = std::min(1.0, norm) / norm;
      for (const std::uint64_t k : kept_of_user[user]) {
        const double gap = rule.policy_cutoff - weight[k];
        if (gap > 0.0) weight[k] += step * gap;
      }
    }
  } else {
    std::map<std::uint64_t, std::vector<std::uint64_t>> held_of_key;
    for (const auto& [user, kept] : kept_of_user) {
      for (const std::uint64_t k : kept) held_of_key[k].push_back(kept.size());
    }
    for (auto& [k, held] : held_of_key) {
      std::sort(held.begin(), held.end());
      double w = 0.0;
      for (const std::uint64_t t : held) w += 1.0 / std::sqrt(static_cast<double>(t));
      weight[k] = w;
    }
  }
  considered = weight.size();
  std::vector<std::uint64_t> released;
  for (const auto& [k, w] : weight) {
    const std::uint64_t coin = dpselect::detail::key_coin(dpselect::random_block(key, stream, k));
    const double scaled = std::ldexp(weighted_keep_probability(round, w), 53);
    EXPECT_NE(static_cast<double>(coin), std::floor(scaled)) << "a tie (probability 2^-53)";
    if (static_cast<double>(coin) < std::floor(scaled)) released.push_back(k);
  }
  return released;
}

TEST(SelectWeightedPartitions, EveryBitComesFromTheDocumentedLayout) {
  const WeightedData data = random_pairs(2500, 3000, 5);  // about 3 users a key
  for (const PartitionStrategy strategy : kWeightedStrategies) {
    for (const auto generator : {dpselect::Generator::chacha20, dpselect::Generator::philox}) {
      // delta 0.2 for many releases at these small counts.
      const auto params = weighted_params(1.0, 0.2, 3, strategy);
      const PartitionKeepRule rule = partition_keep_rule(params);
      auto context = dpselect::Context::with_fixed_seed(23, generator);
      (void)dpselect::select_partitions(context, data.users, data.keys, params);  // its streams used up
      const auto selection = dpselect::select_partitions(context, data.users, data.keys, params);
      const std::uint64_t streams = strategy == PartitionStrategy::dp_sips ? 27 : 9;
      ASSERT_EQ(selection.report.streams, streams);
      ASSERT_EQ(selection.report.stream, streams) << "the first selection drew streams 0 .. streams - 1";
      EXPECT_EQ(selection.report.delta_float, 0.0);
      const dpselect::RandomKey key = dpselect::RandomKey::from_seed(23, generator);
      std::map<std::uint64_t, std::set<std::uint64_t>> keys_of_user;
      for (std::size_t i = 0; i < data.users.size(); ++i) keys_of_user[data.users[i]].insert(data.keys[i]);
      std::vector<std::uint64_t> expected;
      std::uint64_t considered = 0;
      for (std::size_t r = 0; r < rule.rounds.size(); ++r) {
        std::uint64_t round_considered = 0;
        const std::vector<std::uint64_t> released = reference_round(
            key, streams + 9 * r, keys_of_user, params, rule, rule.rounds[r], round_considered);
        if (r == 0) considered = round_considered;
        // dp_sips: the next round sees the pairs of the keys not released yet.
        for (auto& [user, held] : keys_of_user) {
          for (const std::uint64_t k : released) held.erase(k);
        }
        std::erase_if(keys_of_user, [](const auto& entry) { return entry.second.empty(); });
        expected.insert(expected.end(), released.begin(), released.end());
      }
      std::sort(expected.begin(), expected.end());
      ASSERT_GT(expected.size(), 20u) << name_of(strategy) << ": a test that can fail, many keys released";
      ASSERT_LT(expected.size(), considered) << name_of(strategy) << ": and some not";
      EXPECT_EQ(selection.keys, expected) << name_of(strategy);
      EXPECT_EQ(selection.report.keys_considered, considered) << name_of(strategy);
    }
  }
}

TEST(SelectWeightedPartitions, TheReleaseDoesNotDependOnTheThreadCount) {
  const WeightedData data = random_pairs(40000, 60000, 11);
  const int threads_before = omp_get_max_threads();
  for (const PartitionStrategy strategy : kWeightedStrategies) {
    const auto params = weighted_params(1.0, 0.05, 3, strategy);
    std::vector<std::vector<std::uint64_t>> released;
    for (const int threads : {1, 2, 3, 7}) {
      omp_set_num_threads(threads);
      auto context = dpselect::Context::with_fixed_seed(3);
      released.push_back(dpselect::select_partitions(context, data.users, data.keys, params).keys);
    }
    omp_set_num_threads(threads_before);
    ASSERT_GT(released[0].size(), 50u) << name_of(strategy) << ": a test that can fail, many keys released";
    for (std::size_t i = 1; i < released.size(); ++i) {
      EXPECT_EQ(released[i], released[0]) << name_of(strategy) << " thread count #" << i;
    }
  }
}

TEST(ExactPartitionCoin, TiesOfTheFirst53BitsAreBrokenByTheNextStreams) {
  // A block whose coin equals floor(p 2^53) exactly: the decision is then U's next 64 bits (words
  // 0-1 of block `key` of stream + 1) against the next 64 bits of p's fraction, and so on.
  const dpselect::RandomKey random_key = dpselect::RandomKey::from_seed(8, dpselect::Generator::chacha20);
  const dpselect::detail::ContextAccess::KeyedStream round{random_key, 40};
  int kept = 0, decided_later = 0;
  for (std::uint64_t key = 0; key < 200; ++key) {
    const double p = (static_cast<double>(key) + 0.5) / 201.0;  // fractions below the 53rd bit for p < 1/2
    const double scaled = std::ldexp(p, 53);
    const auto cut = static_cast<std::uint64_t>(std::floor(scaled));
    dpselect::RandomBlock block{};
    const std::uint64_t coin_word = cut << 11;
    block.word[2] = static_cast<std::uint32_t>(coin_word);
    block.word[3] = static_cast<std::uint32_t>(coin_word >> 32);
    ASSERT_EQ(dpselect::detail::key_coin(block), cut);
    const bool decision = dpselect::detail::exact_coin_below(block, p, key, round);
    const double fraction = scaled - std::floor(scaled);
    if (fraction == 0.0) {
      EXPECT_FALSE(decision) << "U >= p when the bits of p end with the coin's";
      continue;
    }
    const auto tie = dpselect::random_block(random_key, 41, key);
    const std::uint64_t next = std::uint64_t{tie.word[0]} | (std::uint64_t{tie.word[1]} << 32);
    const auto next_cut = static_cast<std::uint64_t>(std::floor(std::ldexp(fraction, 64)));
    ASSERT_NE(next, next_cut) << "a second tie (probability 2^-64)";
    EXPECT_EQ(decision, next < next_cut) << "key " << key;
    kept += decision;
    ++decided_later;
    // Off the tie, the 53 bits decide alone.
    block.word[3] = static_cast<std::uint32_t>((coin_word + (std::uint64_t{1} << 11)) >> 32);
    block.word[2] = static_cast<std::uint32_t>(coin_word + (std::uint64_t{1} << 11));
    EXPECT_FALSE(dpselect::detail::exact_coin_below(block, p, key, round));
  }
  EXPECT_GT(decided_later, 50) << "most p < 1/2 have bits below the 53rd";
  EXPECT_GT(kept, 0);
  EXPECT_LT(kept, decided_later);
  dpselect::RandomBlock any{};
  EXPECT_TRUE(dpselect::detail::exact_coin_below(any, 1.0, 0, round));
  EXPECT_FALSE(dpselect::detail::exact_coin_below(any, 0.0, 0, round));
}

TEST(SelectWeightedPartitions, BadInputIsRefusedBeforeAnythingIsChargedOrDrawn) {
  const std::vector<std::uint64_t> users = {1, 2}, keys = {5, 5};
  for (const PartitionStrategy strategy : kWeightedStrategies) {
    auto accountant = std::make_shared<dpselect::PrivacyAccountant>(dpselect::PrivacyBound{10.0, 0.5});
    auto context = dpselect::Context::with_fixed_seed(1);
    context.charge_to(accountant);
    auto params = weighted_params(1.0, 1e-5, 2, strategy);
    params.backend = dpselect::Backend::Gpu;
    dpselect::testing::expect_invalid_message(
        [&] { (void)dpselect::select_partitions(context, users, keys, params); }, {"backend", name_of(strategy)});
    params.backend = dpselect::Backend::Auto;
    dpselect::testing::expect_invalid_message(
        [&] {
          (void)dpselect::select_partitions(context, dpselect::DeviceSpan<const std::uint64_t>{users.data(), 2},
                                            dpselect::DeviceSpan<const std::uint64_t>{keys.data(), 2}, params);
        },
        {"strategy must count users for pairs in device memory", name_of(strategy)});
    params.rounds = 0;
    dpselect::testing::expect_invalid_message(
        [&] { (void)dpselect::select_partitions(context, users, keys, params); }, {"rounds", "0"});
    EXPECT_EQ(accountant->release_count(), 0u) << name_of(strategy);
    params.rounds = 3;
    const auto selection = dpselect::select_partitions(context, users, keys, params);
    EXPECT_EQ(selection.report.stream, 0u) << "nothing was drawn by the failures";
    EXPECT_EQ(accountant->release_count(), 1u);
  }
}

}  // namespace
