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
///   struct Revenue { const double* sorted_bids; std::uint64_t n; double step;
///                    double operator()(std::uint64_t i) const { ... } };
///   auto s = dpselect::select_functor(ctx, Revenue{...}, {0, 10'000'000'000}, params);
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
