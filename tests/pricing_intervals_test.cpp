// SPDX-License-Identifier: Apache-2.0
// The bid-interval sampler (GridSampler::bid_intervals) and the continuous price range: exact
// EM probabilities on small grids, the continuous EM density on a range, reproducibility, the
// report, the accuracy bound and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "dpselect/dpselect.hpp"
#include "support/exact_probabilities.hpp"
#include "support/expect_invalid.hpp"
#include "support/frequencies.hpp"

namespace dpselect::testing {
namespace {

PricingParams interval_params(double epsilon, BidderNeighbours neighbours) {
  PricingParams params;
  params.epsilon = epsilon;
  params.neighbours = neighbours;
  params.backend = Backend::Cpu;
  params.grid_sampler = GridSampler::bid_intervals;
  return params;
}

double score_scale(const PricingParams& params, double largest_price) {
  // Dwork & Roth 2014, Thm 3.10 and its monotone remark: eps/Delta for add/remove, eps/(2 Delta) otherwise.
  return params.neighbours == BidderNeighbours::add_or_remove_bidder ? params.epsilon / largest_price
                                                                     : params.epsilon / (2 * largest_price);
}

// The pumpkin bids of Dwork & Roth 2014, Example 3.5, on the grid 0.25, 0.5, ..., 4 (the list {1.00, 3.00, 3.01, 3.02} of
// pricing_test.cpp is not a grid): both samplers against the exact EM probabilities, for both
// neighbour relations, the bids sitting on grid points and between them.
TEST(BidIntervals, GridFrequenciesMatchTheExactExponentialMechanism) {
  constexpr int kTrials = 20'000;
  const PriceGrid grid{0.25, 4.0, 0.25};
  for (const std::vector<double>& raw_bids : {std::vector<double>{1.00, 1.00, 1.00, 3.01},
                                              std::vector<double>{0.3, 1.0, 1.1, 2.0, 2.0, 3.9, 7.0}}) {
    const Bids bids(raw_bids);
    for (const BidderNeighbours neighbours : {BidderNeighbours::add_or_remove_bidder, BidderNeighbours::change_one_bid}) {
      const PricingParams params = interval_params(4.0, neighbours);
      std::vector<long double> scores;
      for (std::uint64_t i = 0; i < grid.size(); ++i) {
        scores.push_back(score_scale(params, 4.0) * static_cast<long double>(bids.revenue(grid.price(i))));
      }
      const std::vector<long double> exact = exact_exponential(scores);
      for (const GridSampler sampler : {GridSampler::bid_intervals, GridSampler::per_price_noise}) {
        PricingParams run = params;
        run.grid_sampler = sampler;
        Context context = Context::with_fixed_seed(raw_bids.size() * 10 + static_cast<int>(neighbours));
        std::vector<int> counts(grid.size(), 0);
        for (int trial = 0; trial < kTrials; ++trial) {
          const PriceSelection pick = select_price(context, bids, grid, run);
          ASSERT_EQ(pick.price, grid.price(pick.candidate));
          ++counts.at(pick.candidate);
        }
        expect_frequencies_match(counts, exact, kTrials,
                                 std::string(to_string(neighbours)) +
                                     (sampler == GridSampler::bid_intervals ? ", bid intervals" : ", per price") +
                                     ", " + std::to_string(raw_bids.size()) + " bids");
      }
    }
  }
}

// The continuous range against the continuous EM density exp(c p N(p)) on [min, max]: exact
// masses of 28 bins (piecewise exponential integrals in long double). The sampler works on
// range.grid(), 2^40 + 1 prices, so intervals span up to 2^38 grid prices (three digits and the
// rejection step of the within-interval stage); grid and continuum differ by ~2^-40 per bin.
TEST(BidIntervals, ContinuousRangeMatchesTheContinuousExponentialMechanism) {
  constexpr int kTrials = 40'000;
  constexpr int kBins = 28;
  const std::vector<double> raw_bids = {0.2, 0.5, 0.5, 0.9, 1.3};
  const Bids bids(raw_bids);
  const PriceRange range{0.1, 1.5};
  for (const BidderNeighbours neighbours : {BidderNeighbours::add_or_remove_bidder, BidderNeighbours::change_one_bid}) {
    const PricingParams params = interval_params(3.0, neighbours);
    const long double c = score_scale(params, range.max);
    // Pieces (a, b] with N bids >= p: density e^{c N p}.
    struct Piece {
      long double a, b;
      int bidders;
    };
    const std::vector<Piece> pieces = {{0.1L, 0.2L, 5}, {0.2L, 0.5L, 4}, {0.5L, 0.9L, 2}, {0.9L, 1.3L, 1}, {1.3L, 1.5L, 0}};
    auto mass = [&](long double lo, long double hi) {
      long double total = 0;
      for (const Piece& piece : pieces) {
        const long double a = std::fmax(lo, piece.a);
        const long double b = std::fmin(hi, piece.b);
        if (b <= a) continue;
        const long double rate = c * piece.bidders;
        total += rate == 0 ? b - a : (std::exp(rate * b) - std::exp(rate * a)) / rate;
      }
      return total;
    };
    const long double width = (range.max - range.min) / static_cast<long double>(kBins);
    std::vector<long double> exact(kBins);
    for (int k = 0; k < kBins; ++k) {
      exact[k] = mass(range.min + k * width, range.min + (k + 1) * width) / mass(range.min, range.max);
    }
    Context context = Context::with_fixed_seed(neighbours == BidderNeighbours::add_or_remove_bidder ? 5 : 6);
    std::vector<int> counts(kBins, 0);
    for (int trial = 0; trial < kTrials; ++trial) {
      const PriceSelection pick = select_price(context, bids, range, params);
      ASSERT_GE(pick.price, range.min);
      ASSERT_LE(pick.price, range.max);
      const int bin = std::min(kBins - 1, static_cast<int>((pick.price - range.min) / static_cast<double>(width)));
      ++counts[bin];
    }
    expect_frequencies_match(counts, exact, kTrials, std::string(to_string(neighbours)));
  }
}

TEST(BidIntervals, RangeReleasesAreGridPointsReproducibleAndReported) {
  const Bids bids(std::vector<double>{3.0, 5.0, 5.0, 8.5, 12.0, 20.0});
  const PriceRange range{1.0, 25.0};
  const PriceGrid grid = range.grid();
  EXPECT_EQ(grid.size(), (std::uint64_t{1} << 40) + 1);
  EXPECT_EQ(grid.price(grid.size() - 1), 25.0);
  PricingParams params = interval_params(1.0, BidderNeighbours::add_or_remove_bidder);
  params.max_bidders = 1000;
  Context first = Context::with_fixed_seed(3);
  Context second = Context::with_fixed_seed(3);
  for (int release = 0; release < 20; ++release) {
    const PriceSelection a = select_price(first, bids, range, params);
    const PriceSelection b = select_price(second, bids, range, params);
    EXPECT_EQ(a.price, b.price);
    EXPECT_EQ(a.price, grid.price(a.candidate));
    EXPECT_EQ(a.report.candidates, grid.size());
    EXPECT_EQ(a.report.sensitivity, 25.0);
    EXPECT_TRUE(a.report.monotone);
    EXPECT_EQ(a.report.executed_on, ExecutedOn::cpu);
    EXPECT_FALSE(a.report.slack.depends_on_data);  // max_bidders makes it public
    EXPECT_GT(a.report.slack.epsilon, 0.0);
    EXPECT_LT(a.report.slack.epsilon, 1e-6);
    EXPECT_GT(a.report.slack.delta, 0.0);
    EXPECT_LT(a.report.slack.delta, 1e-20);
  }
  // With max_bidders the whole report is public: a different number of bids changes nothing in it.
  const Bids more_bids(std::vector<double>{3.0, 5.0, 5.0, 8.5, 12.0, 20.0, 21.0, 1.5, 2.5, 7.0, 9.0});
  const SelectionReport few = select_price(first, bids, range, params).report;
  const SelectionReport many = select_price(first, more_bids, range, params).report;
  EXPECT_EQ(few.slack.epsilon, many.slack.epsilon);
  EXPECT_EQ(few.slack.delta, many.slack.delta);
  EXPECT_EQ(few.candidates, many.candidates);
  params.max_bidders = 0;
  EXPECT_TRUE(select_price(first, bids, range, params).report.slack.depends_on_data);
  // The continuum's optimum is a bid: 5 * 5 = 25 at price 5 (also 3 * 8.5 = 25.5 at 8.5).
  const NonprivateOptimum best = nonprivate_optimum(bids, range);
  EXPECT_EQ(best.price, 8.5);
  EXPECT_EQ(best.revenue, 25.5);
  EXPECT_LE(grid.price(best.candidate), 8.5);
  EXPECT_GT(grid.price(best.candidate + 1), 8.5);
}

// Dwork & Roth 2014, Thm 3.11 on a grid of 10^7 prices sampled by bid intervals (the per-price path would
// take 10^10 candidate evaluations here): failures <= Binomial(1000, 0.1) + 5.5 sd, as in
// pricing_test.cpp. A sanity check only (the bound is loose); the frequency tests above are the
// sharp ones.
TEST(BidIntervals, AccuracyBoundHoldsEmpirically) {
  std::vector<double> raw_bids;
  for (int i = 0; i < 20'000; ++i) raw_bids.push_back(1.0 + (i * 37 % 1000) * 0.01);
  const Bids bids(raw_bids);
  const PriceGrid grid{1e-6, 12.0, 1.2e-6};
  const NonprivateOptimum optimum = nonprivate_optimum(bids, PriceRange{grid.min, grid.max});
  for (const BidderNeighbours neighbours : {BidderNeighbours::add_or_remove_bidder, BidderNeighbours::change_one_bid}) {
    const PricingParams params = interval_params(0.5, neighbours);
    const double shortfall = revenue_shortfall_bound(params, grid.price(grid.size() - 1), grid.size(), std::log(10.0));
    ASSERT_LT(shortfall, optimum.revenue);
    Context context = Context::with_fixed_seed(41);
    int below = 0;
    for (int run = 0; run < 1000; ++run) {
      below += bids.revenue(select_price(context, bids, grid, params).price) <= optimum.revenue - shortfall;
    }
    EXPECT_LE(below, 152) << to_string(neighbours);
  }
}

TEST(BidIntervals, BadInput) {
  const Bids bids(std::vector<double>{1.0, 2.0});
  Context context = Context::with_fixed_seed(1);
  const PricingParams params = interval_params(1.0, BidderNeighbours::add_or_remove_bidder);
  expect_invalid_message([&] { select_price(context, bids, PriceRange{-1.0, 2.0}, params); }, {"range min", "-1"});
  expect_invalid_message([&] { select_price(context, bids, PriceRange{NAN, 2.0}, params); }, {"range min", "nan"});
  expect_invalid_message([&] { select_price(context, bids, PriceRange{2.0, 2.0}, params); }, {"range max", "2"});
  expect_invalid_message([&] { select_price(context, bids, PriceRange{0.0, INFINITY}, params); }, {"range max", "inf"});
  expect_invalid_message([&] { select_price(context, bids, PriceRange{0.0, 0x1p970}, params); },
                         {"range max", "2^960"});
  // A range of denormals has no positive grid step: once undefined behaviour in PriceGrid::size
  // (found by tests/fuzz/fuzz_parameters). The narrowest range that has one is refused by the
  // selection's own check (its largest price, the sensitivity, is too small for epsilon); a
  // narrow range of normal prices is sampled.
  for (const double min : {-0.0, 0.0}) {
    expect_invalid_message([&] { select_price(context, bids, PriceRange{min, 4.9e-324}, params); },
                           {"range max", "5e-324", "positive step"});
    EXPECT_THROW(PriceRange({min, 4.9e-324}).grid(), InvalidArgument);
  }
  const PriceRange narrowest{0.0, 0x1p-1034};
  EXPECT_EQ(narrowest.grid().step, 0x1p-1074);
  EXPECT_EQ(narrowest.grid().size(), (std::uint64_t{1} << 40) + 1);
  expect_invalid_message([&] { select_price(context, bids, narrowest, params); }, {"epsilon / sensitivity", "inf"});
  const PriceRange narrow{0.0, 0x1p-1000};
  EXPECT_EQ(narrow.grid().size(), (std::uint64_t{1} << 40) + 1);
  EXPECT_LE(select_price(context, bids, narrow, params).price, narrow.max);
  PricingParams other = params;
  other.mechanism = Mechanism::permute_and_flip;
  expect_invalid_message([&] { select_price(context, bids, PriceRange{0.0, 2.0}, other); }, {"mechanism",
                         "permute"});
  other = params;
  other.backend = Backend::Gpu;
  expect_invalid_message([&] { select_price(context, bids, PriceRange{0.0, 2.0}, other); }, {"backend", "Gpu"});
  other = params;
  other.epsilon = 0.0;
  expect_invalid_message([&] { select_price(context, bids, PriceRange{0.0, 2.0}, other); }, {"epsilon", "0"});
  other = params;
  other.max_bidders = 1;
  expect_invalid_message([&] { select_price(context, bids, PriceRange{0.0, 2.0}, other); }, {"max_bidders", "1"});
}

}  // namespace
}  // namespace dpselect::testing
