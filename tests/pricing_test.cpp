// SPDX-License-Identifier: Apache-2.0
// Posted-price auction pricing on the test's backend: the pumpkin auction against exact EM
// probabilities (Dwork & Roth 2014, Example 3.5), grid and list paths agreeing, the accuracy bound, and
// bad input.
#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <span>
#include <vector>

#include "dpselect/pricing.hpp"
#include "support/exact_probabilities.hpp"
#include "support/frequencies.hpp"
#include "support/test_backend.hpp"

namespace dpselect::testing {
namespace {

PricingParams pricing_params(double epsilon, BidderNeighbours neighbours) {
  PricingParams params;
  params.epsilon = epsilon;
  params.neighbours = neighbours;
  params.backend = kBackend;
  return params;
}

// Dwork & Roth 2014, Example 3.5 (the pumpkins): A, F and I bid 1.00, K bids 3.01. (The text says revenue is 3.00 at
// price 1.00; all four bids are >= 1.00, so it is 4.00. We implement the mathematics.)
const std::vector<double> kPumpkinBids = {1.00, 1.00, 1.00, 3.01};
const std::vector<double> kPumpkinPrices = {1.00, 3.00, 3.01, 3.02};

using Pricing = BackendTest;

TEST_F(Pricing, PumpkinRevenues) {
  const Bids bids(kPumpkinBids);
  EXPECT_EQ(bids.revenue(1.00), 4.00);
  EXPECT_EQ(bids.revenue(3.00), 3.00);
  EXPECT_EQ(bids.revenue(3.01), 3.01);
  EXPECT_EQ(bids.revenue(3.02), 0.00);
  const NonprivateOptimum best = nonprivate_optimum(bids, kPumpkinPrices);
  EXPECT_EQ(best.price, 1.00);
  EXPECT_EQ(best.revenue, 4.00);
}

TEST_F(Pricing, PumpkinFrequenciesMatchTheExactExponentialMechanism) {
  constexpr int kTrials = statistical_trials(20'000);
  const Bids bids(kPumpkinBids);
  for (const BidderNeighbours neighbours : {BidderNeighbours::add_or_remove_bidder, BidderNeighbours::change_one_bid}) {
    const double epsilon = 3.0;
    // Delta = 3.02, the largest price; scale eps/Delta (add/remove, monotone) or eps/(2 Delta).
    const double scale = neighbours == BidderNeighbours::add_or_remove_bidder ? epsilon / 3.02 : epsilon / (2 * 3.02);
    std::vector<long double> scores;
    for (double price : kPumpkinPrices) scores.push_back(scale * static_cast<long double>(bids.revenue(price)));
    Context context = Context::with_fixed_seed(neighbours == BidderNeighbours::change_one_bid ? 11 : 12);
    std::vector<int> counts(kPumpkinPrices.size(), 0);
    for (int trial = 0; trial < kTrials; ++trial) {
      const PriceSelection pick = select_price(context, bids, kPumpkinPrices, pricing_params(epsilon, neighbours));
      ++counts.at(pick.candidate);
      ASSERT_EQ(pick.price, kPumpkinPrices[pick.candidate]);
    }
    expect_frequencies_match(counts, exact_exponential(scores), kTrials, std::string(to_string(neighbours)));
  }
}

TEST_F(Pricing, GridAndExplicitListGiveTheSameAnswerForTheSameKey) {
  std::vector<double> raw_bids;
  for (int i = 0; i < 5000; ++i) raw_bids.push_back(std::exp(std::sin(i * 0.7) * 1.5 + 2.0));
  const Bids bids(raw_bids);
  const PriceGrid grid{0.5, 40.0, 0.0625};
  std::vector<double> listed(grid.size());
  for (std::uint64_t i = 0; i < listed.size(); ++i) listed[i] = grid.price(i);
  EXPECT_EQ(listed.back(), 40.0);
  for (const BidderNeighbours neighbours : {BidderNeighbours::add_or_remove_bidder, BidderNeighbours::change_one_bid}) {
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
      Context from_grid = Context::with_fixed_seed(seed);
      Context from_list = Context::with_fixed_seed(seed);
      const PriceSelection a = select_price(from_grid, bids, grid, pricing_params(0.05, neighbours));
      const PriceSelection b = select_price(from_list, bids, listed, pricing_params(0.05, neighbours));
      EXPECT_EQ(a.candidate, b.candidate) << "seed " << seed;
      EXPECT_EQ(a.price, b.price);
      EXPECT_EQ(a.report.sensitivity, 40.0);
      EXPECT_EQ(a.report.monotone, neighbours == BidderNeighbours::add_or_remove_bidder);
      EXPECT_EQ(a.report.executed_on, kExecutedOn);
    }
  }
}

// 2^21 bids take the large-auction sort: CUB's radix sort on a GPU machine (this file's GPU
// instance), libstdc++'s parallel sort otherwise. Either must match std::sort bit for bit,
// with -0.0 read as +0.0.
TEST_F(Pricing, LargeAuctionsAreSortedExactly) {
  std::mt19937_64 rng(9);
  std::lognormal_distribution<double> dist(3.0, 2.0);
  std::vector<double> raw((std::size_t{1} << 21) + 3);
  for (double& bid : raw) bid = dist(rng);
  for (std::size_t i = 0; i < raw.size(); i += 1000) raw[i] = (i / 1000) % 2 == 0 ? 0.0 : -0.0;
  std::vector<double> expected = raw;
  for (double& bid : expected) bid += 0.0;
  std::sort(expected.begin(), expected.end());
  const Bids bids(raw);
  ASSERT_EQ(bids.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(std::bit_cast<std::uint64_t>(bids.sorted()[i]), std::bit_cast<std::uint64_t>(expected[i])) << i;
  }
}

// Dwork & Roth 2014, Thm 3.11: P[revenue <= OPT - bound(t)] <= e^-t. With t = ln 10 over 1000 releases the
// failure count is at most Binomial(1000, 0.1); 100 + 5.5 sd = 152 is exceeded with probability
// < 1e-7 by a correct mechanism. A mechanism with half the required noise scale would be fine
// here; one with the wrong sign or far too much noise fails.
TEST_F(Pricing, AccuracyBoundHoldsEmpirically) {
  std::vector<double> raw_bids;
  for (int i = 0; i < 2000; ++i) raw_bids.push_back(1.0 + (i * 37 % 1000) * 0.01);
  const Bids bids(raw_bids);
  const PriceGrid grid{0.01, 12.0, 0.01};
  const NonprivateOptimum optimum = nonprivate_optimum(bids, grid);
  for (const BidderNeighbours neighbours : {BidderNeighbours::add_or_remove_bidder, BidderNeighbours::change_one_bid}) {
    const PricingParams params = pricing_params(0.5, neighbours);
    const double t = std::log(10.0);
    const double shortfall = revenue_shortfall_bound(params, grid.price(grid.size() - 1), grid.size(), t);
    ASSERT_LT(shortfall, optimum.revenue);  // the bound says something
    Context context = Context::with_fixed_seed(31);
    int below = 0;
    for (int run = 0; run < 1000; ++run) {
      const PriceSelection pick = select_price(context, bids, grid, params);
      below += bids.revenue(pick.price) <= optimum.revenue - shortfall;
    }
    EXPECT_LE(below, 152) << to_string(neighbours);
  }
}

}  // namespace
}  // namespace dpselect::testing
