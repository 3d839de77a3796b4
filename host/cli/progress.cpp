#include "progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace dpselect::cli {

namespace {
// Below this many candidates a release takes well under a second on one core: not worth a line.
constexpr std::uint64_t long_work_items = 10'000'000;
}  // namespace

Progress::Progress(std::string what, std::uint64_t work_items)
    : what_(std::move(what)), shown_(work_items > long_work_items && isatty(STDERR_FILENO)) {
  if (shown_) std::fprintf(stderr, "dpselect: %s: working...\n", what_.c_str());
}

void Progress::done(double seconds) {
  if (shown_) std::fprintf(stderr, "dpselect: %s: done in %.3g s\n", what_.c_str(), seconds);
}

}  // namespace dpselect::cli
