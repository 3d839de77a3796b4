// SPDX-License-Identifier: Apache-2.0
/// @file
/// One private release sharded over the ranks of an MPI communicator, with the answer of one
/// process: every rank passes its shard of the candidates (a slice of a host array, or a
/// sub-range of a functor's index space, with its global first index), and every rank returns
/// the same Selection, bit for bit the one select() / select_functor() returns in one process
/// over the whole range with the same key and stream.
///
/// Optional target dpselect::mpi (built when CMake finds MPI); the core library does not depend
/// on MPI. Every function here is COLLECTIVE over the context's communicator: all ranks call it,
/// in the same order, with the same params.
///
/// Trust assumption. Rank 0 draws the secret key from the OS CSPRNG and sends it to every rank
/// over the communicator (MPI_Bcast). Whoever can read the communicator's transport (the network
/// between nodes, shared memory on a node, the MPI runtime itself) learns the key, and with it
/// every noise value of every release of this context. Use it only where the ranks and their
/// interconnect are as trusted as one process's memory (one job in one cluster, a private
/// fabric, or an MPI transport with encryption). The merged ShardResults travel the same way and
/// are secret as well (shard_result.hpp). Only the returned Selection may be published.
///
/// The ledger. A distributed release is charged ONCE, to the accountant given to charge_to() on
/// rank 0 (the accountant passed on the other ranks is ignored), after every rank has validated
/// its parameters and shard and before any rank draws a stream. Rank 0's decision is broadcast:
/// a refusal makes every rank throw the same BudgetExceeded, and no rank draws a stream. Why not
/// each rank charging its own accountant: then P ledgers each record the one release, a shared
/// accountant is charged P times, and ledgers that drift apart refuse on some ranks only, which
/// would leave the ranks' streams out of step.
///
/// Errors. Validation is collective: when the parameters, the backend or the shard of any rank
/// are bad (or the shards do not tile one contiguous range exactly once, or the params differ
/// between ranks), every rank throws the same exception (InvalidArgument, BackendUnavailable,
/// UsageError) with the message of the lowest failing rank, before any charge or stream. Errors
/// found in the data during the pass (a NaN utility, too small an epsilon for the slack) come
/// from finish() on the merged result, which is the same on every rank, so every rank throws the
/// same error then too; the release stays charged (as in one process).
///
/// Example (each rank holds utilities[first, first + mine.size()) of one array):
///   dpselect::mpi::DistributedContext ctx(MPI_COMM_WORLD);        // collective; key from rank 0
///   dpselect::Selection s = dpselect::mpi::select(ctx, std::span<const float>(mine), first, p);
#pragma once

#include <mpi.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <string>

#include "dpselect/accounting.hpp"
#include "dpselect/context.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/pricing.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/rows.hpp"
#include "dpselect/select_functor.hpp"
#include "dpselect/shard_result.hpp"
#include "dpselect/sparse_vector.hpp"
#include "dpselect/top_k.hpp"
#include "dpselect/types.hpp"

namespace dpselect::mpi {

class DistributedContext;

namespace detail {
struct Access;  ///< host/mpi/distributed.cpp's way into a DistributedContext
/// The collective preamble of every distributed release: checks params and shard on every rank
/// and the tiling of the shards, agrees on one outcome, charges rank 0's ledger, then begins the
/// release (one stream on every rank). `local_error` is this rank's own finding (empty: none),
/// for checks only the caller can make. Throws the same exception on every rank.
Release begin_distributed_release(DistributedContext& context, const SelectionParams& params, IndexRange shard,
                                  std::string local_error);
/// Collective, after each rank's own pass: when a pass threw on any rank (`failure`), every rank
/// throws the lowest failing rank's exception, instead of the others waiting for it in the merge.
void agree_on_pass(DistributedContext& context, std::exception_ptr failure);
/// Runs this rank's `pass`, then agree_on_pass: returns what the pass returned on every rank, or
/// throws on every rank the lowest failing rank's exception.
template <class Pass>
auto agreed_pass(DistributedContext& context, Pass&& pass) -> decltype(pass()) {
  decltype(pass()) result{};
  std::exception_ptr failure;
  try {
    result = pass();
  } catch (...) {
    failure = std::current_exception();
  }
  agree_on_pass(context, failure);
  return result;
}
/// Allreduces the shards' results with dpselect::merge, checks that the merge covers every
/// rank's shard exactly once, and finishes the release (the same Selection on every rank).
Selection finish_distributed_release(DistributedContext& context, Release& release, const ShardResult& mine);
}  // namespace detail

class DistributedContext {
 public:
  /// Collective. A ChaCha20 context (or `generator`) keyed with a key that rank 0 draws from the
  /// OS CSPRNG and broadcasts (see the trust assumption above). Works on a duplicate of `comm`,
  /// so its messages never mix with the caller's; destroy it before MPI_Finalize.
  explicit DistributedContext(MPI_Comm comm, Generator generator = Generator::chacha20);

