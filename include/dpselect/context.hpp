// SPDX-License-Identifier: Apache-2.0
/// @file
/// Keys, releases and their reports.
///
/// A Context owns one secret key (random_key.hpp: ChaCha20 by default, Philox by explicit choice)
/// and hands out stream ids. Every release takes a fresh
/// stream id when it begins, so no two releases of a context ever share noise; a Release in
/// turn refuses to evaluate any candidate index twice. Together these make noise reuse
/// impossible through this API (the one deliberate exception, sharing a key across processes,
/// is Context::with_shared_key and its contract).
///
/// A context can also charge a PrivacyAccountant (accounting.hpp) for every release begun from
/// it: Context::charge_to. Since every mechanism draws its stream from a context, that is the one
/// place where every release passes before its first noise.
///
/// Sharding one release by hand (select() does all of this in one call):
/// @code{.cpp}
/// dpselect::Release release = context.begin_release(params);    // charges, draws one fresh stream
/// dpselect::ShardResult a = release.evaluate(std::span<const float>(first_half), 0);
/// dpselect::ShardResult b = release.evaluate(std::span<const float>(second_half), first_half.size());
/// dpselect::Selection pick = release.finish(dpselect::merge(a, b));
/// @endcode
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "dpselect/accounting.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/shard_result.hpp"
#include "dpselect/types.hpp"

struct CUstream_st;  // cudaStream_t without including CUDA headers

