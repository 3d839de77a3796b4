// SPDX-License-Identifier: Apache-2.0
/// @file
/// Private posted-price (digital-goods) auction pricing with the exponential mechanism.
///
/// Utility of a price p: `revenue(p) = p * #{i : b_i >= p}`. Sensitivity Delta = the largest
/// candidate price (one bidder changes the revenue at p by at most p). Between neighbours that
/// add or remove one bidder the revenue can only move one way (it is monotone), so the EM runs at
/// scale eps/Delta; between neighbours that change one bid it runs at eps/(2 Delta) (Dwork & Roth
/// Thm 3.10 and its monotone remark; Dwork & Roth 2014, Example 3.5 is the pumpkin auction).
///
/// Only the chosen price is private output (with PricingParams::max_bidders its report is public
/// too; without it the report's slack reveals the best revenue). The revenue it earns and the
/// optimum are functions of the bids: nonprivate_optimum() computes them for diagnostics and must
/// not be published as part of a private release.
///
/// Every release scores revenues as they are (utility reference 0): revenues start at 0, at a price
/// no bidder takes.
///
/// Example:
/// @code{.cpp}
/// dpselect::Context ctx;
/// dpselect::Bids bids(std::span<const double>(raw_bids));   // validated, sorted once
/// dpselect::PricingParams p{.epsilon = 1.0};
/// auto pick = dpselect::select_price(ctx, bids, dpselect::PriceGrid{0.01, 100.0, 0.01}, p);
/// // pick.price, pick.report ...
/// @endcode
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "dpselect/chunked_values.hpp"
#include "dpselect/context.hpp"
#include "dpselect/detail/host_device.hpp"
#include "dpselect/types.hpp"

