// SPDX-License-Identifier: Apache-2.0
// JointExp (host/quantiles/joint_exponential.cpp) on small grids where every sorted tuple can be
// enumerated: the sampler's tables against the exact total mass, its samples against the exact
// joint distribution, the shape of its outputs, its slack, its accuracy bound and bad levels.
//
// Statistical thresholds: expect_frequencies_match (support/frequencies.hpp: <= 1.1e-6 per
// comparison; this file makes 442, so <= 5e-4 in all, far less for the many cells that are not
// in the skewed small-p regime) and one chi-square test per distribution (2 tests) refused only
// below an upper-tail probability of 1e-6, computed exactly from the regularised incomplete gamma
// function. Seeds are fixed, so each outcome is deterministic.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "dpselect/quantiles.hpp"
#include "quantiles/quantiles_internal.hpp"
#include "support/expect_invalid.hpp"
#include "support/frequencies.hpp"

namespace dpselect::testing {
namespace {

using Tuple = std::vector<std::uint64_t>;

detail::JointExponentialPlan plan_for(std::vector<double> qs, double epsilon) {
  detail::JointExponentialPlan plan;
  plan.qs = std::move(qs);
  plan.epsilon = epsilon;
  plan.sensitivity = 2.0;
  plan.score_scale = epsilon / 4.0;  // eps / (2 Delta), Delta = 2 (Gillenwater, Joseph & Kulesza 2021, Sec. 3)
  return plan;
}

// Every sorted m-tuple of grid indices in [0, grid_size).
std::vector<Tuple> sorted_tuples(std::uint64_t grid_size, std::size_t m) {
  std::vector<Tuple> tuples;
  Tuple tuple(m, 0);
  for (;;) {
    tuples.push_back(tuple);
    std::size_t j = m;
    while (j > 0 && tuple[j - 1] == grid_size - 1) --j;
    if (j == 0) return tuples;
    const std::uint64_t next = tuple[j - 1] + 1;
    for (std::size_t t = j - 1; t < m; ++t) tuple[t] = next;
  }
}

// u(o) = -sum_{j=1}^{m+1} |(c(o_j) - c(o_{j-1})) - (q_j - q_{j-1}) n| in long double, c(t) =
// #{positions <= t}, c(o_0) = 0, c(o_{m+1}) = n.
long double joint_utility(const Tuple& tuple, const std::vector<std::uint64_t>& positions,
                          const std::vector<double>& qs) {
  const long double n = static_cast<long double>(positions.size());
  long double utility = 0.0L;
  long double previous_count = 0.0L;
  long double previous_level = 0.0L;
  for (std::size_t j = 0; j <= tuple.size(); ++j) {
    const long double count =
        j < tuple.size()
            ? static_cast<long double>(std::upper_bound(positions.begin(), positions.end(), tuple[j]) - positions.begin())
            : n;
    const long double level = j < tuple.size() ? static_cast<long double>(qs[j]) : 1.0L;
    utility -= std::fabs((count - previous_count) - (level - previous_level) * n);
    previous_count = count;
    previous_level = level;
  }
  return utility;
}

// ln sum over every sorted tuple of e^{S u}: the exact mechanism's normalising constant.
long double brute_force_log_mass(const std::vector<std::uint64_t>& positions, std::uint64_t grid_size,
                                 const std::vector<double>& qs, double epsilon) {
  const long double scale = static_cast<long double>(epsilon) / 4.0L;
  std::vector<long double> exponents;
  for (const Tuple& tuple : sorted_tuples(grid_size, qs.size())) {
    exponents.push_back(scale * joint_utility(tuple, positions, qs));
  }
  const long double top = *std::max_element(exponents.begin(), exponents.end());
  long double sum = 0.0L;
  for (const long double e : exponents) sum += std::exp(e - top);
  return top + std::log(sum);
}

// P[chi-square(df) >= x] = Q(df / 2, x / 2), the regularised upper incomplete gamma function:
// its series below a + 1 and its continued fraction (modified Lentz) above (Press et al.,
// Numerical Recipes, 3rd ed., Sec. 6.2), to about 1e-15 relative in long double.
long double chi_square_upper_tail(long double df, long double x) {
  const long double a = df / 2.0L;
  const long double z = x / 2.0L;
  const long double log_prefactor = a * std::log(z) - z - std::lgamma(a);
  if (z < a + 1.0L) {
    long double term = 1.0L / a;
    long double sum = term;
    for (int k = 1; k < 10000 && term > sum * 1e-19L; ++k) {
      term *= z / (a + k);
      sum += term;
    }
    return 1.0L - sum * std::exp(log_prefactor);
  }
  constexpr long double kTiny = 1e-4000L;
  long double b = z + 1.0L - a;
  long double c = 1.0L / kTiny;
  long double d = 1.0L / b;
  long double h = d;
  for (int k = 1; k < 10000; ++k) {
    const long double an = -k * (k - a);
    b += 2.0L;
    d = an * d + b;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0L / d;
    const long double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0L) < 1e-19L) break;
  }
  return std::exp(log_prefactor) * h;
}

