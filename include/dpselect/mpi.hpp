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
/// An exception thrown by one rank's own pass (a CUDA error, an allocation failure, a functor that
/// throws) is agreed on before the merge: every rank throws the lowest failing rank's message. Its
/// type is kept for InvalidArgument, BackendUnavailable, UsageError and BudgetExceeded; any other
/// exception derived from `std::exception` (CudaError and RandomnessExhausted among them) arrives as
/// a plain `std::runtime_error` carrying its message, on every rank including the one that threw it.
/// A functor should throw only exceptions derived from `std::exception`. A moved-from context throws
/// UsageError on its own rank before any collective, so the other ranks wait: never call with one.
/// MPI errors use the communicator's default handler (`MPI_ERRORS_ARE_FATAL`).
///
/// Example (each rank holds utilities[first, first + mine.size()) of one array):
/// @code{.cpp}
/// dpselect::mpi::DistributedContext ctx(MPI_COMM_WORLD);        // collective; key from rank 0
/// dpselect::Selection s = dpselect::mpi::select(ctx, std::span<const float>(mine), first, p);
/// @endcode
#pragma once

#include <mpi.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "dpselect/accounting.hpp"
#include "dpselect/context.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/partition_selection.hpp"
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

/// The context of distributed releases: one secret key shared by every rank of a communicator, and
/// a stream counter that moves in lock step on every rank.
///
/// Each rank holds a Context::with_shared_key on the broadcast key (first stream 0); every
/// distributed release draws one stream on every rank after the ranks have agreed that it goes
/// ahead, so the counters never drift apart. Every member of a moved-from context throws UsageError.
class DistributedContext {
 public:
  /// Collective: a ChaCha20 context (or `generator`) keyed with a key that rank 0 draws from the
  /// OS CSPRNG and broadcasts (see the trust assumption above). Works on a duplicate of `comm`,
  /// so its messages never mix with the caller's; destroy it before MPI_Finalize.
  /// @param comm An intracommunicator; every rank of it must call. It is duplicated (MPI_Comm_dup).
  /// @param generator Generator::chacha20 (the default) or Generator::philox; rank 0's choice is the
  ///        one used (it travels with the key).
  /// @throws std::system_error on rank 0 if getrandom fails (the other ranks then wait in the
  ///         collective).
  /// @par Privacy
  /// The key crosses the communicator's transport in the clear: see the trust assumption above.
  explicit DistributedContext(MPI_Comm comm, Generator generator = Generator::chacha20);

  /// Collective: NOT PRIVATE: a reproducible context for tests and experiments, keyed with
  /// RandomKey::from_seed(seed, generator) (rank 0's seed is broadcast). Anyone who knows the
  /// seed predicts every noise value; never use it for real data. Its releases equal those of
  /// Context::with_fixed_seed(seed, generator) in one process.
  /// @param comm An intracommunicator; every rank of it must call. It is duplicated.
  /// @param seed The seed; rank 0's is used on every rank.
  /// @param generator Generator::chacha20 (the default) or Generator::philox; rank 0's is used.
  /// @return A context whose is_fixed_seed() is true.
  static DistributedContext with_fixed_seed(MPI_Comm comm, std::uint64_t seed,
                                            Generator generator = Generator::chacha20);

  /// @name Moving
  ///@{

  /// Not collective. Moving transfers the duplicated communicator, the key and the stream counter;
  /// every member of the moved-from context throws UsageError. A move assignment frees what it
  /// overwrites, which is collective (MPI_Comm_free): do it on every rank alike.
  DistributedContext(DistributedContext&&) noexcept;
  DistributedContext& operator=(DistributedContext&&) noexcept;
  ///@}
  /// Not copyable: two copies would hand out the same streams.
  DistributedContext(const DistributedContext&) = delete;
  /// Not copyable: two copies would hand out the same streams.
  DistributedContext& operator=(const DistributedContext&) = delete;
  /// Frees the duplicated communicator: MPI_Comm_free is collective, so destroy the context on
  /// every rank, before MPI_Finalize (after it, the destructor frees nothing).
  ~DistributedContext();

