// SPDX-License-Identifier: Apache-2.0
/// @file
/// Private selection over a user functor on the GPU (CUDA-only header; compile with nvcc).
///
/// The functor is a small, trivially copyable object with
///   __host__ __device__ Utility operator()(std::uint64_t index) const
/// (Utility convertible to double), a pure function of the index: the pass may call it more than
/// once for an index (again for the few candidates that pass the cheap screen), and nothing says
/// in which order or on which thread. The same functor runs on the CPU path when the release's
/// backend resolves to the CPU, with the same noise: the CPU and GPU return the same index for
/// the same key provided the functor returns the same bits on both. The library's own arithmetic
/// is written so that it does; a functor's is compiled with the flags of your translation unit,
/// and nvcc fuses a * b + c into one fused multiply-add on the device by default (--fmad=true)
/// while the host compiler may not (or may, under -ffp-contract=fast with FMA hardware): write
/// multiply-adds as explicit fma(), or compile with --fmad=false, and avoid functions whose last
/// bit differs between glibc and CUDA (sin, exp, pow). The privacy guarantee holds either way;
/// only the CPU = GPU identity of the chosen index needs it. Example:
/// @code{.cpp}
/// struct Quadratic { double peak; __host__ __device__ double operator()(std::uint64_t i) const {
///     const double d = double(i) - peak; return -d * d; } };
/// auto s = dpselect::select_functor(ctx, Quadratic{3e9}, {0, 1ull << 33}, params, stream);
/// @endcode
#pragma once

#include <cuda_runtime.h>

#include "dpselect/detail/fused_select_kernel.cuh"
#include "dpselect/select.hpp"
#include "dpselect/select_functor.hpp"

namespace dpselect {

/// Evaluates candidates `range` of `release` on the backend its params resolve to. On the GPU
/// the work is ordered on `stream` and the call synchronizes it.
///
/// The building block for sharding a functor's index space by hand across devices or processes:
/// each shard of one release is evaluated once, the results are merged with merge() and passed to
/// Release::finish. On the CPU (Backend::Cpu, or Auto without a usable GPU) it is
/// evaluate_functor_on_cpu and `stream` is not used.
/// @tparam UtilityFn A trivially copyable functor with a `__host__ __device__` call operator (see the
///         file's description).
/// @param release The release in progress.
/// @param utility The functor; on the GPU it may be called more than once per index.
/// @param range The candidates to evaluate: non-empty, end at most 2^63, disjoint from the ranges this
///        release already evaluated.
/// @param stream A stream of the current device (nullptr: the legacy default stream).
/// @return This shard's result. It is SECRET (shard_result.hpp): pass it only to merge() and
///         Release::finish.
/// @throws InvalidArgument for an empty range, begin > end or end beyond 2^63.
/// @throws BackendUnavailable for Backend::Gpu without a usable GPU (the release stays charged).
/// @throws UsageError if `range` overlaps a range this release already evaluated, after finish, or on
///         a moved-from release.
/// @throws CudaError if a CUDA call of the GPU pass fails.
/// @par Synchronisation
/// On the GPU the pass is enqueued on `stream` behind the work already there (so device data the
/// functor reads, written by earlier work on `stream`, is seen as written), and the call synchronizes
/// `stream` before it returns. The functor object is copied to the device by value; memory it points
/// to must stay valid until the call returns.
/// @par Privacy
/// Releases nothing. The range is claimed before the pass and stays claimed if the pass throws.
template <class UtilityFn>
ShardResult evaluate_functor(Release& release, const UtilityFn& utility, IndexRange range,
                             cuda_stream_t stream) {
  detail::validate_range(range);
  if (detail::ReleaseAccess::resolved_backend(release) == Backend::Cpu) {
    return evaluate_functor_on_cpu(release, utility, range);
  }
  detail::ReleaseAccess::claim(release, range);
  return detail::ReleaseAccess::stamped(
      release, range,
      detail::run_fused_select(detail::FunctorSource<UtilityFn>{utility}, range.begin, range.size(),
                               detail::ReleaseAccess::noise_spec(release), stream));
}

/// One release over candidates `range`, on the GPU when the backend resolves to it.
///
/// Context::begin_release, evaluate_functor over the whole range, Release::finish. Backend::Auto runs
/// on the GPU when one is usable, else on the CPU with the same noise. The scores use the utility
/// reference `params.utility_reference`, or 0 when none is given: give one when the utilities share a
/// large offset.
/// @tparam UtilityFn A trivially copyable functor with a `__host__ __device__` call operator returning
///         a value convertible to double: a pure function of the index (see the file's description).
/// @param context The context whose key and next stream the release uses (and whose accountant it
///        charges).
/// @param utility The functor. Its values must be finite, or -inf to exclude a candidate.
/// @param range The candidates [begin, end): non-empty, end at most 2^63 (2^36 and more are fine: no
///        memory is used per candidate).
/// @param params The release's parameters (SelectionParams).
/// @param stream A stream of the current device (nullptr: the legacy default stream); unused on the
///        CPU.
/// @return The selected index (within `range`) and its report.
/// @throws InvalidArgument before the charge for an empty or inverted range, an end beyond 2^63 or bad
///         params; after it (from Release::finish) for a NaN, +inf or out-of-bound utility, every
///         candidate excluded, or a floating-point slack that would reach epsilon.
/// @throws BackendUnavailable for Backend::Gpu without a usable GPU, before the charge.
/// @throws BudgetExceeded when the context's accountant refuses the release; nothing is drawn.
/// @throws UsageError on a moved-from context.
/// @throws CudaError if a CUDA call of the GPU pass fails.
/// @par Synchronisation
/// On the GPU the pass is enqueued on `stream` behind the work already there, and the call
/// synchronizes `stream` before it returns. Work on other streams is not ordered with it.
/// @par Privacy
/// The index is epsilon-DP under exact arithmetic (Dwork & Roth 2014, Def. 3.4, Thm 3.10 for the
/// exponential mechanism; McKenna & Sheldon 2020 for permute-and-flip; Dwork & Roth Claim 3.9 for
/// Laplace report-noisy-max), and the computed release is (epsilon + report.slack.epsilon,
/// report.slack.delta)-DP, provided the functor's sensitivity is at most params.sensitivity. The
/// context's accountant is charged one release of `release_kind(params.mechanism)` at
/// `params.epsilon` before the stream is drawn; a release refused later because of the data stays
/// charged. The privacy guarantee does not depend on the CPU and GPU computing the same bits.
template <class UtilityFn>
Selection select_functor(Context& context, const UtilityFn& utility, IndexRange range,
                         const SelectionParams& params, cuda_stream_t stream) {
  detail::validate_range(range);
  detail::resolve_backend(params.backend);
  Release release = context.begin_release(params);
  return release.finish(evaluate_functor(release, utility, range, stream));
}

}  // namespace dpselect
