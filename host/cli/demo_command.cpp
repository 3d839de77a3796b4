// SPDX-License-Identifier: Apache-2.0
// dpselect demo: a private posted price for a synthetic auction, with the non-private optimum
// beside it to show what the privacy costs.
#include <cmath>
#include <memory>
#include <random>
#include <span>

#include "commands.hpp"
#include "common_options.hpp"
#include "output.hpp"
#include "price_release.hpp"

namespace dpselect::cli {
namespace {

// The synthetic bids: log-normal, drawn from a fixed seed so every run sees the same auction.
constexpr double bid_log_mean = 3.0;
constexpr double bid_log_sigma = 1.0;
constexpr std::uint64_t bid_data_seed = 20240601;
// The standard normal's 99.9% quantile. The grid ends at the bid distribution's 99.9th
// percentile, computed from the distribution rather than from the bids: in a real auction the
// candidate prices must be public, not derived from the data.
constexpr double normal_quantile_999 = 3.090232306167813;

struct DemoOptions {
  std::uint64_t bidders = 1'000'000;
  std::uint64_t prices = 100'000'000;
  PricingParams params{.epsilon = 1.0};
  bool force = false;  // --force
  ReleaseOptions release;
};

std::vector<double> synthetic_bids(std::uint64_t bidders) {
  std::mt19937_64 generator(bid_data_seed);
  std::lognormal_distribution<double> bid(bid_log_mean, bid_log_sigma);
  std::vector<double> bids(bidders);
  for (double& b : bids) b = bid(generator);
  return bids;
}

// `prices` prices step, 2 step, ..., prices * step, ending near the 99.9th percentile.
PriceGrid demo_grid(std::uint64_t prices) {
  const double top = std::exp(bid_log_mean + bid_log_sigma * normal_quantile_999);
  const double step = top / static_cast<double>(prices);
  return PriceGrid{step, step * static_cast<double>(prices), step};
}

Record run_demo(const DemoOptions& options) {
  const Bids bids(std::span<const double>(synthetic_bids(options.bidders)));
  PricingParams params = options.params;
  if (params.max_bidders == 0) params.max_bidders = options.bidders;  // synthetic: the count is public
  Record report("dpselect demo: private posted price for a synthetic auction");
  report.add("command", std::string("demo"));
  Record& data = report.add_record("data", "synthetic bids");
  data.add("bidders", options.bidders);
  data.add("distribution", std::string("lognormal"));
  data.add("mu", bid_log_mean);
  data.add("sigma", bid_log_sigma);
  data.add("data_seed", bid_data_seed, "fixed: every run sees the same bids");
  add_price_releases(report, bids, demo_grid(options.prices), params, options.release, options.force,
                     "NOT PRIVATE (synthetic data, for comparison only)");
  return report;
}

constexpr const char* demo_examples = R"(Examples:
  dpselect demo
  dpselect demo --bidders 10000 --prices 1000000 --epsilon 0.1
  dpselect demo --backend gpu --repeat 5 --json

The bids are log-normal (mu 3, sigma 1) from a fixed data seed. The grid has --prices prices
step, 2 step, ... up to the 99.9th percentile of that distribution. Prints the private price,
the backend, timing, epsilon, the 95% revenue-shortfall bound, and, marked NOT PRIVATE, the
optimal price and revenue for comparison.)";

}  // namespace

void register_demo_command(CLI::App& app) {
  auto options = std::make_shared<DemoOptions>();
  CLI::App* command =
      app.add_subcommand("demo", "private posted price for a synthetic auction, with timing");
  command->add_option("--bidders", options->bidders, "number of synthetic bids")
      ->check(integer_at_least(1))
      ->capture_default_str();
  command->add_option("--prices", options->prices, "number of candidate prices in the grid")
      ->check(integer_at_least(2))
      ->capture_default_str();
  add_epsilon_option(*command, options->params.epsilon)->capture_default_str();
  add_pricing_options(*command, options->params, options->force);
  // Synthetic bids are no one's data: the optimum and the timings are always shown.
  complete_release_command(
      *command, options->release, demo_examples, [options] { return run_demo(*options); },
      CommandData::synthetic);
}

}  // namespace dpselect::cli