  /// This process's rank in the communicator. Not collective.
  /// @return The rank, in [0, size()).
  /// @throws UsageError on a moved-from context.
  int rank() const;
  /// The number of ranks. Not collective.
  /// @return The communicator's size, >= 1.
  /// @throws UsageError on a moved-from context.
  int size() const;
  /// The duplicate of the constructor's communicator that this context works on. Not collective.
  /// @return The duplicated communicator (owned by the context: do not free it).
  /// @throws UsageError on a moved-from context.
  MPI_Comm communicator() const;  // the duplicate this context works on
  /// The generator of the shared key. Not collective.
  /// @return The generator of every release of this context.
  /// @throws UsageError on a moved-from context.
  Generator generator() const;
  /// Whether the context was made by with_fixed_seed (its noise is predictable). Not collective.
  /// @return true for a with_fixed_seed context.
  /// @throws UsageError on a moved-from context.
  bool is_fixed_seed() const;

  /// The job's ledger: on rank 0, every distributed release of this context is charged to
  /// `accountant` (nullptr: none); on the other ranks the argument is ignored. Not collective.
  ///
  /// What each entry point charges is on the entry point (as in one process: Context::charge_to); the
  /// charge is made once per release, after every rank's checks and before any rank draws a stream.
  /// @param accountant The job's ledger (rank 0), or nullptr to stop charging.
  /// @throws UsageError on a moved-from context.
  void charge_to(std::shared_ptr<PrivacyAccountant> accountant);
  /// The job's ledger. Not collective.
  /// @return On rank 0 the accountant given to charge_to (nullptr if none); nullptr on other ranks.
  /// @throws UsageError on a moved-from context.
  std::shared_ptr<PrivacyAccountant> accountant() const;  // rank 0's ledger; nullptr elsewhere

  struct State;  ///< opaque: defined in host/mpi/distributed.cpp

 private:
  friend struct detail::Access;
  DistributedContext(MPI_Comm comm, RandomKey key, bool fixed_seed);
  State& state() const;
  std::unique_ptr<State> state_;
};

/// @name Shards in host memory
///@{

/// Collective: one release over the concatenation of every rank's shard: this rank's utilities are
/// candidates [first_index, first_index + shard.size()). Shards may be uneven or empty; the
/// non-empty ones must tile one contiguous range exactly once (in any rank order). Equals
/// select(context, whole, params) in one process when the shards tile [0, whole.size()).
/// Backend::Gpu runs this rank's shard on its GPU (Auto: when one is usable).
///
/// Without a utility_reference or utility_bound every rank scores relative to the first utility of
/// the shard that starts lowest, as one process takes the range's first.
/// @param context The distributed context (collective over its communicator).
/// @param shard This rank's utilities: finite, or -inf to exclude a candidate; may be empty.
/// @param first_index The global index of `shard[0]`; `first_index + shard.size()` at most 2^63.
/// @param params The release's parameters (SelectionParams), bit for bit the same on every rank.
/// @return The same Selection on every rank.
/// @throws InvalidArgument (every rank) before the charge for bad params or params that differ from
///         rank 0's, a shard beyond 2^63, shards that overlap, leave a gap or are all empty; after it
///         (from finish) for a NaN, +inf or out-of-bound utility, every candidate excluded, or a slack
///         that would reach epsilon.
/// @throws BackendUnavailable (every rank) for Backend::Gpu where a rank has no usable GPU, before the
///         charge.
/// @throws BudgetExceeded (every rank) when rank 0's accountant refuses the release; no stream drawn.
/// @throws std::runtime_error (every rank) with the message of a CudaError or other failure of a
///         rank's pass.
/// @par Synchronisation
/// Collective: every rank of the context's communicator calls it, in the same order as the other
/// distributed calls. On a GPU the pass runs on streams of the library's own.
/// @par Privacy
/// As select() in one process: epsilon-DP under exact arithmetic (Dwork & Roth 2014, Def. 3.4,
/// Thm 3.10; McKenna & Sheldon 2020; Dwork & Roth Claim 3.9), (epsilon + report.slack.epsilon,
/// report.slack.delta)-DP as computed. Rank 0's ledger is charged one release of
/// `release_kind(params.mechanism)` at params.epsilon, once, after every rank's checks and before
/// any rank draws a stream. The key, the merged ShardResults and each shard's first utility cross the
/// communicator: see the trust assumption above.
Selection select(DistributedContext& context, std::span<const float> shard, std::uint64_t first_index,
                 const SelectionParams& params);
