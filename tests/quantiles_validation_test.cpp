// SPDX-License-Identifier: Apache-2.0
// Every bad input of the quantile API gets InvalidArgument naming the parameter and the value,
// before any charge (the accountant stays at zero) and before any stream is drawn.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "dpselect/quantiles.hpp"
#include "dpselect/accounting.hpp"
#include "dpselect/errors.hpp"
#include "selection/cpu_backend.hpp"
#include "quantiles/quantiles_internal.hpp"
#include "support/expect_invalid.hpp"

namespace dpselect::testing {
namespace {

const std::vector<double> kValues = {1.0, 2.0, 3.0, 4.0};
constexpr QuantileRange kRange{0.0, 10.0};

QuantileParams good_params() {
  QuantileParams params;
  params.range = kRange;
  params.epsilon = 1.0;
  params.backend = Backend::Cpu;
  return params;
}

struct Charged {
  Charged() { context.charge_to(accountant); }
  std::shared_ptr<PrivacyAccountant> accountant = std::make_shared<PrivacyAccountant>(PrivacyBound{10.0, 0.0});
  Context context = Context::with_fixed_seed(1);
  QuantileData data{std::span<const double>(kValues), kRange};

  // Nothing charged, and no stream drawn: the next release takes the context's first stream.
  void expect_nothing_charged() {
    EXPECT_EQ(accountant->release_count(), 0u);
    context.charge_to(nullptr);
    Context fresh = Context::with_fixed_seed(1);
    EXPECT_EQ(select_quantile(context, data, 0.5, good_params()).report.stream,
              select_quantile(fresh, data, 0.5, good_params()).report.stream);
  }
};

TEST(QuantileValidation, BadRangesAreRefusedByName) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  expect_invalid_message([] { QuantileRange{5.0, 2.0}.validate(); }, {"range upper", "2", "> lower (5)"});
  expect_invalid_message([] { QuantileRange{3.0, 3.0}.validate(); }, {"range upper", "3"});
  expect_invalid_message([&] { QuantileRange{nan, 1.0}.validate(); }, {"range lower", "nan"});
  expect_invalid_message([&] { QuantileRange{0.0, inf}.validate(); }, {"range upper", "inf"});
  expect_invalid_message([&] { QuantileRange{-inf, 0.0}.validate(); }, {"range lower", "-inf"});
  expect_invalid_message([] { QuantileRange{0.0, 0x1p1000}.validate(); }, {"range upper", "2^960"});
  expect_invalid_message([] { QuantileData(std::span<const double>(kValues), QuantileRange{1.0, 0.0}); },
                         {"range upper"});
  // A range of denormals: its grid step underflowed to 0 (undefined behaviour in the point count;
  // found by tests/fuzz/fuzz_parameters).
  const double tiny = std::numeric_limits<double>::denorm_min();
  expect_invalid_message([&] { QuantileRange{-tiny, tiny}.validate(); }, {"range upper", "positive step"});
  expect_invalid_message([&] { QuantileRange{0.0, 0x1p-1040}.grid(); }, {"range upper", "positive step"});
  EXPECT_GT((QuantileRange{0.0, 0x1p-1000}.grid().step), 0.0);
}

TEST(QuantileValidation, BadResolutionsAreRefusedByNameBeforeAnyCharge) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  expect_invalid_message([] { QuantileRange{0.0, 10.0, 0.0}.validate(); }, {"range resolution", "> 0", "0"});
  expect_invalid_message([] { QuantileRange{0.0, 10.0, -1.0}.validate(); }, {"range resolution", "-1"});
  expect_invalid_message([&] { QuantileRange{0.0, 10.0, nan}.validate(); }, {"range resolution", "nan"});
  expect_invalid_message([&] { QuantileRange{0.0, 10.0, inf}.validate(); }, {"range resolution", "inf"});
  // Not dividing the range, or wider than it.
  expect_invalid_message([] { QuantileRange{0.0, 10.0, 3.0}.validate(); }, {"range resolution", "divisor", "10", "3"});
  expect_invalid_message([] { QuantileRange{0.0, 10.0, 20.0}.validate(); }, {"range resolution", "divisor"});
  // More points than the grid allows (2^40 + 1), and a step doubles cannot tell apart at 2^40.
  expect_invalid_message([] { QuantileRange{0.0, 0x1p41, 1.0}.validate(); }, {"range resolution", "2^40 + 1"});
  expect_invalid_message([] { QuantileRange{0x1p60, 0x1p60 + 0x1p30, 1.0}.validate(); },
                         {"range resolution", "2^-50"});
  // Decimal steps that doubles hold inexactly still divide their decimal ranges.
  EXPECT_EQ((QuantileRange{0.0, 200.0, 0.01}.grid().size), 20001u);
  EXPECT_EQ((QuantileRange{0.1, 0.3, 0.1}.grid().size), 3u);
  EXPECT_EQ((QuantileRange{-5.0, 5.0, 0.25}.grid().point(40)), 5.0);
  EXPECT_EQ((QuantileRange{0.0, 0x1p40, 1.0}.grid().size), (std::uint64_t{1} << 40) + 1);
  // A bad resolution in a release: refused before any charge, for one quantile and for several.
  Charged charged;
  QuantileParams params = good_params();
  params.range.resolution = 3.0;
  expect_invalid_message([&] { select_quantile(charged.context, charged.data, 0.5, params); }, {"range resolution"});
  QuantilesParams several;
  several.base = params;
  const std::vector<double> qs = {0.25, 0.75};
  expect_invalid_message([&] { select_quantiles(charged.context, charged.data, qs, several); }, {"range resolution"});
  // Data prepared without the resolution is not data of the range with it (values are rounded).
  params.range.resolution = 1.0;
  expect_invalid_message([&] { select_quantile(charged.context, charged.data, 0.5, params); },
                         {"range", "prepared for"});
  charged.expect_nothing_charged();
}

