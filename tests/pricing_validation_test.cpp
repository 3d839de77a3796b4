// SPDX-License-Identifier: Apache-2.0
// Bad pricing input: InvalidArgument naming the parameter and value, before any stream is drawn.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dpselect/dpselect.hpp"
#include "dpselect/pricing.hpp"
#include "support/expect_invalid.hpp"

namespace {

using dpselect::Bids;
using dpselect::Context;
using dpselect::InvalidArgument;
using dpselect::PriceGrid;
using dpselect::PricingParams;
using dpselect::testing::expect_invalid_message;
using dpselect::testing::kInf;
using dpselect::testing::kNaN;


PricingParams cpu_params() {
  PricingParams params;
  params.epsilon = 1.0;
  params.backend = dpselect::Backend::Cpu;
  return params;
}

TEST(PricingValidation, BadBids) {
  expect_invalid_message([] { Bids(std::vector<double>{}); }, {"bids", "size 0"});
  expect_invalid_message([] { Bids(std::vector<double>{1.0, -0.5}); }, {"bids[1]", "(got -0.5)"});
  expect_invalid_message([] { Bids(std::vector<double>{kNaN}); }, {"bids[0]", "(got nan)"});
  expect_invalid_message([] { Bids(std::vector<double>{2.0, 3.0, kInf}); }, {"bids[2]", "(got inf)"});
}

TEST(PricingValidation, BadGrid) {
  expect_invalid_message([] { PriceGrid{-1.0, 2.0, 0.5}.validate(); }, {"grid min", "(got -1)"});
  expect_invalid_message([] { PriceGrid{2.0, 2.0, 0.5}.validate(); }, {"grid max", "(got 2)"});
  expect_invalid_message([] { PriceGrid{3.0, 2.0, 0.5}.validate(); }, {"grid max", "(got 2)"});
  expect_invalid_message([] { PriceGrid{0.0, 2.0, 0.0}.validate(); }, {"grid step", "(got 0)"});
  expect_invalid_message([] { PriceGrid{0.0, 2.0, -0.1}.validate(); }, {"grid step", "(got -0.1)"});
  expect_invalid_message([] { PriceGrid{0.0, 2.0, kNaN}.validate(); }, {"grid step", "(got nan)"});
  expect_invalid_message([] { PriceGrid{0.0, 1e6, 1e-12}.validate(); }, {"grid step", "2^-50"});
}

TEST(PricingValidation, BadPricesAndEpsilonDrawNoStream) {
  const Bids bids(std::vector<double>{1.0, 2.0});
  Context context = Context::with_fixed_seed(1);
  expect_invalid_message([&] { select_price(context, bids, std::vector<double>{}, cpu_params()); }, {"prices", "size 0"});
  expect_invalid_message([&] { select_price(context, bids, std::vector<double>{1.0, kNaN}, cpu_params()); }, {"prices[1]", "nan"});
  expect_invalid_message([&] { select_price(context, bids, std::vector<double>{0.0, 0.0}, cpu_params()); }, {"largest price", "(got 0)"});
  PricingParams bad = cpu_params();
  bad.epsilon = 0.0;
  expect_invalid_message([&] { select_price(context, bids, PriceGrid{0.5, 3.0, 0.5}, bad); }, {"epsilon", "(got 0)"});
  expect_invalid_message([&] { select_price(context, bids, PriceGrid{0.5, 3.0, 0.0}, cpu_params()); }, {"grid step"});
  expect_invalid_message([&] { select_price(context, bids, PriceGrid{0.0, 1.0, 2.0}, cpu_params()); }, {"grid's largest price", "(got 0)"});
  expect_invalid_message([&] { select_price(context, bids, std::vector<double>{1.0, 1e300}, cpu_params()); }, {"largest price", "2^960"});
  PricingParams few = cpu_params();
  few.max_bidders = 1;
  expect_invalid_message([&] { select_price(context, bids, PriceGrid{0.5, 3.0, 0.5}, few); }, {"max_bidders", "1"});
  const auto pick = select_price(context, bids, PriceGrid{0.5, 3.0, 0.5}, cpu_params());
  EXPECT_EQ(pick.report.stream, 0u);
  EXPECT_TRUE(pick.report.slack.depends_on_data);
}

TEST(PricingValidation, PublicBidderBoundMakesTheSlackDataIndependent) {
  PricingParams params = cpu_params();
  params.max_bidders = 100;
  Context context = Context::with_fixed_seed(4);
  const auto a = select_price(context, Bids(std::vector<double>{1.0, 2.0}), PriceGrid{0.5, 3.0, 0.5}, params);
  const auto b = select_price(context, Bids(std::vector<double>{3.0, 3.0, 3.0}), PriceGrid{0.5, 3.0, 0.5}, params);
  EXPECT_FALSE(a.report.slack.depends_on_data);
  EXPECT_EQ(a.report.slack.epsilon, b.report.slack.epsilon);
}

TEST(PricingValidation, GridSizeIncludesMaxWhenOnTheGrid) {
  EXPECT_EQ((PriceGrid{0.0, 1.0, 0.25}.size()), 5u);
  // 0.1 + 2 * 0.1 rounds to 0.30000000000000004 > 0.3, so the grid stops at 0.2.
  EXPECT_EQ((PriceGrid{0.1, 0.3, 0.1}.size()), 2u);
  EXPECT_LE((PriceGrid{0.1, 0.3, 0.1}.price(PriceGrid{0.1, 0.3, 0.1}.size() - 1)), 0.3);
  EXPECT_EQ((PriceGrid{1.0, 1e10, 1.0}.size()), 10'000'000'000u);
}

TEST(PricingValidation, ShortfallBoundFormula) {
  PricingParams params = cpu_params();
  params.epsilon = 0.5;
  params.neighbours = dpselect::BidderNeighbours::change_one_bid;
  EXPECT_DOUBLE_EQ(dpselect::revenue_shortfall_bound(params, 10.0, 1000, 3.0), 2 * 10.0 / 0.5 * (std::log(1000.0) + 3.0));
  params.neighbours = dpselect::BidderNeighbours::add_or_remove_bidder;
  EXPECT_DOUBLE_EQ(dpselect::revenue_shortfall_bound(params, 10.0, 1000, 3.0), 10.0 / 0.5 * (std::log(1000.0) + 3.0));
  expect_invalid_message([&] { dpselect::revenue_shortfall_bound(params, 10.0, 1000, -1.0); }, {"t", "(got -1)"});
}

}  // namespace