namespace dpselect {

/// A CUDA stream (`cudaStream_t`) in headers that do not include the CUDA headers: pass your
/// `cudaStream_t` as it is, or nullptr for the legacy default stream. It must be a stream of the
/// current CUDA device (cudaSetDevice) when the call runs.
using cuda_stream_t = CUstream_st*;

/// Utilities that live in GPU memory. `data` must be a device (or managed) pointer.
///
/// Pinned host memory (cudaMallocHost) is accepted too, and pageable host memory only on a device
/// that reports pageable memory access; any other pointer is refused (InvalidArgument) before any
/// launch. The library only reads it.
/// @tparam T `const float` or `const double`.
template <class T>
struct DeviceSpan {
  T* data = nullptr;        ///< The first element, in memory the current device can read; not nullptr
                            ///< unless size is 0 (an empty shard of a distributed release).
  std::uint64_t size = 0;   ///< The number of elements (not bytes); 0 is an empty span.
};

/// A half-open range [begin, end) of global candidate indices.
///
/// A range to evaluate must be non-empty (begin < end) and end at or below 2^63; InvalidArgument
/// otherwise.
struct IndexRange {
  std::uint64_t begin = 0;  ///< The first candidate index of the range.
  std::uint64_t end = 0;    ///< One past the last candidate index; >= begin.
  /// The number of candidates in the range.
  /// @return `end - begin` (meaningless when end < begin).
  std::uint64_t size() const { return end - begin; }
};

/// The report of one release: its parameters, what ran it and its floating-point slack.
///
/// Everything here follows from the parameters, the key's stream counter and the hardware, and may
/// be published with the index, with two exceptions: `slack` when `slack.depends_on_data` (it then
/// reveals the data's largest |utility - reference|), and, for pricing, `executed_on` when
/// PriceSelection::sampler_depends_on_data.
struct SelectionReport {
  Mechanism mechanism = Mechanism::exponential;  ///< The mechanism that ran (SelectionParams::mechanism).
  /// The privacy loss of this release under exact arithmetic (add slack.epsilon for the float
  /// implementation).
  double epsilon_spent = 0.0;
  /// The sensitivity Delta the release ran with, in units of the utility (SelectionParams::sensitivity;
  /// for pricing the largest candidate price, for quantiles 1 or max(q, 1 - q)).
  double sensitivity = 0.0;
  bool monotone = false;  ///< Whether the release ran at the monotone scale (SelectionParams::monotone).
  /// Scale of the noise in units of the utility: 2*Delta/eps, or Delta/eps when monotone.
  double noise_scale = 0.0;
  ExecutedOn executed_on = ExecutedOn::none;  ///< What evaluated the release's shards.
  /// Set only when Backend::Auto ran on the CPU although an NVIDIA GPU is present: why this build
  /// cannot use it and how to fix it (gpu_unusable_reason() in select.hpp; lives as long as the
  /// process). Hardware, not data: public. Empty otherwise.
  std::string_view cpu_fallback_reason;
  /// The number of candidates the release covered, excluded (-inf) ones included: the range's size
  /// (for pricing and quantiles, the size of the price list or grid).
  std::uint64_t candidates = 0;
  /// The floating-point slack: the computed release is (epsilon_spent + slack.epsilon, slack.delta)-DP.
  /// Do not publish it when slack.depends_on_data.
  FloatingPointSlack slack;
  /// The stream id this release drew from its context, and the generator of its noise.
  std::uint64_t stream = 0;
  Generator generator = Generator::chacha20;  ///< The generator of the context's key.
};

/// The result of one release: the private index and its report.
struct Selection {
  /// The selected candidate's global index, within the range that was evaluated: the release's
  /// private output.
  std::uint64_t index = 0;
  SelectionReport report;  ///< How it was selected (see SelectionReport for what may be published).
};

class Release;
class ReleaseTicket;
namespace detail {
struct ContextAccess;
}  // namespace detail

/// The source of every release's noise: one secret key and a counter of stream ids.
///
/// Every release begun from a context (begin_release, select(), select_rows(), pricing, quantiles,
/// ...) draws the next stream id, so no two releases share noise. A context is move-only; a
/// moved-from context refuses to begin releases (UsageError), so two contexts never hand out the
/// same stream. begin_release, charge_to and accountant may be called from several threads at once.
/// A Release keeps its own copy of the key and may outlive its context.
class Context {
 public:
  /// A ChaCha20 context keyed with 256 bits from the operating system's CSPRNG (getrandom). Use
  /// this for real data.
  /// @throws std::system_error if getrandom fails.
  Context();
  /// The same with a choice of generator: Generator::philox is faster but not cryptographically
  /// secure (random_key.hpp); its 64-bit key also comes from the OS.
  /// @param generator Generator::chacha20 (the default) or Generator::philox.
  /// @return A context whose first release draws stream 0.
  /// @throws InvalidArgument for a generator outside the enumeration.
  /// @throws std::system_error if getrandom fails.
  static Context from_os_entropy(Generator generator = Generator::chacha20);
  /// A reproducible context for tests and experiments (key: RandomKey::from_seed). Its noise is
  /// predictable by anyone who knows the seed: never use it for a real release.
  /// @param seed Any 64-bit value.
  /// @param generator Generator::chacha20 (the default) or Generator::philox.
  /// @return A context whose first release draws stream 0; is_fixed_seed() is true.
  /// @throws InvalidArgument for a generator outside the enumeration.
  static Context with_fixed_seed(std::uint64_t seed, Generator generator = Generator::chacha20);
  /// For one release sharded across processes: every rank builds its context from the same
  /// secret key (distributed over a secure channel) and the same first stream, begins the same
  /// sequence of releases, and evaluates disjoint sub-ranges. The caller is responsible for
  /// never evaluating one candidate twice across ranks.
  /// Throws InvalidArgument for an all-zero key (a default-constructed RandomKey, ChaChaKey or
  /// PhiloxKey: predictable by anyone).
  ///
  /// Release::finish of such a context can only check that the merged result covers at least the
  /// candidates this process evaluated, not that no other process evaluated them too. dpselect::mpi
  /// keeps the whole contract for MPI programs.
  /// @param key The shared secret key, drawn from a CSPRNG; not all zero.
  /// @param first_stream The stream id of the first release; releases draw consecutive ids from it.
  /// @return A context whose releases draw streams first_stream, first_stream + 1, ...
  /// @throws InvalidArgument for an all-zero key or a generator outside the enumeration.
  /// @par Privacy
  /// Whoever learns `key` can compute every noise value of every release of the context; each rank
  /// charges its own context's accountant once per release (see charge_to).
  static Context with_shared_key(RandomKey key, std::uint64_t first_stream);

  /// @name Moving
  ///@{

