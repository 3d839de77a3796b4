// SPDX-License-Identifier: Apache-2.0
// Making the releases of one command: one context, --repeat releases, each timed.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <type_traits>
#include <vector>

#include "common_options.hpp"
#include "dpselect/context.hpp"
#include "dpselect/pricing.hpp"
#include "release_target.hpp"

namespace dpselect::cli {

// One private release as the command reports it.
struct ReleaseOutcome {
  std::uint64_t index = 0;      // the released candidate index
  std::optional<double> price;  // the released price, for the pricing commands
  SelectionReport report;
  double seconds = 0.0;  // wall time of the release
  // The automatic pricing sampler chose by the private number of bids, and the two samplers run
  // on different backends (bid intervals always on the CPU): where it ran would tell which.
  bool executed_on_withheld = false;
};

ReleaseOutcome outcome_of(const Selection& selection);
ReleaseOutcome outcome_of(const PriceSelection& selection);

// Makes options.repeat independent releases of `release_once` (over `candidates` candidates)
// on one release target (release_target.hpp: this process, or every rank of an MPI job): its
// context fixed-seed when options.seed is set (a warning goes to stderr once the releases
// succeeded, so an error stays the only stderr line), else keyed from the OS. Returns the wall
// time of each release.
std::vector<double> time_releases(const ReleaseOptions& options, std::uint64_t candidates,
                                  const std::function<void(ReleaseTarget&)>& release_once);

// time_releases() collecting what `release_once` returns: ReleaseOutcome, or any outcome type
// with a `seconds` member, which is set to the wall time of its release.
template <class ReleaseOnce>
auto run_releases(const ReleaseOptions& options, std::uint64_t candidates,
                  ReleaseOnce&& release_once) {
  std::vector<std::invoke_result_t<ReleaseOnce&, ReleaseTarget&>> outcomes;
  const std::vector<double> seconds = time_releases(
      options, candidates, [&](ReleaseTarget& target) { outcomes.push_back(release_once(target)); });
  for (std::size_t i = 0; i < outcomes.size(); ++i) outcomes[i].seconds = seconds[i];
  return outcomes;
}

double seconds_since(std::chrono::steady_clock::time_point start);

}  // namespace dpselect::cli
