// SPDX-License-Identifier: Apache-2.0
// The partition selection strategies' keep probabilities: the truncated geometric closed form
// equals the recursion it solves, every strategy meets the per-key DP inequalities it is built on,
// the optimal strategy keeps at least what Laplace thresholding keeps, the thresholds release a
// lone user's key with exactly the per-key delta, and every bad parameter is refused by name.
// select_partitions: keys are released at their keep probability (binomial z-tests and chi-square
// tests over many releases, fixed seeds), a user never contributes to more than max_partitions
// keys, the release depends on the set of pairs and the seed only (not on their order, the
// thread count or the keys' representation as strings or their codes), and bad input is refused
// before anything is charged or drawn. String numbering equals a sort's ranks; a public minimum
// count (pre_threshold) shifts the count and keeps the guarantee.
#include <algorithm>
#include <map>
#include <set>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <omp.h>

#include "dpselect/accounting.hpp"
#include "dpselect/context.hpp"
#include "dpselect/discrete_noise.hpp"
#include "dpselect/errors.hpp"
#include "partition_selection/partition_passes.hpp"
#include "random/partition_randomness.hpp"
#include "dpselect/partition_selection.hpp"
#include "dpselect/random_key.hpp"
#include "support/frequencies.hpp"
#include "support/partition_reference.hpp"

