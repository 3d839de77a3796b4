#include "releases.hpp"

#include <cstdio>
#include <string>

#include "numbers.hpp"
#include "progress.hpp"

namespace dpselect::cli {

ReleaseOutcome outcome_of(const Selection& selection) {
  return {selection.index, std::nullopt, selection.report, 0.0};
}

ReleaseOutcome outcome_of(const PriceSelection& selection) {
  return {selection.candidate, selection.price, selection.report, 0.0};
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<double> time_releases(const ReleaseOptions& options, std::uint64_t candidates,
                                  const std::function<void(Context&)>& release_once) {
  Context context = options.seed ? Context::with_fixed_seed(*options.seed, options.generator)
                                 : Context::from_os_entropy(options.generator);
  std::vector<double> seconds;
  for (std::uint64_t number = 1; number <= options.repeat; ++number) {
    Progress progress("release " + format_number(number) + " of " + format_number(options.repeat) +
                          " over " + format_number(candidates) + " candidates",
                      candidates);
    const auto start = std::chrono::steady_clock::now();
    release_once(context);
    seconds.push_back(seconds_since(start));
    progress.done(seconds.back());
  }
  if (options.seed) {
    std::fputs(
        "dpselect: warning: --seed makes the noise reproducible and predictable; never use it "
        "for a real release\n",
        stderr);
  }
  return seconds;
}

}  // namespace dpselect::cli
