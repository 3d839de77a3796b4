// SPDX-License-Identifier: Apache-2.0
// Making the releases of one command: one context, --repeat releases, each timed.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
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

// What one command's releases work over, as its progress line says it: `what` ("releases over
// 16 candidates") and the public size of one release's work, which decides whether a run is
// long enough to show progress on a terminal (0: no public size, shown only with --progress).
// Neither may come from private data (the number of bids, of distinct keys, of values under
// add/remove neighbours).
struct ReleaseWork {
  std::string what;
  std::uint64_t size = 0;
};
// "releases over N candidates", of size N.
ReleaseWork over_candidates(std::uint64_t candidates);

// Makes options.repeat independent releases of `release_once` on one release target
// (release_target.hpp: this process, or every rank of an MPI job): its context fixed-seed when
// options.seed is set, else keyed from the OS. Before the first release it prints
// options.warnings and, with --seed, the warning that the noise is predictable (the input is
// read and checked by then, so a bad input still gets its error as the only line; a refusal by
// the library when a release starts follows them). Returns the wall time of each release.
std::vector<double> time_releases(const ReleaseOptions& options, const ReleaseWork& work,
                                  const std::function<void(ReleaseTarget&)>& release_once);

// time_releases() collecting what `release_once` returns: ReleaseOutcome, or any outcome type
// with a `seconds` member, which is set to the wall time of its release.
template <class ReleaseOnce>
auto run_releases(const ReleaseOptions& options, const ReleaseWork& work, ReleaseOnce&& release_once) {
  std::vector<std::invoke_result_t<ReleaseOnce&, ReleaseTarget&>> outcomes;
  const std::vector<double> seconds = time_releases(
      options, work, [&](ReleaseTarget& target) { outcomes.push_back(release_once(target)); });
  for (std::size_t i = 0; i < outcomes.size(); ++i) outcomes[i].seconds = seconds[i];
  return outcomes;
}

// run_releases() over `candidates` candidates (over_candidates).
template <class ReleaseOnce>
auto run_releases(const ReleaseOptions& options, std::uint64_t candidates, ReleaseOnce&& release_once) {
  return run_releases(options, over_candidates(candidates), std::forward<ReleaseOnce>(release_once));
}

double seconds_since(std::chrono::steady_clock::time_point start);

}  // namespace dpselect::cli
