// SPDX-License-Identifier: Apache-2.0
/// @file
/// Private posted-price (digital-goods) auction pricing with the exponential mechanism.
///
/// Utility of a price p: revenue(p) = p * #{i : b_i >= p}. Sensitivity Delta = the largest
/// candidate price (one bidder changes the revenue at p by at most p). Between neighbours that
/// add or remove one bidder the revenue can only move one way (it is monotone), so the EM runs at
/// scale eps/Delta; between neighbours that change one bid it runs at eps/(2 Delta) (Dwork & Roth
/// Thm 3.10 and its monotone remark; Dwork & Roth 2014, Example 3.5 is the pumpkin auction).
///
/// Only the chosen price is private output (with PricingParams::max_bidders its report is public
/// too; without it the report's slack reveals the best revenue). The revenue it earns and the optimum are functions of
/// the bids: nonprivate_optimum() computes them for diagnostics and must not be published as part
/// of a private release.
///
/// Example:
///   dpselect::Context ctx;
///   dpselect::Bids bids(std::span<const double>(raw_bids));   // validated, sorted once
///   dpselect::PricingParams p{.epsilon = 1.0};
///   auto pick = dpselect::select_price(ctx, bids, dpselect::PriceGrid{0.01, 100.0, 0.01}, p);
///   // pick.price, pick.report ...
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "dpselect/context.hpp"
#include "dpselect/detail/host_device.hpp"
#include "dpselect/types.hpp"

namespace dpselect {

enum class BidderNeighbours {
  add_or_remove_bidder,  ///< revenue is monotone: EM scale eps/Delta
  change_one_bid,        ///< not monotone: EM scale eps/(2 Delta)
};

std::string_view to_string(BidderNeighbours neighbours);

/// How a grid (or a range) of prices is sampled. Both are the exact exponential mechanism over
/// the grid's prices; they draw different random bits, so the same key gives different prices.
enum class GridSampler {
  /// Per-price noise, the arg-max of the fused pass (selection engine): every mechanism, CPU or
  /// GPU, O(grid size) work.
  per_price_noise,
  /// Revenue is linear in the price between consecutive sorted bids, so the EM's mass of all
  /// grid prices between two bids is a geometric sum in closed form: pick that interval by its
  /// log-mass (Gumbel-max over n + 1 intervals), then the price inside it (a truncated
  /// geometric). Exponential mechanism only, CPU, O(n) work whatever the grid size.
  bid_intervals,
  /// bid_intervals where it is much cheaper and allowed, per_price_noise otherwise (see
  /// resolve_grid_sampler). The released price has the same distribution either way; only the
  /// work (and, with a fixed seed, which random bits are drawn) differs. Without max_bidders
  /// the choice reads the number of bids; one thing still follows it: a release refused because
  /// epsilon is too small for the data's floating-point slack is refused before its charge by
  /// bid intervals and after it by per-price noise, so with a budget in charge_to the spent
  /// budget of such a refusal tells which ran. Give max_bidders (or choose the sampler) there.
  automatic,
};

std::string_view to_string(GridSampler sampler);  // "per-price", "bid-intervals", "automatic"

/// GridSampler::automatic picks bid intervals when the grid has more than this many prices per
/// bid interval: grid size > kBidIntervalsGridFactor * (bidders + 1). Per price the fused pass
/// costs about 20 ns of one core, per interval the bid-interval sampler about 60 ns (bench/results,
/// 2026-11-22-cpu-2core-pricing): 64 leaves a wide margin, and the choice never depends on the
/// machine (so a fixed seed gives the same price everywhere).
inline constexpr std::uint64_t kBidIntervalsGridFactor = 64;

struct PricingParams {
  double epsilon = 0.0;
  BidderNeighbours neighbours = BidderNeighbours::add_or_remove_bidder;
  /// Optional public upper bound on the number of bidders (0: none). With it the floating-point
  /// slack is computed from largest price * max_bidders and does not depend on the bids; without
  /// it the slack reveals the best revenue (report.slack.depends_on_data), so do not publish it.
  /// More bids than max_bidders is an error.
  std::uint64_t max_bidders = 0;
  Mechanism mechanism = Mechanism::exponential;
  Backend backend = Backend::Auto;
  /// Used for PriceGrid candidates; a PriceRange is always sampled by bid intervals. The default
  /// stays per_price_noise so that existing callers draw the same prices from a fixed seed;
  /// `dpselect price` passes automatic.
  GridSampler grid_sampler = GridSampler::per_price_noise;
};

/// The sampler select_price runs over a grid of `grid_size` prices and `bid_count` bids.
/// per_price_noise and bid_intervals are returned as asked. automatic gives bid_intervals when the
/// mechanism is exponential, the backend is not Backend::Gpu and
///   grid_size > kBidIntervalsGridFactor * (bidders + 1),
/// where bidders is params.max_bidders when set (a public bound) and bid_count otherwise;
/// per_price_noise in every other case.
GridSampler resolve_grid_sampler(const PricingParams& params, std::uint64_t grid_size, std::uint64_t bid_count);

/// The sampler resolve_grid_sampler picks when that follows from public information alone (the
/// parameters and the grid size), or nullopt when automatic must compare the grid with the number
/// of bids. In add/remove-bidder neighbouring that number is private: the released price has the
/// same distribution whichever sampler runs, but saying which one ran (or refusing a run because
/// of it) would tell something about it. Set max_bidders to make the choice public.
std::optional<GridSampler> public_grid_sampler(const PricingParams& params, std::uint64_t grid_size);

/// The bids of one auction, validated (finite, >= 0; InvalidArgument naming bids[i] otherwise;
/// at least one bid) and sorted once.
class Bids {
 public:
  explicit Bids(std::span<const double> bids);
  std::size_t size() const { return sorted_.size(); }
  std::span<const double> sorted() const { return sorted_; }
  /// #{i : b_i >= price}
  std::uint64_t count_at_least(double price) const;
  /// price * count_at_least(price), rounded once (the utility the mechanisms use).
  double revenue(double price) const;

