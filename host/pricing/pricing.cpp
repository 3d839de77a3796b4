// SPDX-License-Identifier: Apache-2.0
// Posted-price auction pricing on top of the selection engine (see pricing.hpp).
#include "dpselect/pricing.hpp"

#include <algorithm>
#include <functional>
#include <parallel/algorithm>
#include <cmath>
#include <string>

#include "selection/cpu_backend.hpp"
#include "dpselect/detail/release_access.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/select.hpp"
#include "device/gpu.hpp"
#include "pricing/gpu.hpp"
#include "pricing/pricing_internal.hpp"
#include "validation/validation.hpp"

namespace dpselect {
namespace {

constexpr std::uint64_t kLargestGrid = std::uint64_t{1} << 53;  // i -> double stays exact
// price * count can only overflow for prices this large, whatever the (private) count.
constexpr double kLargestPrice = 0x1p960;

// The step of PriceRange::grid(): 2^40 steps (a power-of-two scaling: exact), or as many as keep
// consecutive prices apart.
double range_grid_step(const PriceRange& range) {
  return std::max((range.max - range.min) * 0x1p-40, range.max * 0x1p-50);
}

// Revenue of the grid prices first, first+1, ... by one merge of the increasing prices with the
// sorted bids: one binary search per call, then a linear walk.
struct GridRevenue {
  std::span<const double> sorted_bids;
  PriceGrid grid;

  void fill(std::uint64_t first, std::uint64_t count, double* out) const {
    const double* bids = sorted_bids.data();
    const std::size_t n = sorted_bids.size();
    std::size_t below = static_cast<std::size_t>(std::lower_bound(bids, bids + n, grid.price(first)) - bids);
    for (std::uint64_t k = 0; k < count; ++k) {
      const double price = grid.price(first + k);
      while (below < n && bids[below] < price) ++below;
      out[k] = price * static_cast<double>(n - below);
    }
  }

