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
///   struct Quadratic { double peak; __host__ __device__ double operator()(std::uint64_t i) const {
///       const double d = double(i) - peak; return -d * d; } };
///   auto s = dpselect::select_functor(ctx, Quadratic{3e9}, {0, 1ull << 33}, params, stream);
#pragma once

#include <cuda_runtime.h>

#include "dpselect/detail/fused_select_kernel.cuh"
#include "dpselect/select.hpp"
#include "dpselect/select_functor.hpp"

namespace dpselect {

/// Evaluates candidates `range` of `release` on the backend its params resolve to. On the GPU
/// the work is ordered on `stream` and the call synchronizes it.
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
template <class UtilityFn>
Selection select_functor(Context& context, const UtilityFn& utility, IndexRange range,
                         const SelectionParams& params, cuda_stream_t stream) {
  detail::validate_range(range);
  detail::resolve_backend(params.backend);
  Release release = context.begin_release(params);
  return release.finish(evaluate_functor(release, utility, range, stream));
}

}  // namespace dpselect
