// SPDX-License-Identifier: Apache-2.0
// The checks and the last step that every top-k release shares: one process (top_k.cpp), shards
// through a TopKTicket (top_k.cpp) and MPI ranks (host/mpi/distributed.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "dpselect/accounting.hpp"
#include "dpselect/context.hpp"
#include "dpselect/shard_result.hpp"
#include "dpselect/top_k.hpp"

namespace dpselect::detail {

// The most picks the GPU's one-shot top-k makes (its per-block lists live in shared memory).
inline constexpr std::uint64_t kGpuTopKMax = kGpuTopKMaxK;
using RankedCandidate = RankedScore;
// One shard's part of a top-k release, on either backend: the tally of every candidate of the
// shard (unstamped; best_* unset) and its best candidates, best first.
struct TopKShard {
  ShardResult tally;
  std::vector<RankedCandidate> top;
};

// Throws InvalidArgument, before any charge, for bad params (selection.epsilon: the release's
// total), a mechanism other than the exponential mechanism, k outside [1, candidates], or an
// epsilon / k that is not a normal double.
void validate_top_k(const TopKParams& params, std::uint64_t candidates);

// The epsilon of each pick: selection.epsilon / k, rounded down so that k times it (in double, as
// the accountant multiplies) never exceeds selection.epsilon. No checks.
double per_pick_epsilon(const TopKParams& params);

// The parameters of each pick: selection with per_pick_epsilon. Call after validate_top_k.
SelectionParams per_pick_params(const TopKParams& params);

// What a top-k release charges: k exponential-mechanism picks at the per-pick epsilon.
PrivacyCharge top_k_charge(const TopKParams& params);

// The TopKSelection of a release from the tally of every candidate (stamped, merged: finish
// checks it as for any release) and the k best of the range, best first: throws as
// Release::finish, and InvalidArgument when fewer than k candidates are not excluded.
TopKSelection finish_top_k(Release& release, const TopKParams& params, ShardResult tally,
                           const std::vector<RankedScore>& best);

}  // namespace dpselect::detail