namespace dpselect {

/// Which auctions are neighbouring datasets: this decides whether revenue is monotone, hence the
/// noise scale (Dwork & Roth 2014, Thm 3.10 and its monotone remark).
enum class BidderNeighbours {
  add_or_remove_bidder,  ///< revenue is monotone: EM scale eps/Delta
  change_one_bid,        ///< not monotone: EM scale eps/(2 Delta)
};

/// The name of a neighbouring relation, as the command prints it.
/// @param neighbours Any value.
/// @return "add-remove" for add_or_remove_bidder, "change-bid" otherwise; a view of a static string.
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

/// The name of a sampler, as the command prints it.
/// @param sampler Any value.
/// @return "per-price", "bid-intervals" or "automatic" ("unknown" for a value outside the
///         enumeration); a view of a static string.
std::string_view to_string(GridSampler sampler);  // "per-price", "bid-intervals", "automatic"

/// GridSampler::automatic picks bid intervals when the grid has more than this many prices per
/// bid interval: grid size > kBidIntervalsGridFactor * (bidders + 1). Per price the fused pass
/// costs about 20 ns of one core, per interval the bid-interval sampler about 60 ns (bench/results,
/// 2026-11-22-cpu-2core-pricing): 64 leaves a wide margin, and the choice never depends on the
/// machine (so a fixed seed gives the same price everywhere).
inline constexpr std::uint64_t kBidIntervalsGridFactor = 64;

/// The parameters of one pricing release. The sensitivity is not a parameter: it is the largest
/// candidate price (public, like every price).
struct PricingParams {
  /// Privacy loss of the release; finite and > 0 (the default 0 is invalid: set it).
  double epsilon = 0.0;
  /// Which auctions are neighbours (default add_or_remove_bidder: monotone revenue, scale eps/Delta).
  BidderNeighbours neighbours = BidderNeighbours::add_or_remove_bidder;
  /// Optional public upper bound on the number of bidders (0: none). With it the floating-point
  /// slack is computed from largest price * max_bidders and does not depend on the bids; without
  /// it the slack reveals the best revenue (report.slack.depends_on_data), so do not publish it.
  /// More bids than max_bidders is an error.
  std::uint64_t max_bidders = 0;
  /// The mechanism (default the exponential mechanism). Permute-and-flip and Laplace report-noisy-max
  /// are allowed with per-price noise only: a PriceRange and GridSampler::bid_intervals need the
  /// exponential mechanism (InvalidArgument otherwise).
  Mechanism mechanism = Mechanism::exponential;
  /// Where per-price noise runs (default Auto: the GPU when one is usable). Bid intervals always run
  /// on the CPU: Backend::Gpu with a PriceRange or GridSampler::bid_intervals is an InvalidArgument.
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
/// @param params The release's parameters (grid_sampler, mechanism, backend and max_bidders are read;
///        nothing is validated).
/// @param grid_size The number of prices of the grid (PriceGrid::size).
/// @param bid_count The number of bids (Bids::size): private under add/remove-bidder neighbours.
/// @return The sampler select_price runs.
/// @par Privacy
/// With automatic and no max_bidders the answer depends on the private number of bids: do not
/// publish it (public_grid_sampler says when it is public).
GridSampler resolve_grid_sampler(const PricingParams& params, std::uint64_t grid_size, std::uint64_t bid_count);

/// The sampler resolve_grid_sampler picks when that follows from public information alone (the
/// parameters and the grid size), or nullopt when automatic must compare the grid with the number
/// of bids. In add/remove-bidder neighbouring that number is private: the released price has the
/// same distribution whichever sampler runs, but saying which one ran (or refusing a run because
/// of it) would tell something about it. Set max_bidders to make the choice public.
/// @param params The release's parameters (nothing is validated).
/// @param grid_size The number of prices of the grid (PriceGrid::size).
/// @return The sampler, or std::nullopt when the choice reads the number of bids.
std::optional<GridSampler> public_grid_sampler(const PricingParams& params, std::uint64_t grid_size);

/// The bids of one auction, validated (finite, >= 0; InvalidArgument naming bids[i] otherwise;
/// at least one bid) and sorted once.
///
/// The bids are the private data: everything read from a Bids (its size, its sorted bids, counts and
/// revenues) is NOT PRIVATE; only a release from select_price is. Large auctions (2^20 to 2^31 - 1
/// bids) are sorted on the GPU when one is usable, else on all cores; the sorted bids are the same
/// either way, and the sort is not part of any release.
class Bids {
 public:
  /// Validates and sorts a copy of the bids.
  /// @param bids The bids: at least one, each finite and >= 0 (-0.0 is stored as +0.0).
  /// @throws InvalidArgument for no bids, or naming `bids[i]` and its value for the first bid that is
  ///         NaN, infinite or negative.
  explicit Bids(std::span<const double> bids);
  /// Bids read a chunk at a time (chunked_values.hpp; T is double or float), never held twice: the
  /// sorted copy is all the memory they take (8 bytes a bid). The same as from the span of the same
  /// bids.
  /// @param bids The bids' count (at least 1), reader and chunk size; each bid finite and >= 0.
  /// @throws InvalidArgument as for a span (naming `bids[i]` by its index in the whole input), and
  ///         for an empty reader or a chunk size of 0; whatever `bids.read` throws.
  template <class T>
  explicit Bids(const ChunkedValues<T>& bids);
  /// The number of bids. NOT PRIVATE under add/remove-bidder neighbours.
  /// @return The number of bids, >= 1.
  std::size_t size() const { return sorted_.size(); }
  /// The bids in ascending order. NOT PRIVATE.
  /// @return A view of the sorted bids, valid as long as this object.
  std::span<const double> sorted() const { return sorted_; }
  /// `#{i : b_i >= price}`
  /// @param price Any price.
  /// @return The number of bids at or above `price`. NOT PRIVATE.
  std::uint64_t count_at_least(double price) const;
  /// price * count_at_least(price), rounded once (the utility the mechanisms use).
  /// @param price Any price.
  /// @return The revenue at `price`. NOT PRIVATE: for diagnostics, never part of a release.
  double revenue(double price) const;

