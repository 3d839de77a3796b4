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

// Throws InvalidArgument, before any charge, for bad per-pick params, a mechanism other than the
// exponential mechanism, or k outside [1, candidates].
void validate_top_k(const TopKParams& params, std::uint64_t candidates);

// What a top-k release charges: k exponential-mechanism picks at the per-pick epsilon.
PrivacyCharge top_k_charge(const TopKParams& params);

// The TopKSelection of a release from the tally of every candidate (stamped, merged: finish
// checks it as for any release) and the k best of the range, best first: throws as
// Release::finish, and InvalidArgument when fewer than k candidates are not excluded.
TopKSelection finish_top_k(Release& release, const TopKParams& params, ShardResult tally,
                           const std::vector<RankedScore>& best);

}  // namespace dpselect::detail