  static void fill_utilities(const void* self, std::uint64_t first, std::uint64_t count, double* out) {
    static_cast<const GridRevenue*>(self)->fill(first, count, out);
  }
};

// Large auctions are sorted on the GPU when one is usable (CUB radix sort; 10^8 bids in well
// under a second), else on all cores (libstdc++ parallel mode, OpenMP). Sorting is not part of
// any release, so a GPU failure here just falls back to the CPU.
void sort_bids(std::vector<double>& bids) {
  constexpr std::size_t kGpuSortFrom = std::size_t{1} << 20;
  constexpr std::size_t kGpuSortLimit = 0x7FFFFFFF;  // CUB takes an int count
  if (bids.size() >= kGpuSortFrom && bids.size() <= kGpuSortLimit && detail::cuda_device_usable()) {
    try {
      detail::gpu_sort(bids);
      return;
    } catch (const CudaError&) {
    }
  }
  // The default parallel sort (a multiway mergesort) needs a second array as large as the bids:
  // above 2^27 bids (1 GB) the in-place balanced quicksort is used instead, so that the sort does
  // not double the memory of the largest auctions.
  constexpr std::size_t kInPlaceSortFrom = std::size_t{1} << 27;
  if (bids.size() >= kInPlaceSortFrom) {
    __gnu_parallel::sort(bids.begin(), bids.end(), std::less<double>(), __gnu_parallel::balanced_quicksort_tag());
  } else {
    __gnu_parallel::sort(bids.begin(), bids.end());
  }
}

void validate_prices(std::span<const double> prices) {
  if (prices.empty()) throw InvalidArgument("dpselect: prices must hold at least one price (got size 0)");
  for (std::size_t i = 0; i < prices.size(); ++i) {
    if (!std::isfinite(prices[i]) || prices[i] < 0.0) {
      detail::throw_invalid("prices[" + std::to_string(i) + "]", "finite and >= 0", prices[i]);
    }
  }
}

}  // namespace

namespace detail {

ShardResult score_price_grid(const NoiseSpec& spec, const Bids& bids, const PriceGrid& grid, IndexRange range,
                             Backend backend) {
  if (backend == Backend::Gpu) return gpu_evaluate_price_grid(spec, bids.sorted(), grid, range);
  const GridRevenue revenue{bids.sorted(), grid};
  return cpu_evaluate_generated(spec, range, &GridRevenue::fill_utilities, &revenue);
}

SelectionParams pricing_selection_params(const PricingParams& params, double largest_price, const Bids& bids) {
  if (!(largest_price <= kLargestPrice)) {
    detail::throw_invalid("the largest price", "<= 2^960 so that revenues stay finite", largest_price);
  }
  if (params.max_bidders != 0 && bids.size() > params.max_bidders) {
    throw InvalidArgument("dpselect: bids must number at most max_bidders, " + std::to_string(params.max_bidders) +
                          " (got more)");
  }
  SelectionParams selection;
  selection.mechanism = params.mechanism;
  selection.epsilon = params.epsilon;
  // Delta: one bidder moves revenue(p) by at most p (pricing.hpp).
  selection.sensitivity = largest_price;
  // Adding a bidder never lowers any revenue: monotone, scale eps/Delta (Dwork & Roth 2014, Thm 3.10 remark).
  selection.monotone = params.neighbours == BidderNeighbours::add_or_remove_bidder;
  selection.backend = params.backend;
  // A public bound on every revenue: the largest price times the public bound on bidders.
  if (params.max_bidders != 0) selection.utility_bound = largest_price * static_cast<double>(params.max_bidders);
  // Revenues start at 0 (a price no bidder takes), and scores are computed from them as they are:
  // every sampler, on one process or over MPI ranks, scores from the same reference.
  selection.utility_reference = 0.0;
  return selection;
}

}  // namespace detail

std::string_view to_string(GridSampler sampler) {
  switch (sampler) {
    case GridSampler::per_price_noise:
      return "per-price";
    case GridSampler::bid_intervals:
      return "bid-intervals";
    case GridSampler::automatic:
      return "automatic";
  }
  return "unknown";
}

std::optional<GridSampler> public_grid_sampler(const PricingParams& params, std::uint64_t grid_size) {
  if (params.grid_sampler != GridSampler::automatic) return params.grid_sampler;
  if (params.mechanism != Mechanism::exponential || params.backend == Backend::Gpu) {
    return GridSampler::per_price_noise;
  }
  if (params.max_bidders == 0) return std::nullopt;  // the rule would read the private bid count
  return resolve_grid_sampler(params, grid_size, params.max_bidders);
}

GridSampler resolve_grid_sampler(const PricingParams& params, std::uint64_t grid_size, std::uint64_t bid_count) {
  if (params.grid_sampler != GridSampler::automatic) return params.grid_sampler;
  if (params.mechanism != Mechanism::exponential || params.backend == Backend::Gpu) {
    return GridSampler::per_price_noise;
  }
  const std::uint64_t bidders = params.max_bidders != 0 ? params.max_bidders : bid_count;
  // grid_size > factor * (bidders + 1), written so that no product overflows: with q and r the
  // quotient and remainder of grid_size / factor, q > bidders + 1, or q == bidders + 1 and r > 0.
  const std::uint64_t q = grid_size / kBidIntervalsGridFactor;
  const std::uint64_t r = grid_size % kBidIntervalsGridFactor;
  const bool bid_intervals_cheaper = q > bidders && (q - bidders > 1 || r != 0);
  return bid_intervals_cheaper ? GridSampler::bid_intervals : GridSampler::per_price_noise;
}

std::string_view to_string(BidderNeighbours neighbours) {
  return neighbours == BidderNeighbours::add_or_remove_bidder ? "add-remove" : "change-bid";
}

namespace {

// Checks bids[first_index, first_index + bids.size()) and stores them at `out`: + 0.0 turns -0.0
// into +0.0, so every sort (and every backend) yields the same bits.
template <class T>
void store_bids(std::span<const T> bids, std::uint64_t first_index, double* out) {
  for (std::size_t i = 0; i < bids.size(); ++i) {
    const auto bid = static_cast<double>(bids[i]);
    if (!std::isfinite(bid) || bid < 0.0) {
      detail::throw_invalid("bids[" + std::to_string(first_index + i) + "]", "finite and >= 0", bid);
    }
    out[i] = bid + 0.0;
  }
}

}  // namespace

Bids::Bids(std::span<const double> bids) {
  if (bids.empty()) throw InvalidArgument("dpselect: bids must hold at least one bid (got size 0)");
  sorted_.resize(bids.size());
  store_bids(bids, 0, sorted_.data());
  sort_bids(sorted_);
}

template <class T>
Bids::Bids(const ChunkedValues<T>& bids) {
  if (bids.size == 0) throw InvalidArgument("dpselect: bids must hold at least one bid (got size 0)");
  if (!bids.read) throw InvalidArgument("dpselect: bids.read must be a reader (got an empty function)");
  if (bids.chunk_size == 0) throw InvalidArgument("dpselect: bids.chunk_size must be at least 1 (got 0)");
  std::vector<T> buffer(std::min(bids.chunk_size, bids.size));
  sorted_.resize(bids.size);
  for (std::uint64_t first = 0; first < bids.size; first += buffer.size()) {
    const std::span<T> chunk(buffer.data(), std::min<std::uint64_t>(buffer.size(), bids.size - first));
    bids.read(first, chunk);
    store_bids(std::span<const T>(chunk), first, sorted_.data() + first);
  }
  sort_bids(sorted_);
}
template Bids::Bids(const ChunkedValues<double>&);
template Bids::Bids(const ChunkedValues<float>&);

std::uint64_t Bids::count_at_least(double price) const {
  return static_cast<std::uint64_t>(sorted_.end() - std::lower_bound(sorted_.begin(), sorted_.end(), price));
}

double Bids::revenue(double price) const { return price * static_cast<double>(count_at_least(price)); }

void PriceGrid::validate() const {
  if (!std::isfinite(min) || min < 0.0) detail::throw_invalid("grid min", "finite and >= 0", min);
  if (!std::isfinite(max) || !(max > min)) {
    detail::throw_invalid("grid max", "finite and > min (" + detail::format_value(min) + ")", max);
  }
  if (!std::isfinite(step) || !(step > 0.0)) detail::throw_invalid("grid step", "finite and > 0", step);
  if (step < max * 0x1p-50) {
    detail::throw_invalid("grid step", "at least max * 2^-50 so that consecutive prices differ", step);
  }
  if ((max - min) / step >= static_cast<double>(kLargestGrid)) {
    detail::throw_invalid("grid step", "large enough for at most 2^53 prices", step);
  }
}

std::uint64_t PriceGrid::size() const {
  // floor((max - min) / step) + 1, corrected for the rounding of the division and of price().
  std::uint64_t last = static_cast<std::uint64_t>(std::floor((max - min) / step));
  while (last > 0 && price(last) > max) --last;
  while (last + 1 < kLargestGrid && price(last + 1) <= max) ++last;
  return last + 1;
}

void PriceRange::validate() const {
  if (!std::isfinite(min) || min < 0.0) detail::throw_invalid("range min", "finite and >= 0", min);
  if (!std::isfinite(max) || !(max > min)) {
    detail::throw_invalid("range max", "finite and > min (" + detail::format_value(min) + ")", max);
  }
  if (!(max <= kLargestPrice)) detail::throw_invalid("range max", "<= 2^960 so that revenues stay finite", max);
  // The grid's step must be a positive double: a range of denormals has none (its step underflowed
  // to 0 and its size to infinity; found by tests/fuzz/fuzz_parameters).
  if (!(range_grid_step(*this) > 0)) {
    detail::throw_invalid("range max", "far enough from min (" + detail::format_value(min) +
                                           ") that the grid has a positive step (a range wider than 2^-1034)",
                          max);
  }
}

PriceGrid PriceRange::grid() const {
  validate();
  return PriceGrid{min, max, range_grid_step(*this)};
}

PriceSelection select_price(Context& context, const Bids& bids, std::span<const double> prices,
                            const PricingParams& params) {
  validate_prices(prices);
  const double largest_price = *std::max_element(prices.begin(), prices.end());
  if (!(largest_price > 0.0)) {
    detail::throw_invalid("the largest price", "> 0 (it is the sensitivity)", largest_price);
  }
  std::vector<double> revenue(prices.size());
  for (std::size_t i = 0; i < prices.size(); ++i) revenue[i] = bids.revenue(prices[i]);
  const Selection selection =
      select(context, std::span<const double>(revenue), detail::pricing_selection_params(params, largest_price, bids));
  return PriceSelection{prices[selection.index], selection.index, selection.report};
}

PriceSelection select_price(Context& context, const Bids& bids, const PriceGrid& grid,
                            const PricingParams& params) {
  grid.validate();
  const std::uint64_t count = grid.size();
  const double largest_price = grid.price(count - 1);
  if (!(largest_price > 0.0)) {
    detail::throw_invalid("the grid's largest price", "> 0 (it is the sensitivity)", largest_price);
  }
  const GridSampler sampler = resolve_grid_sampler(params, count, bids.size());
  const bool sampler_depends_on_data = !public_grid_sampler(params, count).has_value();
  if (sampler == GridSampler::bid_intervals) {
    PriceSelection chosen = detail::select_grid_price_by_bid_intervals(context, bids, grid, params);
    chosen.sampler_depends_on_data = sampler_depends_on_data;
    return chosen;
  }
  const SelectionParams selection = detail::pricing_selection_params(params, largest_price, bids);
  detail::validate_params(selection);
  const Backend backend = detail::resolve_backend(selection.backend);
  const IndexRange range{0, count};
  Release release = context.begin_release(selection);
  detail::ReleaseAccess::claim(release, range);
  const ShardResult result =
      detail::score_price_grid(detail::ReleaseAccess::noise_spec(release), bids, grid, range, backend);
  const Selection chosen = release.finish(detail::ReleaseAccess::stamped(release, range, result));
  return PriceSelection{grid.price(chosen.index), chosen.index, chosen.report, GridSampler::per_price_noise,
                        sampler_depends_on_data};
}

PriceSelection select_price(Context& context, const Bids& bids, const PriceRange& range,
                            const PricingParams& params) {
  return detail::select_grid_price_by_bid_intervals(context, bids, range.grid(), params);
}

double revenue_shortfall_bound(const PricingParams& params, double largest_price,
                               std::uint64_t candidates, double t) {
  detail::validate_positive_finite("epsilon", params.epsilon);
  detail::validate_positive_finite("largest_price", largest_price);
  if (candidates == 0) throw InvalidArgument("dpselect: candidates must be >= 1 (got 0)");
  if (!std::isfinite(t) || t < 0.0) detail::throw_invalid("t", "finite and >= 0", t);
  // Dwork & Roth 2014, Thm 3.11: OPT - (2 Delta / eps)(ln(|R| / |R_OPT|) + t), with |R_OPT| >= 1; the
  // monotone scale eps/Delta halves the factor.
  const double noise_scale = (params.neighbours == BidderNeighbours::add_or_remove_bidder ? 1.0 : 2.0) *
                             largest_price / params.epsilon;
  return noise_scale * (std::log(static_cast<double>(candidates)) + t);
}

NonprivateOptimum nonprivate_optimum(const Bids& bids, const PriceGrid& grid) {
  grid.validate();
  const std::uint64_t count = grid.size();
  const GridRevenue revenue{bids.sorted(), grid};
  constexpr std::uint64_t kChunk = 1 << 16;
  NonprivateOptimum best;
  best.revenue = -1.0;
#pragma omp parallel
  {
    NonprivateOptimum local;
    local.revenue = -1.0;
    std::vector<double> buffer(kChunk);
#pragma omp for schedule(static)
    for (std::uint64_t first = 0; first < count; first += kChunk) {
      const std::uint64_t n = std::min(kChunk, count - first);
      revenue.fill(first, n, buffer.data());
      for (std::uint64_t k = 0; k < n; ++k) {
        if (buffer[k] > local.revenue) local = {grid.price(first + k), buffer[k], first + k};
      }
    }
#pragma omp critical
    if (local.revenue > best.revenue || (local.revenue == best.revenue && local.candidate < best.candidate)) {
      best = local;
    }
  }
  return best;
}

NonprivateOptimum nonprivate_optimum(const Bids& bids, std::span<const double> prices) {
  validate_prices(prices);
  NonprivateOptimum best;
  best.revenue = -1.0;
  for (std::size_t i = 0; i < prices.size(); ++i) {
    const double revenue = bids.revenue(prices[i]);
    if (revenue > best.revenue) best = {prices[i], revenue, i};
  }
  return best;
}

NonprivateOptimum nonprivate_optimum(const Bids& bids, const PriceRange& range) {
  const PriceGrid grid = range.grid();
  const std::uint64_t grid_size = grid.size();
  NonprivateOptimum best{range.max, bids.revenue(range.max), 0};
  for (const double bid : bids.sorted()) {
    if (bid < range.min || bid > range.max) continue;
    const double revenue = bids.revenue(bid);
    if (revenue > best.revenue) best = {bid, revenue, 0};
  }
  // The largest grid index whose price is <= best.price (>= min, so index 0 qualifies).
  best.candidate = detail::first_grid_index_above(grid, grid_size, best.price) - 1;
  return best;
}

}  // namespace dpselect
