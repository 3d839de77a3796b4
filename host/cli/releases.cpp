// SPDX-License-Identifier: Apache-2.0
#include "releases.hpp"

#include <cstdio>
#include <string>

#include "job.hpp"
#include "numbers.hpp"
#include "progress.hpp"

namespace dpselect::cli {

ReleaseOutcome outcome_of(const Selection& selection) {
  return {selection.index, std::nullopt, selection.report, 0.0};
}

ReleaseOutcome outcome_of(const PriceSelection& selection) {
  return {selection.candidate, selection.price, selection.report, 0.0,
          selection.sampler_depends_on_data};
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<double> time_releases(const ReleaseOptions& options, std::uint64_t candidates,
                                  const std::function<void(ReleaseTarget&)>& release_once) {
  const std::unique_ptr<ReleaseTarget> target = make_release_target(options);
  const bool prints = job_place().rank == 0;  // one progress line and one warning per job
  // Work that can last more than about 2 s (a few hundred million candidates per second per
  // core): progress on a terminal. Public sizes only.
  constexpr std::uint64_t long_work_candidates = 100'000'000;
  std::uint64_t work = 0;
  const bool long_work = __builtin_mul_overflow(candidates, options.repeat, &work) ||
                         work >= long_work_candidates;
  std::vector<double> seconds;
  {  // the progress line is cleared before the warning below
    Progress progress("releases over " + format_number(candidates) + " candidates",
                      options.repeat, "releases", options.progress && prints, long_work && prints);
    for (std::uint64_t number = 1; number <= options.repeat; ++number) {
      const auto start = std::chrono::steady_clock::now();
      release_once(*target);
      seconds.push_back(seconds_since(start));
      progress.update(number);
    }
  }
  if (options.seed && prints) {
    std::fputs(
        "dpselect: warning: --seed makes the noise reproducible and predictable; never use it "
        "for a real release\n",
        stderr);
  }
  return seconds;
}

}  // namespace dpselect::cli