namespace {

using dpselect::keep_probability;
using dpselect::partition_keep_rule;
using dpselect::PartitionSelectionParams;
using dpselect::PartitionStrategy;

struct Budget {
  double epsilon;
  double delta;
  std::uint64_t max_partitions;
};

const std::vector<Budget> kBudgets = {{1.0, 1e-5, 1}, {0.1, 1e-8, 1}, {4.0, 1e-3, 1},
                                      {1.0, 1e-5, 5}, {8.0, 1e-10, 40}, {0.5, 0.4, 3}};

PartitionSelectionParams params_of(const Budget& budget, PartitionStrategy strategy) {
  return {budget.epsilon, budget.delta, budget.max_partitions, strategy};
}

TEST(PartitionKeepProbability, TruncatedGeometricEqualsItsRecursion) {
  // Desfontaines et al. 2022, Def. of the optimal strategy: p(0) = 0 and
  // p(n) = min(e^eps p(n - 1) + delta, 1 - e^-eps (1 - p(n - 1) - delta), 1), in long double.
  for (const Budget& budget : kBudgets) {
    const auto params = params_of(budget, PartitionStrategy::truncated_geometric);
    const auto rule = partition_keep_rule(params);
    const long double eps = rule.key_epsilon, delta = rule.key_delta;
    long double p = 0.0L;
    EXPECT_EQ(keep_probability(params, 0), 0.0);
    std::uint64_t first_certain = 0;
    for (std::uint64_t n = 1; n <= rule.always_kept + 5; ++n) {
      p = std::fmin(std::fmin(std::exp(eps) * p + delta, 1.0L - std::exp(-eps) * (1.0L - p - delta)), 1.0L);
      if (p >= 1.0L && first_certain == 0) first_certain = n;
      EXPECT_NEAR(keep_probability(params, n), static_cast<double>(p), 1e-12)
          << "eps " << budget.epsilon << " delta " << budget.delta << " m " << budget.max_partitions << " n " << n;
    }
    EXPECT_EQ(rule.always_kept, first_certain) << "eps " << budget.epsilon << " delta " << budget.delta;
  }
}

TEST(PartitionKeepProbability, TruncatedGeometricAndLaplaceMeetThePerKeyInequalities) {
  // p(n + 1) <= e^eps' p(n) + delta' and 1 - p(n) <= e^eps' (1 - p(n + 1)) + delta', n >= 0.
  for (const auto strategy : {PartitionStrategy::truncated_geometric, PartitionStrategy::laplace_threshold}) {
    for (const Budget& budget : kBudgets) {
      const auto params = params_of(budget, strategy);
      const auto rule = partition_keep_rule(params);
      const double grow = std::exp(rule.key_epsilon), slack = 1e-12;
      for (std::uint64_t n = 0; n < 3000; ++n) {
        const double now = keep_probability(params, n), next = keep_probability(params, n + 1);
        ASSERT_LE(now, next) << "non-decreasing, n " << n;
        ASSERT_LE(next, grow * now + rule.key_delta + slack) << "n " << n << " eps " << budget.epsilon;
        ASSERT_LE(1.0 - now, grow * (1.0 - next) + rule.key_delta + slack) << "n " << n;
      }
    }
  }
}

TEST(PartitionKeepProbability, TheOptimalStrategyKeepsAtLeastWhatLaplaceThresholdingKeeps) {
  // One key per user: Laplace thresholding meets the inequalities at (eps, delta) itself, and the
  // truncated geometric p is the largest that does (Desfontaines et al. 2022, Thm 1).
  for (const Budget& budget : kBudgets) {
    if (budget.max_partitions != 1) continue;
    const auto optimal = params_of(budget, PartitionStrategy::truncated_geometric);
    const auto laplace = params_of(budget, PartitionStrategy::laplace_threshold);
    for (std::uint64_t n = 0; n < 3000; ++n) {
      ASSERT_GE(keep_probability(optimal, n) + 1e-15, keep_probability(laplace, n)) << "n " << n;
    }
  }
}

TEST(PartitionKeepProbability, ThresholdsReleaseALoneUsersKeyWithThePerKeyDelta) {
  for (const Budget& budget : kBudgets) {
    const auto laplace = partition_keep_rule(params_of(budget, PartitionStrategy::laplace_threshold));
    const double m = static_cast<double>(budget.max_partitions);
    EXPECT_DOUBLE_EQ(laplace.noise_scale, m / budget.epsilon);
    EXPECT_NEAR(-std::expm1(m * std::log1p(-laplace.key_delta)), budget.delta, 1e-12 * budget.delta);
    const double laplace_lone = keep_probability(params_of(budget, PartitionStrategy::laplace_threshold), 1);
    EXPECT_LE(laplace_lone, laplace.key_delta) << "from the safe side";
    EXPECT_NEAR(laplace_lone, laplace.key_delta, 1e-12 * laplace.key_delta);
    const auto gaussian_params = params_of(budget, PartitionStrategy::gaussian_threshold);
    const auto gaussian = partition_keep_rule(gaussian_params);
    EXPECT_EQ(gaussian.noise_scale,
              dpselect::discrete::analytic_gaussian_sigma(budget.epsilon, budget.delta / 2.0, std::sqrt(m)));
    EXPECT_NEAR(-std::expm1(m * std::log1p(-gaussian.key_delta)), budget.delta / 2.0, 1e-12 * budget.delta);
    const double lone = keep_probability(gaussian_params, 1);
    EXPECT_LE(lone, gaussian.key_delta) << "from the safe side";
    EXPECT_NEAR(lone, gaussian.key_delta, 1e-9 * gaussian.key_delta);
  }
  // eps 1, delta 1e-5, one key per user: b = 1, T = 1 - ln(2e-5), and a key at T passes half the time.
  const auto laplace = PartitionSelectionParams{1.0, 1e-5, 1, PartitionStrategy::laplace_threshold};
  const auto rule = partition_keep_rule(laplace);
  EXPECT_NEAR(rule.threshold, 1.0 - std::log(2e-5), 1e-12);
  EXPECT_NEAR(keep_probability(laplace, 12), 1.0 - 0.5 * std::exp(-(12.0 - rule.threshold)), 1e-15);
}

// Every strategy at the edges that validation lets through (epsilon to the largest double, delta
// down to the denormals, max_partitions to 2^64 - 1 (16 for the weighted strategies), the policy
// cutoff to 1e300): the rule is
// refused with InvalidArgument, or it is computed without NaN or overflow, a lone user's key passes
// with probability at most the per-key delta, p rises from p(0) = 0 and stays in [0, 1], the
// truncated geometric and Laplace rules meet both per-key inequalities (up to the rounding that
// delta_float counts), and the total delta stays below 1. Run under UBSan in the asan-ubsan preset.
TEST(PartitionKeepProbability, EveryRuleHoldsOrIsRefusedAtTheEdges) {
  const double epsilons[] = {1e-300, 1e-12, 1.0, 36.0, 40.0, 700.0, 709.79, 710.0, 1e300,
                             std::numeric_limits<double>::max()};
  const double deltas[] = {std::numeric_limits<double>::denorm_min(), 1e-320, 1e-300, 1e-9, 0.5, 1.0 - 0x1p-53};
  const std::uint64_t partitions[] = {1, 16, std::uint64_t{1} << 32, ~std::uint64_t{0}};
  int accepted = 0, refused = 0;
  for (const auto strategy : {PartitionStrategy::truncated_geometric, PartitionStrategy::laplace_threshold,
                              PartitionStrategy::gaussian_threshold, PartitionStrategy::weighted_gaussian,
                              PartitionStrategy::policy_gaussian, PartitionStrategy::dp_sips}) {
    for (const double epsilon : epsilons) {
      for (const double delta : deltas) {
        for (std::uint64_t m : partitions) {
          // The weighted rules search a threshold over every t <= m (seconds at m = 2^16): small m.
          if (dpselect::is_weighted(strategy) && m > 16) continue;
          for (const double cutoff : {3.0, 1e300}) {
            if (cutoff != 3.0 && strategy != PartitionStrategy::policy_gaussian) continue;
            PartitionSelectionParams params{epsilon, delta, m, strategy};
            params.policy_cutoff_sigmas = cutoff;
            const std::string label = std::string(dpselect::to_string(strategy)) + " eps " + std::to_string(epsilon) +
                                      " delta " + std::to_string(delta) + " m " + std::to_string(m) + " cutoff " +
                                      std::to_string(cutoff);
            dpselect::PartitionKeepRule rule;
            try {
              rule = partition_keep_rule(params);
            } catch (const dpselect::InvalidArgument&) {
              ++refused;
              continue;
            }
            ++accepted;
            ASSERT_EQ(dpselect::keep_probability(rule, strategy, 0), 0.0) << label;
            const double lone = dpselect::keep_probability(rule, strategy, 1);
            ASSERT_LE(lone, rule.key_delta) << label;
            const long double grow = std::exp(static_cast<long double>(rule.key_epsilon));
            const long double rounding = grow * 0x1p-53L;
            const bool per_key_inequalities =
                strategy == PartitionStrategy::truncated_geometric || strategy == PartitionStrategy::laplace_threshold;
            double previous = 0.0;
            for (const std::uint64_t n : {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{3}, std::uint64_t{10},
                                          std::uint64_t{1000}, std::uint64_t{1} << 40, ~std::uint64_t{0}}) {
              const double p = dpselect::keep_probability(rule, strategy, n);
              ASSERT_TRUE(p >= 0.0 && p <= 1.0) << label << " n " << n << " p " << p;
              ASSERT_GE(p, previous) << label << " n " << n;
              previous = p;
            }
            if (per_key_inequalities) {
              for (std::uint64_t n = 1; n <= 2000; ++n) {
                const long double before = dpselect::keep_probability(rule, strategy, n - 1);
                const long double now = dpselect::keep_probability(rule, strategy, n);
                ASSERT_LE(now, grow * before + rule.key_delta + rounding) << label << " n " << n;
                ASSERT_LE(1.0L - before, grow * (1.0L - now) + rule.key_delta + rounding) << label << " n " << n;
              }
            }
            const double delta_float = dpselect::detail::partition_delta_float(params, rule);
            ASSERT_LT(delta + delta_float, 1.0) << label;
          }
        }
      }
    }
  }
  EXPECT_GT(accepted, 100);
  EXPECT_GT(refused, 100);
}

// The probe's cases, each of which once released a lone user's key with probability 1 or a total
// delta of 26 or more: refused before anything is charged.
TEST(PartitionKeepProbability, ExtremeParametersOfTheProbeAreRefusedBeforeTheCharge) {
  const auto refused = [](PartitionSelectionParams params, const std::string& name) {
    auto accountant = std::make_shared<dpselect::PrivacyAccountant>(dpselect::PrivacyBound{1e308, 0.5});
    dpselect::Context context = dpselect::Context::with_fixed_seed(3);
    context.charge_to(accountant);
    const std::vector<std::uint64_t> users = {1, 2, 3};
    const std::vector<std::uint64_t> keys = {7, 8, 9};
    try {
      (void)dpselect::select_partitions(context, users, keys, params);
      ADD_FAILURE() << "accepted, " << name;
    } catch (const dpselect::InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find(name), std::string::npos) << error.what();
    }
    EXPECT_EQ(accountant->release_count(), 0u) << name;
  };
  refused({709.79, 1e-6, 1, PartitionStrategy::truncated_geometric}, "epsilon");
  refused({710.0, 1e-6, 1, PartitionStrategy::truncated_geometric}, "epsilon");
  refused({40.0, 1e-9, 1, PartitionStrategy::truncated_geometric}, "total delta");
  refused({1e300, 1e-9, 1, PartitionStrategy::laplace_threshold}, "epsilon");
  refused({1.0, 1e-6, ~std::uint64_t{0}, PartitionStrategy::truncated_geometric}, "max_partitions");
  refused({1.0, 1e-320, 1, PartitionStrategy::truncated_geometric}, "delta");
  PartitionSelectionParams policy{1.0, 1e-6, 4, PartitionStrategy::policy_gaussian};
  policy.policy_cutoff_sigmas = 1e308;
  refused(policy, "policy_cutoff_sigmas");
}

