// The CPU path: all cores (OpenMP), the same noise function as the GPU, fixed-size chunks
// merged with the associative ShardResult merge, so the answer never depends on the thread
// count.
#pragma once

#include <span>

#include "dpselect/context.hpp"
#include "dpselect/shard_result.hpp"
#include "engine/gpu_backend.hpp"

namespace dpselect::detail {

ShardResult cpu_evaluate_array(const NoiseSpec& spec, const float* utilities, IndexRange range);
ShardResult cpu_evaluate_array(const NoiseSpec& spec, const double* utilities, IndexRange range);

// The CPU pass of one-shot top-k (host/engine/top_k.cpp) over candidates [first_index,
// first_index + utilities.size()) (non-empty): the min(k, size) best (score, index) pairs, best
// first, and the unstamped tally (best_* unset). A shard of a top-k release sharded over
// processes (dpselect::mpi): the k best of the whole range are among the shards' k best.
TopKShard cpu_top_k_shard(const NoiseSpec& spec, std::span<const float> utilities, std::uint64_t first_index,
                          std::uint64_t k);
TopKShard cpu_top_k_shard(const NoiseSpec& spec, std::span<const double> utilities, std::uint64_t first_index,
                          std::uint64_t k);

}  // namespace dpselect::detail
