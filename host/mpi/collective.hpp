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

// The collective preamble: rank 0's params compared with every rank's, this rank's own checks
// and `local_error`, every shard gathered and checked to tile one contiguous range of `unit`s
// ("candidates", "rows", ...) exactly once, `top_k` (nullptr: none) checked against the total,
// the total checked against `max_total`, then rank 0's ledger charged and its decision
// broadcast. Throws the same exception on every rank (the lowest failing rank's message) before
// any stream is drawn.
AgreedShards agree_and_charge(DistributedContext& context, const SelectionParams& params, IndexRange shard,
                              std::string local_error, const ChargeRule& rule, const char* unit,
                              const std::uint64_t* top_k, std::uint64_t max_total);

// Sends `message` from `root` to every rank.
std::string broadcast_message(MPI_Comm comm, int root, int rank, const std::string& message);

// This rank's finding when `count` items from `first` end beyond 2^63; empty otherwise.
std::string shard_end_error(const DistributedContext& context, std::uint64_t first, std::uint64_t count,
                            const char* first_name, const char* unit);

}  // namespace detail
}  // namespace dpselect::mpi