 private:
  std::vector<double> sorted_;
};

/// The prices min + i * step for i = 0, 1, ..., size() - 1 (the last one <= max), never
/// materialized. min >= 0, max > min, step > 0 and large enough that consecutive prices differ
/// (step >= max * 2^-50), all finite; at most 2^53 prices.
struct PriceGrid {
  double min = 0.0;
  double max = 0.0;
  double step = 0.0;

  /// Throws InvalidArgument naming the field and value.
  void validate() const;
  std::uint64_t size() const;
  /// fma(i, step, min), rounded once: the same bits on the CPU and the GPU.
  DPSELECT_HD DPSELECT_FORCEINLINE double price(std::uint64_t i) const {
    return detail::fma_rn(detail::u64_to_double_rn(i), step, min);
  }
};

/// The continuous price range [min, max]: min >= 0, max > min, both finite, max <= 2^960.
/// It is sampled as the exponential mechanism over grid(), the 2^40 + 1 prices
/// min + i (max - min) 2^-40 (the step is raised to max * 2^-50 where it would fall below):
/// a relative resolution far below any currency unit, with output that is always a public grid
/// point, never a double whose low bits depend on the bids (Mironov 2012). Revenue is linear
/// between bids, so the sampler integrates the EM density over each bid interval in closed form
/// (GridSampler::bid_intervals) and never walks the grid; its distribution differs from that
/// of the continuous EM only through the grid's resolution.
struct PriceRange {
  double min = 0.0;
  double max = 0.0;

  /// Throws InvalidArgument naming the field and value.
  void validate() const;
  PriceGrid grid() const;
};

struct PriceSelection {
  double price = 0.0;
  /// Index of the price in the list or grid it was chosen from.
  std::uint64_t candidate = 0;
  SelectionReport report;
  /// The sampler that ran (per_price_noise for a list of prices, bid_intervals for a range).
  GridSampler sampler = GridSampler::per_price_noise;
  /// True when `sampler` was chosen by comparing the grid with the (private) number of bids
  /// (public_grid_sampler gives nullopt): do not publish it then, nor report.executed_on (bid
  /// intervals always run on the CPU, per-price noise on the GPU when one is usable).
  bool sampler_depends_on_data = false;
};

/// One private release over an explicit list of candidate prices (finite, >= 0, not all 0).
PriceSelection select_price(Context& context, const Bids& bids, std::span<const double> prices,
                            const PricingParams& params);
/// One private release over a grid of prices, computed on the fly (up to 2^53 of them).
PriceSelection select_price(Context& context, const Bids& bids, const PriceGrid& grid,
                            const PricingParams& params);

/// One private release over the continuous range (exponential mechanism only: InvalidArgument
/// for another mechanism; runs on the CPU: InvalidArgument for Backend::Gpu).
PriceSelection select_price(Context& context, const Bids& bids, const PriceRange& range,
                            const PricingParams& params);

/// Dwork & Roth 2014, Thm 3.11 for these parameters: with probability >= 1 - e^-t the chosen price earns
/// at least OPT - shortfall, where shortfall = (2 Delta/eps)(ln |R| + t) (Delta/eps for
/// add/remove neighbours), |R| = `candidates`, Delta = `largest_price` (|R_OPT| >= 1 assumed).
double revenue_shortfall_bound(const PricingParams& params, double largest_price,
                               std::uint64_t candidates, double t);

/// NOT PRIVATE: the best price of the grid or list and its revenue, for diagnostics only.
struct NonprivateOptimum {
  double price = 0.0;
  double revenue = 0.0;
  std::uint64_t candidate = 0;
};
NonprivateOptimum nonprivate_optimum(const Bids& bids, const PriceGrid& grid);
NonprivateOptimum nonprivate_optimum(const Bids& bids, std::span<const double> prices);
/// Over the continuum: the best price is a bid inside the range or the range's max (revenue
/// grows with the price between bids). `candidate` is the index in range.grid() of the largest
/// grid price <= that price.
NonprivateOptimum nonprivate_optimum(const Bids& bids, const PriceRange& range);

}  // namespace dpselect