Selection select(DistributedContext& context, std::span<const double> shard, std::uint64_t first_index,
                 const SelectionParams& params);
///@}
/// @name Shards in device memory
///@{

/// The same with this rank's shard in device memory (one rank per GPU: see local_device below),
/// scored on its GPU on `stream` (the call synchronizes it); needs a usable GPU on this rank
/// (BackendUnavailable otherwise, on every rank) and params.backend Gpu or Auto. The shard results
/// are a few bytes and travel on the host. An empty shard (size 0) may have data == nullptr.
///
/// The device checks of one process (a pointer the device can read, a usable GPU) are this rank's
/// findings, so a bad pointer on one rank fails every rank before any launch or charge.
/// @param context The distributed context (collective over its communicator).
/// @param shard This rank's utilities in memory its current device can read (DeviceSpan); may be
///        empty.
/// @param first_index The global index of the shard's first utility; `first_index + shard.size` at
///        most 2^63.
/// @param params The release's parameters, bit for bit the same on every rank; backend Auto or Gpu.
/// @param stream A stream of this rank's current device (nullptr: the legacy default stream).
/// @return The same Selection on every rank.
/// @throws InvalidArgument (every rank) before the charge for bad or differing params, Backend::Cpu, a
///         pointer a device cannot read, a shard beyond 2^63, shards that overlap, leave a gap or are
///         all empty; after it (from finish) for a NaN, +inf or out-of-bound utility, every candidate
///         excluded, or a slack that would reach epsilon.
/// @throws BackendUnavailable (every rank) where a rank has no usable GPU (with Backend::Auto: a rank
///         with a non-empty shard), before the charge.
/// @throws BudgetExceeded (every rank) when rank 0's accountant refuses the release; no stream drawn.
/// @throws std::runtime_error (every rank) with the message of a CudaError or other failure of a
///         rank's pass.
/// @par Synchronisation
/// Collective: every rank calls it, in the same order as the other distributed calls. On each rank
/// the read of the first utility and the pass are enqueued on `stream` behind the work already there,
/// and the call synchronizes `stream` before it returns; no CUDA-aware MPI is needed.
/// @par Privacy
/// As the host-memory overloads: epsilon-DP under exact arithmetic (Dwork & Roth 2014, Def. 3.4,
/// Thm 3.10; McKenna & Sheldon 2020; Dwork & Roth Claim 3.9), plus the report's slack; rank 0's
/// ledger is charged one release once, before any rank draws a stream.
Selection select(DistributedContext& context, DeviceSpan<const float> shard, std::uint64_t first_index,
                 const SelectionParams& params, cuda_stream_t stream);
Selection select(DistributedContext& context, DeviceSpan<const double> shard, std::uint64_t first_index,
                 const SelectionParams& params, cuda_stream_t stream);
///@}

/// Collective: one release over the union of every rank's `shard` of the functor's index space (on
/// the CPU; Backend::Gpu is an error, as in select_functor.hpp). An empty shard (begin == end)
/// contributes nothing. Equals select_functor(context, utility, union, params) in one process.
///
/// The scores use the utility reference `params.utility_reference`, or 0, as in one process.
/// @tparam UtilityFn As for select_functor (select_functor.hpp): a copyable, pure function of the
///         index returning a value convertible to double.
/// @param context The distributed context (collective over its communicator).
/// @param utility The functor; called once per index of this rank's shard, from several threads.
/// @param shard This rank's candidates [begin, end): end at most 2^63; may be empty.
/// @param params The release's parameters, bit for bit the same on every rank; backend Auto or Cpu.
/// @return The same Selection on every rank.
/// @throws InvalidArgument (every rank) before the charge for bad or differing params, Backend::Gpu,
///         a shard with begin > end or beyond 2^63, shards that overlap, leave a gap or are all
///         empty; after it (from finish) for a NaN, +inf or out-of-bound utility, every candidate
///         excluded, or a slack that would reach epsilon.
/// @throws BudgetExceeded (every rank) when rank 0's accountant refuses the release; no stream drawn.
/// @throws std::runtime_error (every rank) with the message of an exception the functor threw on a
///         rank (other than the four dpselect types whose type is kept).
/// @par Synchronisation
/// Collective: every rank calls it, in the same order as the other distributed calls.
/// @par Privacy
/// As select_functor in one process: epsilon-DP under exact arithmetic (Dwork & Roth 2014, Def. 3.4,
/// Thm 3.10; McKenna & Sheldon 2020; Dwork & Roth Claim 3.9), plus the report's slack, provided the
/// functor's sensitivity is at most params.sensitivity; rank 0's ledger is charged one release of
/// `release_kind(params.mechanism)` at params.epsilon, once, before any rank draws a stream.
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

