// SPDX-License-Identifier: Apache-2.0
// GridSampler::automatic: which sampler resolve_grid_sampler picks, which choices
// public_grid_sampler may reveal, and what select_price reports about the sampler it ran.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "dpselect/dpselect.hpp"

namespace dpselect::testing {
namespace {

PricingParams automatic_params() {
  PricingParams params;
  params.epsilon = 1.0;
  params.grid_sampler = GridSampler::automatic;
  return params;
}

TEST(GridSamplerChoice, LibraryDefaultStaysPerPrice) {
  EXPECT_EQ(PricingParams{}.grid_sampler, GridSampler::per_price_noise);
}

TEST(GridSamplerChoice, ExplicitSamplersAreKept) {
  PricingParams params = automatic_params();
  for (const GridSampler sampler : {GridSampler::per_price_noise, GridSampler::bid_intervals}) {
    params.grid_sampler = sampler;
    EXPECT_EQ(resolve_grid_sampler(params, 1'000'000'000, 3), sampler);
    EXPECT_EQ(public_grid_sampler(params, 1'000'000'000), sampler);
  }
}

TEST(GridSamplerChoice, BidIntervalsOnlyAboveTheFactorTimesBidsPlusOne) {
  const PricingParams params = automatic_params();
  constexpr std::uint64_t bids = 10;
  const std::uint64_t boundary = kBidIntervalsGridFactor * (bids + 1);
  EXPECT_EQ(resolve_grid_sampler(params, boundary, bids), GridSampler::per_price_noise);
  EXPECT_EQ(resolve_grid_sampler(params, boundary + 1, bids), GridSampler::bid_intervals);
  EXPECT_EQ(resolve_grid_sampler(params, 100, bids), GridSampler::per_price_noise);
}

TEST(GridSamplerChoice, PublicBoundReplacesTheBidCount) {
  PricingParams params = automatic_params();
  params.max_bidders = 1000;
  const std::uint64_t grid = kBidIntervalsGridFactor * (10 + 1) + 1;  // bid intervals for 10 bids
  EXPECT_EQ(resolve_grid_sampler(params, grid, 10), GridSampler::per_price_noise);
  EXPECT_EQ(public_grid_sampler(params, grid), GridSampler::per_price_noise);
  const std::uint64_t large_grid = kBidIntervalsGridFactor * (1000 + 1) + 1;
  EXPECT_EQ(resolve_grid_sampler(params, large_grid, 10), GridSampler::bid_intervals);
  EXPECT_EQ(public_grid_sampler(params, large_grid), GridSampler::bid_intervals);
}

TEST(GridSamplerChoice, ChoiceFromThePrivateBidCountIsNotPublic) {
  const PricingParams params = automatic_params();
  EXPECT_FALSE(public_grid_sampler(params, 1'000'000'000).has_value());
}

TEST(GridSamplerChoice, OtherMechanismsAndTheGpuGetPerPrice) {
  for (const Mechanism mechanism : {Mechanism::permute_and_flip, Mechanism::laplace_noisy_max}) {
    PricingParams params = automatic_params();
    params.mechanism = mechanism;
    EXPECT_EQ(resolve_grid_sampler(params, 1'000'000'000, 3), GridSampler::per_price_noise);
    EXPECT_EQ(public_grid_sampler(params, 1'000'000'000), GridSampler::per_price_noise);
  }
  PricingParams gpu = automatic_params();
  gpu.backend = Backend::Gpu;
  EXPECT_EQ(resolve_grid_sampler(gpu, 1'000'000'000, 3), GridSampler::per_price_noise);
  EXPECT_EQ(public_grid_sampler(gpu, 1'000'000'000), GridSampler::per_price_noise);
}

TEST(GridSamplerChoice, HugeBoundDoesNotOverflow) {
  PricingParams params = automatic_params();
  params.max_bidders = std::numeric_limits<std::uint64_t>::max();
  EXPECT_EQ(resolve_grid_sampler(params, std::uint64_t{1} << 53, 3), GridSampler::per_price_noise);
}

// 10^12 prices and 4 bids: the automatic choice samples by bid intervals (instantly), drawing
// the same bits as asking for bid intervals, and says whether the choice read the bid count.
TEST(GridSamplerChoice, SelectPriceReportsTheSamplerThatRan) {
  const std::vector<double> raw_bids{1.0, 1.0, 1.0, 3.01};
  const Bids bids{std::span<const double>(raw_bids)};
  const PriceGrid grid{0.0, 4.0, 4e-12};
  PricingParams params = automatic_params();
  params.backend = Backend::Cpu;

  Context automatic_context = Context::with_fixed_seed(7);
  const PriceSelection automatic = select_price(automatic_context, bids, grid, params);
  EXPECT_EQ(automatic.sampler, GridSampler::bid_intervals);
  EXPECT_TRUE(automatic.sampler_depends_on_data);

  PricingParams explicit_params = params;
  explicit_params.grid_sampler = GridSampler::bid_intervals;
  Context explicit_context = Context::with_fixed_seed(7);
  const PriceSelection chosen = select_price(explicit_context, bids, grid, explicit_params);
  EXPECT_EQ(chosen.sampler, GridSampler::bid_intervals);
  EXPECT_FALSE(chosen.sampler_depends_on_data);
  EXPECT_EQ(automatic.candidate, chosen.candidate);

  params.max_bidders = 100;
  Context bounded_context = Context::with_fixed_seed(7);
  EXPECT_FALSE(select_price(bounded_context, bids, grid, params).sampler_depends_on_data);

  const PriceGrid small_grid{0.25, 4.0, 0.25};
  Context small_context = Context::with_fixed_seed(7);
  EXPECT_EQ(select_price(small_context, bids, small_grid, params).sampler, GridSampler::per_price_noise);
}

}  // namespace
}  // namespace dpselect::testing