  /// Collective. NOT PRIVATE: a reproducible context for tests and experiments, keyed with
  /// RandomKey::from_seed(seed, generator) (rank 0's seed is broadcast). Anyone who knows the
  /// seed predicts every noise value; never use it for real data. Its releases equal those of
  /// Context::with_fixed_seed(seed, generator) in one process.
  static DistributedContext with_fixed_seed(MPI_Comm comm, std::uint64_t seed,
                                            Generator generator = Generator::chacha20);

  DistributedContext(DistributedContext&&) noexcept;
  DistributedContext& operator=(DistributedContext&&) noexcept;
  DistributedContext(const DistributedContext&) = delete;
  DistributedContext& operator=(const DistributedContext&) = delete;
  /// Frees the duplicated communicator: MPI_Comm_free is collective, so destroy the context on
  /// every rank, before MPI_Finalize (after it, the destructor frees nothing).
  ~DistributedContext();

  int rank() const;
  int size() const;
  MPI_Comm communicator() const;  // the duplicate this context works on
  Generator generator() const;
  bool is_fixed_seed() const;

  /// The job's ledger: on rank 0, every distributed release of this context is charged to
  /// `accountant` (nullptr: none); on the other ranks the argument is ignored. Not collective.
  void charge_to(std::shared_ptr<PrivacyAccountant> accountant);
  std::shared_ptr<PrivacyAccountant> accountant() const;  // rank 0's ledger; nullptr elsewhere

  struct State;  ///< opaque: defined in host/mpi/distributed.cpp

