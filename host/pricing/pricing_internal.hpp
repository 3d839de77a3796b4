// Shared by the two pricing samplers (pricing.cpp, pricing_intervals.cpp). Not public API.
#pragma once

#include "dpselect/pricing.hpp"

namespace dpselect::detail {

// The selection parameters of a pricing release whose largest candidate price is
// `largest_price`: sensitivity, monotone scale and the public revenue bound (sources inside).
SelectionParams pricing_selection_params(const PricingParams& params, double largest_price, const Bids& bids);

// The first index of the grid's grid_size prices whose price exceeds `price` (grid_size if none).
std::uint64_t first_grid_index_above(const PriceGrid& grid, std::uint64_t grid_size, double price);

// The exponential mechanism over the prices of `grid` (grid.validate() done, its largest price
// > 0), sampled by bid intervals (GridSampler::bid_intervals).
PriceSelection select_grid_price_by_bid_intervals(Context& context, const Bids& bids, const PriceGrid& grid,
                                                  const PricingParams& params);

}  // namespace dpselect::detail
