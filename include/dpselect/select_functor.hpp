// SPDX-License-Identifier: Apache-2.0
/// @file
/// Private selection over utilities computed on the fly by a functor, on the CPU. For the GPU
/// (and Backend::Auto choosing it), include dpselect/select.cuh and compile with nvcc; the same
/// functor type runs on both paths.
///
/// The functor: a copyable object with `operator()(std::uint64_t index) const` returning the
/// utility of candidate `index` (anything convertible to double). It must be a pure function of
/// the index and the private data: it is called from several threads, in any order, once per
/// index. Example:
/// @code{.cpp}
/// struct Revenue { const double* sorted_bids; std::uint64_t n; double step;
///                  double operator()(std::uint64_t i) const { ... } };
/// auto s = dpselect::select_functor(ctx, Revenue{...}, {0, 10'000'000'000}, params);
/// @endcode
///
/// A functor that throws makes the call throw that exception; the release is then spent (and
/// charged) and nothing is released.
#pragma once

#include <cstdint>

#include "dpselect/context.hpp"
#include "dpselect/detail/release_access.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/shard_result.hpp"

namespace dpselect {

namespace detail {
template <class UtilityFn>
void fill_from_functor(const void* functor, std::uint64_t first_index, std::uint64_t count,
                       double* out) {
  const UtilityFn& utility = *static_cast<const UtilityFn*>(functor);
  for (std::uint64_t k = 0; k < count; ++k) out[k] = static_cast<double>(utility(first_index + k));
}
}  // namespace detail

/// Evaluates candidates `range` of `release` on the CPU (whatever the release's backend).
///
/// The building block for sharding a functor's index space by hand: each shard of one release is
/// evaluated once, the results are merged with merge() and passed to Release::finish. Uses the
/// release's utility reference (SelectionParams::utility_reference, or 0).
/// @tparam UtilityFn A copyable callable, `operator()(std::uint64_t) const` returning a value
///         convertible to double (see the file's description).
/// @param release The release in progress.
/// @param utility The functor; called once per index of `range`, from several threads.
/// @param range The candidates to evaluate: non-empty, end at most 2^63, disjoint from the ranges this
///        release already evaluated.
/// @return This shard's result. It is SECRET (shard_result.hpp): pass it only to merge() and
///         Release::finish.
/// @throws InvalidArgument for an empty range, begin > end or end beyond 2^63.
/// @throws UsageError if `range` overlaps a range this release already evaluated, after finish, or on
///         a moved-from release.
/// @par Privacy
/// Releases nothing. The range is claimed before the functor is called and stays claimed if it throws.
template <class UtilityFn>
ShardResult evaluate_functor_on_cpu(Release& release, const UtilityFn& utility, IndexRange range) {
  detail::ReleaseAccess::claim(release, range);
  return detail::ReleaseAccess::stamped(
      release, range,
      detail::cpu_evaluate_generated(detail::ReleaseAccess::noise_spec(release), range,
                                     &detail::fill_from_functor<UtilityFn>, &utility));
}

/// One release over candidates `range` on the CPU. Backend::Gpu is an error here (use
/// select.cuh); Backend::Auto runs on the CPU.
///
/// Context::begin_release, evaluate_functor_on_cpu over the whole range, Release::finish. The scores
/// use the utility reference `params.utility_reference`, or 0 when none is given: give one when the
/// utilities share a large offset.
/// @tparam UtilityFn A copyable callable, `operator()(std::uint64_t) const` returning a value
///         convertible to double: a pure function of the index (see the file's description).
/// @param context The context whose key and next stream the release uses (and whose accountant it
///        charges).
/// @param utility The functor; called once per index, from several threads, in any order. Its values
///        must be finite, or -inf to exclude a candidate.
/// @param range The candidates [begin, end): non-empty, end at most 2^63.
/// @param params The release's parameters (SelectionParams); backend Auto or Cpu.
/// @return The selected index (within `range`) and its report.
/// @throws InvalidArgument before the charge for an empty or inverted range, an end beyond 2^63, bad
///         params or Backend::Gpu; after it (from Release::finish) for a NaN, +inf or out-of-bound
///         utility, every candidate excluded, or a floating-point slack that would reach epsilon.
/// @throws BudgetExceeded when the context's accountant refuses the release; nothing is drawn.
/// @throws UsageError on a moved-from context.
/// @par Privacy
/// The index is epsilon-DP under exact arithmetic (Dwork & Roth 2014, Def. 3.4, Thm 3.10 for the
/// exponential mechanism; McKenna & Sheldon 2020 for permute-and-flip; Dwork & Roth Claim 3.9 for
/// Laplace report-noisy-max), and the computed release is (epsilon + report.slack.epsilon,
/// report.slack.delta)-DP, provided the functor's sensitivity is at most params.sensitivity. The
/// context's accountant is charged one release of `release_kind(params.mechanism)` at
/// `params.epsilon` before the stream is drawn; a release refused later because of the data stays
/// charged.
template <class UtilityFn>
Selection select_functor(Context& context, const UtilityFn& utility, IndexRange range,
                         const SelectionParams& params) {
  detail::validate_range(range);
  if (params.backend == Backend::Gpu) {
    throw InvalidArgument(
        "dpselect: backend Gpu needs dpselect/select.cuh to evaluate a functor (got the CPU-only "
        "header select_functor.hpp)");
  }
  Release release = context.begin_release(params);
  return release.finish(evaluate_functor_on_cpu(release, utility, range));
}

}  // namespace dpselect