 private:
  std::vector<double> sorted_;
};

/// The prices min + i * step for i = 0, 1, ..., size() - 1 (the last one <= max), never
/// materialized. min >= 0, max > min, step > 0 and large enough that consecutive prices differ
/// (step >= max * 2^-50), all finite; at most 2^53 prices.
struct PriceGrid {
  double min = 0.0;   ///< The first price; finite and >= 0.
  double max = 0.0;   ///< The upper bound: the last price is the largest grid price <= max; finite, > min.
  double step = 0.0;  ///< The distance between consecutive prices; finite, > 0 and >= max * 2^-50.

  /// Throws InvalidArgument naming the field and value.
  ///
  /// Checks the constraints above and that the grid has at most 2^53 prices (naming "grid min",
  /// "grid max" or "grid step").
  /// @throws InvalidArgument for a grid that breaks them.
  void validate() const;
  /// The number of prices of a valid grid: `floor((max - min) / step) + 1`, corrected for rounding so
  /// that price(size() - 1) <= max < price(size()). Call validate() first: the value is meaningless
  /// for an invalid grid.
  /// @return The number of prices, in [1, 2^53].
  std::uint64_t size() const;
  /// fma(i, step, min), rounded once: the same bits on the CPU and the GPU.
  /// @param i The price's index, < size().
  /// @return The i-th price.
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
  double min = 0.0;  ///< The lowest price; finite and >= 0.
  double max = 0.0;  ///< The highest price; finite, > min and <= 2^960.

