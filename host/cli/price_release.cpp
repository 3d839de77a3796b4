// SPDX-License-Identifier: Apache-2.0
#include "price_release.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

#include <unistd.h>

#include "cli_error.hpp"
#include "dpselect/select.hpp"

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

// The sampler line of a grid. Only a choice made from public information is printed: the
// automatic rule without --max-bidders compares the grid with the number of bids, which is
// private (add/remove-bidder neighbours), so which sampler ran would reveal something about it
// (the released price has the same distribution either way).
void add_sampler(Record& grid_record, const PricingParams& params, std::uint64_t grid_size) {
  const std::optional<GridSampler> sampler = public_grid_sampler(params, grid_size);
  if (sampler) {
    grid_record.add("sampler", std::string(to_string(*sampler)),
                    params.grid_sampler == GridSampler::automatic ? "chosen automatically" : "");
  } else {
    grid_record.add("sampler", std::string("withheld"),
                    "chosen automatically from the number of bids, which is private; "
                    "--max-bidders or --grid-sampler makes it public");
  }
}

void add_candidates(Record& out, const PriceCandidates& candidates, const PricingParams& params) {
  if (const auto* range = std::get_if<PriceRange>(&candidates)) {
    const PriceGrid grid = range->grid();
    Record& described = out.add_record("range", "price range");
    described.add("min", range->min);
    described.add("max", range->max);
    described.add("resolution", grid.step, "spacing of the 2^40 + 1 prices the range is sampled over");
    described.add("prices", grid.size());
    described.add("sampler", std::string(to_string(GridSampler::bid_intervals)));
    return;
  }
  if (const auto* grid = std::get_if<PriceGrid>(&candidates)) {
    Record& described = out.add_record("grid", "price grid");
    described.add("min", grid->min);
    described.add("max", grid->max);
    described.add("step", grid->step);
    described.add("prices", grid->size());
    add_sampler(described, params, grid->size());
    return;
  }
  Record& described = out.add_record("price_list", "price list");
  described.add("prices", candidate_count(candidates));
  described.add("largest", largest_price(candidates));
}

// The work of a per-price release scales with the candidates; that of the bid-interval sampler
// (every --range, and a --grid sampled by bid intervals) with the number of bids, whose
// "candidates per second" would be meaningless: only its time is shown. (Diagnostics only: the
// automatic choice reads the number of bids.)
std::optional<std::uint64_t> candidates_per_work(const PriceCandidates& candidates,
                                                 const PricingParams& params, const Bids& bids) {
  if (std::holds_alternative<PriceRange>(candidates)) return std::nullopt;
  if (const auto* grid = std::get_if<PriceGrid>(&candidates);
      grid != nullptr && resolve_grid_sampler(params, grid->size(), bids.size()) ==
                             GridSampler::bid_intervals) {
    return std::nullopt;
  }
  return candidate_count(candidates);
}

void add_not_private(Record& out, const std::string& heading, const Bids& bids,
                     const PriceCandidates& candidates, const PricingParams& params,
                     const std::vector<ReleaseOutcome>& outcomes, bool forced_progress) {
  const std::uint64_t count = candidate_count(candidates);
  // A range's optimum takes O(bids) work; a grid's one pass over its prices.
  constexpr std::uint64_t long_work_prices = 1'000'000'000;
  const bool long_work = !std::holds_alternative<PriceRange>(candidates) && count >= long_work_prices;
  const auto start = std::chrono::steady_clock::now();
  NonprivateOptimum optimum;
  {
    Progress progress("non-private optimum over " + format_number(count) + " candidates", 1,
                      "passes", forced_progress, long_work);
    optimum = std::visit([&](const auto& prices) { return nonprivate_optimum(bids, prices); },
                         candidates);
    progress.update(1);
  }
  const double seconds = seconds_since(start);

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
  add_release_timings(section, release_seconds(outcomes), candidates_per_work(candidates, params, bids));
}

