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

// --neighbours, --mechanism, --max-bidders and --grid-sampler (epsilon is required by one command and defaulted by another).
void add_pricing_options(CLI::App& command, PricingParams& params);

// Makes the releases and appends to `out`: the chosen prices as the answer, the candidates, the
// privacy summary and the 95% revenue-shortfall bound (public: it depends only on the
// parameters). With options.diagnostics, also a section under `not_private_heading` with the
// number of bidders, the optimum, the revenue of each chosen price and the run times: functions
// of the bids, for diagnostics only.
void add_price_releases(Record& out, const Bids& bids, const PriceCandidates& candidates,
                        PricingParams params, const ReleaseOptions& options,
                        const std::string& not_private_heading);

}  // namespace dpselect::cli