// Pearson's chi-square over the cells with expected count >= 5 and one cell pooling the others
// (left out if its expected count is still below 5): refused below an upper tail of 1e-6.
void expect_chi_square_fits(const std::vector<int>& counts, const std::vector<long double>& exact, int trials,
                            const std::string& what) {
  long double statistic = 0.0L;
  int cells = 0;
  long double pooled_expected = 0.0L;
  long double pooled_count = 0.0L;
  for (std::size_t r = 0; r < exact.size(); ++r) {
    const long double expected = trials * exact[r];
    if (expected >= 5.0L) {
      statistic += (counts[r] - expected) * (counts[r] - expected) / expected;
      ++cells;
    } else {
      pooled_expected += expected;
      pooled_count += counts[r];
    }
  }
  if (pooled_expected >= 5.0L) {
    statistic += (pooled_count - pooled_expected) * (pooled_count - pooled_expected) / pooled_expected;
    ++cells;
  }
  ASSERT_GE(cells, 20) << what;  // enough cells for the test to resolve the distribution
  const long double tail = chi_square_upper_tail(cells - 1, statistic);
  EXPECT_GE(tail, 1e-6L) << what << ": chi-square " << static_cast<double>(statistic) << " on " << cells - 1
                         << " degrees of freedom";
}

TEST(QuantilesJoint, ChiSquareTailMatchesKnownQuantiles) {
  // Upper 1e-6 quantiles of chi-square (tests/exponential_race_test.cpp) and the median of df = 2.
  EXPECT_NEAR(static_cast<double>(chi_square_upper_tail(31, 83.64L)), 1e-6, 1e-8);
  EXPECT_NEAR(static_cast<double>(chi_square_upper_tail(15, 56.49L)), 1e-6, 1e-8);
  EXPECT_NEAR(static_cast<double>(chi_square_upper_tail(2, 2.0L * std::log(2.0L))), 0.5, 1e-15);
}

// The sampler reads sorted slots (QuantileGrid::slot): 2 g for a value between grid points with
// grid position g, which is how these cases' positions are meant.
std::vector<std::uint64_t> slots_of(const std::vector<std::uint64_t>& positions) {
  std::vector<std::uint64_t> slots;
  for (const std::uint64_t g : positions) slots.push_back(2 * g);
  return slots;
}

// Data on small grids: duplicates, values at the bottom (position 1: at or below the range's
// lower end) and at the top (position = grid size: at or above it), empty intervals.
struct SmallCase {
  std::vector<std::uint64_t> positions;
  std::uint64_t grid_size;
};
const std::vector<SmallCase> kSmallCases = {
    {{1, 5, 5, 9, 16}, 16},
    {{1, 1, 1}, 12},
    {{16, 16, 16, 16}, 16},
    {{3, 7, 8, 12, 13, 15}, 20},
    {{2}, 20},
};