/// @name Top-k
///@{

/// Collective: one-shot top-k (top_k.hpp) over the concatenation of every rank's shard, as select()
/// above: every rank returns the same indices, bit for bit select_top_k over the whole array in one
/// process with the same key and stream. Each rank runs its shard on the CPU (Backend::Gpu is an
/// InvalidArgument so far), keeps its own k best, and every rank merges the gathered lists in the
/// library's order (higher noisy score, then smaller index). Charges rank 0's ledger k
/// exponential-mechanism picks at the per-pick epsilon (selection.epsilon / k), once. Traffic: up to
/// 16 k bytes per rank.
///
/// Uses the utility reference `params.selection.utility_reference`, or 0, as select_top_k does.
/// @param context The distributed context (collective over its communicator).
/// @param shard This rank's utilities: finite, or -inf to exclude a candidate; may be empty.
/// @param first_index The global index of `shard[0]`; `first_index + shard.size()` at most 2^63.
/// @param params The release's parameters (TopKParams), the same on every rank: selection.epsilon the
///        k picks' total, selection.mechanism exponential, selection.backend Auto or Cpu,
///        1 <= k <= the number of candidates.
/// @return The same k indices on every rank, largest noisy score first, and the report.
/// @throws InvalidArgument (every rank) before the charge for bad or differing params or k, another
///         mechanism, Backend::Gpu, a shard beyond 2^63, shards that overlap, leave a gap or are all
///         empty, or k beyond the number of candidates; after it for a NaN, +inf or out-of-bound
///         utility, a slack that would reach epsilon, or k beyond the number of candidates that are
///         not excluded.
/// @throws BudgetExceeded (every rank) when rank 0's accountant refuses the release; no stream drawn.
/// @throws std::runtime_error (every rank) with the message of another failure of a rank's pass.
/// @par Synchronisation
/// Collective: every rank calls it, in the same order as the other distributed calls.
/// @par Privacy
/// One-shot top-k: the k indices have the distribution of k rounds of peeling exponential mechanism at
/// the per-pick epsilon' = selection.epsilon / k (Durfee & Rogers 2019), selection.epsilon-DP by basic
/// composition and `k epsilon'^2 / 8`-zCDP (report.rho; Cesar & Rogers 2021), plus the per-pick slack.
/// Rank 0's ledger is charged k exponential-mechanism releases at epsilon' (selection.epsilon in all),
/// once, before any rank draws a stream.
TopKSelection select_top_k(DistributedContext& context, std::span<const float> shard, std::uint64_t first_index,
                           const TopKParams& params);
TopKSelection select_top_k(DistributedContext& context, std::span<const double> shard, std::uint64_t first_index,
                           const TopKParams& params);
///@}

/// @name Rows
///@{

