// SPDX-License-Identifier: Apache-2.0
// The exponential mechanism over a price grid, sampled by bid intervals in O(n) work
// (GridSampler::bid_intervals, PriceRange). Floating-point slack: floating_point_slack.cpp.
//
// With sorted bids b_0 <= ... <= b_{n-1}, interval r in [0, n] holds the grid prices p with
// b_{r-1} < p <= b_r (b_{-1} = -inf, b_n = +inf): exactly n - r bids are >= each of them, so
// revenue is (n - r) p there. Equal bids give empty intervals, excluded from stage 1.
#include <cmath>
#include <limits>
#include <stdexcept>

#include "selection/cpu_backend.hpp"
#include "dpselect/detail/release_access.hpp"
#include "dpselect/errors.hpp"
#include "selection/floating_point_slack.hpp"
#include "noise/truncated_geometric.hpp"
#include "pricing/pricing_internal.hpp"
#include "validation/validation.hpp"

namespace dpselect::detail {

std::uint64_t first_grid_index_above(const PriceGrid& grid, std::uint64_t grid_size, double price) {
  if (price < grid.min) return 0;
  const double estimate = std::floor((price - grid.min) / grid.step);
  std::uint64_t index = estimate >= static_cast<double>(grid_size) ? grid_size : static_cast<std::uint64_t>(estimate);
  while (index > 0 && grid.price(index - 1) > price) --index;  // the division's rounding: a step or two
  while (index < grid_size && grid.price(index) <= price) ++index;
  return index;
}

std::uint64_t truncated_geometric(const RandomKey& key, std::uint64_t stream, double rate, std::uint64_t length,
                                  std::uint64_t draw) {
  if (draw >= kMaxGeometricDraws) throw std::logic_error("dpselect: truncated_geometric draw out of range");
  int top_level = 0;  // the largest h with 2^{16 h} < length
  while (top_level + 1 < kGeometricDigitsPerAttempt && (length - 1) >> (16 * (top_level + 1)) != 0) ++top_level;
  const std::uint64_t top_values = ((length - 1) >> (16 * top_level)) + 1;
  for (int attempt = 0; attempt < kMaxGeometricAttempts; ++attempt) {
    std::uint64_t t = 0;
    for (int level = 0; level <= top_level; ++level) {
      const std::uint64_t position =
          kGeometricPositionOffset + draw * kPositionsPerGeometricDraw +
          static_cast<std::uint64_t>(attempt * kGeometricDigitsPerAttempt + level);
      const noise::SplitUniform u = noise::split_uniform(random_block(key, stream, position));
      const std::uint64_t values = level == top_level ? top_values : kMaxDigitValues;
      // rate * 2^{16 level} is exact (a power-of-two scaling) until it overflows to +inf,
      // which digit_from_uniform treats as a certain 0.
      const std::uint64_t digit = digit_from_uniform(u, std::ldexp(rate, 16 * level), values);
      t += digit << (16 * level);
    }
    if (t < length) return t;
  }
  throw std::runtime_error("dpselect: the within-interval price sampler rejected " +
                           std::to_string(kMaxGeometricAttempts) +
                           " draws in a row (probability <= 2^-128); nothing was released");
}

namespace {

// ln sum_{t < length} e^{-rate t}, in [0, ln length].
double log_geometric_sum(double rate, std::uint64_t length) {
  if (length == 1) return 0.0;
  if (rate < 0x1p-1000) return std::log(static_cast<double>(length));  // e^{-rate t} = 1 to 2^-947
  return std::log(-std::expm1(-rate * static_cast<double>(length))) - std::log(-std::expm1(-rate));
}

}  // namespace

std::uint64_t BidIntervals::begin(std::uint64_t interval) const {
  return interval == 0 ? 0 : first_grid_index_above(grid, grid_size, sorted_bids[interval - 1]);
}

std::uint64_t BidIntervals::end(std::uint64_t interval) const {
  return interval == sorted_bids.size() ? grid_size : first_grid_index_above(grid, grid_size, sorted_bids[interval]);
}

double BidIntervals::rate(std::uint64_t interval) const {
  return score_scale * static_cast<double>(bidders_at_or_above(interval)) * grid.step;
}

double BidIntervals::log_mass_in_revenue_units(std::uint64_t interval) const {
  const std::uint64_t first = begin(interval);
  const std::uint64_t last = end(interval);
  if (last <= first) return -std::numeric_limits<double>::infinity();
  const double top_revenue = static_cast<double>(bidders_at_or_above(interval)) * grid.price(last - 1);
  return top_revenue + log_geometric_sum(rate(interval), last - first) / score_scale;
}

void BidIntervals::fill_utilities(const void* self, std::uint64_t first, std::uint64_t count, double* out) {
  const auto& intervals = *static_cast<const BidIntervals*>(self);
  for (std::uint64_t k = 0; k < count; ++k) out[k] = intervals.log_mass_in_revenue_units(first + k);
}

BidIntervalPlan plan_bid_intervals(const Bids& bids, const PriceGrid& grid, const PricingParams& params) {
  if (params.mechanism != Mechanism::exponential) {
    throw InvalidArgument("dpselect: mechanism must be exponential for a price range or the bid-interval "
                          "sampler (got " + std::string(to_string(params.mechanism)) + ")");
  }
  if (params.backend == Backend::Gpu) {
    throw InvalidArgument("dpselect: backend must be Cpu or Auto for a price range or the bid-interval "
                          "sampler, which runs on the CPU in O(bids) work (got Gpu)");
  }
  const std::uint64_t grid_size = grid.size();
  const double largest_price = grid.price(grid_size - 1);
  SelectionParams selection = pricing_selection_params(params, largest_price, bids);
  selection.backend = Backend::Cpu;
  validate_params(selection);
  const double score_scale = detail::score_scale(selection);
  const double revenue_bound = selection.utility_bound > 0.0
                                   ? selection.utility_bound
                                   : largest_price * static_cast<double>(bids.size());
  // The interval count is n + 1: from the public bound when there is one, so that no part of a
  // public report depends on the number of bids.
  const std::uint64_t interval_bound = (params.max_bidders != 0 ? params.max_bidders : bids.size()) + 1;
  const FloatingPointSlack slack =
      bid_interval_slack(selection.epsilon, score_scale, revenue_bound, grid.step, grid_size, interval_bound);
  if (!(slack.epsilon < selection.epsilon)) {
    // Not quoted: without max_bidders the slack is computed from the number of bids.
    detail::throw_epsilon_too_small_for_slack();
  }
  // An interval's utility adds at most ln(grid size) / score_scale to its top revenue.
  if (selection.utility_bound > 0.0) {
    selection.utility_bound += std::log(static_cast<double>(grid_size)) / score_scale * (1.0 + 0x1p-40);
  }
  return BidIntervalPlan{selection, slack, BidIntervals{bids.sorted(), grid, grid_size, score_scale}};
}

ShardResult score_bid_intervals(const BidIntervalPlan& plan, const NoiseSpec& spec, IndexRange intervals) {
  return cpu_evaluate_generated(spec, intervals, &BidIntervals::fill_utilities, &plan.intervals);
}

PriceSelection finish_bid_intervals(const BidIntervalPlan& plan, const NoiseSpec& spec, Selection chosen) {
  const BidIntervals& intervals = plan.intervals;
  const std::uint64_t interval = chosen.index;
  const std::uint64_t last = intervals.end(interval);
  const std::uint64_t below_top =
      truncated_geometric(spec.key, spec.stream, intervals.rate(interval), last - intervals.begin(interval));
  const std::uint64_t index = last - 1 - below_top;
  chosen.report.candidates = intervals.grid_size;
  chosen.report.slack.epsilon = plan.slack.epsilon;
  chosen.report.slack.delta = plan.slack.delta;
  return PriceSelection{intervals.grid.price(index), index, chosen.report, GridSampler::bid_intervals, false};
}

PriceSelection select_grid_price_by_bid_intervals(Context& context, const Bids& bids, const PriceGrid& grid,
                                                  const PricingParams& params) {
  const BidIntervalPlan plan = plan_bid_intervals(bids, grid, params);
  const IndexRange range{0, plan.intervals.intervals()};
  Release release = context.begin_release(plan.selection);
  ReleaseAccess::claim(release, range);
  const NoiseSpec spec = ReleaseAccess::noise_spec(release);
  const ShardResult result = score_bid_intervals(plan, spec, range);
  return finish_bid_intervals(plan, spec, release.finish(ReleaseAccess::stamped(release, range, result)));
}

}  // namespace dpselect::detail
