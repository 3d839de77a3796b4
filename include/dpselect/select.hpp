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
/// @code{.cpp}
/// dpselect::Context ctx;                        // key from the OS CSPRNG
/// dpselect::SelectionParams p{.mechanism = dpselect::Mechanism::exponential,
///                             .epsilon = 1.0, .sensitivity = 1.0};
/// dpselect::Selection s = dpselect::select(ctx, std::span<const float>(scores), p);
/// // s.index, s.report.executed_on, s.report.slack.epsilon ...
/// @endcode
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "dpselect/chunked_values.hpp"
#include "dpselect/context.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/shard_result.hpp"
#include "dpselect/types.hpp"

namespace dpselect {

/// @name Utilities in host memory
///@{

/// Utilities in host memory; Backend::Gpu streams them through the device in chunks.
///
/// One release over candidates [0, utilities.size()): Context::begin_release, Release::evaluate over
/// the whole array, Release::finish. Without a utility_reference or utility_bound the scores are
/// computed relative to the first utility (0 if it is not finite), so utilities such as 10^15 plus
/// small differences keep their differences (SelectionParams::utility_reference).
/// @param context The context whose key and next stream the release uses (and whose accountant it
///        charges).
/// @param utilities The utility of candidate i at index i: finite, or -inf to exclude the candidate;
///        not empty, at most 2^63 of them. Float values are widened exactly.
/// @param params The release's parameters (SelectionParams).
/// @return The selected index and its report.
/// @throws InvalidArgument before the charge for bad params or empty utilities; after it (from
///         Release::finish) for a NaN, +inf or out-of-bound utility (naming its index), every
///         candidate excluded, or a floating-point slack that would reach epsilon.
/// @throws BackendUnavailable for Backend::Gpu without a usable GPU, before the charge.
/// @throws BudgetExceeded when the context's accountant refuses the release; nothing is drawn.
/// @throws UsageError on a moved-from context.
/// @throws CudaError if a CUDA call of the GPU pass fails.
/// @par Synchronisation
/// On the GPU the pass runs on streams of the library's own and is complete when the call returns;
/// only the calling thread reads `utilities`, which is yours again on return, also after an exception.
/// @par Privacy
/// The index is epsilon-DP under exact arithmetic (Dwork & Roth 2014, Def. 3.4, Thm 3.10 for the
/// exponential mechanism; McKenna & Sheldon 2020 for permute-and-flip; Dwork & Roth Claim 3.9 for
/// Laplace report-noisy-max), and the computed release is (epsilon + report.slack.epsilon,
/// report.slack.delta)-DP. The context's accountant is charged one release of
/// `release_kind(params.mechanism)` at `params.epsilon` after every parameter check and before the
/// stream is drawn; a release refused later because of the data stays charged. Publish the report's
/// slack only when a utility_bound was given (slack.depends_on_data false).
Selection select(Context& context, std::span<const float> utilities, const SelectionParams& params);
Selection select(Context& context, std::span<const double> utilities, const SelectionParams& params);
///@}

/// @name Utilities read a chunk at a time
///@{

/// Utilities read by the caller a chunk at a time (chunked_values.hpp): an input larger than
/// memory. The same release, bit for bit, as select() over the whole array: the same index, the same
/// report, the same reference (the first utility) and the same charge.
///
/// Each chunk is evaluated as a shard of one release (Context::begin_release, Release::evaluate,
/// merge, Release::finish) on the backend params.backend resolves to; on the GPU every chunk is
/// copied to the device and scored there.
/// @param context As for select().
/// @param utilities The candidates' count, the reader and the chunk size (ChunkedValues).
/// @param params As for select().
/// @return The selected index and its report.
/// @throws InvalidArgument before the charge for bad params, a size of 0 or beyond 2^63, an empty
///         reader or a chunk size of 0; after it as select() does.
/// @throws BackendUnavailable as select() does.
/// @throws BudgetExceeded as select() does.
/// @throws UsageError as select() does.
/// @throws CudaError as select() does.
/// @note An exception thrown by `utilities.read` propagates, after the charge.
/// @par Privacy
/// As select() over the same utilities.
Selection select(Context& context, const ChunkedValues<float>& utilities, const SelectionParams& params);
Selection select(Context& context, const ChunkedValues<double>& utilities, const SelectionParams& params);
///@}

/// @name Utilities in device memory
///@{

/// Utilities in device memory (Backend::Cpu is an error for these). Synchronizes `stream`.
///
/// One release over candidates [0, utilities.size) on the GPU. Without a utility_reference or
/// utility_bound the scores are computed relative to the first utility, read back on `stream`.
/// @param context The context whose key and next stream the release uses (and whose accountant it
///        charges).
/// @param utilities The utilities in memory the current device can read (DeviceSpan): finite, or -inf
///        to exclude a candidate; size >= 1, at most 2^63.
/// @param params The release's parameters (SelectionParams); backend Auto or Gpu.
/// @param stream A stream of the current device (nullptr: the legacy default stream).
/// @return The selected index and its report.
/// @throws InvalidArgument before the charge for bad params, an empty span, a nullptr or pageable
///         host pointer the device cannot read, or Backend::Cpu; after it (from Release::finish) for
///         a NaN, +inf or out-of-bound utility, every candidate excluded, or a floating-point slack
///         that would reach epsilon.
/// @throws BackendUnavailable without a usable GPU, before the charge.
/// @throws BudgetExceeded when the context's accountant refuses the release; nothing is drawn.
/// @throws UsageError on a moved-from context.
/// @throws CudaError if a CUDA call fails.
/// @par Synchronisation
/// The pass (and the read of the first utility) is enqueued on `stream` behind the work already
/// there, so utilities written by earlier work on `stream` are read as written; the call synchronizes
/// `stream` before it returns, after which the memory may be overwritten or freed. Work on other
/// streams is not ordered with it: synchronize it first.
/// @par Privacy
/// As for utilities in host memory: epsilon-DP under exact arithmetic (Dwork & Roth 2014, Def. 3.4,
/// Thm 3.10; McKenna & Sheldon 2020; Dwork & Roth Claim 3.9), (epsilon + report.slack.epsilon,
/// report.slack.delta)-DP as computed; one release of `release_kind(params.mechanism)` at
/// `params.epsilon` charged before the stream is drawn.
Selection select(Context& context, DeviceSpan<const float> utilities, const SelectionParams& params,
                 cuda_stream_t stream);
Selection select(Context& context, DeviceSpan<const double> utilities,
                 const SelectionParams& params, cuda_stream_t stream);
///@}

/// True when this build has the CUDA backend and a CUDA device is usable now.
///
/// The current CUDA device is probed once per process (by the first call of this function, of
/// gpu_unusable_reason or of any entry point that resolves a backend) and the answer is kept: a
/// device that becomes usable later is not seen.
/// @return Whether Backend::Auto runs on the GPU and Backend::Gpu is accepted.
bool gpu_usable();
/// True when this library was built with the CUDA backend.
/// @return Whether the library carries the CUDA backend (whether or not a GPU is present).
bool built_with_cuda();
/// Why Backend::Auto runs on the CPU although an NVIDIA GPU is present: this build has no CUDA
/// backend, carries no kernel for the GPU's architecture, needs a newer driver, ... with the fix
/// (one sentence, valid for the life of the process). Empty when a GPU is usable or none is
/// present. Probes the device once per process, as the first release with Backend::Auto does.
/// @return The reason and its fix, or an empty view; the text lives as long as the process.
std::string_view gpu_unusable_reason();

}  // namespace dpselect