/// Collective: select_rows (rows.hpp) with the rows of one rows x cols matrix spread over the
/// ranks: this rank holds rows [first_row, first_row + block.rows) (row-major, block.cols wide, the
/// same width on every rank that holds rows; a rank may hold none, and at most 2^31 - 1). The
/// blocks must tile one contiguous range of rows exactly once, in any rank order. Every rank
/// returns every row's Selection in row order, bit for bit what select_rows returns in one process
/// over the whole matrix with the same key and streams (each row is its own release, with the
/// stream it gets there). Charges rank 0's ledger one release per row, once. Runs each rank's rows
/// on its CPU cores, or with Backend::Gpu (Auto: when usable) in one batched pass on its GPU.
/// Traffic: one ShardResult (under 100 bytes) per row, gathered on every rank.
///
/// One epsilon for every row (no per-row epsilons, no device matrices here). At most 2^31 - 1 rows
/// in all.
/// @param context The distributed context (collective over its communicator).
/// @param block This rank's rows (HostMatrix): data not nullptr when rows > 0; rows may be 0.
/// @param first_row The global index of the block's first row.
/// @param params The parameters of every row, bit for bit the same on every rank.
/// @return Every row's Selection in row order, on every rank.
/// @throws InvalidArgument (every rank) before the charge for bad or differing params, a nullptr, an
///         empty or differing width, more than 2^31 - 1 rows, blocks beyond 2^63, blocks that overlap,
///         leave a gap or are all empty; after it (naming the row) for a NaN, +inf or out-of-bound
///         utility, a row with every candidate excluded, or a slack that would reach epsilon.
/// @throws BackendUnavailable (every rank) for Backend::Gpu where a rank has no usable GPU, before the
///         charge.
/// @throws BudgetExceeded (every rank) when rank 0's ledger refuses the rows; no stream drawn.
/// @throws std::runtime_error (every rank) with the message of a CudaError or other failure of a
///         rank's pass.
/// @par Synchronisation
/// Collective: every rank calls it, in the same order as the other distributed calls. On a GPU the
/// passes run on streams of the library's own.
/// @par Privacy
/// As select_rows in one process: each row's index is epsilon-DP under exact arithmetic (Dwork &
/// Roth 2014, Def. 3.4, Thm 3.10; McKenna & Sheldon 2020; Dwork & Roth Claim 3.9), plus its report's
/// slack. Rank 0's ledger is charged one release of `release_kind(params.mechanism)` at
/// params.epsilon per row, in one charge, before any rank draws a stream.
RowsSelection select_rows(DistributedContext& context, HostMatrix<const float> block, std::uint64_t first_row,
                          const SelectionParams& params);
RowsSelection select_rows(DistributedContext& context, HostMatrix<const double> block, std::uint64_t first_row,
                          const SelectionParams& params);
///@}

/// @name Repeated releases
///@{

/// Collective: select_repeated (rows.hpp) with the releases spread over the ranks: every rank passes
/// the same row (checked with a digest of its bytes) and the same number of releases, and scores
/// an even contiguous block of them. Returns what select_repeated returns in one process, on
/// every rank.
/// @param context The distributed context (collective over its communicator).
/// @param row The utilities, the same bytes on every rank: not empty.
/// @param params The parameters of every release, bit for bit the same on every rank.
/// @param releases The number of releases, the same on every rank: 1 to 2^31 - 1.
/// @return One Selection per release, in stream order, on every rank.
/// @throws InvalidArgument (every rank) before the charge for releases == 0 or more than 2^31 - 1, an
///         empty row, a row or count that differs from rank 0's, or bad or differing params; after it
///         for a NaN, +inf or out-of-bound utility, every candidate excluded, or a slack that would
///         reach epsilon.
/// @throws BackendUnavailable (every rank) for Backend::Gpu where a rank has no usable GPU, before the
///         charge.
/// @throws BudgetExceeded (every rank) when rank 0's ledger refuses the releases; no stream drawn.
/// @throws std::runtime_error (every rank) with the message of a CudaError or other failure of a
///         rank's pass.
/// @par Synchronisation
/// Collective: every rank calls it, in the same order as the other distributed calls.
/// @par Privacy
/// As select_repeated in one process: each release is epsilon-DP under exact arithmetic (Dwork & Roth
/// 2014, Def. 3.4, Thm 3.10; McKenna & Sheldon 2020; Dwork & Roth Claim 3.9), plus its report's slack,
/// and they compose (about the same data). Rank 0's ledger is charged `releases` releases of
/// `release_kind(params.mechanism)` at params.epsilon, in one charge, before any rank draws a stream.
RowsSelection select_repeated(DistributedContext& context, std::span<const float> row, const SelectionParams& params,
                              std::uint64_t releases);
RowsSelection select_repeated(DistributedContext& context, std::span<const double> row, const SelectionParams& params,
                              std::uint64_t releases);
///@}