  /// Throws InvalidArgument naming the field and value.
  ///
  /// Checks the constraints above, and that the range is wide enough for the grid's step to be a
  /// positive double (naming "range min" or "range max").
  /// @throws InvalidArgument for a range that breaks them.
  void validate() const;
  /// The grid the range is sampled over: min + i * step for step = max((max - min) 2^-40, max 2^-50),
  /// 2^40 + 1 prices (fewer where the step was raised).
  /// @return The grid.
  /// @throws InvalidArgument for an invalid range (validate()).
  PriceGrid grid() const;
};

/// The result of one pricing release.
struct PriceSelection {
  /// The chosen price: the release's private output (a price of the list, or a point of the grid).
  double price = 0.0;
  /// Index of the price in the list or grid it was chosen from.
  std::uint64_t candidate = 0;
  /// The report of the release: sensitivity is the largest price, candidates the number of prices
  /// (the grid size for a grid or range). Its slack is public only with max_bidders
  /// (slack.depends_on_data false); executed_on is public only when sampler_depends_on_data is false.
  SelectionReport report;
  /// The sampler that ran (per_price_noise for a list of prices, bid_intervals for a range).
  GridSampler sampler = GridSampler::per_price_noise;
  /// True when `sampler` was chosen by comparing the grid with the (private) number of bids
  /// (public_grid_sampler gives nullopt): do not publish it then, nor report.executed_on (bid
  /// intervals always run on the CPU, per-price noise on the GPU when one is usable).
  bool sampler_depends_on_data = false;
};

/// One private release over an explicit list of candidate prices (finite, >= 0, not all 0).
///
/// Scores every price with per-price noise (params.grid_sampler is not used), on the GPU when
/// params.backend resolves to it.
/// @param context The context whose key and next stream the release uses (and whose accountant it
///        charges).
/// @param bids The auction's bids (the private data).
/// @param prices The candidate prices: not empty, each finite and >= 0, the largest > 0 and <= 2^960.
///        Public.
/// @param params The release's parameters (PricingParams).
/// @return The chosen price, its index in `prices`, and the report (sampler per_price_noise).
/// @throws InvalidArgument before the charge for an empty list, a bad price (naming `prices[i]`), a
///         largest price of 0 or beyond 2^960, more bids than max_bidders, bad params, or (with
///         max_bidders) a slack that would reach epsilon; after it, without max_bidders, for a slack
///         that would reach epsilon.
/// @throws BackendUnavailable for Backend::Gpu without a usable GPU, before the charge.
/// @throws BudgetExceeded when the context's accountant refuses the release; nothing is drawn.
/// @throws UsageError on a moved-from context.
/// @throws CudaError if a CUDA call of the GPU pass fails.
/// @par Privacy
/// The price is epsilon-DP under exact arithmetic: the mechanism over the prices with utility revenue
/// and sensitivity the largest price, at the monotone scale for add/remove-bidder neighbours (Dwork &
/// Roth 2014, Thm 3.10 and its monotone remark, for the exponential mechanism; McKenna & Sheldon 2020;
/// Dwork & Roth Claim 3.9), and (epsilon + report.slack.epsilon, report.slack.delta)-DP as computed.
/// The accountant is charged one release of `release_kind(params.mechanism)` at params.epsilon before
/// the stream is drawn.
PriceSelection select_price(Context& context, const Bids& bids, std::span<const double> prices,
                            const PricingParams& params);
/// One private release over a grid of prices, computed on the fly (up to 2^53 of them).
///
/// The sampler is resolve_grid_sampler(params, grid.size(), bids.size()): per-price noise (every
/// mechanism, on the GPU when params.backend resolves to it) or bid intervals (the exponential
/// mechanism on the CPU in O(bids) work). Both draw from the same distribution.
/// @param context The context whose key and next stream the release uses (and whose accountant it
///        charges).
/// @param bids The auction's bids (the private data).
/// @param grid The candidate prices (PriceGrid): valid, with a largest price > 0 and <= 2^960.
/// @param params The release's parameters (PricingParams).
/// @return The chosen price, its grid index, the report and the sampler that ran.
/// @throws InvalidArgument before the charge for an invalid grid, a largest price of 0 or beyond
///         2^960, more bids than max_bidders, bad params, a mechanism other than exponential or
///         Backend::Gpu with GridSampler::bid_intervals, or a slack that would reach epsilon (checked
///         before the charge with max_bidders or by bid intervals; after it, from the data, by
///         per-price noise without max_bidders).
/// @throws BackendUnavailable for Backend::Gpu without a usable GPU (per-price noise), before the
///         charge.
/// @throws BudgetExceeded when the context's accountant refuses the release; nothing is drawn.
/// @throws UsageError on a moved-from context.
/// @throws CudaError if a CUDA call of the GPU pass fails.
/// @throws std::runtime_error if every attempt of the bid-interval sampler's price draw is rejected
///         (probability <= 2^-128), after the charge; nothing is released.
/// @par Privacy
/// As for a list of prices: epsilon-DP under exact arithmetic over the grid's prices (Dwork & Roth
/// 2014, Thm 3.10 and its monotone remark; McKenna & Sheldon 2020; Dwork & Roth Claim 3.9), and
/// (epsilon + report.slack.epsilon, report.slack.delta)-DP as computed; one release of
/// `release_kind(params.mechanism)` at params.epsilon charged before the stream is drawn. Without
/// max_bidders, PriceSelection::sampler_depends_on_data says whether the sampler (and
/// report.executed_on) may be published.
PriceSelection select_price(Context& context, const Bids& bids, const PriceGrid& grid,
                            const PricingParams& params);

/// One private release over the continuous range (exponential mechanism only: InvalidArgument
/// for another mechanism; runs on the CPU: InvalidArgument for Backend::Gpu).
///
/// The exponential mechanism over range.grid(), sampled by bid intervals whatever
/// params.grid_sampler says.
/// @param context The context whose key and next stream the release uses (and whose accountant it
///        charges).
/// @param bids The auction's bids (the private data).
/// @param range The public price range (PriceRange).
/// @param params The release's parameters (PricingParams): mechanism exponential, backend Auto or Cpu.
/// @return The chosen price (a point of range.grid()), its grid index, the report (candidates: the
///         grid size) and the sampler bid_intervals.
/// @throws InvalidArgument before the charge for an invalid range, more bids than max_bidders, bad
///         params, another mechanism, Backend::Gpu, or a slack that would reach epsilon.
/// @throws BudgetExceeded when the context's accountant refuses the release; nothing is drawn.
/// @throws UsageError on a moved-from context.
/// @throws std::runtime_error if every attempt of the price draw inside the chosen interval is
///         rejected (probability <= 2^-128), after the charge; nothing is released.
/// @par Privacy
/// The price is epsilon-DP under exact arithmetic (the exponential mechanism over the grid with
/// sensitivity the largest grid price, at most range.max: Dwork & Roth 2014, Thm 3.10 and its
/// monotone remark), and (epsilon +
/// report.slack.epsilon, report.slack.delta)-DP as computed (the slack is derived for the two-stage
/// sampler and checked before the charge). The accountant is charged one exponential-mechanism
/// release at params.epsilon before the stream is drawn.
PriceSelection select_price(Context& context, const Bids& bids, const PriceRange& range,
                            const PricingParams& params);

/// Dwork & Roth 2014, Thm 3.11 for these parameters: with probability >= 1 - e^-t the chosen price earns
/// at least OPT - shortfall, where shortfall = (2 Delta/eps)(ln |R| + t) (Delta/eps for
/// add/remove neighbours), |R| = `candidates`, Delta = `largest_price` (|R_OPT| >= 1 assumed).
///
/// Needs no data: it may be computed and published before the release.
/// @param params The release's parameters (epsilon, finite and > 0, and neighbours are read).
/// @param largest_price The largest candidate price (the sensitivity); finite and > 0.
/// @param candidates The number of candidate prices |R|; >= 1.
/// @param t The confidence parameter; finite and >= 0 (t = ln(1/beta) for probability 1 - beta).
/// @return The shortfall, in units of revenue.
/// @throws InvalidArgument naming the first bad argument.
double revenue_shortfall_bound(const PricingParams& params, double largest_price,
                               std::uint64_t candidates, double t);

/// NOT PRIVATE: the best price of the grid or list and its revenue, for diagnostics only.
struct NonprivateOptimum {
  double price = 0.0;           ///< The best price (ties: the one with the smallest candidate index).
  double revenue = 0.0;         ///< Its revenue (Bids::revenue).
  std::uint64_t candidate = 0;  ///< Its index in the grid or list.
};
/// NOT PRIVATE: the best price of a grid and its revenue, for diagnostics only.
/// @param bids The auction's bids.
/// @param grid The candidate prices (PriceGrid).
/// @return The optimum over the grid (on all cores).
/// @throws InvalidArgument for an invalid grid.
/// @par Privacy
/// NOT PRIVATE: a function of the bids; never publish it as part of a private release.
NonprivateOptimum nonprivate_optimum(const Bids& bids, const PriceGrid& grid);
/// NOT PRIVATE: the best price of a list and its revenue, for diagnostics only.
/// @param bids The auction's bids.
/// @param prices The candidate prices: not empty, each finite and >= 0.
/// @return The optimum over the list.
/// @throws InvalidArgument for an empty list or a bad price (naming `prices[i]`).
/// @par Privacy
/// NOT PRIVATE: a function of the bids; never publish it as part of a private release.
NonprivateOptimum nonprivate_optimum(const Bids& bids, std::span<const double> prices);
/// Over the continuum: the best price is a bid inside the range or the range's max (revenue
/// grows with the price between bids). `candidate` is the index in range.grid() of the largest
/// grid price <= that price.
/// @param bids The auction's bids.
/// @param range The price range (PriceRange).
/// @return The optimum over the continuum; its price need not be a grid point.
/// @throws InvalidArgument for an invalid range.
/// @par Privacy
/// NOT PRIVATE: a function of the bids; never publish it as part of a private release.
NonprivateOptimum nonprivate_optimum(const Bids& bids, const PriceRange& range);

}  // namespace dpselect
