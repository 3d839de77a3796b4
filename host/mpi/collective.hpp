// SPDX-License-Identifier: Apache-2.0
// The machinery the distributed entry points share (host/mpi/): the context's state, how a
// finding on one rank becomes the same exception on every rank, and the collective preamble
// that checks, tiles and charges before any stream is drawn. Private to dpselect::mpi.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "dpselect/mpi.hpp"

namespace dpselect::mpi {

struct DistributedContext::State {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  Context local;
  bool fixed_seed = false;
  MPI_Datatype shard_type = MPI_DATATYPE_NULL;
  MPI_Op merge = MPI_OP_NULL;
  mutable std::mutex accountant_mutex;
  std::shared_ptr<PrivacyAccountant> accountant;  // rank 0 only; guarded by accountant_mutex
  // What the merge of the release in progress must hold: every rank's shard, exactly once.
  std::uint64_t expected_candidates = 0;
  std::uint64_t expected_coverage = 0;

  State(MPI_Comm dup, int rank, int size, Context local, bool fixed_seed)
      : comm(dup), rank(rank), size(size), local(std::move(local)), fixed_seed(fixed_seed) {}
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  // Here rather than in ~DistributedContext, so a move assignment frees what it overwrites.
  ~State() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (merge != MPI_OP_NULL) MPI_Op_free(&merge);
    if (shard_type != MPI_DATATYPE_NULL) MPI_Type_free(&shard_type);
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

namespace detail {

struct Access {
  static DistributedContext::State& state(const DistributedContext& context) { return context.state(); }
};

// What a rank found, as one number that travels in an allgather, and back as an exception.
enum ErrorKind : std::int32_t { none = 0, invalid_argument, backend_unavailable, usage_error, budget_exceeded, other };

[[noreturn]] void throw_error(std::int32_t kind, const std::string& message);

// Runs `check`; returns the kind and message of what it threw (none: nothing).
template <class Check>
std::int32_t catch_error(Check&& check, std::string& message) {
  try {
    check();
    return none;
  } catch (const InvalidArgument& e) {
    message = e.what();
    return invalid_argument;
  } catch (const BackendUnavailable& e) {
    message = e.what();
    return backend_unavailable;
  } catch (const UsageError& e) {
    message = e.what();
    return usage_error;
  } catch (const BudgetExceeded& e) {
    message = e.what();
    return budget_exceeded;
  } catch (const std::exception& e) {
    message = e.what();
    return other;
  }
}

std::string range_text(std::uint64_t begin, std::uint64_t end);

// How many releases the preamble charges: `count` of them, or one per unit of all the shards
// together (a row, a repeated release), known only once the shards are gathered.
struct ChargeRule {
  PrivacyCharge charge;
  bool one_per_unit = false;
};

// What the shards of every rank hold together, once checked to tile one range exactly once.
struct AgreedShards {
  std::uint64_t begin = 0;
  std::uint64_t total = 0;
  std::uint64_t coverage = 0;
};

// What one rank found before a release: the kind of error (none) and its message.
struct Finding {
  std::int32_t kind = none;
  std::string message;
};
// An InvalidArgument with `message` (empty: none), the findings the entry points spell out.
inline Finding invalid_unless_empty(std::string message) {
  const std::int32_t kind = message.empty() ? none : invalid_argument;
  return Finding{kind, std::move(message)};
}
// Runs `check`; what it throws becomes the finding (kind and message), nothing thrown: none.
template <class Check>
Finding finding_of(Check&& check) {
  Finding finding;
  finding.kind = catch_error(std::forward<Check>(check), finding.message);
  return finding;
}

// What the shards must hold together, beyond tiling one contiguous range exactly once.
struct ShardRules {
  const char* unit = "candidates";  // how messages name what the shards hold
  std::uint64_t max_total = std::uint64_t{1} << 63;
  const std::uint64_t* top_k = nullptr;  // when set: 1 <= *top_k <= the total
  const IndexRange* whole = nullptr;     // when set: the shards tile exactly this range
  bool from_zero = false;                // the shards tile [0, total): positions in one list
};

// The collective preamble: rank 0's params compared with every rank's and validated (nullptr:
// the caller has done both, into `local`), this rank's own finding `local`, every shard gathered
// and checked against `rules`, then rank 0's ledger charged and its decision broadcast. Throws
// the same exception on every rank (the lowest failing rank's message) before any stream is drawn.
AgreedShards agree_and_charge(DistributedContext& context, const SelectionParams* params, IndexRange shard,
                              Finding local, const ChargeRule& rule, const ShardRules& rules = {});

// An empty string when `bytes` are rank 0's too; else what differs, as "<what> must be the same
// on every rank (rank r's differ from rank 0's)". Collective.
std::string differs_from_root(const DistributedContext& context, const void* bytes, std::size_t size,
                              const std::string& what);

// A 64-bit FNV-1a digest of `bytes`: catches a rank passing other data by mistake (no defence
// against a rank that lies, which the trust assumption excludes anyway).
std::uint64_t bytes_digest(const void* data, std::size_t bytes);

// This rank's even contiguous share of `count` items: rank r of P holds [begin, end).
IndexRange even_share(std::uint64_t count, int rank, int size);

// What Context::begin_release charges for `params`: one release of the mechanism's kind at epsilon.
inline PrivacyCharge one_release_charge(const SelectionParams& params) {
  return PrivacyCharge{release_kind(params.mechanism), params.epsilon, 0.0, 1};
}

// begin_distributed_release with this rank's finding of any kind (not only InvalidArgument).
Release begin_distributed_release(DistributedContext& context, const SelectionParams& params, IndexRange shard,
                                  Finding local);

// After agree_and_charge: one release on every rank (the same stream: the ranks begin the same
// releases in the same order), whose merged result must hold `agreed.total` candidates with the
// fingerprint `agreed.coverage` (finish it with merged_tally).
Release begin_agreed_release(DistributedContext& context, const SelectionParams& params, const AgreedShards& agreed);
// The merge of every rank's tally (an allreduce), checked to cover what begin_agreed_release
// expects exactly once.
ShardResult merged_tally(DistributedContext::State& s, const ShardResult& mine);

// Sends `message` from `root` to every rank.
std::string broadcast_message(MPI_Comm comm, int root, int rank, const std::string& message);

// For a release begun on every rank without a public reference or bound: has every rank use the
// first utility of the shard that starts lowest as the release's utility reference
// (ReleaseAccess::fix_reference_from_data), as one process's select takes the range's first.
// Collective; call after begin_distributed_release, before evaluating.
void agree_utility_reference(DistributedContext& context, Release& release, bool has_shard, std::uint64_t first_index,
                             double first_utility);

// This rank's finding when `count` items from `first` end beyond 2^63; empty otherwise.
std::string shard_end_error(const DistributedContext& context, std::uint64_t first, std::uint64_t count,
                            const char* first_name, const char* unit);

}  // namespace detail
}  // namespace dpselect::mpi