// A cutoff of 1e300 noise scales (squared gaps beyond every double) still moves every key below
// it by the L2 descent: a user's one key gains weight 1, as with the default cutoff.
TEST(PartitionKeepProbability, APolicyCutoffFarAboveEveryWeightStillDescends) {
  std::vector<std::uint64_t> users, keys;
  for (std::uint64_t u = 0; u < 2000; ++u) {
    users.push_back(u);
    keys.push_back(42);
  }
  for (const double cutoff : {3.0, 1e300}) {
    PartitionSelectionParams params{1.0, 1e-6, 1, PartitionStrategy::policy_gaussian};
    params.policy_cutoff_sigmas = cutoff;
    dpselect::Context context = dpselect::Context::with_fixed_seed(11);
    const auto selection = dpselect::select_partitions(context, users, keys, params);
    EXPECT_EQ(selection.keys, std::vector<std::uint64_t>{42}) << "cutoff " << cutoff;
  }
}

TEST(PartitionKeepProbability, BadParametersAreRefusedByName) {
  const auto refused = [](PartitionSelectionParams params, const std::string& message) {
    try {
      (void)keep_probability(params, 3);
      ADD_FAILURE() << "accepted: " << message;
    } catch (const dpselect::InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find(message), std::string::npos) << error.what();
    }
  };
  const PartitionSelectionParams good{1.0, 1e-6, 1, PartitionStrategy::truncated_geometric};
  const double nan = std::nan(""), infinity = HUGE_VAL;
  for (const double epsilon : {0.0, -1.0, nan, infinity}) {
    auto params = good;
    params.epsilon = epsilon;
    refused(params, "epsilon must be finite and > 0");
  }
  for (const double delta : {0.0, 1.0, -0.1, 2.0, nan}) {
    auto params = good;
    params.delta = delta;
    refused(params, "delta must be in (0, 1)");
  }
  auto tiny = good;
  tiny.epsilon = 1e-320;
  tiny.max_partitions = 1000;
  tiny.strategy = PartitionStrategy::laplace_threshold;
  refused(tiny, "epsilon must be large enough that the Laplace scale max_partitions / epsilon is finite");
  auto params = good;
  params.max_partitions = 0;
  refused(params, "max_partitions must be >= 1 (got 0)");
  params = good;
  params.strategy = static_cast<PartitionStrategy>(7);
  refused(params, "strategy must be a PartitionStrategy (got 7)");
  EXPECT_NO_THROW(good.validate());
}

