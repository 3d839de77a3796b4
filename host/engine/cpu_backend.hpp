// The CPU path: all cores (OpenMP), the same noise function as the GPU, fixed-size chunks
// merged with the associative ShardResult merge, so the answer never depends on the thread
// count.
#pragma once

#include "dpselect/context.hpp"
#include "dpselect/shard_result.hpp"

namespace dpselect::detail {

ShardResult cpu_evaluate_array(const NoiseSpec& spec, const float* utilities, IndexRange range);
ShardResult cpu_evaluate_array(const NoiseSpec& spec, const double* utilities, IndexRange range);

}  // namespace dpselect::detail
