// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

#include "dpselect/types.hpp"

namespace dpselect::detail {

// Where a release's utility reference r (NoiseSpec::utility_reference) comes from.
enum class UtilityReference {
  zero,          // r = 0: no shift
  public_value,  // a public r (SelectionParams::utility_reference)
  from_data,     // fixed from a utility of the data: it moves by up to Delta between neighbours
};

// The (epsilon, delta) that double arithmetic and finite random bits add to a release whose
// exact-arithmetic guarantee is `epsilon`, with |u - r| <= max_abs_shifted_utility; derivation in
// floating_point_slack.cpp.
FloatingPointSlack floating_point_slack(double epsilon, double score_scale, double sensitivity,
                                        double max_abs_shifted_utility, std::uint64_t candidates,
                                        UtilityReference reference = UtilityReference::zero);

}  // namespace dpselect::detail

namespace dpselect::detail {

// The slack of the bid-interval pricing sampler; derivation in floating_point_slack.cpp.
// `revenue_bound` bounds every revenue (largest price times the number of bidders), `runs` is
// the number of bid intervals (bids + 1).
// The common end of the two-stage interval samplers' slack (bid intervals; quantile intervals):
// stage 1 picks an interval by Gumbel-max with every computed score within stage1_score_error of
// its exact log-mass, the exact weights are off by at most exponent_error, stage 2 draws up to
// kMaxGeometricAttempts x 4 digits by truncated_geometric; `runs` intervals.
FloatingPointSlack two_stage_interval_slack(double epsilon, long double stage1_score_error,
                                            long double exponent_error, std::uint64_t runs);

FloatingPointSlack bid_interval_slack(double epsilon, double score_scale, double revenue_bound, double grid_step,
                                      std::uint64_t grid_size, std::uint64_t runs);

}  // namespace dpselect::detail

namespace dpselect::detail {

// The slack of a sparse vector release (derivation in floating_point_slack.cpp): comparisons
// of epsilon_comparisons-DP with the given Laplace scales, |f_i| <= largest_abs_value, `draws`
// Laplace draws in all.
FloatingPointSlack sparse_vector_slack(double epsilon_comparisons, double sensitivity, double threshold_scale,
                                       double query_scale, double threshold, double largest_abs_value,
                                       std::uint64_t draws, double epsilon_total);

}  // namespace dpselect::detail