TEST(QuantilesJoint, TotalLogMassMatchesBruteForce) {
  const std::vector<std::vector<double>> level_sets = {
      {0.5}, {0.25, 0.75}, {0.0, 0.5, 1.0}, {0.1, 0.2, 0.9}, {0.3, 0.35, 0.6, 0.95}};
  for (const SmallCase& data : kSmallCases) {
    for (const std::vector<double>& qs : level_sets) {
      for (const double epsilon : {0.05, 1.0, 8.0, 60.0}) {
        const long double exact = brute_force_log_mass(data.positions, data.grid_size, qs, epsilon);
        const double computed =
            detail::joint_exponential_log_mass(plan_for(qs, epsilon), slots_of(data.positions), data.grid_size);
        EXPECT_NEAR(computed, static_cast<double>(exact), 1e-12 * std::max(1.0L, std::fabs(exact)))
            << data.positions.size() << " values, grid " << data.grid_size << ", m = " << qs.size()
            << ", epsilon " << epsilon;
      }
    }
  }
}

// Larger data, where the near windows span several blocks: the tables against the same sums done
// term by term in long double, O(m^2 n^2).
TEST(QuantilesJoint, TotalLogMassMatchesDirectSumsOnLargerData) {
  std::mt19937_64 generator(20211);
  std::vector<std::uint64_t> positions;
  constexpr std::uint64_t kGrid = 5000;
  for (int i = 0; i < 300; ++i) positions.push_back(1 + generator() % kGrid);
  positions.push_back(kGrid);
  positions.push_back(kGrid);
  std::sort(positions.begin(), positions.end());
  const auto n = static_cast<std::uint64_t>(positions.size());
  for (const std::vector<double>& qs : {std::vector<double>{0.02, 0.5, 0.51, 0.97}, std::vector<double>{0.0, 1.0},
                                        std::vector<double>{0.1, 0.3, 0.7}}) {
    for (const double epsilon : {0.1, 2.0}) {
      const long double scale = epsilon / 4.0L;
      const std::size_t m = qs.size();
      std::vector<long double> lengths(n + 1);
      for (std::uint64_t i = 0; i <= n; ++i) {
        lengths[i] = static_cast<long double>((i == n ? kGrid : positions[i]) - (i == 0 ? 0 : positions[i - 1]));
      }
      auto phi = [&](std::size_t j, long double d) {
        const long double gap = (j <= m ? qs[j - 1] : 1.0L) - (j >= 2 ? qs[j - 2] : 0.0L);
        return std::exp(-scale * std::fabs(d - gap * static_cast<long double>(n)));
      };
      // mass[j][i]: o_1..o_j placed, o_j in interval i (linear space: every mass here is far from
      // the long double range's ends).
      std::vector<std::vector<long double>> mass(m + 1, std::vector<long double>(n + 1, 0.0L));
      for (std::size_t j = 1; j <= m; ++j) {
        for (std::uint64_t i = 0; i <= n; ++i) {
          long double multisets = 1.0L;
          for (std::size_t k = 1; k <= j; ++k) {  // o_{j-k+1..j} in interval i
            multisets *= (lengths[i] + k - 1) / k;
            long double staying = 1.0L;
            for (std::size_t s = j - k + 2; s <= j; ++s) staying *= phi(s, 0);
            long double entering = 0.0L;
            if (k == j) {
              entering = phi(1, i);
            } else {
              for (std::uint64_t earlier = 0; earlier < i; ++earlier) {
                entering += mass[j - k][earlier] * phi(j - k + 1, i - earlier);
              }
            }
            mass[j][i] += entering * multisets * staying;
          }
        }
      }
      long double total = 0.0L;
      for (std::uint64_t i = 0; i <= n; ++i) total += mass[m][i] * phi(m + 1, n - i);
      const long double exact = std::log(total);
      const double computed = detail::joint_exponential_log_mass(plan_for(qs, epsilon), slots_of(positions), kGrid);
      EXPECT_NEAR(computed, static_cast<double>(exact), 1e-12 * std::max(1.0L, std::fabs(exact)))
          << "m = " << m << ", epsilon " << epsilon;
    }
  }
}