// `keys` keys each held by exactly `users_per_key` users, every user holding one key.
struct Contributions {
  std::vector<std::uint64_t> users, keys;
};
Contributions keys_with_users(std::uint64_t keys, std::uint64_t users_per_key) {
  Contributions data;
  for (std::uint64_t k = 0; k < keys; ++k) {
    for (std::uint64_t u = 0; u < users_per_key; ++u) {
      data.users.push_back(k * users_per_key + u);
      data.keys.push_back(7 * k + 3);
    }
  }
  return data;
}

TEST(SelectPartitions, KeysAreReleasedAtTheirKeepProbability) {
  // Each check: kept ~ Binomial(K, p(n)), refused beyond 5 standard deviations (+1 for the
  // discreteness): a false failure has probability below 6e-7 per check, 12 checks.
  constexpr std::uint64_t kKeys = 20000;
  std::uint64_t seed = 100;
  for (const auto strategy : {PartitionStrategy::truncated_geometric, PartitionStrategy::laplace_threshold,
                              PartitionStrategy::gaussian_threshold}) {
    const PartitionSelectionParams params{1.0, 1e-3, 1, strategy};
    for (const std::uint64_t n : {1, 5, 9, 14}) {
      const Contributions data = keys_with_users(kKeys, n);
      auto context = dpselect::Context::with_fixed_seed(++seed);
      const auto selection = dpselect::select_partitions(context, data.users, data.keys, params);
      const double p = keep_probability(params, n);
      const double expected = kKeys * p, sd = std::sqrt(kKeys * p * (1.0 - p));
      EXPECT_LE(std::abs(static_cast<double>(selection.keys.size()) - expected), 5.0 * sd + 1.0)
          << "strategy " << static_cast<int>(strategy) << " n " << n << " p " << p;
      EXPECT_EQ(selection.report.keys_considered, kKeys);
      for (const std::uint64_t key : selection.keys) ASSERT_EQ(key % 7, 3u) << "a key of the data";
      EXPECT_TRUE(std::is_sorted(selection.keys.begin(), selection.keys.end()));
    }
  }
}

TEST(SelectPartitions, KeepRatesOverManyReleasesMatchTheClosedFormChiSquare) {
  // Groups of kKeys keys held by n users each (users distinct per key), n over the whole rise of
  // p; kReleases releases at fixed seeds make T = kKeys * kReleases independent coins per group
  // (each release's keys draw disjoint blocks, the releases independent streams), so the group's
  // kept count is exactly Binomial(T, p(n)). Groups with T p (1 - p) >= 25 enter the statistic
  // sum (kept - T p)^2 / (T p (1 - p)), refused above the chi-square's upper 1e-6 quantile (the
  // normal approximation of each binomial); the others are compared one by one within
  // frequency_tolerance (binomial tail <= 1.1e-6 each), and a group with p = 1 must keep every
  // key. Six statistics and at most 54 single comparisons: a false failure below 7e-5 in all.
  constexpr std::uint64_t kKeys = 2000;
  constexpr int kReleases = 25;
  constexpr double kTrials = static_cast<double>(kKeys) * kReleases;
  const std::vector<std::uint64_t> group_users = {1, 2, 3, 4, 6, 9, 13, 20, 30};
  Contributions data;
  std::uint64_t next_user = 0;
  for (std::size_t g = 0; g < group_users.size(); ++g) {
    for (std::uint64_t k = 0; k < kKeys; ++k) {
      for (std::uint64_t u = 0; u < group_users[g]; ++u) {
        data.users.push_back(next_user++);
        data.keys.push_back(g * kKeys + k);  // the key's group: key / kKeys
      }
    }
  }
  std::uint64_t seed = 7000;
  for (const auto strategy : {PartitionStrategy::truncated_geometric, PartitionStrategy::laplace_threshold,
                              PartitionStrategy::gaussian_threshold}) {
    for (const std::uint64_t max_partitions : {1, 3}) {
      const PartitionSelectionParams params{1.0, 1e-3, max_partitions, strategy};
      std::vector<int> kept(group_users.size(), 0);
      for (int release = 0; release < kReleases; ++release) {
        auto context = dpselect::Context::with_fixed_seed(++seed);
        for (const std::uint64_t key : dpselect::select_partitions(context, data.users, data.keys, params).keys) {
          ++kept[key / kKeys];
        }
      }
      std::vector<double> p;
      for (const std::uint64_t n : group_users) p.push_back(keep_probability(params, n));
      dpselect::testing::expect_binomial_groups(kept, p, static_cast<int>(kTrials), 4,
                                                "strategy " + std::to_string(static_cast<int>(strategy)) + " m " +
                                                    std::to_string(max_partitions));
    }
  }
}

