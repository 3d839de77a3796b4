#pragma once

#include <cstdint>

#include "dpselect/types.hpp"

namespace dpselect::detail {

// The (epsilon, delta) that double arithmetic and finite random bits add to a release whose
// exact-arithmetic guarantee is `epsilon`; derivation in floating_point_slack.cpp.
FloatingPointSlack floating_point_slack(double epsilon, double score_scale, double sensitivity,
                                        double max_abs_utility, std::uint64_t candidates);

}  // namespace dpselect::detail
