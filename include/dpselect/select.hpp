// SPDX-License-Identifier: Apache-2.0
/// @file
/// One-call private selection: begin a release, evaluate the whole range, finish.
///
/// Privacy: with Delta the sensitivity of the utility and eps = params.epsilon, each call is
/// eps-DP under exact arithmetic (sources on Mechanism); the report's slack bounds what double
/// arithmetic adds. Ties in the noisy scores go to the smallest index. A utility of -inf
/// excludes that candidate; this is private only if the set of excluded candidates is the same
/// for all neighbouring datasets (a public constraint, not a data-dependent one). NaN and +inf
/// utilities are errors.
///
/// Example:
///   dpselect::Context ctx;                        // key from the OS CSPRNG
///   dpselect::SelectionParams p{.mechanism = dpselect::Mechanism::exponential,
///                               .epsilon = 1.0, .sensitivity = 1.0};
///   dpselect::Selection s = dpselect::select(ctx, std::span<const float>(scores), p);
///   // s.index, s.report.executed_on, s.report.slack.epsilon ...
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "dpselect/context.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/shard_result.hpp"
#include "dpselect/types.hpp"

namespace dpselect {

/// Utilities in host memory; Backend::Gpu streams them through the device in chunks.
Selection select(Context& context, std::span<const float> utilities, const SelectionParams& params);
Selection select(Context& context, std::span<const double> utilities, const SelectionParams& params);

/// Utilities in device memory (Backend::Cpu is an error for these). Synchronizes `stream`.
Selection select(Context& context, DeviceSpan<const float> utilities, const SelectionParams& params,
                 cuda_stream_t stream);
Selection select(Context& context, DeviceSpan<const double> utilities,
                 const SelectionParams& params, cuda_stream_t stream);

/// True when this build has the CUDA backend and a CUDA device is usable now.
bool gpu_usable();
/// True when this library was built with the CUDA backend.
bool built_with_cuda();
/// Why Backend::Auto runs on the CPU although an NVIDIA GPU is present: this build has no CUDA
/// backend, carries no kernel for the GPU's architecture, needs a newer driver, ... with the fix
/// (one sentence, valid for the life of the process). Empty when a GPU is usable or none is
/// present. Probes the device once per process, as the first release with Backend::Auto does.
std::string_view gpu_unusable_reason();

}  // namespace dpselect