TEST(SelectPartitions, AUserNeverContributesToMoreThanMaxPartitionsKeys) {
  // One user holds 1000 keys nobody else holds, max_partitions 2: two keys have one user (p(1) =
  // delta' = 0.25), the other 998 none (never released). Over 400 runs the released total is
  // Binomial(800, 0.25) (mean 200, sd 12.2; refused beyond 5 sd); without the bound it would be
  // about 250 per run.
  const PartitionSelectionParams params{1.0, 0.5, 2, PartitionStrategy::truncated_geometric};
  ASSERT_DOUBLE_EQ(keep_probability(params, 1), 0.25);
  std::vector<std::uint64_t> users(1000, 42), keys(1000);
  std::iota(keys.begin(), keys.end(), 1);
  std::uint64_t total = 0;
  std::vector<std::uint64_t> times_released(1001, 0);
  for (std::uint64_t seed = 0; seed < 400; ++seed) {
    auto context = dpselect::Context::with_fixed_seed(seed);
    const auto selection = dpselect::select_partitions(context, users, keys, params);
    ASSERT_LE(selection.keys.size(), 2u);
    EXPECT_EQ(selection.report.keys_considered, 2u);
    total += selection.keys.size();
    for (const std::uint64_t key : selection.keys) ++times_released[key];
  }
  EXPECT_LE(std::abs(static_cast<double>(total) - 200.0), 5.0 * std::sqrt(800 * 0.25 * 0.75));
  // The two kept keys are chosen at random, not the first two.
  EXPECT_LT(times_released[1] + times_released[2], total);
}

TEST(SelectPartitions, TheReleaseDependsOnTheSetOfPairsAndTheSeedOnly) {
  Contributions data = keys_with_users(3000, 5);  // p(5) about 0.3: many keys either way
  const PartitionSelectionParams params{2.0, 1e-4, 1, PartitionStrategy::laplace_threshold};
  auto first = dpselect::Context::with_fixed_seed(5);
  const auto expected = dpselect::select_partitions(first, data.users, data.keys, params);
  ASSERT_FALSE(expected.keys.empty());
  // Shuffled, with every pair given twice: the same distinct pairs.
  std::vector<std::uint64_t> order(data.users.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(9));
  Contributions shuffled;
  for (int copy = 0; copy < 2; ++copy) {
    for (const std::uint64_t i : order) {
      shuffled.users.push_back(data.users[i]);
      shuffled.keys.push_back(data.keys[i]);
    }
  }
  auto second = dpselect::Context::with_fixed_seed(5);
  EXPECT_EQ(dpselect::select_partitions(second, shuffled.users, shuffled.keys, params).keys, expected.keys);
  auto other_seed = dpselect::Context::with_fixed_seed(6);
  EXPECT_NE(dpselect::select_partitions(other_seed, data.users, data.keys, params).keys, expected.keys);
}

TEST(SelectPartitions, BoundingDrawsAreExactlyUniform) {
  // Lemire's multiply-and-reject (uniform_below): j = floor(w r / 2^64), except that the 2^64 mod
  // r words whose product's low half falls below 2^64 mod r are rejected, which leaves exactly
  // floor(2^64 / r) words for every j.
  using dpselect::detail::uniform_below;
  std::uint64_t j = 0;
  for (const std::uint64_t range : {1ull, 2ull, 3ull, 5ull, 7ull, 1000ull, 1ull << 40, (1ull << 63) + 1}) {
    const std::uint64_t rejected = (0 - range) % range;  // 2^64 mod range
    EXPECT_EQ(uniform_below(0, range, j), rejected == 0) << range;  // word 0: low half 0
    std::mt19937_64 draw(range);
    for (int i = 0; i < 10000; ++i) {
      const std::uint64_t word = draw();
      const unsigned __int128 product = static_cast<unsigned __int128>(word) * range;
      const bool accepted = static_cast<std::uint64_t>(product) >= rejected;
      ASSERT_EQ(uniform_below(word, range, j), accepted) << range;
      if (accepted) ASSERT_EQ(j, static_cast<std::uint64_t>(product >> 64)) << range;
      if (accepted) ASSERT_LT(j, range);
    }
  }
  // Range 3: 2^64 mod 3 = 1 word is rejected, the one whose product's low half is 0: word 0.
  EXPECT_FALSE(uniform_below(0, 3, j));
  EXPECT_TRUE(uniform_below(1, 3, j));
  EXPECT_EQ(j, 0u);
  EXPECT_TRUE(uniform_below(~0ull, 3, j));
  EXPECT_EQ(j, 2u);
}

