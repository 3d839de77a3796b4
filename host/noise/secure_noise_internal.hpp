// SPDX-License-Identifier: Apache-2.0
// The planners behind secure_noise.hpp, shared with the NumericSparse answers (sparse_vector).
#pragma once

#include <cstdint>

#include "dpselect/secure_noise.hpp"
#include "noise/secure_noise_core.hpp"

namespace dpselect::detail {

// Secure Laplace for `coordinates` values of L1 sensitivity `sensitivity` whose noise would be
// Lap(scale) in exact arithmetic (scale = sensitivity / epsilon): the grid and the integer scale
// t >= S_1 scale / sensitivity (secure_noise.hpp). Throws InvalidArgument naming `scale_name` if
// the scale is out of the supported range, "coordinates / epsilon" if t would exceed 2^32.
SecureNoisePlan plan_secure_laplace(double sensitivity, double scale, std::uint64_t coordinates, bool inputs_on_grid,
                                    const char* scale_name);

// The core a coordinate loop needs for `plan`.
SecureNoiseCore secure_core(const SecureNoisePlan& plan, bool gaussian, const RandomKey& key, std::uint64_t stream,
                            std::uint64_t first_position);

}  // namespace dpselect::detail