/// Collective: select_price (pricing.hpp) over a grid whose prices are split across the ranks:
/// every rank passes the same bids (replicated: checked with a digest of the sorted bids), the same
/// grid and params, and `shard`, the grid indices it scores; the shards must tile [0, grid.size())
/// exactly once. Returns, on every rank, what select_price returns in one process with the same key
/// and stream. With per-price noise each rank scores its shard (on its GPU with Backend::Gpu or
/// Auto when one is usable); when the sampler is bid intervals (GridSampler::bid_intervals, or
/// automatic choosing it), the n + 1 bid intervals are split evenly across the ranks instead and
/// `shard` is only checked. Charges rank 0's ledger once.
/// @param context The distributed context (collective over its communicator).
/// @param bids The auction's bids, the same on every rank (the private data).
/// @param grid The candidate prices (PriceGrid), the same on every rank.
/// @param shard The grid indices this rank scores; the shards tile [0, grid.size()) exactly once.
/// @param params The release's parameters (PricingParams), the same on every rank.
/// @return The same PriceSelection on every rank.
/// @throws InvalidArgument (every rank) before the charge for bids, grid or params that differ from
///         rank 0's, or any error select_price finds before its charge, or shards that do not tile the
///         grid; after it, as select_price, for a slack that would reach epsilon.
/// @throws BackendUnavailable (every rank) for Backend::Gpu (per-price noise) where a rank has no
///         usable GPU, before the charge.
/// @throws BudgetExceeded (every rank) when rank 0's ledger refuses the release; no stream drawn.
/// @throws std::runtime_error (every rank) with the message of a CudaError or other failure of a
///         rank's pass.
/// @par Synchronisation
/// Collective: every rank calls it, in the same order as the other distributed calls.
/// @par Privacy
/// As select_price over a grid in one process: epsilon-DP under exact arithmetic (Dwork & Roth 2014,
/// Thm 3.10 and its monotone remark; McKenna & Sheldon 2020; Dwork & Roth Claim 3.9), plus the
/// report's slack. Rank 0's ledger is charged one release of `release_kind(params.mechanism)` at
/// params.epsilon, once, before any rank draws a stream.
PriceSelection select_price(DistributedContext& context, const Bids& bids, const PriceGrid& grid, IndexRange shard,
                            const PricingParams& params);
/// Collective: over a list of prices split across the ranks: this rank's prices are candidates
/// [first_index, first_index + prices.size()) of the list (finite, >= 0; uneven or empty shards
/// that tile the list exactly once). The sensitivity (the largest price of the whole list) is
/// agreed with a max-reduction; the chosen price is sent from the rank that holds it.
/// @param context The distributed context (collective over its communicator).
/// @param bids The auction's bids, the same on every rank (the private data).
/// @param prices This rank's prices: each finite and >= 0; may be empty.
/// @param first_index The index in the whole list of `prices[0]`; the shards tile [0, list size).
/// @param params The release's parameters (PricingParams), the same on every rank.
/// @return The same PriceSelection on every rank (candidate: the index in the whole list).
/// @throws InvalidArgument (every rank) before the charge for bids or params that differ from rank
///         0's, a bad price (naming its index in the whole list), a largest price of 0 or beyond
///         2^960, more bids than max_bidders, bad params, or shards that do not tile the list from 0;
///         after it for a slack that would reach epsilon.
/// @throws BackendUnavailable (every rank) for Backend::Gpu where a rank has no usable GPU, before the
///         charge.
/// @throws BudgetExceeded (every rank) when rank 0's ledger refuses the release; no stream drawn.
/// @throws std::runtime_error (every rank) with the message of a CudaError or other failure of a
///         rank's pass.
/// @par Synchronisation
/// Collective: every rank calls it, in the same order as the other distributed calls.
/// @par Privacy
/// As select_price over a list in one process: epsilon-DP under exact arithmetic (Dwork & Roth 2014,
/// Thm 3.10 and its monotone remark; McKenna & Sheldon 2020; Dwork & Roth Claim 3.9), plus the
/// report's slack. Rank 0's ledger is charged one release of `release_kind(params.mechanism)` at
/// params.epsilon, once, before any rank draws a stream.
PriceSelection select_price(DistributedContext& context, const Bids& bids, std::span<const double> prices,
                            std::uint64_t first_index, const PricingParams& params);