TEST(SelectPartitions, EveryBitComesFromThePairOrTheKeyItself) {
  // The release recomputed from the documented layout (random/partition_randomness.hpp)
  // with random_block alone: each user over the bound keeps the first max_partitions keys of a
  // partial Fisher-Yates shuffle of its ascending keys (step i: j uniform below c - i from the
  // first 64 bits of block mix(u) + i 2^20 + attempt, Lemire's rejection), then each key is kept
  // iff its coin (block k, top 53 of the last 64 bits) is below floor(p(n) 2^53). Both generators;
  // users over and under the bound, keys with 1 to ~40 users.
  std::mt19937_64 draw(5);
  Contributions data;
  for (std::uint64_t user = 0; user < 3000; ++user) {
    const std::uint64_t held = 1 + draw() % 5;
    for (std::uint64_t j = 0; j < held; ++j) {
      data.users.push_back(user * 7919 + 3);
      data.keys.push_back((draw() % 400) * 1000003);
    }
  }
  const PartitionSelectionParams params{1.0, 1e-2, 2, PartitionStrategy::truncated_geometric};
  for (const auto generator : {dpselect::Generator::chacha20, dpselect::Generator::philox}) {
    auto context = dpselect::Context::with_fixed_seed(17, generator);
    (void)dpselect::select_partitions(context, data.users, data.keys, params);  // stream 0 used up
    const auto selection = dpselect::select_partitions(context, data.users, data.keys, params);
    ASSERT_EQ(selection.report.stream, 1u);
    const dpselect::RandomKey key = dpselect::RandomKey::from_seed(17, generator);
    std::map<std::uint64_t, std::set<std::uint64_t>> keys_of_user;
    for (std::size_t i = 0; i < data.users.size(); ++i) keys_of_user[data.users[i]].insert(data.keys[i]);
    std::map<std::uint64_t, std::uint64_t> users_of_key;
    for (const auto& [user, held] : keys_of_user) {
      const std::vector<std::uint64_t> kept = dpselect::testing::reference_kept_keys(
          key, 1, user, {held.begin(), held.end()}, params.max_partitions);
      for (const std::uint64_t k : kept) ++users_of_key[k];
    }
    std::vector<std::uint64_t> expected;
    for (const auto& [k, n] : users_of_key) {
      const std::uint64_t coin = dpselect::detail::key_coin(dpselect::random_block(key, 1, k));
      if (coin < static_cast<std::uint64_t>(std::ldexp(keep_probability(params, n), 53))) expected.push_back(k);
    }
    ASSERT_GT(expected.size(), 20u) << "a test that can fail: many keys released";
    ASSERT_LT(expected.size(), users_of_key.size()) << "and some not";
    EXPECT_EQ(selection.keys, expected);
    EXPECT_EQ(selection.report.keys_considered, users_of_key.size());
  }
}

TEST(SelectPartitions, TheReleaseDoesNotDependOnTheThreadCount) {
  // Enough pairs for every step to run on shares (2^16 and more), users over and under the bound.
  Contributions data;
  std::mt19937_64 draw(11);
  for (std::uint64_t user = 0; user < 60000; ++user) {
    const std::uint64_t held = 1 + draw() % 6;
    for (std::uint64_t j = 0; j < held; ++j) {
      data.users.push_back(user);
      data.keys.push_back(draw() % 20000);
    }
  }
  const PartitionSelectionParams params{1.0, 1e-3, 3, PartitionStrategy::truncated_geometric};
  const int threads_before = omp_get_max_threads();
  std::vector<std::vector<std::uint64_t>> released;
  for (const int threads : {1, 2, 3, 7}) {
    omp_set_num_threads(threads);
    auto context = dpselect::Context::with_fixed_seed(3);
    const auto selection = dpselect::select_partitions(context, data.users, data.keys, params);
    released.push_back(selection.keys);
  }
  omp_set_num_threads(threads_before);
  ASSERT_GT(released[0].size(), 100u) << "a test that can fail: many keys released";
  for (std::size_t i = 1; i < released.size(); ++i) EXPECT_EQ(released[i], released[0]) << "thread count #" << i;
}