  /// Moving transfers the key and the stream counter; the moved-from context is spent (its
  /// begin_release throws UsageError), so the two can never hand out the same stream.
  /// @param other The context to move from; spent afterwards.
  Context(Context&& other) noexcept;
  Context& operator=(Context&& other) noexcept;
  ///@}
  /// Not copyable: two copies would hand out the same streams.
  Context(const Context&) = delete;
  /// Not copyable: two copies would hand out the same streams.
  Context& operator=(const Context&) = delete;
  /// Destroys the key and the counter; releases begun from the context stay valid.
  ~Context();

  /// Validates `params` (throws InvalidArgument before drawing a stream), then draws a fresh
  /// stream id. Thread-safe. Throws UsageError on a moved-from context.
  ///
  /// The release then evaluates shards (Release::evaluate, evaluate_functor) and is finished with
  /// Release::finish. It uses the utility reference `params.utility_reference`, or 0 when none is
  /// given (SelectionParams::utility_reference). Its backend is resolved when a shard is evaluated.
  /// @param params The release's parameters, checked as SelectionParams says.
  /// @return The release, holding a fresh stream id (Release::stream).
  /// @throws InvalidArgument for bad params (naming the field), before the charge and the stream.
  /// @throws BudgetExceeded when the accountant refuses the release; no stream is drawn.
  /// @throws UsageError on a moved-from context.
  /// @par Privacy
  /// Charges the accountant given to charge_to (if any) one release of
  /// `release_kind(params.mechanism)` at `params.epsilon` (delta 0), after validating and before
  /// drawing the stream. The release is charged whether or not it is finished; what it releases and
  /// its guarantee are on Release::finish.
  Release begin_release(const SelectionParams& params);

  /// Whether this context was made by with_fixed_seed (its noise is predictable from the seed).
  /// @return true for a with_fixed_seed context; false otherwise, and for a moved-from context (never
  ///         throws).
  bool is_fixed_seed() const;
  /// The generator of every release of this context. Throws UsageError on a moved-from context.
  /// @return The generator of the context's key.
  Generator generator() const;

  /// From now on, every release begun from this context is charged to `accountant` (nullptr:
  /// none) after its parameters are validated and before it draws its stream, so an over-budget
  /// release throws BudgetExceeded before any noise is drawn and nothing is released or recorded.
  /// What each entry point charges:
  /// - begin_release, select, the functor selects, pricing: one release of
  ///   release_kind(params.mechanism) at params.epsilon;
  /// - select_top_k: k exponential-mechanism picks at the per-pick epsilon;
  /// - select_rows: one release per row, all rows together before the first row's stream (charge
  ///   rows to one accountant only when they are about the same data); select_repeated likewise,
  ///   one release per repetition;
  /// - select_quantile: one exponential-mechanism release at params.epsilon; select_quantiles: the
  ///   whole release once (QuantilesRelease::mechanisms);
  /// - SparseVector and sparse_vector_batch: one pure release at epsilon (delta = 0) or one
  ///   approximate release at (epsilon, delta).
  ///
  /// The accountant records the exact-arithmetic guarantees; each report's floating-point slack
  /// comes on top. A release that fails after its charge (a NaN utility found during the pass)
  /// stays charged: whether it failed depends on the data. One accountant may serve several
  /// contexts and threads. With with_shared_key, each rank charges its context's accountant once
  /// per release, so ranks sharing one accountant charge it once per rank; a rank refused with
  /// BudgetExceeded draws no stream and falls out of step with the others (its later shards fail
  /// the merge checks).
  /// Thread-safe; throws UsageError on a moved-from context.
  /// @param accountant The accountant to charge from now on (shared: it may serve other contexts);
  ///        nullptr stops charging.
  /// @throws UsageError on a moved-from context.
  void charge_to(std::shared_ptr<PrivacyAccountant> accountant);
  /// The accountant this context charges.
  /// @return The accountant given to charge_to last, or nullptr if none.
  /// @throws UsageError on a moved-from context.
  std::shared_ptr<PrivacyAccountant> accountant() const;