/// Collective: over the continuous range (every rank passes the same range): the n + 1 bid
/// intervals are split evenly across the ranks.
/// @param context The distributed context (collective over its communicator).
/// @param bids The auction's bids, the same on every rank (the private data).
/// @param range The public price range (PriceRange), the same on every rank.
/// @param params The release's parameters (PricingParams), the same on every rank: mechanism
///        exponential, backend Auto or Cpu.
/// @return The same PriceSelection on every rank.
/// @throws InvalidArgument (every rank) before the charge for an invalid range, bids, range or params
///         that differ from rank 0's, or any error select_price over a range finds before its charge.
/// @throws BudgetExceeded (every rank) when rank 0's ledger refuses the release; no stream drawn.
/// @throws std::runtime_error (every rank) with the message of a CudaError or other failure of a
///         rank's pass.
/// @par Synchronisation
/// Collective: every rank calls it, in the same order as the other distributed calls.
/// @par Privacy
/// As select_price over a range in one process: epsilon-DP under exact arithmetic (Dwork & Roth 2014,
/// Thm 3.10 and its monotone remark), plus the report's slack. Rank 0's ledger is charged one
/// exponential-mechanism release at params.epsilon, once, before any rank draws a stream.
PriceSelection select_price(DistributedContext& context, const Bids& bids, const PriceRange& range,
                            const PricingParams& params);

/// Collective: sparse_vector_batch (sparse_vector.hpp) over a stream of query answers split into
/// contiguous blocks across the ranks: this rank holds answers [first_index, first_index +
/// values.size()) (uneven or empty blocks that tile [0, total) exactly once). Windows of queries are
/// searched on every rank at once and the global first "above" of a window is found with one
/// min-reduction; the threshold is then redrawn as in one process. Returns, on every rank, what
/// sparse_vector_batch returns in one process over the whole stream with the same key and stream
/// (above indices are global). Every value is validated on its rank before rank 0's ledger is
/// charged once; a bad value on any rank fails every rank with the lowest bad rank's message.
///
/// Unlike one process, the blocks may not all be empty (InvalidArgument).
/// @param context The distributed context (collective over its communicator).
/// @param values This rank's answers f_i(D): each finite and within value_bound when one is given; may
///        be empty.
/// @param first_index The position in the whole stream of `values[0]`; the blocks tile [0, total)
///        with total at most 2^58.
/// @param params The run's parameters (SparseVectorParams), bit for bit the same on every rank.
/// @return The same "above" answers (global indices) and report on every rank.
/// @throws InvalidArgument (every rank) before the charge for bad params or params that differ from
///         rank 0's, a bad value (named by its place in the whole stream), blocks beyond 2^63 or
///         that do not tile [0, total), all blocks empty, or more than 2^58 answers.
/// @throws BudgetExceeded (every rank) when rank 0's ledger refuses the run; no stream drawn.
/// @throws RandomnessExhausted (every rank) as the one-process batch.
/// @par Synchronisation
/// Collective: every rank calls it, in the same order as the other distributed calls; one
/// MPI_Allreduce per window of queries.
/// @par Privacy
/// One run of the mechanism, with the guarantee, sources and charge of the one-process
/// sparse_vector_batch (the SparseVector constructor's): rank 0's ledger is charged one pure release
/// at epsilon (delta = 0) or one approximate release at (epsilon, delta), once, after every rank's
/// checks and before any rank draws a stream. Each "above" value of NumericSparse is sent from the
/// rank that holds the query.
SparseVectorBatch sparse_vector_batch(DistributedContext& context, std::span<const double> values,
                                      std::uint64_t first_index, const SparseVectorParams& params);

