// SPDX-License-Identifier: Apache-2.0
// A private posted price for a synthetic auction: over a grid of 50,000 prices, then over every
// price in [0, 500].
#include <dpselect/dpselect.hpp>
#include <dpselect/io.hpp>

#include <cmath>
#include <iostream>
#include <vector>

int main() {
  dpselect::Context context;
  // 10,000 bidders whose bids spread over [0, 500], most of them low.
  std::vector<double> raw_bids(10'000);
  for (std::size_t i = 0; i < raw_bids.size(); ++i) {
    const double quantile = static_cast<double>(i) / static_cast<double>(raw_bids.size());
    raw_bids[i] = 500.0 * quantile * quantile;
  }
  // [doc:pricing_grid]
  const dpselect::Bids bids{std::span<const double>(raw_bids)};  // validated (finite, >= 0), sorted once
  dpselect::PricingParams pricing;
  pricing.epsilon = 1.0;
  pricing.neighbours = dpselect::BidderNeighbours::add_or_remove_bidder;
  const dpselect::PriceGrid grid{0.01, 500.0, 0.01};             // 50,000 prices, never stored
  dpselect::PriceSelection pick = dpselect::select_price(context, bids, grid, pricing);
  double plan = dpselect::revenue_shortfall_bound(pricing, 500.0, grid.size(), std::log(20.0));
  // with probability >= 95%: revenue(pick.price) >= OPT - plan   (Dwork & Roth 2014, Thm 3.11)
  // [/doc:pricing_grid]
  std::cout << "grid: price " << pick.price << " (" << pricing.neighbours << ", on " << pick.report.executed_on
            << "), shortfall bound " << plan << '\n';

  // [doc:pricing_range]
  dpselect::PriceSelection pick_in_range = dpselect::select_price(context, bids, dpselect::PriceRange{0.0, 500.0}, pricing);
  // [/doc:pricing_range]
  std::cout << "range: price " << pick_in_range.price << '\n';
  const bool prices_in_bounds = pick.price >= grid.min && pick.price <= grid.max && pick_in_range.price >= 0.0 &&
                                pick_in_range.price <= 500.0;
  return prices_in_bounds ? 0 : 1;
}