TEST(SelectPartitions, StringKeysAreReleasedAsTheirOrderPreservingCodesAre) {
  // Keys whose byte order differs from their order of appearance, the empty string and a NUL byte
  // among them; the strings' release is the release of their dictionary codes, as strings.
  const std::vector<std::string> names = {"zebra", "", std::string("a\0b", 3), "apple", "Apple", "apples", "\xff"};
  std::vector<std::string> ascending = names;
  std::sort(ascending.begin(), ascending.end());
  std::vector<std::uint64_t> users;
  std::vector<std::string_view> keys;
  std::vector<std::uint64_t> codes;
  for (std::uint64_t user = 0; user < 3000; ++user) {
    const std::size_t name = (user * 7 + user / 5) % names.size();
    users.push_back(user % 1000);  // each user holds up to three keys
    keys.push_back(names[name]);
    codes.push_back(static_cast<std::uint64_t>(std::lower_bound(ascending.begin(), ascending.end(), names[name]) -
                                               ascending.begin()));
  }
  EXPECT_EQ(dpselect::dictionary_codes(keys), codes);
  const PartitionSelectionParams params{0.5, 1e-2, 2, PartitionStrategy::laplace_threshold};
  auto strings = dpselect::Context::with_fixed_seed(21);
  const auto by_string = dpselect::select_partitions(strings, users, keys, params);
  auto integers = dpselect::Context::with_fixed_seed(21);
  const auto by_code = dpselect::select_partitions(integers, users, codes, params);
  ASSERT_FALSE(by_code.keys.empty()) << "a test that can fail: some keys released";
  std::vector<std::string> expected;
  for (const std::uint64_t code : by_code.keys) expected.push_back(ascending[code]);
  EXPECT_EQ(by_string.keys, expected);
  EXPECT_EQ(by_string.report.keys_considered, by_code.report.keys_considered);
  EXPECT_EQ(by_string.report.stream, by_code.report.stream);
  // Bad input is refused before the keys are numbered, and nothing is charged.
  auto context = dpselect::Context::with_fixed_seed(1);
  auto accountant = std::make_shared<dpselect::PrivacyAccountant>(dpselect::PrivacyBound{10.0, 0.5});
  context.charge_to(accountant);
  const std::vector<std::string_view> two_keys(keys.begin(), keys.begin() + 2);
  EXPECT_THROW((void)dpselect::select_partitions(context, std::span(users).first(3), std::span(two_keys), params),
               dpselect::InvalidArgument);
  EXPECT_THROW((void)dpselect::select_partitions(context, std::span<const std::uint64_t>(),
                                                 std::span<const std::string_view>(), params),
               dpselect::InvalidArgument);
  EXPECT_EQ(accountant->release_count(), 0u);
}

TEST(DictionaryNumbering, EqualsTheRanksOfASortAndPointsBackAtFirstRowsForAnyThreadCount) {
  // Random byte strings (NUL and 0xff bytes, the empty string, shared prefixes: half of them begin
  // with the same 8 bytes, so their order rests on the bytes after), enough distinct ones that the
  // hash tables grow several times: for 1, 2 and 3 threads (shards of the hashes), the codes are
  // the ranks a sort gives, and first_rows[c] is the first row holding the value of code c.
  std::mt19937_64 random(5);
  std::vector<std::string> pool;
  for (int i = 0; i < 20000; ++i) {
    std::string value(random() % 9, '\0');
    for (char& byte : value) byte = static_cast<char>(random() % 4 == 0 ? 0xff : random() % 3);
    pool.push_back(i % 2 == 0 ? value : "shared8b" + value);
  }
  std::vector<std::string_view> values;
  for (int i = 0; i < 200000; ++i) values.push_back(pool[random() % pool.size()]);
  std::vector<std::string_view> ascending(values.begin(), values.end());
  std::sort(ascending.begin(), ascending.end());
  ascending.erase(std::unique(ascending.begin(), ascending.end()), ascending.end());
  ASSERT_GT(ascending.size(), 4096u) << "the tables grew";
  const int threads_before = omp_get_max_threads();
  for (const int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    const dpselect::DictionaryNumbering numbering = dpselect::dictionary_numbering(values);
    ASSERT_EQ(numbering.codes.size(), values.size());
    ASSERT_EQ(numbering.first_rows.size(), ascending.size());
    for (std::size_t row = 0; row < values.size(); ++row) {
      ASSERT_EQ(numbering.codes[row], static_cast<std::uint64_t>(std::lower_bound(ascending.begin(), ascending.end(),
                                                                                  values[row]) -
                                                                 ascending.begin()))
          << "row " << row << ", " << threads << " threads";
    }
    for (std::uint64_t code = 0; code < ascending.size(); ++code) {
      const std::uint64_t first = numbering.first_rows[code];
      ASSERT_EQ(values[first], ascending[code]);
      for (std::uint64_t row = 0; row < first; ++row) ASSERT_NE(numbering.codes[row], code) << "an earlier row";
    }
    EXPECT_TRUE(dpselect::dictionary_numbering({}).codes.empty());
  }
  omp_set_num_threads(threads_before);
}