/// Collective: select_partitions (partition_selection.hpp) over (user, key) contributions split
/// among the ranks in any way (each rank passes the pairs it holds; a user's pairs may lie on
/// several ranks, and a rank may hold none). The pairs are sent to ranks by a hash of their user,
/// where each user is bounded to max_partitions keys; the kept keys by a hash of the key, where
/// each key's users are counted and its coin drawn; the released keys are then gathered on every
/// rank. weighted_gaussian and dp_sips send each kept key with its user's number of kept keys, so
/// the key's rank sums its weight in the one-process order; dp_sips gathers each round's keys on
/// every rank, which drops their pairs before the next round. Each rank works on its CPU
/// (params.backend is not read). Every bit is drawn by the identity of a pair or key
/// (partition_selection.hpp, "Randomness"), so every rank returns what select_partitions returns
/// in one process over all the pairs with the same key and stream.
/// @param context The distributed context (collective over its communicator).
/// @param users The user of each of this rank's contributions; may be empty.
/// @param keys The key of each (as long as `users`).
/// @param params The selection's parameters, bit for bit the same on every rank.
/// @return The same released keys (ascending) and report on every rank; keys_considered counts
///         the distinct kept keys of all ranks.
/// @throws InvalidArgument (every rank) before the charge for bad params or params that differ from
///         rank 0's, users and keys of different lengths on a rank, no contributions on any rank, or
///         more than 2^31 - 1 pairs or keys for one rank to send to another, or policy_gaussian
///         (its users update the weights one after another: one process).
/// @throws BudgetExceeded (every rank) when rank 0's ledger refuses the selection; no stream drawn.
/// @par Synchronisation
/// Collective: every rank calls it, in the same order as the other distributed calls; two
/// MPI_Alltoallv exchanges (the pairs, then the kept keys) and one MPI_Allgatherv of the released
/// keys (dp_sips: the kept keys' exchange and the gather once a round).
/// @par Privacy
/// One selection, with the guarantee and sources of the one-process select_partitions: rank 0's
/// ledger is charged one approximate release at (epsilon, delta), once, after every rank's checks
/// and before any rank draws a stream. The pairs travel between ranks (the trust assumption above).
PartitionSelection select_partitions(DistributedContext& context, std::span<const std::uint64_t> users,
                                     std::span<const std::uint64_t> keys, const PartitionSelectionParams& params);

/// Collective: select_partitions over string keys (byte strings: search queries, URLs) split
/// among the ranks in any way, releasing what the one-process string select_partitions releases
/// over all the pairs with the same key and stream. One process numbers the keys by their rank in
/// byte order among the distinct keys (dictionary_codes); the ranks compute the same numbers
/// together by a sample sort of their distinct keys (64 samples a rank, gathered on every rank,
/// give the splitters; each distinct key goes to the rank of its range, which numbers the range
/// after the lower ranks' and answers each sender), then select over the numbers as the integer
/// overload does, and gather the released keys' strings from the ranks that numbered them.
/// @param context The distributed context (collective over its communicator).
/// @param users The user of each of this rank's contributions; may be empty.
/// @param keys The key of each (as long as `users`); read during the call only.
/// @param params The selection's parameters, bit for bit the same on every rank.
/// @return The same released keys (ascending in byte order, copies of keys of the data) and report
///         on every rank.
/// @throws InvalidArgument (every rank) as the integer overload, bad params and lengths that
///         differ on a rank before the keys are numbered, or more than 2^31 - 1 distinct keys or
///         bytes of keys for one rank to send.
/// @throws BudgetExceeded (every rank) as the integer overload.
/// @par Synchronisation
/// Collective: the integer overload's exchanges, after an allgather of the samples, two
/// MPI_Alltoallv of the distinct keys (lengths, bytes), one of their numbers back, and an
/// allgather of the released keys' strings.
/// @par Privacy
/// As the integer overload: the numbering is a bijection of the keys that every rank computes
/// alike and spends no budget; the keys' strings travel between ranks (the trust assumption above).
StringPartitionSelection select_partitions(DistributedContext& context, std::span<const std::uint64_t> users,
                                           std::span<const std::string_view> keys,
                                           const PartitionSelectionParams& params);

/// One rank per GPU: the CUDA device this rank should use, its rank among the ranks on its node
/// (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED) modulo the node's device count; -1 when the
/// node has no CUDA device (or the build no CUDA backend). Collective over `comm`. It asks the
/// runtime for the device count only, which creates no context: call cudaSetDevice with the
/// result before any other CUDA call (dpselect::gpu_usable included), or every rank opens a
/// context on device 0.
/// @param comm The communicator whose ranks share out the GPUs (e.g. MPI_COMM_WORLD); every rank of it
///        must call.
/// @return The CUDA device ordinal for this rank, or -1 when there is none.
/// @par Synchronisation
/// Collective over `comm` (MPI_Comm_split_type, then MPI_Comm_free of the node communicator).
int local_device(MPI_Comm comm);

}  // namespace dpselect::mpi
