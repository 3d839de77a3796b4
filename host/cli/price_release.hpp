// SPDX-License-Identifier: Apache-2.0
// Private posted-price releases and their report, shared by `dpselect price` (bids from a
// file) and `dpselect demo` (synthetic bids).
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common_options.hpp"
#include "dpselect/pricing.hpp"
#include "output.hpp"

namespace dpselect::cli {

// The candidate prices: a grid computed on the fly, an explicit list, or a continuous range.
using PriceCandidates = std::variant<PriceGrid, std::vector<double>, PriceRange>;

// --neighbours, --mechanism, --max-bidders, --grid-sampler (its default: params.grid_sampler as
// passed in) and --force (sets `force`). Epsilon is required by one command and defaulted by
// another.
void add_pricing_options(CLI::App& command, PricingParams& params, bool& force);

// Per-price sampling of a grid runs at about this many prices per second: per CPU core (measured
// on the CPU at 40 to 50 M per core, bench/results/2026-11-22-cpu-2core-pricing), and on a GPU (a
// deliberately cautious figure until the GPU benchmark is run).
inline constexpr double per_price_rate_per_cpu_core = 40e6;
inline constexpr double per_price_rate_gpu = 10e9;
// A grid release whose per-price work is estimated above this many seconds (all --repeat
// releases together) is refused unless --force.
inline constexpr double per_price_time_limit_seconds = 600;

// Makes the releases and appends to `out`: the chosen prices as the answer, the candidates, the
// privacy summary and the 95% revenue-shortfall bound (public: it depends only on the
// parameters). With options.diagnostics, also a section under `not_private_heading` with the
// number of bidders, the optimum, the revenue of each chosen price and the run times: functions
// of the bids, for diagnostics only.
// A grid whose sampler is per-price by public information alone (public_grid_sampler) is first
// checked against per_price_time_limit_seconds: CliError naming --force above it (unless
// `force`); an estimate on stderr when it exceeds a few seconds.
void add_price_releases(Record& out, const Bids& bids, const PriceCandidates& candidates,
                        PricingParams params, const ReleaseOptions& options, bool force,
                        const std::string& not_private_heading);

}  // namespace dpselect::cli
