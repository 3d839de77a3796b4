#include "price_release.hpp"

#include <algorithm>
#include <cmath>

#include "numbers.hpp"
#include "progress.hpp"
#include "releases.hpp"
#include "report_sections.hpp"

namespace dpselect::cli {
namespace {

// The accuracy bound holds with probability >= 1 - e^-t; t = ln 20 makes that 95%.
constexpr double bound_failure_odds = 20.0;

std::uint64_t candidate_count(const PriceCandidates& candidates) {
  if (const auto* grid = std::get_if<PriceGrid>(&candidates)) return grid->size();
  if (const auto* range = std::get_if<PriceRange>(&candidates)) return range->grid().size();
  return std::get<std::vector<double>>(candidates).size();
}

double largest_price(const PriceCandidates& candidates) {
  if (const auto* grid = std::get_if<PriceGrid>(&candidates)) return grid->price(grid->size() - 1);
  if (const auto* range = std::get_if<PriceRange>(&candidates)) {
    const PriceGrid grid = range->grid();
    return grid.price(grid.size() - 1);
  }
  const auto& prices = std::get<std::vector<double>>(candidates);
  return *std::max_element(prices.begin(), prices.end());
}

void add_candidates(Record& out, const PriceCandidates& candidates) {
  if (const auto* range = std::get_if<PriceRange>(&candidates)) {
    const PriceGrid grid = range->grid();
    Record& described = out.add_record("range", "price range");
    described.add("min", range->min);
    described.add("max", range->max);
    described.add("resolution", grid.step, "spacing of the 2^40 + 1 prices the range is sampled over");
    described.add("prices", grid.size());
    return;
  }
  if (const auto* grid = std::get_if<PriceGrid>(&candidates)) {
    Record& described = out.add_record("grid", "price grid");
    described.add("min", grid->min);
    described.add("max", grid->max);
    described.add("step", grid->step);
    described.add("prices", grid->size());
    return;
  }
  Record& described = out.add_record("price_list", "price list");
  described.add("prices", candidate_count(candidates));
  described.add("largest", largest_price(candidates));
}

// The work of a per-price release scales with the candidates; that of the bid-interval sampler
// (every --range, and --grid with --grid-sampler bid-intervals) with the number of bids, whose
// "candidates per second" would be meaningless: only its time is shown.
std::optional<std::uint64_t> candidates_per_work(const PriceCandidates& candidates,
                                                 const PricingParams& params) {
  if (std::holds_alternative<PriceRange>(candidates)) return std::nullopt;
  if (std::holds_alternative<PriceGrid>(candidates) &&
      params.grid_sampler == GridSampler::bid_intervals) {
    return std::nullopt;
  }
  return candidate_count(candidates);
}

void add_not_private(Record& out, const std::string& heading, const Bids& bids,
                     const PriceCandidates& candidates, const PricingParams& params,
                     const std::vector<ReleaseOutcome>& outcomes) {
  const std::uint64_t count = candidate_count(candidates);
  Progress progress("non-private optimum over " + format_number(count) + " candidates", count);
  const auto start = std::chrono::steady_clock::now();
  NonprivateOptimum optimum =
      std::visit([&](const auto& prices) { return nonprivate_optimum(bids, prices); }, candidates);
  const double seconds = seconds_since(start);
  progress.done(seconds);

  Record& section = add_not_private_section(out, heading);
  section.add("bidders", static_cast<std::uint64_t>(bids.size()));
  section.add("optimal_price", optimum.price);
  section.add("optimal_revenue", optimum.revenue);
  section.add("optimal_index", optimum.candidate);
  section.add("optimum_seconds", rounded_seconds(seconds), "time to compute the optimum");
  for (const ReleaseOutcome& outcome : outcomes) {
    Record& chosen = section.add_list_item("chosen", "chosen price of release");
    chosen.add("price", *outcome.price);
    chosen.add("revenue", bids.revenue(*outcome.price));
  }
  add_release_timings(section, release_seconds(outcomes), candidates_per_work(candidates, params));
}

}  // namespace

void add_pricing_options(CLI::App& command, PricingParams& params) {
  add_choice_option(
      command, "--neighbours", params.neighbours,
      Choices<BidderNeighbours>{{"add-remove", BidderNeighbours::add_or_remove_bidder},
                                {"change-bid", BidderNeighbours::change_one_bid}},
      "what one person's data is: adding or removing a bidder (revenue is monotone: "
      "half the noise) or changing one bid");
  add_mechanism_option(command, params.mechanism);
  command.add_option("--max-bidders", params.max_bidders,
                     "public upper bound on the number of bidders: makes the floating-point slack "
                     "independent of the bids (otherwise it is withheld)");
  add_choice_option(command, "--grid-sampler", params.grid_sampler,
                    Choices<GridSampler>{{"per-price", GridSampler::per_price_noise},
                                         {"bid-intervals", GridSampler::bid_intervals}},
                    "how a --grid is sampled: noise per price (any mechanism, GPU) or by bid "
                    "intervals (exponential mechanism, CPU, work independent of the grid size); "
                    "--range always uses bid intervals");
}

void add_price_releases(Record& out, const Bids& bids, const PriceCandidates& candidates,
                        PricingParams params, const ReleaseOptions& options,
                        const std::string& not_private_heading) {
  params.backend = options.backend;
  const std::uint64_t count = candidate_count(candidates);
  std::vector<ReleaseOutcome> outcomes = run_releases(options, count, [&](Context& context) {
    return std::visit(
        [&](const auto& prices) { return outcome_of(select_price(context, bids, prices, params)); },
        candidates);
  });

  for (const ReleaseOutcome& outcome : outcomes) {
    const std::string price = format_number(*outcome.price);
    add_released_values(out, "price", {price}, {price}, false);
  }
  out.add("neighbours", std::string(to_string(params.neighbours)));
  add_candidates(out, candidates);
  add_release_summary(out, options, outcomes, "--max-bidders");
  Record& accuracy = out.add_record("accuracy");
  accuracy.add("confidence", 1.0 - 1.0 / bound_failure_odds);
  accuracy.add("revenue_shortfall_bound",
               revenue_shortfall_bound(params, largest_price(candidates), count,
                                       std::log(bound_failure_odds)),
               "with probability >= 0.95 a chosen price earns at least the optimal revenue minus "
               "this; Dwork & Roth 2014, Thm 3.11");
  if (options.diagnostics) {
    add_not_private(out, not_private_heading, bids, candidates, params, outcomes);
  }
}

}  // namespace dpselect::cli