// Samples against the exact joint distribution of every sorted tuple, m = 2 (78 tuples) and
// m = 3 (364 tuples) on a 12-point grid; the levels put the near windows (targets above 1) in use.
TEST(QuantilesJoint, SamplesMatchTheExactJointDistribution) {
  struct DistributionCase {
    std::vector<std::uint64_t> positions;
    std::vector<double> qs;
    double epsilon;
    std::uint64_t seed;
  };
  constexpr std::uint64_t kGrid = 12;
  constexpr int kTrials = 40'000;
  const std::vector<DistributionCase> cases = {
      {{1, 4, 4, 12}, {0.3, 0.8}, 2.0, 101},
      {{2, 2, 7, 7, 11, 12}, {0.1, 0.8, 0.9}, 3.0, 102},
  };
  for (const DistributionCase& test : cases) {
    const std::vector<Tuple> tuples = sorted_tuples(kGrid, test.qs.size());
    std::map<Tuple, std::size_t> cell_of;
    std::vector<long double> exponents;
    for (const Tuple& tuple : tuples) {
      cell_of[tuple] = exponents.size();
      exponents.push_back(static_cast<long double>(test.epsilon) / 4.0L *
                          joint_utility(tuple, test.positions, test.qs));
    }
    const long double top = *std::max_element(exponents.begin(), exponents.end());
    std::vector<long double> exact;
    long double total = 0.0L;
    for (const long double e : exponents) total += exact.emplace_back(std::exp(e - top));
    for (long double& p : exact) p /= total;

    const detail::JointExponentialPlan plan = plan_for(test.qs, test.epsilon);
    const RandomKey key = RandomKey::from_seed(test.seed, Generator::chacha20);
    std::vector<int> counts(tuples.size(), 0);
    for (int trial = 0; trial < kTrials; ++trial) {
      const Tuple sample = detail::sample_joint_exponential(plan, slots_of(test.positions), kGrid, key, trial);
      ASSERT_EQ(sample.size(), test.qs.size());
      ASSERT_TRUE(std::is_sorted(sample.begin(), sample.end()));
      ASSERT_LT(sample.back(), kGrid);
      ++counts[cell_of.at(sample)];
    }
    const std::string what = "m = " + std::to_string(test.qs.size());
    expect_frequencies_match(counts, exact, kTrials, what);
    expect_chi_square_fits(counts, exact, kTrials, what);
  }
}

TEST(QuantilesJoint, SamplesAreSortedOnTheGridAndReproducible) {
  // All values at the top: every output lies in interval 0, the first 20 points.
  const std::vector<std::uint64_t> at_top = {20, 20, 20};
  const detail::JointExponentialPlan plan = plan_for({0.0, 0.2, 0.4, 0.6, 0.8, 1.0}, 1.0);
  const RandomKey key = RandomKey::from_seed(7, Generator::philox);
  for (std::uint64_t stream = 0; stream < 200; ++stream) {
    const Tuple sample = detail::sample_joint_exponential(plan, slots_of(at_top), 20, key, stream);
    ASSERT_EQ(sample.size(), 6u);
    EXPECT_TRUE(std::is_sorted(sample.begin(), sample.end()));
    EXPECT_LT(sample.back(), 20u);
    EXPECT_EQ(sample, detail::sample_joint_exponential(plan, slots_of(at_top), 20, key, stream));
  }
  // Through the public API on the range's grid (2^40 + 1 points).
  std::mt19937_64 generator(5);
  std::normal_distribution<double> normal(50.0, 20.0);
  std::vector<double> values;
  for (int i = 0; i < 2000; ++i) values.push_back(normal(generator));
  const QuantileRange range{0.0, 100.0};
  const QuantileData data(std::span<const double>(values), range);
  QuantilesParams params;
  params.base.range = range;
  params.base.epsilon = 1.0;
  params.base.backend = Backend::Cpu;
  params.method = QuantilesMethod::joint_exponential;
  const std::vector<double> qs = {0.1, 0.25, 0.5, 0.75, 0.9};
  Context first = Context::with_fixed_seed(9);
  Context second = Context::with_fixed_seed(9);
  for (int release = 0; release < 5; ++release) {
    const QuantilesRelease a = select_quantiles(first, data, qs, params);
    const QuantilesRelease b = select_quantiles(second, data, qs, params);
    EXPECT_EQ(a.grid_indices, b.grid_indices);
    ASSERT_EQ(a.grid_indices.size(), qs.size());
    EXPECT_TRUE(std::is_sorted(a.grid_indices.begin(), a.grid_indices.end()));
    for (std::size_t j = 0; j < qs.size(); ++j) {
      EXPECT_LT(a.grid_indices[j], range.grid().size);
      EXPECT_EQ(a.values[j], range.grid().point(a.grid_indices[j]));
    }
    EXPECT_EQ(a.mechanisms, 1u);
  }
}

