// SPDX-License-Identifier: Apache-2.0
// Private quantiles on the test's backend: the single-quantile sampler against the exact interval
// probabilities (long double), the uniform point inside an interval, the grid, the sort, the
// multi-quantile methods' shape and charges, and the rank error against the calculators.
//
// Statistical thresholds: expect_frequencies_match (support/frequencies.hpp: about 1e-6 per
// comparison; this file makes 442, so a correct sampler fails it with probability below 5e-4 over
// the choice of seeds, most of them at points whose probability is below 1e-4) and within_clopper_pearson (support/clopper_pearson.hpp:
// 1e-6 per check; 6 checks). Seeds are fixed, so each outcome is deterministic.
#include <algorithm>
#include <cmath>
#include <string>
#include <random>
#include <span>
#include <vector>

#include "dpselect/quantiles.hpp"
#include "support/clopper_pearson.hpp"
#include "support/exact_probabilities.hpp"
#include "support/frequencies.hpp"
#include "support/test_backend.hpp"

namespace dpselect::testing {
namespace {

using Quantiles = BackendTest;

QuantileParams quantile_params(QuantileRange range, double epsilon, RecordNeighbours neighbours) {
  QuantileParams params;
  params.range = range;
  params.epsilon = epsilon;
  params.neighbours = neighbours;
  params.backend = kBackend;
  return params;
}

// The interval (rank r = #{values below the point}) that holds grid index j.
std::uint64_t interval_of(const std::vector<std::uint64_t>& positions, std::uint64_t grid_index) {
  return static_cast<std::uint64_t>(std::upper_bound(positions.begin(), positions.end(), grid_index) -
                                    positions.begin());
}

// P(interval r) = L_r e^{s u_r} / sum, u_r = -|r - q n|, s = eps / (2 Delta): the exponential
// mechanism's mass of the grid points in each interval, in long double.
std::vector<long double> exact_interval_probabilities(const std::vector<std::uint64_t>& positions,
                                                      std::uint64_t grid_size, double q, double epsilon,
                                                      double sensitivity) {
  const long double n = static_cast<long double>(positions.size());
  const long double scale = static_cast<long double>(epsilon) / (2.0L * sensitivity);
  std::vector<long double> scores;
  for (std::uint64_t r = 0; r <= positions.size(); ++r) {
    const std::uint64_t begin = r == 0 ? 0 : positions[r - 1];
    const std::uint64_t end = r == positions.size() ? grid_size : positions[r];
    const long double length = static_cast<long double>(end - begin);
    scores.push_back(length == 0 ? -INFINITY
                                 : std::log(length) - scale * std::fabs(static_cast<long double>(r) - q * n));
  }
  return exact_exponential(scores);
}

// Values below the range, at both ends, a tie and above the range.
const std::vector<double> kSmallData = {-3.0, 0.0, 2.0, 2.0, 5.0, 7.5, 10.0, 14.0};
constexpr QuantileRange kSmallRange{0.0, 10.0};

TEST_F(Quantiles, SingleQuantileMatchesExactIntervalProbabilities) {
  // Releases read `data` in input order (never sorted here); the reference sorts a copy.
  const QuantileData data(std::span<const double>(kSmallData), kSmallRange);
  const std::vector<std::uint64_t> positions =
      QuantileData(std::span<const double>(kSmallData), kSmallRange).sorted_positions();
  const QuantileGrid grid = data.grid();
  constexpr int kTrials = statistical_trials(12000);
  std::uint64_t seed = 100;
  for (const RecordNeighbours neighbours : {RecordNeighbours::replace_one_record, RecordNeighbours::add_or_remove_record}) {
    for (const double q : {0.1, 0.5, 0.9}) {
      const QuantileParams params = quantile_params(kSmallRange, 1.5, neighbours);
      const double sensitivity = neighbours == RecordNeighbours::replace_one_record ? 1.0 : std::max(q, 1.0 - q);
      const std::vector<long double> exact =
          exact_interval_probabilities(positions, grid.size, q, params.epsilon, sensitivity);
      Context context = Context::with_fixed_seed(seed++);
      std::vector<int> counts(exact.size(), 0);
      for (int t = 0; t < kTrials; ++t) {
        const QuantileRelease release = select_quantile(context, data, q, params);
        ASSERT_LT(release.grid_index, grid.size);
        ASSERT_EQ(release.value, grid.point(release.grid_index));  // a grid point, bit for bit
        ASSERT_GE(release.value, kSmallRange.lower);
        ASSERT_LE(release.value, kSmallRange.upper);
        ++counts[interval_of(positions, release.grid_index)];
      }
      expect_frequencies_match(counts, exact, kTrials,
                               std::string(to_string(neighbours)) + " q = " + std::to_string(q));
      // The tie at 2.0 leaves an empty interval, never chosen.
      EXPECT_EQ(counts[3], 0);
    }
  }
}

TEST_F(Quantiles, PointInsideTheIntervalIsUniform) {
  // One value at 0.5 and q = 0: interval 0 ([0, 0.5], utility 0) and interval 1 (utility -1).
  // Each is cut into four quarters of grid indices; P(cell) = P(interval) * (quarter length / L).
  const std::vector<double> values = {0.5};
  const QuantileRange range{0.0, 1.0};
  const QuantileData data(std::span<const double>(values), range);
  const std::vector<std::uint64_t> positions = data.sorted_positions();
  const std::uint64_t size = data.grid().size;
  const QuantileParams params = quantile_params(range, 1.0, RecordNeighbours::replace_one_record);
  const std::vector<long double> intervals = exact_interval_probabilities(positions, size, 0.0, params.epsilon, 1.0);
  const std::uint64_t ends[3] = {0, positions[0], size};
  std::vector<long double> exact;
  for (int r = 0; r < 2; ++r) {
    const std::uint64_t length = ends[r + 1] - ends[r];
    for (std::uint64_t quarter = 0; quarter < 4; ++quarter) {
      const std::uint64_t cell = (length * (quarter + 1)) / 4 - (length * quarter) / 4;
      exact.push_back(intervals[r] * static_cast<long double>(cell) / static_cast<long double>(length));
    }
  }
  constexpr int kTrials = statistical_trials(20000);
  Context context = Context::with_fixed_seed(7);
  std::vector<int> counts(8, 0);
  for (int t = 0; t < kTrials; ++t) {
    const std::uint64_t index = select_quantile(context, data, 0.0, params).grid_index;
    const int r = index < positions[0] ? 0 : 1;
    const std::uint64_t length = ends[r + 1] - ends[r];
    const std::uint64_t offset = index - ends[r];
    std::uint64_t quarter = 0;
    while (quarter < 3 && offset >= (length * (quarter + 1)) / 4) ++quarter;
    ++counts[static_cast<std::size_t>(4 * r) + quarter];
  }
  expect_frequencies_match(counts, exact, kTrials, "interval quarter");
}

TEST_F(Quantiles, GridPointsAndPositions) {
  const QuantileGrid grid = QuantileRange{-5.0, 5.0}.grid();
  EXPECT_EQ(grid.size, (std::uint64_t{1} << 40) + 1);
  EXPECT_EQ(grid.point(0), -5.0);
  EXPECT_EQ(grid.point(grid.size - 1), 5.0);
  for (const std::uint64_t j : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{12345}, grid.size / 2, grid.size - 2}) {
    const double point = grid.point(j);
    EXPECT_EQ(grid.points_at_or_below(point), j + 1);  // the point itself counts
    EXPECT_EQ(grid.points_at_or_below(std::nextafter(grid.point(j + 1), -INFINITY)), j + 1);
  }
  EXPECT_EQ(grid.points_at_or_below(-INFINITY), 1u);  // clipped to the lower end
  EXPECT_EQ(grid.points_at_or_below(INFINITY), grid.size);
  // Slots: 2 k + 1 on point k, 2 p strictly between points p - 1 and p; clipped values sit on the
  // ends. Without a resolution values are compared with the points exactly.
  EXPECT_FALSE(grid.rounds_to_points);
  EXPECT_EQ(grid.slot(grid.point(12345)), 2u * 12345 + 1);
  EXPECT_EQ(grid.slot(std::nextafter(grid.point(12345), INFINITY)), 2u * 12346);
  EXPECT_EQ(grid.slot(std::nextafter(grid.point(12345), -INFINITY)), 2u * 12345);
  EXPECT_EQ(grid.slot(-INFINITY), 1u);
  EXPECT_EQ(grid.slot(-5.0), 1u);
  EXPECT_EQ(grid.slot(INFINITY), 2 * grid.size - 1);
  // With a resolution values are rounded to the nearest point (half-way: the lower one).
  const QuantileGrid cents = QuantileRange{0.0, 200.0, 0.01}.grid();
  EXPECT_TRUE(cents.rounds_to_points);
  EXPECT_EQ(cents.slot(2.35), 2u * 235 + 1);   // 2.35 is not a double: the nearest point is 235
  EXPECT_EQ(cents.slot(2.354), 2u * 235 + 1);
  EXPECT_EQ(cents.slot(2.356), 2u * 236 + 1);
  EXPECT_EQ(cents.slot(250.0), 2u * 20000 + 1);  // clipped to the last point
  // A range too narrow for 2^40 distinct steps: the step is raised, the points stay distinct.
  const QuantileGrid narrow = QuantileRange{1.0, 1.0 + 0x1p-30}.grid();
  EXPECT_LT(narrow.size, std::uint64_t{1} << 40);
  EXPECT_GT(narrow.point(1), narrow.point(0));
  EXPECT_LE(narrow.point(narrow.size - 1), 1.0 + 0x1p-30);
}

TEST_F(Quantiles, RadixSortedPositionsEqualSortedPositions) {
  std::mt19937_64 generator(11);
  std::lognormal_distribution<double> lognormal(3.0, 1.5);
  std::vector<double> values(300000);
  for (double& value : values) value = lognormal(generator) - 5.0;  // some below the range
  values[17] = INFINITY;
  values[18] = -INFINITY;
  const QuantileRange range{0.0, 200.0};
  const QuantileData data(std::span<const double>(values), range);
  std::vector<std::uint64_t> expected;
  for (const double value : values) expected.push_back(data.grid().points_at_or_below(value));
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(data.sorted_positions(), expected);
  const std::vector<float> floats(values.begin(), values.end());
  const QuantileData float_data(std::span<const float>(floats), range);
  std::vector<std::uint64_t> float_expected;
  for (const float value : floats) float_expected.push_back(data.grid().points_at_or_below(value));
  std::sort(float_expected.begin(), float_expected.end());
  EXPECT_EQ(float_data.sorted_positions(), float_expected);
}

// Fraction of releases whose rank error exceeds alpha + the grid's forced error stays <= beta.
TEST_F(Quantiles, RankErrorWithinTheSingleQuantileBound) {
  std::mt19937_64 generator(21);
  std::uniform_real_distribution<double> uniform(0.0, 100.0);
  std::vector<double> values(2000);
  for (double& value : values) value = uniform(generator);
  const QuantileRange range{0.0, 100.0};
  const QuantileData data(std::span<const double>(values), range);
  constexpr double kBeta = 0.05;
  for (const RecordNeighbours neighbours : {RecordNeighbours::replace_one_record, RecordNeighbours::add_or_remove_record}) {
    const QuantileParams params = quantile_params(range, 0.5, neighbours);
    for (const double q : {0.5, 0.95}) {
      const double alpha = quantile_rank_error_bound(params, q, kBeta);
      const double forced = nonprivate_quantile_diagnostics(data, q).best_rank_error;
      Context context = Context::with_fixed_seed(31);
      constexpr int kTrials = 1500;
      int failures = 0;
      double largest = 0.0;
      for (int t = 0; t < kTrials; ++t) {
        const double error = nonprivate_rank_error(data, select_quantile(context, data, q, params).grid_index, q);
        largest = std::max(largest, error);
        if (error > alpha + forced) ++failures;
      }
      EXPECT_TRUE(within_clopper_pearson(failures, kTrials, kBeta)) << failures << " failures, alpha " << alpha;
      // The bound is loose (ln of 2^40 grid points), but not vacuous: errors stay far below n.
      EXPECT_LT(largest, 0.2 * static_cast<double>(values.size()));
    }
  }
}

TEST_F(Quantiles, EveryMethodReleasesSortedGridPointsWithinTheBound) {
  std::mt19937_64 generator(41);
  std::normal_distribution<double> normal(0.0, 10.0);
  std::vector<double> values(1500);
  for (double& value : values) value = normal(generator);
  const QuantileRange range{-50.0, 50.0};
  const QuantileData data(std::span<const double>(values), range);
  const std::vector<double> deciles = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
  constexpr double kBeta = 0.1;
  for (const QuantilesMethod method : {QuantilesMethod::joint_exponential, QuantilesMethod::recursive_splitting,
                                      QuantilesMethod::independent_basic, QuantilesMethod::independent_zcdp}) {
    QuantilesParams params;
    params.base = quantile_params(range, 2.0, RecordNeighbours::replace_one_record);
    params.method = method;
    params.delta = method == QuantilesMethod::independent_zcdp ? 1e-6 : 0.0;
    const double alpha = quantiles_rank_error_bound(params, deciles, kBeta);
    double forced = 0.0;  // JointExp: up to 2 (e_1 + ... + e_m); the others: the largest e_j
    for (const double q : deciles) {
      const double e = nonprivate_quantile_diagnostics(data, q).best_rank_error;
      forced = method == QuantilesMethod::joint_exponential ? forced + 2.0 * e : std::max(forced, e);
    }
    Context context = Context::with_fixed_seed(51);
    constexpr int kTrials = 200;
    int failures = 0;
    for (int t = 0; t < kTrials; ++t) {
      const QuantilesRelease release = select_quantiles(context, data, deciles, params);
      ASSERT_EQ(release.values.size(), deciles.size());
      ASSERT_TRUE(std::is_sorted(release.grid_indices.begin(), release.grid_indices.end())) << to_string(method);
      double worst = 0.0;
      for (std::size_t j = 0; j < deciles.size(); ++j) {
        ASSERT_EQ(release.values[j], data.grid().point(release.grid_indices[j]));
        worst = std::max(worst, nonprivate_rank_error(data, release.grid_indices[j], deciles[j]));
      }
      if (worst > alpha + forced) ++failures;
    }
    EXPECT_TRUE(within_clopper_pearson(failures, kTrials, kBeta)) << to_string(method) << ": " << failures;
  }
}

TEST_F(Quantiles, MethodsChargeTheirWholeBudgetOnce) {
  const QuantileData data(std::span<const double>(kSmallData), kSmallRange);
  const std::vector<double> qs = {0.25, 0.5, 0.75};
  for (const QuantilesMethod method : {QuantilesMethod::joint_exponential, QuantilesMethod::recursive_splitting,
                                      QuantilesMethod::independent_basic}) {
    auto accountant = std::make_shared<PrivacyAccountant>(PrivacyBound{1.0, 0.0});
    Context context = Context::with_fixed_seed(3);
    context.charge_to(accountant);
    QuantilesParams params;
    params.base = quantile_params(kSmallRange, 1.0, RecordNeighbours::add_or_remove_record);
    params.method = method;
    const QuantilesRelease release = select_quantiles(context, data, qs, params);
    EXPECT_LE(accountant->spent().epsilon, 1.0) << to_string(method);
    EXPECT_GE(accountant->spent().epsilon, 1.0 - 1e-12) << to_string(method);
    EXPECT_EQ(release.epsilon_spent, 1.0);
    // The budget is spent: a second release is refused and draws no stream.
    EXPECT_THROW(select_quantiles(context, data, qs, params), BudgetExceeded);
  }
}

// Host data is sorted only when a release needs it; a single quantile over unsorted data uses the
// order statistics around its target and screens the rest by a bound (single_quantile.cpp). It
// must release exactly what a release over the sorted data does, whatever epsilon, q or ties.
TEST_F(Quantiles, UnsortedAndSortedDataReleaseTheSamePoint) {
  std::mt19937_64 generator(61);
  std::lognormal_distribution<double> lognormal(2.0, 1.0);
  std::vector<double> values(200000);
  // Many ties, none on a grid point (values on points are atoms, which a release scores over the
  // sorted data only): quarters within a range whose points miss them.
  for (double& value : values) value = std::min(std::round(lognormal(generator) * 4.0) / 4.0, 99.75);
  const QuantileRange range{-0.1, 100.1};
  for (const double value : values) ASSERT_EQ(range.grid().slot(value) % 2, 0u) << value << " is a grid point";
  const QuantileData sorted(std::span<const double>(values), range);
  ASSERT_FALSE(sorted.sorted_positions().empty());  // sorts it
  const std::vector<double> equal(5000, 42.0);         // a single value: every window interval is empty
  const QuantileRange wide{0.0, 1000.0};
  ASSERT_EQ(wide.grid().slot(42.0) % 2, 0u);
  const QuantileData equal_sorted(std::span<const double>(equal), wide);
  ASSERT_FALSE(equal_sorted.sorted_positions().empty());
  for (const double epsilon : {0.001, 0.1, 1.0, 20.0}) {
    for (const double q : {0.0, 0.01, 0.5, 0.99, 1.0}) {
      for (std::uint64_t seed = 0; seed < 2; ++seed) {
        const QuantileParams params = quantile_params(range, epsilon, RecordNeighbours::add_or_remove_record);
        const QuantileData unsorted(std::span<const double>(values), range);  // fresh: not yet sorted
        Context first = Context::with_fixed_seed(seed);
        Context second = Context::with_fixed_seed(seed);
        EXPECT_EQ(select_quantile(first, unsorted, q, params).grid_index,
                  select_quantile(second, sorted, q, params).grid_index)
            << "epsilon " << epsilon << " q " << q << " seed " << seed;
        const QuantileParams wide_params = quantile_params(wide, epsilon, RecordNeighbours::replace_one_record);
        const QuantileData equal_unsorted(std::span<const double>(equal), wide);
        EXPECT_EQ(select_quantile(first, equal_unsorted, q, wide_params).grid_index,
                  select_quantile(second, equal_sorted, q, wide_params).grid_index)
            << "equal values, epsilon " << epsilon << " q " << q << " seed " << seed;
      }
    }
  }
}

// The exact exponential mechanism over a small grid, by brute force over every grid point t:
// P(t) proportional to exp(scale u(t)), u(t) = -dist(q n, [#{x_i < t}, #{x_i <= t}]) over the values
// as the grid takes them (`on_grid`: clipped and rounded to their points).
// The scaled utility c u(t) of every grid point, brute force over the values as the grid takes them.
std::vector<long double> exact_point_scores(const QuantileGrid& grid, const std::vector<double>& on_grid, double q,
                                            long double scale) {
  const long double target = static_cast<long double>(q) * static_cast<long double>(on_grid.size());
  std::vector<long double> scores;
  for (std::uint64_t j = 0; j < grid.size; ++j) {
    const double t = grid.point(j);
    const auto below =
        static_cast<long double>(std::count_if(on_grid.begin(), on_grid.end(), [&](double x) { return x < t; }));
    const auto at_or_below =
        static_cast<long double>(std::count_if(on_grid.begin(), on_grid.end(), [&](double x) { return x <= t; }));
    const long double distance = std::max({0.0L, below - target, target - at_or_below});
    scores.push_back(-scale * distance);
  }
  return scores;
}

std::vector<long double> exact_point_probabilities(const QuantileGrid& grid, const std::vector<double>& on_grid,
                                                   double q, long double scale) {
  return exact_exponential(exact_point_scores(grid, on_grid, q, scale));
}

// Integer data with ties on a resolution-1 grid, values off the grid rounded to their nearest
// point and values outside the range clipped: the single quantile (and recursive splitting of one
// level, the single quantile at epsilon / 2 with the add/remove sensitivity) releases each grid
// point with the brute-force probability, the tied values themselves included.
TEST_F(Quantiles, TiedDataOnAResolutionGridMatchesBruteForce) {
  const QuantileRange range{0.0, 20.0, 1.0};
  const QuantileGrid grid = range.grid();
  ASSERT_EQ(grid.size, 21u);
  ASSERT_TRUE(grid.rounds_to_points);
  const std::vector<double> values = {3, 3, 3, 5, 5, 7.2, 7, 12, 12, 12, 12, 12, 19.6, -4, 25, 6.5, 9};
  // As the grid takes them: 7.2 -> 7, 19.6 -> 20, -4 -> 0, 25 -> 20, 6.5 -> 6 (half-way: the lower).
  const std::vector<double> on_grid = {3, 3, 3, 5, 5, 7, 7, 12, 12, 12, 12, 12, 20, 0, 20, 6, 9};
  const QuantileData data(std::span<const double>(values), range);
  constexpr int kTrials = statistical_trials(12000);
  std::uint64_t seed = 500;
  for (const RecordNeighbours neighbours :
       {RecordNeighbours::replace_one_record, RecordNeighbours::add_or_remove_record}) {
    for (const double q : {0.1, 0.5, 0.8}) {
      const double sensitivity = neighbours == RecordNeighbours::replace_one_record ? 1.0 : std::max(q, 1.0 - q);
      const QuantileParams params = quantile_params(range, 1.5, neighbours);
      // Exponential mechanism at scale eps / (2 Delta) (Dwork & Roth 2014, Thm 3.10).
      const std::vector<long double> exact =
          exact_point_probabilities(grid, on_grid, q, 1.5L / (2.0L * sensitivity));
      Context context = Context::with_fixed_seed(seed++);
      std::vector<int> counts(grid.size, 0);
      for (int t = 0; t < kTrials; ++t) {
        const QuantileRelease release = select_quantile(context, data, q, params);
        ASSERT_EQ(release.value, grid.point(release.grid_index));
        ++counts[release.grid_index];
      }
      const std::string what = std::string(to_string(neighbours)) + " q = " + std::to_string(q);
      expect_frequencies_match(counts, exact, kTrials, what);
      // Recursive splitting of one level: epsilon / 2 under replacement (a replacement is a removal
      // and an addition), epsilon under add/remove, always with the add/remove sensitivity.
      QuantilesParams recursive;
      recursive.base = params;
      recursive.method = QuantilesMethod::recursive_splitting;
      const double node_epsilon = neighbours == RecordNeighbours::replace_one_record ? 0.75 : 1.5;
      const std::vector<long double> node_exact =
          exact_point_probabilities(grid, on_grid, q, node_epsilon / (2.0L * std::max(q, 1.0 - q)));
      std::vector<int> node_counts(grid.size, 0);
      const std::vector<double> levels = {q};
      for (int t = 0; t < kTrials; ++t) {
        ++node_counts[select_quantiles(context, data, levels, recursive).grid_indices[0]];
      }
      expect_frequencies_match(node_counts, node_exact, kTrials, "recursive " + what);
    }
  }
  // The diagnostics count ties the same way: a tied value holding the target rank has error 0.
  // Sorted: 0 3 3 3 5 5 6 7 7 9 12 12 12 12 12 20 20; the median's target q n = 8.5.
  const QuantileDiagnostics median = nonprivate_quantile_diagnostics(data, 0.5);
  EXPECT_EQ(median.best_grid_index, 7u);  // 7 values below 7, 9 at or below: [7, 9] holds 8.5
  EXPECT_EQ(median.best_rank_error, 0.0);
  EXPECT_EQ(nonprivate_rank_error(data, 6, 0.5), 1.5);   // [6, 7]
  EXPECT_EQ(nonprivate_rank_error(data, 8, 0.5), 0.5);   // [9, 9]
  EXPECT_EQ(nonprivate_rank_error(data, 12, 0.5), 1.5);  // [10, 15]
}

// Permute-and-flip on the same tied data: each grid point with the probability of McKenna &
// Sheldon's algorithm itself (random order, accept with e^{c (u - u*)}), computed exactly by
// exact_permute_and_flip_by_permutations, which is checked against the noisy-max integral
// (exact_permute_and_flip) on a few points first. The single quantile, recursive splitting of one
// level and independent releases of one level. The grid has runs of several points (13 to 19, 1
// and 2, ...), where the release draws the largest of their noises at once.
TEST_F(Quantiles, PermuteAndFlipOnAResolutionGridMatchesItsAlgorithm) {
  const std::vector<long double> few = {0.0L, -0.3L, -1.7L, -0.3L, -4.0L, -INFINITY, -0.05L};
  const std::vector<long double> by_permutations = exact_permute_and_flip_by_permutations(few);
  const std::vector<long double> by_integral = exact_permute_and_flip(few);
  for (std::size_t i = 0; i < few.size(); ++i) EXPECT_NEAR(by_permutations[i], by_integral[i], 1e-15L) << i;

  const QuantileRange range{0.0, 20.0, 1.0};
  const QuantileGrid grid = range.grid();
  const std::vector<double> values = {3, 3, 3, 5, 5, 7.2, 7, 12, 12, 12, 12, 12, 19.6, -4, 25, 6.5, 9};
  const std::vector<double> on_grid = {3, 3, 3, 5, 5, 7, 7, 12, 12, 12, 12, 12, 20, 0, 20, 6, 9};
  const QuantileData data(std::span<const double>(values), range);
  constexpr int kTrials = statistical_trials(12000);
  std::uint64_t seed = 900;
  for (const RecordNeighbours neighbours :
       {RecordNeighbours::replace_one_record, RecordNeighbours::add_or_remove_record}) {
    for (const double q : {0.1, 0.5, 0.8}) {
      const double sensitivity = neighbours == RecordNeighbours::replace_one_record ? 1.0 : std::max(q, 1.0 - q);
      QuantileParams params = quantile_params(range, 3.0, neighbours);
      params.mechanism = Mechanism::permute_and_flip;
      // Permute-and-flip at c = eps / (2 Delta) (McKenna & Sheldon 2020, Thm 1).
      const std::vector<long double> scores = exact_point_scores(grid, on_grid, q, 3.0L / (2.0L * sensitivity));
      const std::vector<long double> exact = exact_permute_and_flip_by_permutations(scores);
      // The test tells permute-and-flip from the exponential mechanism: at some point the exponential
      // mechanism's expected count lies more than 1.5 tolerances (>= 8.25 standard deviations) from
      // this law's, so a sampler of that law fails the comparison there with probability above 99%.
      const std::vector<long double> exponential = exact_exponential(scores);
      double separation = 0.0;
      for (std::size_t j = 0; j < exact.size(); ++j) {
        const double p = static_cast<double>(exact[j]);
        separation = std::max(separation, std::fabs(kTrials * (p - static_cast<double>(exponential[j]))) /
                                              frequency_tolerance(kTrials, p));
      }
      EXPECT_GT(separation, 1.5) << "q = " << q;
      Context context = Context::with_fixed_seed(seed++);
      std::vector<int> counts(grid.size, 0);
      for (int t = 0; t < kTrials; ++t) {
        const QuantileRelease release = select_quantile(context, data, q, params);
        ASSERT_EQ(release.value, grid.point(release.grid_index));
        ++counts[release.grid_index];
      }
      const std::string what = std::string(to_string(neighbours)) + " q = " + std::to_string(q);
      expect_frequencies_match(counts, exact, kTrials, "permute-and-flip " + what);
      // Recursive splitting of one level: epsilon / 2 under replacement, epsilon under add/remove,
      // with the add/remove sensitivity; independent releases of one level: the single quantile.
      QuantilesParams several;
      several.base = params;
      several.method = QuantilesMethod::recursive_splitting;
      const double node_epsilon = neighbours == RecordNeighbours::replace_one_record ? 1.5 : 3.0;
      const std::vector<long double> node_exact = exact_permute_and_flip_by_permutations(
          exact_point_scores(grid, on_grid, q, node_epsilon / (2.0L * std::max(q, 1.0 - q))));
      std::vector<int> node_counts(grid.size, 0);
      std::vector<int> basic_counts(grid.size, 0);
      const std::vector<double> levels = {q};
      for (int t = 0; t < kTrials; ++t) {
        several.method = QuantilesMethod::recursive_splitting;
        ++node_counts[select_quantiles(context, data, levels, several).grid_indices[0]];
        several.method = QuantilesMethod::independent_basic;
        ++basic_counts[select_quantiles(context, data, levels, several).grid_indices[0]];
      }
      expect_frequencies_match(node_counts, node_exact, kTrials, "permute-and-flip recursive " + what);
      expect_frequencies_match(basic_counts, exact, kTrials, "permute-and-flip basic " + what);
    }
  }
}

// A million records hold one value at the target rank (diffprivlib's quantile fails on 800 000 such
// ties: every weight e^{-eps |r - q n| / 2} of the intervals around the run underflows to 0). The
// releases compare log weights, so none underflows: on a grid whose points include the value it is
// released exactly by a single quantile (its rank error is 0; every other point's is at least 5 * 10^5,
// so its probability is below e^{-10^5}) and by independent releases; without a resolution such a
// release lies in an interval that touches the run. Every method's slack stays finite and small.
// Both neighbour relations.
TEST_F(Quantiles, AMillionTiesAtTheTargetRankUnderflowNoWeight) {
  constexpr std::size_t kTies = 1'000'000;
  constexpr std::size_t kSide = 500'000;
  std::vector<double> values(kTies, 5.0);
  for (std::size_t i = 0; i < kSide; ++i) {
    values.push_back(5.0 * static_cast<double>(i) / kSide);              // [0, 5)
    values.push_back(10.0 - 5.0 * static_cast<double>(i) / kSide);      // (5, 10]
  }
  const double below = 5.0 * static_cast<double>(kSide - 1) / kSide;   // the run's neighbours
  const double above = 10.0 - 5.0 * static_cast<double>(kSide - 1) / kSide;
  Context context = Context::with_fixed_seed(2107);
  for (const QuantileRange range : {QuantileRange{0.0, 10.0, 0.5}, QuantileRange{0.0, 10.0}}) {
    const bool on_grid = range.resolution > 0.0;
    const QuantileData data(std::span<const double>(values), range);
    for (const RecordNeighbours neighbours :
         {RecordNeighbours::replace_one_record, RecordNeighbours::add_or_remove_record}) {
      const QuantileParams params = quantile_params(range, 1.0, neighbours);
      const double step = range.grid().step;  // a point of the grid, of an interval touching the run
      const auto near_the_run = [&](double value, const std::string& what) {
        if (on_grid) {
          EXPECT_EQ(value, 5.0) << what;
        } else {
          EXPECT_TRUE(value >= below - step && value <= above + step) << what << ": " << value;
        }
      };
      for (const double q : {0.3, 0.5, 0.7}) {  // target ranks 6e5, 1e6, 1.4e6: all inside the run
        const std::string what = std::string(to_string(neighbours)) + (on_grid ? ", grid" : ", no resolution") +
                                 ", q = " + std::to_string(q);
        const QuantileRelease release = select_quantile(context, data, q, params);
        near_the_run(release.value, what);
        EXPECT_TRUE(std::isfinite(release.report.slack.epsilon) && release.report.slack.epsilon < 1.0) << what;
        EXPECT_TRUE(std::isfinite(release.report.slack.delta) && release.report.slack.delta < 1e-9) << what;
      }
      for (const QuantilesMethod method :
           {QuantilesMethod::joint_exponential, QuantilesMethod::recursive_splitting,
            QuantilesMethod::independent_basic}) {
        QuantilesParams several;
        several.base = params;
        several.method = method;
        const std::vector<double> levels = {0.3, 0.5, 0.7};
        const QuantilesRelease release = select_quantiles(context, data, levels, several);
        const std::string what = std::string(to_string(method)) + ", " + std::string(to_string(neighbours));
        ASSERT_EQ(release.values.size(), levels.size());
        ASSERT_TRUE(std::is_sorted(release.values.begin(), release.values.end())) << what;
        for (const double value : release.values) {
          EXPECT_TRUE(value >= 0.0 && value <= 10.0) << what << ": " << value;
          // The joint utility and recursive splitting do not favour the run: with all the levels'
          // target ranks inside one value, the joint utility of (o1, o2 just below 5, o3 in (5, 7])
          // is -1.2 * 10^6 for every o3 there (gaps 5e5, 0, 1e6 + c, 5e5 - c against 6e5, 4e5,
          // 4e5, 6e5), and recursion takes q = 0.3 of the values below its median, which may leave
          // the run out. Their releases are checked for a finite, small slack only.
          if (method == QuantilesMethod::independent_basic) near_the_run(value, what);
        }
        EXPECT_TRUE(std::isfinite(release.slack.epsilon) && release.slack.epsilon < 1.0) << what;
        EXPECT_TRUE(std::isfinite(release.slack.delta) && release.slack.delta < 1e-9) << what;
      }
    }
  }
}

TEST_F(Quantiles, SameSeedSameRelease) {
  const QuantileData data(std::span<const double>(kSmallData), kSmallRange);
  const QuantileParams params = quantile_params(kSmallRange, 1.0, RecordNeighbours::replace_one_record);
  Context first = Context::with_fixed_seed(99);
  Context second = Context::with_fixed_seed(99);
  for (int t = 0; t < 20; ++t) {
    EXPECT_EQ(select_quantile(first, data, 0.3, params).grid_index,
              select_quantile(second, data, 0.3, params).grid_index);
  }
}

}  // namespace
}  // namespace dpselect::testing
