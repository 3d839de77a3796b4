// The parts of a command's output that several commands share: the privacy summary of its
// releases and the description of an input file.
#pragma once

#include <string>
#include <vector>

#include "common_options.hpp"
#include "input_files.hpp"
#include "output.hpp"
#include "releases.hpp"

namespace dpselect::cli {

// Mechanism, epsilon per release and in total (basic composition), the floating-point slack,
// and one item per release: index (and price), backend that ran, timing, slack.
void add_release_summary(Record& out, const ReleaseOptions& options,
                         const std::vector<ReleaseOutcome>& outcomes);

// Format, element type, .npy shape, and the number of values when that number is public (the
// candidates of a selection; not the number of bidders, which is data).
void add_input(Record& out, const std::string& key, const InputValues& input, bool count_is_public);

// Seconds rounded to microseconds, the resolution worth printing.
double rounded_seconds(double seconds);

}  // namespace dpselect::cli
