// SPDX-License-Identifier: Apache-2.0
// The selection pass on the GPU (kernels/select_arrays.cu).
// Implemented in kernels/ when built with CUDA; in a CPU-only build by gpu_unavailable.cpp beside
// this header, where every entry point throws BackendUnavailable.
#pragma once

#include "dpselect/detail/noise_spec.hpp"
#include "dpselect/shard_result.hpp"
#include "dpselect/context.hpp"
#include "dpselect/types.hpp"

namespace dpselect::detail {

// Utilities already in device memory, range.size() of them starting at `utilities`.
ShardResult gpu_evaluate_device(const NoiseSpec& spec, const float* utilities, IndexRange range,
                                cuda_stream_t stream);
ShardResult gpu_evaluate_device(const NoiseSpec& spec, const double* utilities, IndexRange range,
                                cuda_stream_t stream);
// Utilities in host memory, streamed to the device in chunks that fit its free memory, each copy
// overlapping the pass over the chunk before (kernels/common/host_streaming.cuh, on streams of its own).
ShardResult gpu_evaluate_host(const NoiseSpec& spec, const float* utilities, IndexRange range);
ShardResult gpu_evaluate_host(const NoiseSpec& spec, const double* utilities, IndexRange range);

}  // namespace dpselect::detail
