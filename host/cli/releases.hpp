// Making the releases of one command: one context, --repeat releases, each timed.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "common_options.hpp"
#include "dpselect/context.hpp"
#include "dpselect/pricing.hpp"

namespace dpselect::cli {

// One private release as the command reports it.
struct ReleaseOutcome {
  std::uint64_t index = 0;      // the released candidate index
  std::optional<double> price;  // the released price, for the pricing commands
  SelectionReport report;
  double seconds = 0.0;  // wall time of the release
};

ReleaseOutcome outcome_of(const Selection& selection);
ReleaseOutcome outcome_of(const PriceSelection& selection);

// Makes options.repeat independent releases of `release_once` (over `candidates` candidates)
// from one context: fixed-seed when options.seed is set (a warning goes to stderr once the
// releases succeeded, so an error stays the only stderr line), else keyed from the OS.
std::vector<ReleaseOutcome> run_releases(
    const ReleaseOptions& options, std::uint64_t candidates,
    const std::function<ReleaseOutcome(Context&)>& release_once);

double seconds_since(std::chrono::steady_clock::time_point start);

}  // namespace dpselect::cli