 private:
  friend struct detail::ContextAccess;
  struct State;
  Context(RandomKey key, std::uint64_t first_stream, bool fixed_seed, bool shared_key);
  /// begin_release after the caller has charged the whole release (`charge` false) or not.
  Release start_release(const SelectionParams& params, bool charge);
  State& state() const;
  std::unique_ptr<State> state_;
};

namespace detail {
struct ReleaseAccess;
struct ReleaseState;
}  // namespace detail

/// One private release in progress: evaluate shards of the candidate range (each index at most
/// once, on any backend), merge their ShardResults with dpselect::merge, then finish(). A range
/// stays claimed even when its evaluation throws (fail closed: begin a new release). Every method
/// of a moved-from release throws UsageError.
///
/// Made by Context::begin_release (already charged, holding its stream). The noise of candidate i
/// depends only on (key, stream, i), so any partition of the range into shards, on any backends,
/// gives the answer of one pass. Threads may evaluate disjoint shards of one release at once (the
/// claims are taken under the release's lock). Nothing is released until finish() returns.
class Release {
 public:
  /// @name Moving
  ///@{

  /// Moving transfers the release (its stream, claims and state); every method of the moved-from
  /// release throws UsageError.
  Release(Release&&) noexcept;
  Release& operator=(Release&&) noexcept;
  ///@}
  /// Destroys the release; an unfinished release releases nothing and stays charged.
  ~Release();

  /// The parameters the release was begun with.
  /// @return The release's SelectionParams.
  /// @throws UsageError on a moved-from release.
  const SelectionParams& params() const;
  /// The stream id the release drew from its context (also SelectionReport::stream).
  /// @return The stream id.
  /// @throws UsageError on a moved-from release.
  std::uint64_t stream() const;

  /// @name Utilities in host memory
  ///@{

  /// Utilities in host memory for candidates [first_index, first_index + size).
  ///
  /// Runs on the backend params().backend resolves to: the CPU on all cores, or the GPU with the
  /// array streamed through the device in chunks. Utilities must be finite or -inf (an excluded
  /// candidate); a NaN, +inf or a utility beyond utility_bound is not thrown here but recorded in
  /// the result, and finish() refuses it.
  /// @param utilities The utility of candidate `first_index + i` at index i (float values are widened
  ///        exactly); not empty.
  /// @param first_index The global index of `utilities[0]`; `first_index + utilities.size()` at most 2^63.
  /// @return This shard's result. It is SECRET (shard_result.hpp): pass it only to merge() and finish().
  /// @throws InvalidArgument for empty utilities or a range beyond 2^63.
  /// @throws BackendUnavailable for Backend::Gpu without a usable GPU (the release stays charged:
  ///         check gpu_usable() before begin_release).
  /// @throws UsageError if the range overlaps one this release already evaluated, after finish() or
  ///         ticket(), or on a moved-from release.
  /// @throws CudaError if a CUDA call of the GPU pass fails.
  /// @par Synchronisation
  /// On the GPU the pass runs on streams of the library's own and is complete when the call returns;
  /// only the calling thread reads `utilities`, which is yours again on return, also after an
  /// exception.
  /// @par Privacy
  /// Releases nothing. The range is claimed before the pass and stays claimed if the pass throws.
  ShardResult evaluate(std::span<const float> utilities, std::uint64_t first_index = 0);
  ShardResult evaluate(std::span<const double> utilities, std::uint64_t first_index = 0);
  ///@}

  /// @name Utilities in device memory
  ///@{

  /// Utilities in device memory. Work is ordered on `stream`; the call synchronizes it.
  ///
  /// Evaluates candidates [first_index, first_index + utilities.size) on the GPU, whatever
  /// params().backend says unless it is Backend::Cpu (an error). As for host memory, a NaN, +inf or
  /// out-of-bound utility is recorded in the result and refused by finish().
  /// @param utilities The utilities in memory the current device can read (DeviceSpan); size >= 1.
  /// @param first_index The global index of the first utility; `first_index + utilities.size` at most
  ///        2^63.
  /// @param stream A stream of the current device (nullptr: the legacy default stream).
  /// @return This shard's result. It is SECRET (shard_result.hpp): pass it only to merge() and finish().
  /// @throws InvalidArgument for an empty span, a range beyond 2^63, a nullptr or pageable host pointer
  ///         the device cannot read, or params().backend == Backend::Cpu.
  /// @throws BackendUnavailable without a usable GPU.
  /// @throws UsageError if the range overlaps one this release already evaluated, after finish() or
  ///         ticket(), or on a moved-from release.
  /// @throws CudaError if a CUDA call fails.
  /// @par Synchronisation
  /// The pass is enqueued on `stream` behind the work already there (so utilities written by earlier
  /// work on `stream` are read as written), and the call synchronizes `stream` before it returns: the
  /// memory may then be overwritten or freed. Work on other streams is not ordered with it:
  /// synchronize it first.
  /// @par Privacy
  /// Releases nothing. The range is claimed before the pass and stays claimed if the pass throws.
  ShardResult evaluate(DeviceSpan<const float> utilities, std::uint64_t first_index,
                       cuda_stream_t stream);
  ShardResult evaluate(DeviceSpan<const double> utilities, std::uint64_t first_index,
                       cuda_stream_t stream);
  ///@}