// Refuses (or announces) per-price sampling of a grid that would take long; see the header.
void check_per_price_time(const PriceCandidates& candidates, const PricingParams& params,
                          const ReleaseOptions& options, bool force) {
  const auto* grid = std::get_if<PriceGrid>(&candidates);
  if (grid == nullptr) return;  // a list is in memory already; a range is sampled by intervals
  const std::uint64_t size = grid->size();
  // Not public (nullopt): the automatic rule read the number of bids, and neither a refusal nor
  // an estimate may depend on it. It falls to per-price only when the grid has at most 64 prices
  // per bid, so the work stays within a small multiple of reading the bids.
  if (public_grid_sampler(params, size) != GridSampler::per_price_noise) return;
  const bool gpu = params.backend == Backend::Gpu || (params.backend == Backend::Auto && gpu_usable());
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const double rate = gpu ? per_price_rate_gpu : per_price_rate_per_cpu_core * cores;
  const double seconds =
      static_cast<double>(size) * static_cast<double>(options.repeat) / rate;
  char rate_text[32];
  std::snprintf(rate_text, sizeof rate_text, "%.3g %s", rate >= 1e9 ? rate / 1e9 : rate / 1e6,
                rate >= 1e9 ? "G" : "M");
  const std::string estimate =
      "per-price sampling of " + format_number(size) + " grid prices" +
      (options.repeat > 1 ? " x " + format_number(options.repeat) + " releases" : "") +
      " takes about " + format_duration(seconds) + " on the " + (gpu ? "GPU" : "CPU") +
      " (estimate at " + rate_text + " prices/s)";
  if (seconds > per_price_time_limit_seconds && !force) {
    throw CliError(estimate + ", more than the limit of " +
                   format_duration(per_price_time_limit_seconds) +
                   ": pass --force to run it anyway" +
                   (params.mechanism == Mechanism::exponential
                        ? std::string(", or --grid-sampler bid-intervals (O(bids) work)")
                        : std::string(", or use --mechanism exponential, which samples a large "
                                      "grid by bid intervals in O(bids) work")));
  }
  // The estimate is progress information: shown where progress is (a terminal, or --progress).
  constexpr double announce_from_seconds = 2;
  if (seconds > announce_from_seconds && (options.progress || isatty(STDERR_FILENO))) {
    std::fprintf(stderr, "dpselect: %s\n", estimate.c_str());
  }
}

}  // namespace

void add_pricing_options(CLI::App& command, PricingParams& params, bool& force) {
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
                    Choices<GridSampler>{{"auto", GridSampler::automatic},
                                         {"per-price", GridSampler::per_price_noise},
                                         {"bid-intervals", GridSampler::bid_intervals}},
                    "how a --grid is sampled: noise per price (any mechanism, GPU) or by bid "
                    "intervals (exponential mechanism, CPU, work independent of the grid size); "
                    "auto: bid intervals for the exponential mechanism when the grid has more "
                    "than 64 x (bidders + 1) prices and the backend is not gpu; --range always "
                    "uses bid intervals");
  command.add_flag("--force", force,
                   "run per-price sampling of a grid even when it is estimated to take more "
                   "than 10 minutes");
}

void add_price_releases(Record& out, const Bids& bids, const PriceCandidates& candidates,
                        PricingParams params, const ReleaseOptions& options, bool force,
                        const std::string& not_private_heading) {
  params.backend = options.backend;
  check_per_price_time(candidates, params, options, force);
  const std::uint64_t count = candidate_count(candidates);
  std::vector<ReleaseOutcome> outcomes = run_releases(options, count, [&](ReleaseTarget& target) {
    return std::visit([&](const auto& prices) { return outcome_of(target.price(bids, prices, params)); },
                      candidates);
  });

  for (const ReleaseOutcome& outcome : outcomes) {
    const std::string price = format_number(*outcome.price);
    add_released_values(out, "price", {price}, {price}, false);
  }
  out.add("neighbours", std::string(to_string(params.neighbours)));
  add_candidates(out, candidates, params);
  add_release_summary(out, options, outcomes, "--max-bidders");
  Record& accuracy = out.add_record("accuracy");
  accuracy.add("confidence", 1.0 - 1.0 / bound_failure_odds);
  accuracy.add("revenue_shortfall_bound",
               revenue_shortfall_bound(params, largest_price(candidates), count,
                                       std::log(bound_failure_odds)),
               "with probability >= 0.95 a chosen price earns at least the optimal revenue minus "
               "this; Dwork & Roth 2014, Thm 3.11");
  if (options.diagnostics) {
    add_not_private(out, not_private_heading, bids, candidates, params, outcomes, options.progress);
  }
}

}  // namespace dpselect::cli