TEST(QuantileValidation, NaNDataNamesItsIndexAndEmptyDataIsRefused) {
  std::vector<double> values(1000, 1.0);
  values[617] = std::numeric_limits<double>::quiet_NaN();
  values[900] = std::numeric_limits<double>::quiet_NaN();
  expect_invalid_message([&] { QuantileData(std::span<const double>(values), kRange); }, {"data[617]", "nan"});
  const std::vector<float> floats = {1.0F, std::numeric_limits<float>::quiet_NaN()};
  expect_invalid_message([&] { QuantileData(std::span<const float>(floats), kRange); }, {"data[1]", "nan"});
  expect_invalid_message([] { QuantileData(std::span<const double>(), kRange); }, {"data", "none"});
  // Infinities are clipped like any value outside the range.
  const std::vector<double> infinite = {-std::numeric_limits<double>::infinity(),
                                        std::numeric_limits<double>::infinity()};
  EXPECT_EQ(QuantileData(std::span<const double>(infinite), kRange).size(), 2u);
}

// A reader over `values`, `chunk_size` at a time.
template <class T>
ChunkedValues<T> chunks_of(const std::vector<T>& values, std::uint64_t chunk_size) {
  return {values.size(),
          [&values](std::uint64_t first, std::span<T> out) {
            std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(first), out.size(), out.begin());
          },
          chunk_size};
}

