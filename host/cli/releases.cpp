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

ReleaseWork over_candidates(std::uint64_t candidates) {
  return {"releases over " + format_number(candidates) + " candidates", candidates};
}

std::vector<double> time_releases(const ReleaseOptions& options, const ReleaseWork& work,
                                  const std::function<void(ReleaseTarget&)>& release_once) {
  const std::unique_ptr<ReleaseTarget> target = make_release_target(options);
  const bool prints = job_place().rank == 0;  // one progress line and one of each warning per job
  if (prints) {
    for (const std::string& warning : options.warnings) {
      std::fprintf(stderr, "dpselect: warning: %s\n", warning.c_str());
    }
    if (options.seed) {
      std::fputs(
          "dpselect: warning: --seed makes the noise reproducible and predictable; never use it "
          "for a real release\n",
          stderr);
    }
  }
  // Work that can last more than about 2 s (a few hundred million candidates per second per
  // core): progress on a terminal. Public sizes only.
  constexpr std::uint64_t long_work_size = 100'000'000;
  std::uint64_t total_work = 0;
  const bool long_work = __builtin_mul_overflow(work.size, options.repeat, &total_work) ||
                         total_work >= long_work_size;
  std::vector<double> seconds;
  seconds.reserve(options.repeat);  // at most kMaxRepeat (common_options.hpp)
  Progress progress(work.what, options.repeat, "releases", options.progress && prints, long_work && prints);
  for (std::uint64_t number = 1; number <= options.repeat; ++number) {
    const auto start = std::chrono::steady_clock::now();
    release_once(*target);
    seconds.push_back(seconds_since(start));
    progress.update(number);
  }
  return seconds;
}

}  // namespace dpselect::cli
