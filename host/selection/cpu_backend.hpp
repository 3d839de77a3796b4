// SPDX-License-Identifier: Apache-2.0
// The CPU path: all cores (OpenMP), the same noise function as the GPU, fixed-size chunks
// merged with the associative ShardResult merge, so the answer never depends on the thread
// count.
#pragma once

#include <span>

#include "dpselect/context.hpp"
#include "dpselect/detail/noise_spec.hpp"
#include "dpselect/detail/release_access.hpp"
#include "dpselect/shard_result.hpp"
#include "selection/gpu.hpp"
#include "top_k/top_k_steps.hpp"

namespace dpselect::detail {

// cpu_evaluate_generated (release_access.hpp) with the screen's threshold starting at
// `known_score`, a score that a candidate outside `range` is known to reach: a release evaluated
// in parts, its likely winners first, screens the rest far better when their utilities rise in
// index order. The merge of the parts' results is the one-pass result (a candidate below
// known_score is not kept, and it could not have won); the result's best_index is kNoIndex when
// nothing here reaches known_score.
ShardResult cpu_evaluate_generated(const NoiseSpec& spec, IndexRange range, FillUtilities fill, const void* functor,
                                   double known_score);

ShardResult cpu_evaluate_array(const NoiseSpec& spec, const float* utilities, IndexRange range);
ShardResult cpu_evaluate_array(const NoiseSpec& spec, const double* utilities, IndexRange range);
// The selection pass over utilities in host memory on `backend` (resolved: Cpu or Gpu), the one
// place a host array's pass chooses between the two (a release's shards and a ticket's alike).
template <class T>
ShardResult evaluate_host_array(Backend backend, const NoiseSpec& spec, const T* utilities, IndexRange range) {
  return backend == Backend::Gpu ? gpu_evaluate_host(spec, utilities, range)
                                 : cpu_evaluate_array(spec, utilities, range);
}

// The CPU pass of one-shot top-k (host/top_k/top_k.cpp) over candidates [first_index,
// first_index + utilities.size()) (non-empty): the min(k, size) best (score, index) pairs, best
// first, and the unstamped tally (best_* unset). A shard of a top-k release sharded over
// processes (dpselect::mpi): the k best of the whole range are among the shards' k best.
TopKShard cpu_top_k_shard(const NoiseSpec& spec, std::span<const float> utilities, std::uint64_t first_index,
                          std::uint64_t k);
TopKShard cpu_top_k_shard(const NoiseSpec& spec, std::span<const double> utilities, std::uint64_t first_index,
                          std::uint64_t k);

}  // namespace dpselect::detail
