// SPDX-License-Identifier: Apache-2.0
// Shared by the two pricing samplers (pricing.cpp, pricing_intervals.cpp). Not public API.
#pragma once

#include <cstdint>
#include <span>

#include "dpselect/detail/noise_spec.hpp"
#include "dpselect/detail/release_access.hpp"
#include "dpselect/pricing.hpp"
#include "dpselect/shard_result.hpp"

namespace dpselect::detail {

// The selection parameters of a pricing release whose largest candidate price is
// `largest_price`: sensitivity, monotone scale and the public revenue bound (sources inside).
SelectionParams pricing_selection_params(const PricingParams& params, double largest_price, const Bids& bids);

// The first index of the grid's grid_size prices whose price exceeds `price` (grid_size if none).
std::uint64_t first_grid_index_above(const PriceGrid& grid, std::uint64_t grid_size, double price);

// Per-price noise over the grid prices `range` (grid.validate() done): the shard of one release,
// on the CPU's cores or the GPU (`backend` resolved).
ShardResult score_price_grid(const NoiseSpec& spec, const Bids& bids, const PriceGrid& grid, IndexRange range,
                             Backend backend);

// The bid intervals of a grid (pricing_intervals.cpp): with sorted bids b_0 <= ... <= b_{n-1},
// interval r in [0, n] holds the grid prices p with b_{r-1} < p <= b_r, where exactly n - r bids
// are >= p; its "utility" for the stage-1 Gumbel-max is its log-mass over score_scale.
struct BidIntervals {
  std::span<const double> sorted_bids;
  PriceGrid grid;
  std::uint64_t grid_size;
  double score_scale;

  std::uint64_t intervals() const { return sorted_bids.size() + 1; }
  std::uint64_t bidders_at_or_above(std::uint64_t interval) const { return sorted_bids.size() - interval; }
  std::uint64_t begin(std::uint64_t interval) const;  // its first grid index
  std::uint64_t end(std::uint64_t interval) const;    // one past its last grid index
  double rate(std::uint64_t interval) const;          // the geometric rate of its prices' masses
  // Its log-mass in revenue units (-inf for an empty interval, which is never chosen).
  double log_mass_in_revenue_units(std::uint64_t interval) const;
  static void fill_utilities(const void* self, std::uint64_t first, std::uint64_t count, double* out);
};

// A bid-interval release, checked before any charge: the selection params of stage 1 (the
// interval), the floating-point slack, and the intervals (which point into the bids).
struct BidIntervalPlan {
  SelectionParams selection;
  FloatingPointSlack slack;
  BidIntervals intervals;
};
// Every check of the bid-interval sampler (mechanism, backend, epsilon against the slack);
// throws InvalidArgument before any charge. grid.validate() done, its largest price > 0.
BidIntervalPlan plan_bid_intervals(const Bids& bids, const PriceGrid& grid, const PricingParams& params);
// Stage 1 over the intervals `intervals` (a shard of [0, plan.intervals.intervals())).
ShardResult score_bid_intervals(const BidIntervalPlan& plan, const NoiseSpec& spec, IndexRange intervals);
// Stage 2 once stage 1 chose `chosen.index`: the price inside the interval (a truncated
// geometric on the release's stream), and the report of the whole release.
PriceSelection finish_bid_intervals(const BidIntervalPlan& plan, const NoiseSpec& spec, Selection chosen);

// The exponential mechanism over the prices of `grid` (grid.validate() done, its largest price
// > 0), sampled by bid intervals (GridSampler::bid_intervals).
PriceSelection select_grid_price_by_bid_intervals(Context& context, const Bids& bids, const PriceGrid& grid,
                                                  const PricingParams& params);

}  // namespace dpselect::detail