TEST(QuantilesJoint, SlackIsSmallPublicWhenTheCountIsAndRefusedAboveEpsilon) {
  const std::vector<double> values = {1.0, 2.0, 2.0, 3.5, 9.0};
  const std::vector<double> more_values = {1.0, 2.0, 2.0, 3.5, 9.0, 4.0, 4.5, 7.0};
  const QuantileRange range{0.0, 10.0};
  const QuantileData data(std::span<const double>(values), range);
  const QuantileData more(std::span<const double>(more_values), range);
  const std::vector<double> qs = {0.25, 0.5, 0.75};
  QuantilesParams params;
  params.base.range = range;
  params.base.epsilon = 1.0;
  params.base.backend = Backend::Cpu;

  const detail::JointExponentialPlan replace = detail::plan_joint_exponential(params, data, qs);
  EXPECT_EQ(replace.sensitivity, 2.0);
  EXPECT_EQ(replace.score_scale, 0.25);
  EXPECT_FALSE(replace.slack.depends_on_data);
  EXPECT_GT(replace.slack.epsilon, 0.0);
  EXPECT_LT(replace.slack.epsilon, 1e-6);
  EXPECT_GT(replace.slack.delta, 0.0);
  EXPECT_LT(replace.slack.delta, 1e-20);

  params.base.neighbours = RecordNeighbours::add_or_remove_record;
  EXPECT_TRUE(detail::plan_joint_exponential(params, data, qs).slack.depends_on_data);
  params.base.max_points = 100;
  const detail::JointExponentialPlan bounded = detail::plan_joint_exponential(params, data, qs);
  EXPECT_FALSE(bounded.slack.depends_on_data);
  // With max_points the slack is computed from the bound: the same for any number of values.
  EXPECT_EQ(bounded.slack.epsilon, detail::plan_joint_exponential(params, more, qs).slack.epsilon);
  EXPECT_EQ(bounded.slack.delta, detail::plan_joint_exponential(params, more, qs).slack.delta);
  // The slack grows with the count bound (the tables' sums and magnitudes).
  params.base.max_points = 1'000'000;
  EXPECT_GT(detail::plan_joint_exponential(params, data, qs).slack.epsilon, bounded.slack.epsilon);

  params.base.epsilon = 1e-9;  // below the uniform draws' 2 m rho alone
  expect_invalid_message([&] { detail::plan_joint_exponential(params, data, qs); }, {"epsilon", "slack"});
}

