// SPDX-License-Identifier: Apache-2.0
// Noise added to device arrays (kernels/secure_noise.cu, kernels/noise_vector.cu).
// Implemented in kernels/ when built with CUDA; in a CPU-only build by gpu_unavailable.cpp beside
// this header, where every entry point throws BackendUnavailable.
#pragma once

#include <cstdint>
#include <span>

#include "device/gpu.hpp"
#include "dpselect/continuous_noise.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/context.hpp"
#include "dpselect/types.hpp"
#include "noise/secure_noise_core.hpp"

namespace dpselect::detail {

// Secure noise (kernels/secure_noise.cu): the first value that is not finite or, with granularity
// > 0, not a multiple of it (first_invalid = count if none; largest_abs_value unused).
// Synchronizes `stream`.
DeviceValueScan gpu_secure_scan(const double* values, std::uint64_t count, double granularity, cuda_stream_t stream);
// values[i] = secure_coordinate(core, i, values[i]) for every i < count; returns whether any
// coordinate exhausted its random-bit budget. Synchronizes `stream`.
bool gpu_add_secure_noise(const SecureNoiseCore& core, double* values, std::uint64_t count, cuda_stream_t stream);
// values[i] += noise of coordinate first_coordinate + i (continuous_noise.hpp) for `count` values
// in device memory: a grid-stride kernel ordered on `stream`. False if some coordinate ran out of
// random blocks (that value is then NaN). Synchronizes `stream`; throws CudaError.
bool gpu_add_noise(double* values, std::uint64_t count, std::uint64_t first_coordinate, const RandomKey& key,
                   std::uint64_t stream, const continuous::CoordinateNoise& noise, cuda_stream_t cuda_stream);
// The same for values in host memory, copied to the device and back in chunks that fit its
// free memory (streamed both ways on streams of its own). Throws CudaError.
bool gpu_add_noise_host(std::span<double> values, const RandomKey& key, std::uint64_t stream,
                        const continuous::CoordinateNoise& noise);

}  // namespace dpselect::detail
