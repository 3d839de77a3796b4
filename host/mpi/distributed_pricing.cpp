// SPDX-License-Identifier: Apache-2.0
// dpselect::mpi: posted-price pricing with the candidate prices split across the ranks and the
// bids replicated (include/dpselect/mpi.hpp). Each rank runs one process's checks on the same
// bids, grid and params (so all find the same sampler and the same errors), the shards are agreed
// and rank 0's ledger charged once, then each rank scores its part of the one release.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "dpselect/detail/release_access.hpp"
#include "dpselect/mpi.hpp"
#include "dpselect/pricing.hpp"
#include "validation/validation.hpp"
#include "mpi/collective.hpp"
#include "pricing/pricing_internal.hpp"

namespace dpselect::mpi {
namespace {

using dpselect::detail::BidIntervalPlan;
using dpselect::detail::ReleaseAccess;

// What every rank must share, in a form that compares bit for bit: the params, the grid (zeros
// for a list) and the sorted bids (their count and digest).
struct SharedPricingInputs {
  double epsilon;
  double grid_min;
  double grid_max;
  double grid_step;
  std::uint64_t max_bidders;
  std::uint64_t bid_count;
  std::uint64_t bid_digest;
  std::int32_t neighbours;
  std::int32_t mechanism;
  std::int32_t backend;
  std::int32_t grid_sampler;
};

std::string shared_inputs_error(const DistributedContext& context, const Bids& bids, const PricingParams& params,
                                const PriceGrid& grid) {
  SharedPricingInputs mine{};
  mine.epsilon = params.epsilon;
  mine.grid_min = grid.min;
  mine.grid_max = grid.max;
  mine.grid_step = grid.step;
  mine.max_bidders = params.max_bidders;
  mine.bid_count = bids.size();
  mine.bid_digest = detail::bytes_digest(bids.sorted().data(), bids.sorted().size_bytes());
  mine.neighbours = static_cast<std::int32_t>(params.neighbours);
  mine.mechanism = static_cast<std::int32_t>(params.mechanism);
  mine.backend = static_cast<std::int32_t>(params.backend);
  mine.grid_sampler = static_cast<std::int32_t>(params.grid_sampler);
  return detail::differs_from_root(context, &mine, sizeof mine, "the bids, the prices' grid and the params");
}

// Scores this rank's part of a release with `score(spec, part)` (nothing for an empty part), and
// agrees on the pass: a part that throws on one rank fails every rank.
template <class Score>
ShardResult score_part(DistributedContext& context, Release& release, IndexRange part, Score&& score) {
  return detail::agreed_pass(context, [&] {
    if (part.size() == 0) return ShardResult{};
    ReleaseAccess::claim(release, part);
    return ReleaseAccess::stamped(release, part, score(ReleaseAccess::noise_spec(release), part));
  });
}

// Stage 1 of the bid-interval sampler with the n + 1 intervals split evenly over the ranks, after
// `agreed` (the shards the caller checked) and the charge; then stage 2, alike on every rank.
PriceSelection bid_intervals_over_ranks(DistributedContext& context, const BidIntervalPlan& plan) {
  DistributedContext::State& s = detail::Access::state(context);
  const std::uint64_t intervals = plan.intervals.intervals();
  detail::AgreedShards split{0, intervals, 0};
  for (int r = 0; r < s.size; ++r) {
    split.coverage += dpselect::detail::coverage_fingerprint(detail::even_share(intervals, r, s.size));
  }
  Release release = detail::begin_agreed_release(context, plan.selection, split);
  const ShardResult mine =
      score_part(context, release, detail::even_share(intervals, s.rank, s.size),
                 [&](const dpselect::detail::NoiseSpec& spec, IndexRange part) {
                   return dpselect::detail::score_bid_intervals(plan, spec, part);
                 });
  const Selection chosen = release.finish(detail::merged_tally(s, mine));
  return dpselect::detail::finish_bid_intervals(plan, ReleaseAccess::noise_spec(release), chosen);
}

}  // namespace

PriceSelection select_price(DistributedContext& context, const Bids& bids, const PriceGrid& grid, IndexRange shard,
                            const PricingParams& params) {
  DistributedContext::State& s = detail::Access::state(context);
  // One process's checks, in its order (pricing.cpp), on every rank.
  std::uint64_t count = 0;
  GridSampler sampler = GridSampler::per_price_noise;
  bool sampler_depends_on_data = false;
  std::optional<BidIntervalPlan> plan;
  SelectionParams selection;
  Backend backend = Backend::Cpu;
  detail::Finding finding = detail::invalid_unless_empty(shared_inputs_error(context, bids, params, grid));
  if (finding.kind == detail::none) {
    finding = detail::finding_of([&] {
      grid.validate();
      count = grid.size();
      const double largest_price = grid.price(count - 1);
      if (!(largest_price > 0.0)) {
        dpselect::detail::throw_invalid("the grid's largest price", "> 0 (it is the sensitivity)", largest_price);
      }
      sampler = resolve_grid_sampler(params, count, bids.size());
      sampler_depends_on_data = !public_grid_sampler(params, count).has_value();
      if (sampler == GridSampler::bid_intervals) {
        plan = dpselect::detail::plan_bid_intervals(bids, grid, params);
        selection = plan->selection;
      } else {
        selection = dpselect::detail::pricing_selection_params(params, largest_price, bids);
        dpselect::detail::validate_params(selection);
        backend = dpselect::detail::resolve_backend(selection.backend);
      }
    });
  }
  const IndexRange whole{0, count};
  detail::ShardRules rules;
  rules.unit = "grid prices";
  rules.whole = &whole;
  const detail::AgreedShards agreed = detail::agree_and_charge(
      context, nullptr, finding.kind == detail::none ? shard : IndexRange{}, std::move(finding),
      detail::ChargeRule{detail::one_release_charge(selection)}, rules);

  if (plan.has_value()) {
    PriceSelection chosen = bid_intervals_over_ranks(context, *plan);
    chosen.sampler_depends_on_data = sampler_depends_on_data;
    return chosen;
  }
  Release release = detail::begin_agreed_release(context, selection, agreed);
  const ShardResult mine =
      score_part(context, release, shard, [&](const dpselect::detail::NoiseSpec& spec, IndexRange part) {
        return dpselect::detail::score_price_grid(spec, bids, grid, part, backend);
      });
  const Selection chosen = release.finish(detail::merged_tally(s, mine));
  return PriceSelection{grid.price(chosen.index), chosen.index, chosen.report, GridSampler::per_price_noise,
                        sampler_depends_on_data};
}

PriceSelection select_price(DistributedContext& context, const Bids& bids, std::span<const double> prices,
                            std::uint64_t first_index, const PricingParams& params) {
  DistributedContext::State& s = detail::Access::state(context);
  detail::Finding finding = detail::invalid_unless_empty(shared_inputs_error(context, bids, params, PriceGrid{}));
  if (finding.kind == detail::none) {
    finding = detail::invalid_unless_empty(
        detail::shard_end_error(context, first_index, prices.size(), "first_index", "prices"));
  }
  // This rank's prices, named by their place in the whole list; the largest of them (-1: none).
  double largest_here = -1.0;
  if (finding.kind == detail::none) {
    finding = detail::finding_of([&] {
      for (std::size_t i = 0; i < prices.size(); ++i) {
        if (!std::isfinite(prices[i]) || prices[i] < 0.0) {
          dpselect::detail::throw_invalid("prices[" + std::to_string(first_index + i) + "]", "finite and >= 0",
                                          prices[i]);
        }
        largest_here = std::max(largest_here, prices[i]);
      }
    });
  }
  // The sensitivity is the largest price of the whole list (public, like every price).
  double largest_price = largest_here;
  MPI_Allreduce(MPI_IN_PLACE, &largest_price, 1, MPI_DOUBLE, MPI_MAX, s.comm);
  SelectionParams selection;
  if (finding.kind == detail::none) {
    finding = detail::finding_of([&] {
      if (largest_price < 0.0) return;  // every shard empty: agree_and_charge says so
      if (!(largest_price > 0.0)) {
        dpselect::detail::throw_invalid("the largest price", "> 0 (it is the sensitivity)", largest_price);
      }
      selection = dpselect::detail::pricing_selection_params(params, largest_price, bids);
    });
  }
  detail::ShardRules rules;
  rules.unit = "prices";
  rules.from_zero = true;
  const IndexRange shard =
      finding.kind == detail::none ? IndexRange{first_index, first_index + prices.size()} : IndexRange{};
  const detail::AgreedShards agreed = detail::agree_and_charge(context, &selection, shard, std::move(finding),
                                                               detail::ChargeRule{detail::one_release_charge(selection)}, rules);
  Release release = detail::begin_agreed_release(context, selection, agreed);
  const ShardResult mine = detail::agreed_pass(context, [&] {
    if (prices.empty()) return ShardResult{};
    std::vector<double> revenue(prices.size());
    for (std::size_t i = 0; i < prices.size(); ++i) revenue[i] = bids.revenue(prices[i]);
    return release.evaluate(std::span<const double>(revenue), first_index);
  });
  const Selection chosen = release.finish(detail::merged_tally(s, mine));
  // The chosen price, from the rank that holds it (prices are >= 0, so -1 means "not here").
  double price = chosen.index >= first_index && chosen.index - first_index < prices.size()
                     ? prices[chosen.index - first_index]
                     : -1.0;
  MPI_Allreduce(MPI_IN_PLACE, &price, 1, MPI_DOUBLE, MPI_MAX, s.comm);
  return PriceSelection{price, chosen.index, chosen.report};
}

PriceSelection select_price(DistributedContext& context, const Bids& bids, const PriceRange& range,
                            const PricingParams& params) {
  DistributedContext::State& s = detail::Access::state(context);
  PriceGrid grid;
  std::optional<BidIntervalPlan> plan;
  detail::Finding finding = detail::finding_of([&] { grid = range.grid(); });
  const std::string differs = shared_inputs_error(context, bids, params, grid);
  if (finding.kind == detail::none) finding = detail::invalid_unless_empty(differs);
  if (finding.kind == detail::none) {
    finding = detail::finding_of([&] { plan = dpselect::detail::plan_bid_intervals(bids, grid, params); });
  }
  const std::uint64_t intervals = bids.size() + 1;
  const IndexRange whole{0, intervals};
  detail::ShardRules rules;
  rules.unit = "bid intervals";
  rules.whole = &whole;
  const IndexRange share =
      finding.kind == detail::none ? detail::even_share(intervals, s.rank, s.size) : IndexRange{};
  const SelectionParams selection = plan.has_value() ? plan->selection : SelectionParams{};
  detail::agree_and_charge(context, nullptr, share, std::move(finding), detail::ChargeRule{detail::one_release_charge(selection)},
                           rules);
  return bid_intervals_over_ranks(context, *plan);
}

}  // namespace dpselect::mpi
