// SPDX-License-Identifier: Apache-2.0
// The parameters that score one selection release's candidates (the scoring itself:
// screened_scoring.hpp). Internal; the functor entry points reach it through release_access.hpp.
#pragma once

#include <cstdint>

#include "dpselect/detail/host_device.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/types.hpp"

namespace dpselect::detail {

// Everything a kernel or CPU worker needs to score candidates of one release. Trivially
// copyable; passed to kernels by value.
struct NoiseSpec {
  Mechanism mechanism;
  // Multiplier that turns a utility into a score in units of the noise scale: eps/(2*Delta),
  // or eps/Delta for monotone utilities.
  double score_scale;
  RandomKey key;
  std::uint64_t stream;
  // Largest |utility - utility_reference| accepted: SelectionParams::utility_bound, or +inf when
  // none was given.
  double utility_limit;
  // The release's reference r (SelectionParams::utility_reference): every score is computed from
  // u - r, rounded once. The mechanisms are invariant to adding one constant to every utility
  // (each noisy max compares u_i + noise_i across i), so the distribution is the same for any r,
  // while the scores' rounding follows the utilities' spread around r, not their magnitude
  // (utilities 10^15 + (2, 1, 0) lose their differences at r = 0 but keep them at r = 10^15).
  // 0 leaves every utility as it is.
  double utility_reference = 0.0;
  // Set for a release over one array in device memory whose r comes from the data (select over a
  // DeviceSpan): the fused kernel loads the utility at its pass's first index, the range's first,
  // and takes r from it (reference_from_first_utility below), so that the host does not read it
  // back before the launch. Only the single-launch device-array pass reads it.
  bool reference_on_device = false;
};

// r taken from the range's first utility: that utility where finite, else 0 (a NaN or an infinity
// there is refused by finish() all the same, and no finite r changes the distribution).
DPSELECT_HD DPSELECT_FORCEINLINE double reference_from_first_utility(double first_utility) {
  return first_utility - first_utility == 0.0 ? first_utility : 0.0;  // false for NaN and +-inf
}

}  // namespace dpselect::detail