TEST(QuantileValidation, ChunkedValuesPrepareTheSpansData) {
  std::vector<double> values(100'003);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.37 * static_cast<double>(i)) * 120.0;
  values[5] = 3.0;  // on a grid point of the resolution below
  const std::vector<float> floats(values.begin(), values.end());
  for (const QuantileRange& range : {kRange, QuantileRange{-100.0, 100.0, 0.5}}) {
    const std::vector<std::uint64_t> expected = QuantileData(std::span<const double>(values), range).sorted_positions();
    for (const std::uint64_t chunk_size : {std::uint64_t{1'000}, std::uint64_t{65'536}, std::uint64_t{200'000}}) {
      EXPECT_EQ(QuantileData(chunks_of(values, chunk_size), range).sorted_positions(), expected);
    }
    EXPECT_EQ(QuantileData(chunks_of(floats, 4'096), range).sorted_positions(),
              QuantileData(std::span<const float>(floats), range).sorted_positions());
  }
  std::vector<double> bad = values;
  bad[70'001] = std::numeric_limits<double>::quiet_NaN();
  expect_invalid_message([&] { QuantileData(chunks_of(bad, 1'000), kRange); }, {"data[70001]", "nan"});
  expect_invalid_message([&] { QuantileData(chunks_of(values, 0), kRange); }, {"chunk_size"});
  ChunkedValues<double> no_reader = chunks_of(values, 10);
  no_reader.read = nullptr;
  expect_invalid_message([&] { QuantileData(no_reader, kRange); }, {"values.read"});
}

TEST(QuantileValidation, InPlaceSortOfPositionsEqualsStdSort) {
  std::mt19937_64 random(7);
  const auto check = [&](std::vector<std::uint64_t> positions) {
    std::vector<std::uint64_t> expected = positions;
    std::sort(expected.begin(), expected.end());
    detail::sort_positions_in_place(positions);
    EXPECT_EQ(positions, expected);
  };
  for (const std::uint64_t spread : {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{1000}, std::uint64_t{1} << 20,
                                     std::uint64_t{1} << 42}) {
    std::vector<std::uint64_t> positions(300'007);
    for (std::uint64_t& p : positions) p = (std::uint64_t{1} << 41) + random() % spread;  // shared high bits
    check(positions);
  }
  std::vector<std::uint64_t> few_distinct(100'000);
  for (std::uint64_t& p : few_distinct) p = random() % 3 == 0 ? 17 : (std::uint64_t{1} << 30) + random() % 5;
  check(few_distinct);
  std::vector<std::uint64_t> descending(50'000);
  for (std::size_t i = 0; i < descending.size(); ++i) descending[i] = 2 * (descending.size() - i);
  check(descending);
  check({});
  check({5});
}

TEST(QuantileValidation, BadSingleQuantileParametersChargeNothing) {
  Charged charged;
  for (const double q : {-0.1, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    expect_invalid_message([&] { select_quantile(charged.context, charged.data, q, good_params()); }, {"q", "[0, 1]"});
  }
  for (const double epsilon : {0.0, -1.0, std::numeric_limits<double>::infinity()}) {
    QuantileParams params = good_params();
    params.epsilon = epsilon;
    expect_invalid_message([&] { select_quantile(charged.context, charged.data, 0.5, params); }, {"epsilon"});
  }
  QuantileParams other_range = good_params();
  other_range.range = QuantileRange{0.0, 20.0};
  expect_invalid_message([&] { select_quantile(charged.context, charged.data, 0.5, other_range); },
                         {"range", "[0, 10]", "[0, 20]"});
  QuantileParams few_points = good_params();
  few_points.max_points = 3;
  expect_invalid_message([&] { select_quantile(charged.context, charged.data, 0.5, few_points); },
                         {"max_points", "3"});
  QuantileParams tiny_epsilon = good_params();
  tiny_epsilon.epsilon = 1e-17;  // below the floating-point slack of the sampler
  EXPECT_THROW(select_quantile(charged.context, charged.data, 0.5, tiny_epsilon), InvalidArgument);
  charged.expect_nothing_charged();
}

TEST(QuantileValidation, BadQuantileListsChargeNothing) {
  Charged charged;
  QuantilesParams params;
  params.base = good_params();
  const auto refuse = [&](std::vector<double> qs, std::initializer_list<std::string> fragments) {
    expect_invalid_message([&] { select_quantiles(charged.context, charged.data, qs, params); }, fragments);
  };
  for (const QuantilesMethod method : {QuantilesMethod::joint_exponential, QuantilesMethod::recursive_splitting,
                                      QuantilesMethod::independent_basic}) {
    params.method = method;
    refuse({}, {"qs", "none"});
    refuse({0.5, 0.2}, {"qs[1]", "0.2", "strictly increasing"});
    refuse({0.5, 0.5}, {"qs[1]", "0.5"});
    refuse({0.1, 1.2}, {"qs[1]", "1.2", "[0, 1]"});
    refuse({-0.5}, {"qs[0]", "-0.5"});
    params.delta = 1e-6;
    refuse({0.5}, {"delta", "1e-06", "zcdp"});
    params.delta = 0.0;
  }
  params.method = QuantilesMethod::independent_zcdp;
  refuse({0.5}, {"delta", "0", "(0, 1)"});
  params.delta = 1.0;
  refuse({0.5}, {"delta", "1"});
  charged.expect_nothing_charged();
}

// Permute-and-flip needs a resolution grid, applies to single releases and the basic and recursive
// methods only, and no other mechanism is taken: each refused by name before any charge.
TEST(QuantileValidation, BadMechanismsChargeNothing) {
  Charged charged;
  QuantileParams params = good_params();
  params.mechanism = Mechanism::permute_and_flip;  // over a range without a resolution
  expect_invalid_message([&] { select_quantile(charged.context, charged.data, 0.5, params); },
                         {"mechanism", "permute_and_flip", "resolution"});
  expect_invalid_message([&] { quantile_rank_error_bound(params, 0.5, 0.1); }, {"mechanism", "resolution"});
  params.mechanism = Mechanism::laplace_noisy_max;
  expect_invalid_message([&] { select_quantile(charged.context, charged.data, 0.5, params); },
                         {"mechanism", "exponential or permute_and_flip", "laplace-noisy-max"});
  params.mechanism = static_cast<Mechanism>(9);
  expect_invalid_message([&] { select_quantile(charged.context, charged.data, 0.5, params); },
                         {"mechanism", "unknown"});
  charged.expect_nothing_charged();

  // Over a resolution grid: refused with JointExp and zcdp, by name, before any charge.
  Charged on_grid;
  const QuantileRange grid_range{0.0, 10.0, 1.0};
  on_grid.data = QuantileData(std::span<const double>(kValues), grid_range);
  QuantilesParams several;
  several.base = good_params();
  several.base.range = grid_range;
  several.base.mechanism = Mechanism::permute_and_flip;
  const std::vector<double> qs = {0.25, 0.75};
  several.method = QuantilesMethod::joint_exponential;
  expect_invalid_message([&] { select_quantiles(on_grid.context, on_grid.data, qs, several); },
                         {"mechanism permute_and_flip", "recursive and basic", "joint"});
  expect_invalid_message([&] { quantiles_rank_error_bound(several, qs, 0.1); }, {"mechanism", "joint"});
  several.method = QuantilesMethod::independent_zcdp;
  several.delta = 1e-6;
  expect_invalid_message([&] { select_quantiles(on_grid.context, on_grid.data, qs, several); },
                         {"mechanism permute_and_flip", "zcdp"});
  EXPECT_EQ(on_grid.accountant->release_count(), 0u);
  // The methods it applies to are charged: basic m = 2 releases, recursive 2 ceil(log2(3)) = 4.
  several.delta = 0.0;
  for (const QuantilesMethod method : {QuantilesMethod::independent_basic, QuantilesMethod::recursive_splitting}) {
    several.method = method;
    EXPECT_NO_THROW(select_quantiles(on_grid.context, on_grid.data, qs, several));
  }
  EXPECT_EQ(on_grid.accountant->release_count(), 6u);
}

TEST(QuantileValidation, DiagnosticsRefuseAnIndexOffTheGrid) {
  const QuantileData data(std::span<const double>(kValues), kRange);
  const std::uint64_t size = data.grid().size;
  expect_invalid_message([&] { nonprivate_rank_error(data, size, 0.5); }, {"grid_index", std::to_string(size)});
  EXPECT_EQ(nonprivate_rank_error(data, size - 1, 0.5), 2.0);  // all four values lie below the top
  expect_invalid_message([&] { nonprivate_quantile_diagnostics(data, 2.0); }, {"q", "2"});
}

TEST(QuantileValidation, CalculatorsRefuseBadBeta) {
  for (const double beta : {0.0, 1.0, -0.5, std::numeric_limits<double>::quiet_NaN()}) {
    expect_invalid_message([&] { quantile_rank_error_bound(good_params(), 0.5, beta); }, {"beta"});
  }
  // More confidence costs more: alpha grows as beta shrinks, and shrinks as epsilon grows.
  QuantileParams params = good_params();
  const double loose = quantile_rank_error_bound(params, 0.5, 0.1);
  EXPECT_GT(quantile_rank_error_bound(params, 0.5, 0.001), loose);
  params.epsilon = 10.0;
  EXPECT_LT(quantile_rank_error_bound(params, 0.5, 0.1), loose);
  // Replacement keeps sensitivity 1; add/remove at the median halves it (max(q, 1 - q) = 1/2).
  params.neighbours = RecordNeighbours::add_or_remove_record;
  EXPECT_DOUBLE_EQ(quantile_rank_error_bound(params, 0.5, 0.1) * 2.0,
                   quantile_rank_error_bound(QuantileParams{kRange, 10.0}, 0.5, 0.1));
}

// The single-quantile pass evaluates the intervals around the target first and screens the rest
// by their best score; the result must be the one-pass result, bit for bit, whatever the target.
TEST(QuantileInternals, TargetFirstPassEqualsOnePass) {
  // Every 7th value a whole number (a grid point of [0, 10]: 2^40 steps), most tied: atoms too.
  std::vector<double> values(50000);
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = i % 7 == 0 ? static_cast<double>(i % 11 % 10) : std::fmod(static_cast<double>(i) * 7.31, 10.0);
  }
  const QuantileData data(std::span<const double>(values), kRange);
  const std::vector<std::uint64_t> positions = detail::sorted_slots(data);
  for (std::uint64_t stream = 0; stream < 40; ++stream) {
    const double q = static_cast<double>(stream % 11) / 10.0;
    const double scale = stream % 2 == 0 ? 0.5 : 0.01;
    const detail::QuantileIntervalUtilities utilities{detail::DataIntervals{positions, data.grid().size},
                                                      q * static_cast<double>(values.size()), scale};
    const detail::NoiseSpec spec{Mechanism::exponential, scale, RandomKey::from_seed(3, Generator::chacha20), stream,
                                 std::numeric_limits<double>::infinity()};
    const ShardResult split = detail::score_quantile_intervals_cpu(utilities, spec);
    const ShardResult one_pass = merge(
        detail::cpu_evaluate_generated(spec, utilities.interval_candidates(), &detail::QuantileIntervalUtilities::fill,
                                       &utilities),
        detail::cpu_evaluate_generated(spec, utilities.atom_candidates(),
                                       &detail::QuantileIntervalUtilities::fill_atoms, &utilities));
    EXPECT_EQ(split.best_index, one_pass.best_index) << "stream " << stream;
    EXPECT_EQ(split.best_score, one_pass.best_score) << "stream " << stream;
    EXPECT_EQ(split.candidates, one_pass.candidates);
    EXPECT_EQ(split.max_abs_shifted_utility, one_pass.max_abs_shifted_utility);
  }
}

// Permute-and-flip's pass screens groups by their noise bound, around the target first; its result
// must be the arg-max of every run's score computed in full, whatever the target and the scale.
TEST(QuantileInternals, PermuteAndFlipScreenedPassEqualsEveryRunScored) {
  // Integers with ties and gaps on a resolution-1 grid: runs of many points, atoms, empty intervals.
  const QuantileRange range{0.0, 1000.0, 1.0};
  std::vector<double> values(20000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>((i * i) % 977 % 700 + 150);
  const QuantileData data(std::span<const double>(values), range);
  const std::vector<std::uint64_t> positions = detail::sorted_slots(data);
  const std::uint64_t n = positions.size();
  for (std::uint64_t stream = 0; stream < 40; ++stream) {
    const double q = static_cast<double>(stream % 11) / 10.0;
    const double scale = stream % 2 == 0 ? 0.5 : 0.002;
    detail::QuantileIntervalUtilities utilities{detail::DataIntervals{positions, data.grid().size},
                                                q * static_cast<double>(n), scale, stream % 3 == 0 ? 64u : 0u};
    const detail::NoiseSpec spec{Mechanism::permute_and_flip, scale,
                                 RandomKey::from_seed(5, stream % 2 == 0 ? Generator::chacha20 : Generator::philox),
                                 stream, std::numeric_limits<double>::infinity()};
    const ShardResult screened = detail::permute_and_flip_quantile_runs_cpu(utilities, spec);
    ShardResult every;
    const detail::DataIntervals& intervals = utilities.intervals;
    for (std::uint64_t r = 0; r <= n; ++r) {
      const std::uint64_t index = utilities.first_index + r;
      const double utility = detail::quantile_rank_utility(r, utilities.target);
      if (intervals.length_without_atom(r) == 0) {
        ++every.candidates;
        continue;
      }
      detail::offer_run(every, index, utility,
                        detail::permute_and_flip_run_score(spec, index, utility, intervals.length_without_atom(r)));
    }
    for (std::uint64_t r = 0; r < n; ++r) {
      const std::uint64_t index = detail::kAtomCandidateOffset + utilities.first_index + r;
      if (!intervals.ends_with_atom(r)) {
        ++every.candidates;
        continue;
      }
      const double utility = detail::quantile_atom_utility(r, intervals.atom_ties(r), utilities.target);
      detail::offer_run(every, index, utility, detail::permute_and_flip_run_score(spec, index, utility, 1));
    }
    EXPECT_EQ(screened.best_index, every.best_index) << "stream " << stream;
    EXPECT_EQ(screened.best_score, every.best_score) << "stream " << stream;
    EXPECT_EQ(screened.candidates, 2 * n + 1);
    EXPECT_EQ(screened.max_abs_shifted_utility, every.max_abs_shifted_utility);
  }
}

}  // namespace
}  // namespace dpselect::testing
