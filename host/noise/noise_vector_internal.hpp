// SPDX-License-Identifier: Apache-2.0
// The CPU pass of noise_vector.hpp, for host/noise/noise_vector.cpp and the benchmarks.
#pragma once

#include <cstdint>
#include <span>

#include "dpselect/continuous_noise.hpp"

namespace dpselect::detail {

// values[i] += noise of coordinate first_coordinate + i under (key, stream), on all cores (OpenMP).
// False if some coordinate ran out of random blocks (that value is then NaN; the others are
// noised). first_coordinate + values.size() must be <= 2^54.
bool cpu_add_noise(std::span<double> values, std::uint64_t first_coordinate, const RandomKey& key,
                   std::uint64_t stream, const continuous::CoordinateNoise& noise);

}  // namespace dpselect::detail