 private:
  friend struct detail::Access;
  DistributedContext(MPI_Comm comm, RandomKey key, bool fixed_seed);
  State& state() const;
  std::unique_ptr<State> state_;
};

/// Collective. One release over the concatenation of every rank's shard: this rank's utilities are
/// candidates [first_index, first_index + shard.size()). Shards may be uneven or empty; the
/// non-empty ones must tile one contiguous range exactly once (in any rank order). Equals
/// select(context, whole, params) in one process when the shards tile [0, whole.size()).
/// Backend::Gpu runs this rank's shard on its GPU (Auto: when one is usable).
Selection select(DistributedContext& context, std::span<const float> shard, std::uint64_t first_index,
                 const SelectionParams& params);
Selection select(DistributedContext& context, std::span<const double> shard, std::uint64_t first_index,
                 const SelectionParams& params);
/// The same with this rank's shard in device memory (one rank per GPU: see local_device below),
/// scored on its GPU on `stream` (the call synchronizes it); needs a usable GPU on this rank
/// (BackendUnavailable otherwise, on every rank) and params.backend Gpu or Auto. The shard results
/// are a few bytes and travel on the host. An empty shard (size 0) may have data == nullptr.
Selection select(DistributedContext& context, DeviceSpan<const float> shard, std::uint64_t first_index,
                 const SelectionParams& params, cuda_stream_t stream);
Selection select(DistributedContext& context, DeviceSpan<const double> shard, std::uint64_t first_index,
                 const SelectionParams& params, cuda_stream_t stream);

/// Collective. One release over the union of every rank's `shard` of the functor's index space (on
/// the CPU; Backend::Gpu is an error, as in select_functor.hpp). An empty shard (begin == end)
/// contributes nothing. Equals select_functor(context, utility, union, params) in one process.
template <class UtilityFn>
Selection select_functor(DistributedContext& context, const UtilityFn& utility, IndexRange shard,
                         const SelectionParams& params) {
  std::string local_error;
  if (params.backend == Backend::Gpu) {
    local_error =
        "dpselect: backend Gpu needs dpselect/select.cuh to evaluate a functor (got the CPU-only "
        "header select_functor.hpp)";
  }
  Release release = detail::begin_distributed_release(context, params, shard, std::move(local_error));
  const ShardResult mine = detail::agreed_pass(context, [&] {
    return shard.size() != 0 ? evaluate_functor_on_cpu(release, utility, shard) : ShardResult{};
  });
  return detail::finish_distributed_release(context, release, mine);
}

/// Collective. One-shot top-k (top_k.hpp) over the concatenation of every rank's shard, as select()
/// above: every rank returns the same indices, bit for bit select_top_k over the whole array in one
/// process with the same key and stream. Each rank runs its shard on the CPU (Backend::Gpu is an
/// InvalidArgument so far), keeps its own k best, and every rank merges the gathered lists in the
/// library's order (higher noisy score, then smaller index). Charges rank 0's ledger k
/// exponential-mechanism picks at the per-pick epsilon, once. Traffic: up to 16 k bytes per rank.
TopKSelection select_top_k(DistributedContext& context, std::span<const float> shard, std::uint64_t first_index,
                           const TopKParams& params);
TopKSelection select_top_k(DistributedContext& context, std::span<const double> shard, std::uint64_t first_index,
                           const TopKParams& params);

/// Collective. select_rows (rows.hpp) with the rows of one rows x cols matrix spread over the
/// ranks: this rank holds rows [first_row, first_row + block.rows) (row-major, block.cols wide, the
/// same width on every rank that holds rows; a rank may hold none, and at most 2^31 - 1). The
/// blocks must tile one contiguous range of rows exactly once, in any rank order. Every rank
/// returns every row's Selection in row order, bit for bit what select_rows returns in one process
/// over the whole matrix with the same key and streams (each row is its own release, with the
/// stream it gets there). Charges rank 0's ledger one release per row, once. Runs each rank's rows
/// on its CPU cores, or with Backend::Gpu (Auto: when usable) in one batched pass on its GPU. Traffic: one ShardResult (under
/// 100 bytes) per row, gathered on every rank.
RowsSelection select_rows(DistributedContext& context, HostMatrix<const float> block, std::uint64_t first_row,
                          const SelectionParams& params);
RowsSelection select_rows(DistributedContext& context, HostMatrix<const double> block, std::uint64_t first_row,
                          const SelectionParams& params);

/// Collective. select_repeated (rows.hpp) with the releases spread over the ranks: every rank passes
/// the same row (checked with a digest of its bytes) and the same number of releases, and scores
/// an even contiguous block of them. Returns what select_repeated returns in one process, on
/// every rank.
RowsSelection select_repeated(DistributedContext& context, std::span<const float> row, const SelectionParams& params,
                              std::uint64_t releases);
RowsSelection select_repeated(DistributedContext& context, std::span<const double> row, const SelectionParams& params,
                              std::uint64_t releases);

/// Collective. select_price (pricing.hpp) over a grid whose prices are split across the ranks:
/// every rank passes the same bids (replicated: checked with a digest of the sorted bids), the same
/// grid and params, and `shard`, the grid indices it scores; the shards must tile [0, grid.size())
/// exactly once. Returns, on every rank, what select_price returns in one process with the same key
/// and stream. With per-price noise each rank scores its shard (on its GPU with Backend::Gpu or
/// Auto when one is usable); when the sampler is bid intervals (GridSampler::bid_intervals, or
/// automatic choosing it), the n + 1 bid intervals are split evenly across the ranks instead and
/// `shard` is only checked. Charges rank 0's ledger once.
PriceSelection select_price(DistributedContext& context, const Bids& bids, const PriceGrid& grid, IndexRange shard,
                            const PricingParams& params);
/// Collective. Over a list of prices split across the ranks: this rank's prices are candidates
/// [first_index, first_index + prices.size()) of the list (finite, >= 0; uneven or empty shards
/// that tile the list exactly once). The sensitivity (the largest price of the whole list) is
/// agreed with a max-reduction; the chosen price is sent from the rank that holds it.
PriceSelection select_price(DistributedContext& context, const Bids& bids, std::span<const double> prices,
                            std::uint64_t first_index, const PricingParams& params);
/// Collective. Over the continuous range (every rank passes the same range): the n + 1 bid
/// intervals are split evenly across the ranks.
PriceSelection select_price(DistributedContext& context, const Bids& bids, const PriceRange& range,
                            const PricingParams& params);

/// Collective. sparse_vector_batch (sparse_vector.hpp) over a stream of query answers split into
/// contiguous blocks across the ranks: this rank holds answers [first_index, first_index +
/// values.size()) (uneven or empty blocks that tile [0, total) exactly once). Windows of queries are
/// searched on every rank at once and the global first "above" of a window is found with one
/// min-reduction; the threshold is then redrawn as in one process. Returns, on every rank, what
/// sparse_vector_batch returns in one process over the whole stream with the same key and stream
/// (above indices are global). Every value is validated on its rank before rank 0's ledger is
/// charged once; a bad value on any rank fails every rank with the lowest bad rank's message.
SparseVectorBatch sparse_vector_batch(DistributedContext& context, std::span<const double> values,
                                      std::uint64_t first_index, const SparseVectorParams& params);

/// One rank per GPU: the CUDA device this rank should use, its rank among the ranks on its node
/// (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED) modulo the node's device count; -1 when the
/// node has no CUDA device (or the build no CUDA backend). Collective over `comm`. It asks the
/// runtime for the device count only, which creates no context: call cudaSetDevice with the
/// result before any other CUDA call (dpselect::gpu_usable included), or every rank opens a
/// context on device 0.
int local_device(MPI_Comm comm);

}  // namespace dpselect::mpi