TEST(PartitionKeepProbability, APreThresholdShiftsTheCountAndKeepsTheGuarantee) {
  // A key of n users is kept as one of n - T + 1 would be (never below T); the shifted keep
  // probability still meets the per-key inequalities of every count strategy's analysis, so
  // delta_float and the charge are those without a minimum.
  for (const auto strategy : {PartitionStrategy::truncated_geometric, PartitionStrategy::laplace_threshold,
                              PartitionStrategy::gaussian_threshold}) {
    PartitionSelectionParams plain{1.0, 1e-5, 3, strategy};
    PartitionSelectionParams minimum = plain;
    minimum.pre_threshold = 10;
    const auto rule = partition_keep_rule(minimum);
    EXPECT_EQ(rule.pre_threshold, 10u);
    for (std::uint64_t n = 0; n < 10; ++n) EXPECT_EQ(keep_probability(minimum, n), 0.0) << n;
    for (std::uint64_t n = 10; n < 200; ++n) {
      EXPECT_EQ(keep_probability(minimum, n), keep_probability(plain, n - 9)) << n;
    }
    EXPECT_EQ(dpselect::detail::partition_delta_float(minimum, rule),
              dpselect::detail::partition_delta_float(plain, partition_keep_rule(plain)));
  }
  // Releases: with a budget under which every key of 3 or more users is kept for certain, a
  // minimum of 40 keeps no key of 39 users and every key of 42.
  Contributions data = keys_with_users(30, 39);
  const Contributions more = keys_with_users(20, 42);
  for (std::size_t i = 0; i < more.users.size(); ++i) {
    data.users.push_back(more.users[i] + 1000000);
    data.keys.push_back(more.keys[i] + 1000000);
  }
  PartitionSelectionParams params{10.0, 0.4, 1, PartitionStrategy::truncated_geometric};
  ASSERT_EQ(keep_probability(params, 3), 1.0) << "every shifted count of 3 or more is kept";
  ASSERT_GT(keep_probability(params, 39), 0.0) << "without the minimum, keys of 39 users are kept";
  params.pre_threshold = 40;
  auto context = dpselect::Context::with_fixed_seed(3);
  const auto selection = dpselect::select_partitions(context, data.users, data.keys, params);
  ASSERT_EQ(selection.keys.size(), 20u);
  for (const std::uint64_t key : selection.keys) EXPECT_GE(key, 1000000u) << "a key of 42 users";
}

TEST(PartitionKeepProbability, APreThresholdIsRefusedWhereItIsNoCount) {
  for (const auto strategy : {PartitionStrategy::weighted_gaussian, PartitionStrategy::policy_gaussian,
                              PartitionStrategy::dp_sips}) {
    PartitionSelectionParams params{1.0, 1e-5, 3, strategy};
    params.pre_threshold = 2;
    try {
      params.validate();
      ADD_FAILURE() << "accepted";
    } catch (const dpselect::InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find("pre_threshold must be 1 for the"), std::string::npos) << error.what();
    }
    params.pre_threshold = 1;
    EXPECT_NO_THROW(params.validate());
  }
  PartitionSelectionParams zero{1.0, 1e-5, 3, PartitionStrategy::truncated_geometric};
  zero.pre_threshold = 0;
  EXPECT_THROW(zero.validate(), dpselect::InvalidArgument);
}

TEST(SelectPartitions, BadInputIsRefusedBeforeAnythingIsChargedOrDrawn) {
  auto context = dpselect::Context::with_fixed_seed(1);
  auto accountant = std::make_shared<dpselect::PrivacyAccountant>(dpselect::PrivacyBound{10.0, 0.5});
  context.charge_to(accountant);
  const std::vector<std::uint64_t> users{1, 2, 3}, keys{4, 5}, none;
  const PartitionSelectionParams good{1.0, 1e-6, 1, PartitionStrategy::truncated_geometric};
  const auto refused = [&](std::span<const std::uint64_t> u, std::span<const std::uint64_t> k,
                           const PartitionSelectionParams& params, const std::string& message) {
    try {
      (void)dpselect::select_partitions(context, u, k, params);
      ADD_FAILURE() << "accepted: " << message;
    } catch (const dpselect::InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find(message), std::string::npos) << error.what();
    }
  };
  refused(users, keys, good, "keys must hold one key per user entry (got 2 keys for 3 users)");
  refused(none, none, good, "contributions must not be empty");
  auto zero_delta = good;
  zero_delta.delta = 0.0;
  refused(users, users, zero_delta, "delta must be in (0, 1)");
  auto no_partitions = good;
  no_partitions.max_partitions = 0;
  refused(users, users, no_partitions, "max_partitions must be >= 1");
  EXPECT_EQ(accountant->release_count(), 0u);
  const auto selection = dpselect::select_partitions(context, users, users, good);
  EXPECT_EQ(selection.report.stream, 0u) << "no stream drawn by the refused calls";
  EXPECT_EQ(accountant->release_count(), 1u);
  // One key's inequalities lose at most e^eps' 2^-53 (eps' = eps / m = 1).
  EXPECT_EQ(selection.report.delta_float, std::exp(1.0) * std::ldexp(1.0, -53));
  EXPECT_EQ(selection.report.streams, 1u);
}

}  // namespace