// Dwork & Roth 2014, Thm 3.11 with Delta = 2 over |R| = C(G + m - 1, m) sorted tuples: checked
// against the closed form and, on a small grid, against the exact probability that the utility
// falls short of the best by more than alpha.
TEST(QuantilesJoint, RankErrorBoundMatchesTheoremAndExactFailureProbability) {
  const double beta = 0.1;
  const double epsilon = 2.0;
  const long double log_tuples = std::lgamma(22.0L) - std::lgamma(19.0L) - std::lgamma(4.0L);  // ln C(21, 3)
  const double alpha = detail::joint_exponential_rank_error_bound(epsilon, 3, 19, beta);
  EXPECT_NEAR(alpha, static_cast<double>(4.0L / epsilon * (log_tuples - std::log(0.1L))), 1e-9);
  EXPECT_GE(alpha, static_cast<double>(4.0L / epsilon * (log_tuples - std::log(0.1L))));

  // 60 values (duplicates on 19 points), so that u spans far more than alpha.
  std::vector<std::uint64_t> positions;
  for (std::uint64_t i = 0; i < 60; ++i) positions.push_back(1 + (i * i * 7 + 3 * i) % 19);
  std::sort(positions.begin(), positions.end());
  const std::vector<double> qs = {0.2, 0.5, 0.8};
  long double best = -INFINITY;
  std::vector<long double> utilities;
  for (const Tuple& tuple : sorted_tuples(19, 3)) {
    utilities.push_back(joint_utility(tuple, positions, qs));
    best = std::max(best, utilities.back());
  }
  long double total = 0.0L;
  long double short_by_more = 0.0L;
  for (const long double u : utilities) {
    const long double mass = std::exp(epsilon / 4.0L * (u - best));
    total += mass;
    if (u < best - alpha) short_by_more += mass;
  }
  EXPECT_LE(short_by_more / total, beta);
  // Not vacuous here: some tuples fall short by more than alpha.
  EXPECT_GT(short_by_more / total, 1e-6L) << static_cast<double>(short_by_more / total);

  // On the range's grid, growing with m and falling with epsilon.
  const std::uint64_t grid = (std::uint64_t{1} << 40) + 1;
  EXPECT_LT(detail::joint_exponential_rank_error_bound(1.0, 3, grid, beta),
            detail::joint_exponential_rank_error_bound(1.0, 4, grid, beta));
  EXPECT_NEAR(detail::joint_exponential_rank_error_bound(2.0, 3, grid, beta),
              detail::joint_exponential_rank_error_bound(1.0, 3, grid, beta) / 2.0, 1e-9);
}

TEST(QuantilesJoint, BadLevelsAreRefusedByName) {
  const std::vector<double> values = {1.0, 2.0, 3.0};
  const QuantileRange range{0.0, 10.0};
  const QuantileData data(std::span<const double>(values), range);
  QuantilesParams params;
  params.base.range = range;
  params.base.epsilon = 1.0;
  params.base.backend = Backend::Cpu;
  const auto refuse = [&](std::vector<double> qs, std::initializer_list<std::string> fragments) {
    expect_invalid_message([&] { detail::plan_joint_exponential(params, data, qs); }, fragments);
  };
  const double nan = std::nan("");
  refuse({}, {"qs", "none"});
  refuse(std::vector<double>((std::size_t{1} << 20) + 1, 0.5), {"qs", "2^20", "1048577"});
  refuse({nan}, {"qs[0]", "nan", "[0, 1]"});
  refuse({0.2, nan}, {"qs[1]", "nan"});
  refuse({-0.25}, {"qs[0]", "-0.25"});
  refuse({1.5}, {"qs[0]", "1.5"});
  refuse({0.5, INFINITY}, {"qs[1]", "inf"});
  refuse({-INFINITY}, {"qs[0]", "-inf"});
  refuse({0.5, 0.5}, {"qs[1]", "0.5", "strictly increasing"});
  refuse({0.1, 0.7, 0.2}, {"qs[2]", "0.2", "qs[1] = 0.7"});
  params.base.epsilon = 0.0;
  refuse({0.5}, {"epsilon", "0"});
}

}  // namespace
}  // namespace dpselect::testing