  /// Hands this release's candidates out to workers that do not hold it (release_ticket.hpp): a
  /// ticket with the release's key, stream, parameters and utility reference, whose shards must tile
  /// `range` exactly once. From then on finish() checks that the merge it is given covers `range`
  /// exactly once, and this release no longer evaluates shards itself (its evaluate throws
  /// UsageError): evaluate them with the ticket, here or elsewhere.
  /// @param range The candidates of the release, [begin, end); not empty, end at most 2^63.
  /// @param first_utility The utility of candidate range.begin. Used only when the params give
  ///        neither a utility_reference nor a utility_bound: the scores are then computed from it
  ///        (0 if it is not finite), exactly as select() over the whole range computes them, so the
  ///        sharded release picks what select() picks for the same stream. Without it the reference
  ///        is 0, as for evaluate.
  /// @return The ticket. Calling ticket() again returns an equal ticket; it must be given the same
  ///         range and first utility.
  /// @throws InvalidArgument for an empty, reversed or too large range.
  /// @throws UsageError after finish(), when this release already evaluated a shard itself, when a
  ///         second call gives another range or first utility, or on a moved-from release.
  /// @par Privacy
  /// The ticket holds the context's secret key: see the trust model in release_ticket.hpp.
  ReleaseTicket ticket(IndexRange range, std::optional<double> first_utility = std::nullopt);

  /// Turns the merge of all shards into the released index and its report. Throws
  /// InvalidArgument if a utility was NaN, +inf or beyond utility_bound (naming the index and
  /// value), if every candidate was excluded (-inf), or if the floating-point slack would reach
  /// epsilon; UsageError if called twice, or if `merged` comes from another release or does not
  /// merge each of this release's shards exactly once (for a with_shared_key context: covers
  /// fewer candidates than this process evaluated; after ticket(): does not tile the ticket's range
  /// exactly once). Nothing is released when it throws, and the
  /// release is spent either way.
  /// @param merged The merge (dpselect::merge) of every ShardResult this release's evaluations
  ///        returned, each exactly once (with with_shared_key, also those of the other processes).
  /// @return The selected index (the largest noisy score; ties to the smallest index) and its report.
  /// @throws InvalidArgument for a NaN, +inf or out-of-bound utility, no candidate evaluated, every
  ///         candidate excluded, or a slack that would reach epsilon.
  /// @throws UsageError if called twice, for a result of another release or one that does not merge
  ///         each shard exactly once, or on a moved-from release.
  /// @par Privacy
  /// The index is epsilon-DP under exact arithmetic, with epsilon = params().epsilon and the noise of
  /// the mechanism (Dwork & Roth 2014, Def. 3.4, Thm 3.10 for the exponential mechanism; McKenna &
  /// Sheldon 2020 for permute-and-flip; Dwork & Roth Claim 3.9 for Laplace report-noisy-max), and the
  /// computed release is (epsilon + report.slack.epsilon, report.slack.delta)-DP. The charge was made
  /// by begin_release; finish() charges nothing, and a finish that throws leaves the charge in place.
  /// Excluding candidates with -inf is private only if the excluded set is the same for every
  /// neighbouring dataset.
  Selection finish(const ShardResult& merged);

 private:
  friend class Context;
  friend struct detail::ReleaseAccess;
  explicit Release(std::unique_ptr<detail::ReleaseState> state);
  std::unique_ptr<detail::ReleaseState> state_;
};

}  // namespace dpselect
